package broker

// Fetch (key 1), versions 0–12.
//
//	v0, v1: message sets in the v0 format (magic 0); v1 adds throttling
//	v2, v3: in the v1 format (magic 1, timestamps); v3 adds a response size
//	        limit. A consumer's records are down-converted from newer
//	        formats (wire.DownConvert; a topic whose message.format.version
//	        is old enough needs none) unless the topic's
//	        message.downconversion.enable is false (UNSUPPORTED_VERSION);
//	        ZStandard batches get UNSUPPORTED_COMPRESSION_TYPE
//	v4: isolation level, last stable offset, aborted transactions
//	v5: log start offset
//	v6: same as v5
//	v7: fetch sessions (KIP-227, fetch_session.go)
//	v8: same as v7
//	v9: current leader epoch per partition (KIP-320)
//	v10: same as v9
//	v11: rack and preferred read replica (KIP-392); always -1 here
//	v12: flexible, last fetched epoch, diverging epoch
//
// Consumers read below the high watermark, or with isolation level 1
// (read_committed) below the last stable offset, with the aborted
// transactions that overlap what they get, so they can skip those
// producers' records; followers (replica id >= 0) read up to the log end
// offset. Every answer carries the last stable offset. When less than min.bytes is ready the fetch waits up to
// max.wait.ms for an append to any of its partitions (a consumer: for the high
// watermark to move).
//
// A follower's fetch offset is its log end offset: the leader records it
// (with the time the follower last caught up), which may advance the high
// watermark and add the follower back to the ISR.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/wire"
)

var fetchAPI = api{
	key: 1, min: 0, max: maxVersion(1),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		fc := s.fetchSessions.newContext(r.body.(*kmsg.FetchRequest), s.replicas.now())
		if fc.errorCode != 0 {
			return fc.errorResponse()
		}
		req := fc.req
		if req.ReplicaID >= 0 {
			// Followers answer to replication throttles, not client quotas.
			res := s.fetchAuthorized(ctx, r, req)
			s.replicationQuotas.leader.Record(res.throttledBytes(s.replicationQuotas.leader))
			fc.finish(res, s.replicas.now())
			return res.response()
		}
		q, limited := s.clientQuotas.Lookup(quota.Fetch, r.principal().Name, r.clientID())
		if limited {
			limit := float64(req.MaxBytes)
			if req.MaxBytes <= 0 {
				limit = math.MaxInt32
			}
			capped := *req
			capped.MaxBytes = int32(max(min(limit, q.MaxValueInWindow()), 1))
			req = &capped
		}
		res := s.fetchAuthorized(ctx, r, req)
		// consumer_byte_rate counts the records sent, request_percentage the
		// handler's time; a fetch that takes either above its quota is
		// answered empty and its bytes taken back.
		bytes := float64(res.bytes())
		var bandwidth time.Duration
		if limited {
			bandwidth = q.Record(bytes)
		}
		if d := max(bandwidth, s.recordRequestTime(r)); d > 0 {
			if limited {
				q.Unrecord(bytes)
			}
			r.throttle(d)
			res.close()
			return fc.throttledResponse(throttleMillis(d))
		}
		fc.finish(res, s.replicas.now())
		return res.response()
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = code
		for _, t := range req.(*kmsg.FetchRequest).Topics {
			rt := kmsg.FetchResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rp := newFetchPartition(p.Partition)
				rp.ErrorCode = code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	},
}

// handleFetch answers a Fetch; with zeroCopy (a plain TCP connection) the
// records stay in their segment files for the listener to send from there.
func (s *Server) handleFetch(ctx context.Context, req *kmsg.FetchRequest, zeroCopy bool) *fetchResult {
	deadline := time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	w := newPartitionWaiter()
	defer w.stop()
	for first := true; ; first = false {
		res, size, failed := s.readFetch(req, first, zeroCopy, w)
		if size >= int64(req.MinBytes) || failed || req.MaxWaitMillis <= 0 || !w.watching() {
			return res
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return res
		}
		res.close()
		if !w.wait(ctx, remaining) {
			// Timed out or shutting down: answer with what there is now.
			res, _, _ = s.readFetch(req, false, zeroCopy, w)
			return res
		}
	}
}

