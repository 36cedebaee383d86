package broker

// DescribeLogDirs (key 35), versions 0–2.
//
//	v1: same as v0 (throttle time changes)
//	v2: flexible
//
// Every log.dirs directory of this broker with the partitions in it (all of
// them when the request's topics are null): the log's size in bytes and, as
// Kafka 2.8's describeLogDirs, for a current log isFuture false and an
// offset lag of max(high watermark - log end, 0), always 0; for a future log
// being filled in its destination dir (AlterReplicaLogDirs) isFuture true and
// the current log's end minus its own. A directory taken offline by an I/O
// error is listed with KAFKA_STORAGE_ERROR and no partitions.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/storage"
)

var describeLogDirsAPI = api{
	key: 35, min: 0, max: maxVersion(35),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpDescribe); resp != nil {
			return resp
		}
		return s.handleDescribeLogDirs(r.body.(*kmsg.DescribeLogDirsRequest))
	},
	// 2.8's error answer, an unauthorized one's too, describes no
	// directory; only v3+ (Kafka 3.0's) carry the error itself.
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
		resp.ErrorCode = code
		return resp
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
	type replica struct {
		tp     kafka.TopicPartition
		log    *storage.Log
		future bool
	}
	byDir := map[string][]replica{}
	logs := s.logs.All()
	for future, m := range map[bool]map[kafka.TopicPartition]*storage.Log{false: logs, true: s.logs.Futures()} {
		for tp, l := range m {
			if wanted == nil || wanted[tp] {
				dir := filepath.Dir(l.Dir())
				byDir[dir] = append(byDir[dir], replica{tp, l, future})
			}
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
		replicas := byDir[dir]
		slices.SortFunc(replicas, func(a, b replica) int { return kafka.Compare(a.tp, b.tp) })
		for _, r := range replicas {
			if len(d.Topics) == 0 || d.Topics[len(d.Topics)-1].Topic != r.tp.Topic {
				d.Topics = append(d.Topics, kmsg.DescribeLogDirsResponseDirTopic{Topic: r.tp.Topic})
			}
			t := &d.Topics[len(d.Topics)-1]
			lag := int64(0)
			if cur, ok := logs[r.tp]; ok && r.future {
				lag = cur.LogEndOffset() - r.log.LogEndOffset()
			} else if r.future {
				lag = -1 // Kafka's INVALID_OFFSET_LAG: no current log to measure against
			}
			t.Partitions = append(t.Partitions, kmsg.DescribeLogDirsResponseDirTopicPartition{
				Partition: r.tp.Partition, Size: r.log.Size(), OffsetLag: lag, IsFuture: r.future})
		}
		resp.Dirs = append(resp.Dirs, d)
	}
	slices.SortFunc(resp.Dirs, func(a, b kmsg.DescribeLogDirsResponseDir) int { return strings.Compare(a.Dir, b.Dir) })
	return resp
}
