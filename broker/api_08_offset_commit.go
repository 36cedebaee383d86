package broker

// OffsetCommit (key 8), versions 0–9.
//
//	v0: offsets stored in ZooKeeper, /consumers/<g>/offsets/<t>/<p> (the
//	    0.8 consumer's place), not in __consumer_offsets
//	v1: generation and member id; a per-partition commit timestamp
//	v2: retention time (the records get an expire timestamp, value v1)
//	v3: throttle time
//	v4: same as v3
//	v5: no retention time (KIP-211: offsets expire from when the group empties)
//	v6: committed leader epoch (KIP-320)
//	v7: group instance id (KIP-345)
//	v8: flexible
//	v9: Kafka 4.0's, for consumer-protocol members (their member epoch as
//	    the generation); advertised only with the consumer protocol on
//
// A partition of a topic the broker does not know gets
// UNKNOWN_TOPIC_OR_PARTITION; the others are committed by the coordinator,
// answered once replicated (acks=all) or at offsets.commit.timeout.ms.

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

var offsetCommitAPI = api{
	key: 8, min: 0, max: 9,
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, r.body.(*kmsg.OffsetCommitRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		req := r.body.(*kmsg.OffsetCommitRequest)
		return s.handleOffsetCommit(ctx, req, s.topicFilter(r, acl.OpRead, topicsOf(req.Topics, func(t kmsg.OffsetCommitRequestTopic) string { return t.Topic })))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		r := req.(*kmsg.OffsetCommitRequest)
		return offsetCommitResponse(r, func(string, int32) int16 { return code })
	},
}

func offsetCommitResponse(req *kmsg.OffsetCommitRequest, code func(topic string, partition int32) int16) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code(t.Topic, p.Partition)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// handleOffsetCommit answers TOPIC_AUTHORIZATION_FAILED for a topic not in
// readable (nil: every topic).
func (s *Server) handleOffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest, readable topicSet) *kmsg.OffsetCommitResponse {
	codes := map[kafka.TopicPartition]int16{}
	known := *req
	known.Topics = knownPartitions(s, req.Topics, readable, codes,
		func(t *kmsg.OffsetCommitRequestTopic) (string, *[]kmsg.OffsetCommitRequestTopicPartition) {
			return t.Topic, &t.Partitions
		},
		func(p kmsg.OffsetCommitRequestTopicPartition) int32 { return p.Partition })
	if req.Version == 0 {
		s.commitOffsetsToZooKeeper(&known, codes)
	} else if len(known.Topics) > 0 {
		for _, t := range s.groupCoordinator.OffsetCommit(ctx, &known).Topics {
			for _, p := range t.Partitions {
				codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	return offsetCommitResponse(req, func(topic string, partition int32) int16 {
		return codes[kafka.TopicPartition{Topic: topic, Partition: partition}]
	})
}

// knownPartitions keeps, of a commit request's topics, the partitions the metadata cache knows, and
// sets the others' codes to UNKNOWN_TOPIC_OR_PARTITION, as Kafka's commit handlers do before
// anything reaches the coordinator. A topic left with no partition is dropped. of gives a topic's
// name and its partitions, index a partition's number.
func knownPartitions[T, P any](s *Server, topics []T, readable topicSet, codes map[kafka.TopicPartition]int16,
	of func(*T) (string, *[]P), index func(P) int32) []T {
	var known []T
	for _, t := range topics {
		name, parts := of(&t)
		var kept []P
		for _, p := range *parts {
			if !readable.allows(name) {
				codes[kafka.TopicPartition{Topic: name, Partition: index(p)}] = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if !s.partitionExists(name, index(p)) {
				codes[kafka.TopicPartition{Topic: name, Partition: index(p)}] = kerr.UnknownTopicOrPartition.Code
				continue
			}
			kept = append(kept, p)
		}
		if len(kept) > 0 {
			*parts = kept
			known = append(known, t)
		}
	}
	return known
}

func (s *Server) partitionExists(topic string, partition int32) bool {
	_, parts, ok := s.metadata.Topic(topic)
	if !ok {
		return false
	}
	_, ok = parts[partition]
	return ok
}

// commitOffsetsToZooKeeper is OffsetCommit v0: each offset is written to
// /consumers/<g>/offsets/<t>/<p> as a decimal string.
func (s *Server) commitOffsetsToZooKeeper(req *kmsg.OffsetCommitRequest, codes map[kafka.TopicPartition]int16) {
	maxMeta := int(brokerconfig.NewReader(s.cfg.Properties).Int32("offset.metadata.max.bytes"))
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if p.Metadata != nil && len(*p.Metadata) > maxMeta {
				codes[tp] = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			path := zkpaths.ConsumerOffsetPath(req.Group, t.Topic, p.Partition)
			data := []byte(strconv.FormatInt(p.Offset, 10))
			_, err := s.zk.Set(path, data, -1)
			if errors.Is(err, zk.ErrNoNode) {
				err = s.zk.CreateIfMissing(path, data)
				if err == nil {
					_, err = s.zk.Set(path, data, -1)
				}
			}
			if err != nil {
				codes[tp] = kerr.UnknownServerError.Code
			}
		}
	}
}
