package broker

// OffsetFetch (key 9), versions 0–7.
//
//	v0: offsets read from ZooKeeper (/consumers/<g>/offsets/<t>/<p>)
//	v1: offsets read from __consumer_offsets
//	v2: null topics fetch every committed partition; a top-level error
//	v3: throttle time
//	v4: same as v3
//	v5: committed leader epoch (KIP-320)
//	v6: flexible
//	v7: require stable (KIP-447; without transactions every offset is stable)
//
// A partition without a committed offset answers offset -1 and no error.

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/zkpaths"
)

var offsetFetchAPI = api{
	key: 9, min: 0, max: maxVersion(9),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.OffsetFetchRequest)
		if req.Version == 0 {
			return s.fetchOffsetsFromZooKeeper(req)
		}
		return s.groupCoordinator.OffsetFetch(req)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) fetchOffsetsFromZooKeeper(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.Metadata = p, -1, kmsg.StringPtr("")
			switch data, _, err := s.zk.Get(zkpaths.ConsumerOffsetPath(req.Group, t.Topic, p)); {
			case !s.partitionExists(t.Topic, p):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case errors.Is(err, zk.ErrNoNode):
			case err != nil:
				rp.ErrorCode = kerr.UnknownServerError.Code
			default:
				if o, err := strconv.ParseInt(string(data), 10, 64); err == nil {
					rp.Offset = o
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
