package broker

// WriteTxnMarkers (key 27), versions 0–1 (Kafka 2.8; coordinator →
// partition leader): for each marker, the leader of each partition appends
// a COMMIT or ABORT control batch with the transaction's producer id and
// epoch and the coordinator epoch, and answers once it is replicated
// (acks=all, within request.timeout.ms). A marker for a
// __consumer_offsets partition then completes the producer's pending
// TxnOffsetCommits of that partition in the group coordinator.
//
//	v1: flexible
//
// Errors per partition: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
// NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT,
// KAFKA_STORAGE_ERROR (the coordinator retries these),
// INVALID_PRODUCER_EPOCH (a newer producer wrote already) and
// TRANSACTION_COORDINATOR_FENCED (a marker from a newer coordinator was
// written already), which end the coordinator's attempt.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/wire"
)

var writeTxnMarkersAPI = api{
	key: 27, min: 0, max: maxVersion(27),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpClusterAction); resp != nil {
			return resp
		}
		return s.handleWriteTxnMarkers(ctx, r.body.(*kmsg.WriteTxnMarkersRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return writeTxnMarkersResponse(req.(*kmsg.WriteTxnMarkersRequest), func(int, string, int32) int16 { return code })
	},
}

func writeTxnMarkersResponse(req *kmsg.WriteTxnMarkersRequest, code func(marker int, topic string, partition int32) int16) *kmsg.WriteTxnMarkersResponse {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for i, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, code(i, t.Topic, p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

// markerKey names one partition of one marker of the request.
type markerKey struct {
	marker    int
	topic     string
	partition int32
}

func (s *Server) handleWriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	codes := map[markerKey]int16{}
	type pendingMarker struct {
		key            markerKey
		p              *Partition
		requiredOffset int64
		leaderEpoch    int32
	}
	var pending []pendingMarker
	now := time.Now().UnixMilli()
	for i, m := range req.Markers {
		batch := wire.AppendEndTxnMarkerBatch(nil, m.ProducerID, m.ProducerEpoch, now,
			wire.EndTxnMarker{Commit: m.Committed, CoordinatorEpoch: m.CoordinatorEpoch})
		for _, t := range m.Topics {
			for _, part := range t.Partitions {
				key := markerKey{i, t.Topic, part}
				// Kafka 2.8 answers UNKNOWN_TOPIC_OR_PARTITION for a partition
				// with no local log (getMagic), whatever the metadata knows.
				var err error = kerr.UnknownTopicOrPartition
				p, hosted := s.replicas.Partition(t.Topic, part)
				if hosted {
					_, err = p.checkLeader(-1)
				}
				if err == nil {
					// A copy per partition: the log rewrites its base offset.
					var info storage.AppendInfo
					var epoch int32
					if info, epoch, err = p.appendAsCoordinator(append([]byte(nil), batch...)); err == nil {
						pending = append(pending, pendingMarker{key, p, info.LastOffset + 1, epoch})
					}
				}
				codes[key] = errorCode(err)
			}
		}
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	for _, pm := range pending {
		codes[pm.key] = errorCode(pm.p.awaitHighWatermark(wctx, pm.requiredOffset, pm.leaderEpoch))
	}
	// Committed or aborted offsets become visible (or go) once the marker is
	// in the log, as Kafka's scheduleHandleTxnCompletion.
	for i, m := range req.Markers {
		var offsetPartitions []int32
		for _, t := range m.Topics {
			for _, part := range t.Partitions {
				if t.Topic == offsetsTopic && codes[markerKey{i, t.Topic, part}] == 0 {
					offsetPartitions = append(offsetPartitions, part)
				}
			}
		}
		if len(offsetPartitions) > 0 {
			s.groupCoordinator.CompleteTxn(m.ProducerID, offsetPartitions, m.Committed)
		}
	}
	for k, code := range codes {
		if code != 0 {
			s.log.Info("Writing a transaction marker failed", zap.String("topic", k.topic), zap.Int32("partition", k.partition),
				zap.Int64("producer-id", req.Markers[k.marker].ProducerID), zap.Int16("error-code", code))
		}
	}
	return writeTxnMarkersResponse(req, func(i int, topic string, partition int32) int16 {
		return codes[markerKey{i, topic, partition}]
	})
}
