package broker

// DescribeLogDirs (key 35), versions 0–2.
//
//	v1: same as v0 (throttle time changes)
//	v2: flexible
//
// Every log.dirs directory of this broker with the partitions in it (all of
// them when the request's topics are null): the log's size in bytes, an
// offset lag of 0 (only a future log being moved between dirs lags), and
// isFuture false. A directory taken offline by an I/O error is listed with
// KAFKA_STORAGE_ERROR and no partitions, as Kafka 2.8's describeLogDirs does.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

var describeLogDirsAPI = api{
	key: 35, min: 0, max: maxVersion(35),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleDescribeLogDirs(r.body.(*kmsg.DescribeLogDirsRequest))
	},
}

func (s *Server) handleDescribeLogDirs(req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	var wanted map[kafka.TopicPartition]bool
	if req.Topics != nil {
		wanted = map[kafka.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				wanted[kafka.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
	}
	byDir := map[string][]kafka.TopicPartition{}
	logs := s.logs.All()
	for tp, l := range logs {
		if wanted == nil || wanted[tp] {
			dir := filepath.Dir(l.Dir())
			byDir[dir] = append(byDir[dir], tp)
		}
	}
	for _, dir := range s.logs.Dirs() {
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = dir
		}
		d := kmsg.DescribeLogDirsResponseDir{Dir: abs}
		if s.logs.Offline(dir) {
			d.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, d)
			continue
		}
		tps := byDir[dir]
		slices.SortFunc(tps, kafka.Compare)
		for _, tp := range tps {
			if len(d.Topics) == 0 || d.Topics[len(d.Topics)-1].Topic != tp.Topic {
				d.Topics = append(d.Topics, kmsg.DescribeLogDirsResponseDirTopic{Topic: tp.Topic})
			}
			t := &d.Topics[len(d.Topics)-1]
			t.Partitions = append(t.Partitions, kmsg.DescribeLogDirsResponseDirTopicPartition{Partition: tp.Partition, Size: logs[tp].Size()})
		}
		resp.Dirs = append(resp.Dirs, d)
	}
	slices.SortFunc(resp.Dirs, func(a, b kmsg.DescribeLogDirsResponseDir) int { return strings.Compare(a.Dir, b.Dir) })
	return resp
}