// readFetch reads every requested partition once. It returns the response,
// the record bytes in it and whether any partition failed; the first read
// has w watch each partition it reads, for more data, and records a
// follower's position.
func (s *Server) readFetch(req *kmsg.FetchRequest, first, zeroCopy bool, w *partitionWaiter) (res *fetchResult, size int64, failed bool) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	res = &fetchResult{resp: resp}
	maxBytes := int64(req.MaxBytes)
	if req.Version < 3 || maxBytes <= 0 {
		maxBytes = 1<<31 - 1
	}
	follower := req.ReplicaID >= 0
	for ti, t := range req.Topics {
		rt := kmsg.FetchResponseTopic{Topic: t.Topic}
		for pi, fp := range t.Partitions {
			rp := newFetchPartition(fp.Partition)
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			p, _, err := s.replicas.leaderPartition(t.Topic, fp.Partition, fp.CurrentLeaderEpoch)
			if err != nil {
				rp.ErrorCode = errorCode(err)
				failed = true
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if follower && !p.isReplica(req.ReplicaID) {
				// Kafka answers a fetch from a broker outside the replica set
				// with no records, so it cannot read above the high watermark.
				hw := p.HighWatermark()
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hw, hw, p.log.LogStartOffset()
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if follower && fp.LastFetchedEpoch >= 0 {
				diverging, err := divergingEpoch(p, fp.FetchOffset, fp.LastFetchedEpoch)
				if err != nil || diverging.EndOffset >= 0 {
					// Answered at once, and the follower's position is
					// not recorded: it is about to truncate.
					rp.ErrorCode, rp.DivergingEpoch = errorCode(err), diverging
					hw := p.HighWatermark()
					rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hw, p.log.LastStableOffset(), p.log.LogStartOffset()
					failed = true
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
			}
			if first {
				// Before the read, so no change after it is missed.
				w.watch(p, follower)
			}
			var bound int64
			// throttled: the records of an out-of-sync follower are held
			// back while the leader's replication throttle is exceeded; the
			// ISR is read before this fetch may expand it, as in Kafka.
			throttled := false
			if follower {
				lq := s.replicationQuotas.leader
				throttled = lq.IsThrottled(t.Topic, fp.Partition) && !p.inISR(req.ReplicaID) && lq.Exceeded()
				bound = p.log.LogEndOffset()
				if first && fp.FetchOffset <= bound && p.followerFetch(req.ReplicaID, fp.FetchOffset, fp.LogStartOffset, bound, s.replicas.now()) {
					s.replicas.maybeExpandIsr(p, req.ReplicaID)
				}
			}
			// Read once, after a follower's fetch, which may move them.
			hw, lso := p.HighWatermark(), p.log.LastStableOffset()
			readCommitted := !follower && req.IsolationLevel == 1
			switch {
			case readCommitted:
				bound = lso
			case !follower:
				bound = hw
			}
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hw, lso, p.log.LogStartOffset()
			limit := min(int64(fp.PartitionMaxBytes), maxBytes-size)
			// KIP-74: the first partition returns at least one batch even
			// when it is larger than the limits, so consumers make progress.
			var records []byte
			var file *storage.FileRecords
			// Records that need no conversion may stay in the file.
			inFile := zeroCopy && (follower || req.Version >= 4)
			switch {
			case throttled:
			case inFile:
				file, err = p.log.ReadFileRecords(fp.FetchOffset, int32(max(limit, 0)), bound, size == 0)
			default:
				records, err = p.log.Read(fp.FetchOffset, int32(max(limit, 0)), bound, size == 0)
			}
			lastOffset := int64(-1)
			switch {
			case err != nil:
			case file != nil:
				size += int64(file.Len())
				lastOffset = file.LastOffset()
				if file.Len() > 0 {
					res.files.add(ti, pi, file)
				} else {
					records = []byte{}
				}
			default:
				size += int64(len(records))
				lastOffset = lastOffsetOf(records)
				if req.Version <= 3 && !follower && len(records) > 0 {
					records, err = downConvert(p, records, req.Version, fp.FetchOffset)
				}
			}
			if err != nil {
				rp.ErrorCode = errorCode(err)
				failed = true
			} else {
				if records != nil {
					rp.RecordBatches = records
				}
				if readCommitted {
					rp.AbortedTransactions = abortedTransactions(p, fp.FetchOffset, lastOffset)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return res, size, failed
}

// newFetchPartition is a partition of a Fetch answer with no records yet:
// an empty record set, never a null one, as Kafka's MemoryRecords.EMPTY.
// librdkafka refuses a null one ("invalid MessageSetSize -1") without reading
// the partition's error, and so keeps fetching from a broker that answers
// NOT_LEADER_OR_FOLLOWER instead of refreshing its metadata.
func newFetchPartition(partition int32) kmsg.FetchResponseTopicPartition {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition, rp.RecordBatches = partition, []byte{}
	return rp
}

// lastOffsetOf is the last offset in whole batches, or -1 when there are none.
func lastOffsetOf(records []byte) int64 {
	last := int64(-1)
	for b, err := range wire.Batches(records) {
		if err != nil {
			break
		}
		last = b.LastOffset()
	}
	return last
}

// divergingEpoch checks a follower's fetch against the epoch of its last
// fetched batch (KIP-595, Kafka 2.8's Partition.readRecords): when this
// log ends that epoch below the fetch offset, or knows only an older epoch,
// the follower's log diverged and the answer is the epoch and its end offset
// here (EndOffset -1 when it did not). A fetch this log cannot place is
// OFFSET_OUT_OF_RANGE.
func divergingEpoch(p *Partition, fetchOffset int64, lastFetchedEpoch int32) (kmsg.FetchResponseTopicPartitionDivergingEpoch, error) {
	none := kmsg.NewFetchResponseTopicPartitionDivergingEpoch()
	epoch, end := p.log.EndOffsetForEpoch(lastFetchedEpoch)
	switch {
	case epoch == storage.UndefinedEpoch || end == storage.UndefinedEpochOffset:
		return none, fmt.Errorf("cannot place the last fetched epoch %d of %s-%d: %w", lastFetchedEpoch, p.Topic, p.Index, kerr.OffsetOutOfRange)
	case fetchOffset < p.log.LogStartOffset():
		return none, fmt.Errorf("fetch offset %d is below the log start offset of %s-%d: %w", fetchOffset, p.Topic, p.Index, kerr.OffsetOutOfRange)
	case epoch < lastFetchedEpoch || end < fetchOffset:
		return kmsg.FetchResponseTopicPartitionDivergingEpoch{Epoch: epoch, EndOffset: end}, nil
	}
	return none, nil
}

// downConvert rewrites a consumer's records for Fetch v0–v3 in the message
// format it reads (Kafka's KafkaApis.maybeConvertFetchedData): v0 for
// Fetch v0–v1, v1 for v2–v3. As there, records of a topic whose
// message.format.version is no newer than that format go out as stored,
// and so do records already all in it or older; only the rest are converted,
// if message.downconversion.enable allows it.
func downConvert(p *Partition, records []byte, version int16, fetchOffset int64) ([]byte, error) {
	magic := wire.MagicV1
	if version <= 1 {
		magic = wire.MagicV0
	}
	cfg := p.log.Config()
	if cfg.MessageFormat <= magic || compatibleMagic(records, magic) {
		return records, nil
	}
	if !cfg.MessageDownconversionEnable {
		return nil, fmt.Errorf("down-conversion is disabled for %s-%d: %w", p.Topic, p.Index, kerr.UnsupportedVersion)
	}
	out, err := wire.DownConvert(records, magic, fetchOffset)
	switch {
	case errors.Is(err, wire.ErrUnknownCodec):
		return nil, fmt.Errorf("%v: %w", err, kerr.UnsupportedCompressionType)
	case err != nil:
		return nil, fmt.Errorf("%v: %w", err, kerr.CorruptMessage)
	}
	return out, nil
}

// compatibleMagic reports whether every whole batch in records is in the
// message format magic or an older one (Kafka's hasCompatibleMagic).
func compatibleMagic(records []byte, magic int8) bool {
	for b, err := range wire.Batches(records) {
		if err != nil {
			break
		}
		if b.Magic > magic {
			return false
		}
	}
	return true
}

// abortedTransactions lists the aborted transactions overlapping the
// records a read_committed fetch from fetchOffset returns, up to lastOffset:
// an empty list when there are none, as Kafka answers every read_committed
// fetch.
func abortedTransactions(p *Partition, fetchOffset, lastOffset int64) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	out := []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	upTo := lastOffset + 1
	if upTo <= fetchOffset {
		return out
	}
	for _, a := range p.log.AbortedTransactions(fetchOffset, upTo) {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
		out = append(out, at)
	}
	return out
}
