package broker

// Follower fetchers (Kafka's ReplicaFetcherManager and ReplicaFetcherThread).
// A follower partition is fetched by one of num.replica.fetchers goroutines
// per leader broker, chosen by a hash of the partition. Each goroutine loops:
// partitions that just became followers first truncate (by leader epoch,
// asking the leader with OffsetForLeaderEpoch, KIP-101/KIP-279), then one
// Fetch with replica_id = this broker carries every ready partition; the
// records are appended as the leader wrote them and the follower's high
// watermark becomes min(leader's, own LEO).
//
// With inter.broker.protocol.version 2.7-IV1 or later (KIP-595's fields) a
// follower whose log has leader epochs skips that first round trip: each
// fetch carries the epoch of its last fetched batch, and a leader whose log
// ends that epoch earlier answers with the diverging epoch and its end
// offset instead of records; the follower truncates there as it would on an
// OffsetForLeaderEpoch answer, and falls back to the round trips only when
// it lacks the leader's epoch (Kafka's truncateOnFetchResponse).
//
// A fetch response is applied under the fetcher's lock and only if the
// partition is still fetched with the same leader epoch and offset, so once
// removePartition returns nothing more is appended under the old leadership.

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/wire"
)

// fetchVersion is the Fetch version followers send (Kafka 2.8's).
const fetchVersion = 12

// replicaFetchResponseMaxBytes is replica.fetch.response.max.bytes (10 MiB).
const replicaFetchResponseMaxBytes = 10 << 20

type fetcherKey struct {
	leader int32
	id     int
}

type fetcherManager struct {
	rm *ReplicaManager

	mu       sync.Mutex
	fetchers map[fetcherKey]*replicaFetcher
	owner    map[kafka.TopicPartition]*replicaFetcher
	closed   bool
}

func newFetcherManager(rm *ReplicaManager) *fetcherManager {
	return &fetcherManager{rm: rm, fetchers: map[fetcherKey]*replicaFetcher{}, owner: map[kafka.TopicPartition]*replicaFetcher{}}
}

func fetcherID(tp kafka.TopicPartition, n int) int {
	h := fnv.New32a()
	h.Write([]byte(tp.Topic))
	return int((h.Sum32()*31 + uint32(tp.Partition)) % uint32(n))
}

// addPartition starts fetching tp from leader; truncating means it first
// truncates by leader epoch, which a log with epochs leaves to the fetch
// responses when the inter-broker protocol has truncation on fetch.
func (m *fetcherManager) addPartition(tp kafka.TopicPartition, p *Partition, leader, leaderEpoch int32, truncating bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	key := fetcherKey{leader, fetcherID(tp, m.rm.cfg.numFetchers)}
	f, ok := m.fetchers[key]
	if !ok {
		f = newReplicaFetcher(m.rm, leader, key.id)
		m.fetchers[key] = f
	}
	st := &fetchState{p: p, leaderEpoch: leaderEpoch, fetchOffset: p.log.LogEndOffset(), truncating: truncating, truncateOnFetch: m.rm.cfg.truncateOnFetch, lag: -1}
	st.refreshLastFetchedEpoch()
	if st.lastFetchedEpoch >= 0 {
		st.truncating = false
	}
	f.add(tp, st)
	m.owner[tp] = f
}

// removePartition stops fetching tp; when it returns, no fetch response will
// be applied to it.
func (m *fetcherManager) removePartition(tp kafka.TopicPartition) {
	m.mu.Lock()
	f, ok := m.owner[tp]
	delete(m.owner, tp)
	m.mu.Unlock()
	if ok {
		f.remove(tp)
	}
}

// shutdownIdle stops fetchers left with no partitions.
func (m *fetcherManager) shutdownIdle() {
	m.mu.Lock()
	idle := takeIdle(m.fetchers)
	m.mu.Unlock()
	for _, f := range idle {
		f.stop()
	}
}

func (m *fetcherManager) shutdown() {
	m.mu.Lock()
	m.closed = true
	fetchers := m.fetchers
	m.fetchers = map[fetcherKey]*replicaFetcher{}
	m.owner = map[kafka.TopicPartition]*replicaFetcher{}
	m.mu.Unlock()
	for _, f := range fetchers {
		f.stop()
	}
}

// fetchState is one partition's progress in a fetcher.
type fetchState struct {
	p           *Partition
	leaderEpoch int32
	fetchOffset int64
	// truncating: the partition must truncate by leader epoch before it
	// fetches; resetting: the leader answered OFFSET_OUT_OF_RANGE.
	truncating, resetting bool
	delayUntil            time.Time
	// truncateOnFetch: the inter-broker protocol has truncation on fetch;
	// lastFetchedEpoch is then the log's latest epoch, sent with each fetch,
	// and -1 otherwise (or when the log has no epoch yet).
	truncateOnFetch  bool
	lastFetchedEpoch int32
	// lag is how far the log end is behind the leader's high watermark as
	// of the last response, -1 before one: at 0 the replica is in sync and
	// never throttled (Kafka's PartitionFetchState.isReplicaInSync).
	lag int64
}

// refreshLastFetchedEpoch reads lastFetchedEpoch from the log after it
// changed (an append, a truncation, a reset).
func (st *fetchState) refreshLastFetchedEpoch() {
	st.lastFetchedEpoch = -1
	if epoch, ok := st.p.log.LatestEpoch(); ok && st.truncateOnFetch {
		st.lastFetchedEpoch = epoch
	}
}

type replicaFetcher struct {
	rm     *ReplicaManager
	leader int32
	id     int
	log    *zap.Logger
	fetcherThread

	mu         sync.Mutex
	partitions map[kafka.TopicPartition]*fetchState

	client  *wire.Client        // used by the loop goroutine only
	session fetchSessionHandler // used by the loop goroutine only
}

func newReplicaFetcher(rm *ReplicaManager, leader int32, id int) *replicaFetcher {
	f := &replicaFetcher{
		rm: rm, leader: leader, id: id,
		log:           rm.log.Named("replica-fetcher").With(zap.Int32("leader", leader), zap.Int("fetcher-id", id)),
		fetcherThread: newFetcherThread(),
		partitions:    map[kafka.TopicPartition]*fetchState{},
	}
	f.start(f.doWork, rm.cfg.fetchBackoff, f.disconnect)
	return f
}

func (f *replicaFetcher) add(tp kafka.TopicPartition, st *fetchState) {
	f.mu.Lock()
	f.partitions[tp] = st
	// Read under the lock: once added, the loop goroutine owns st.
	fetchOffset, truncating := st.fetchOffset, st.truncating
	f.mu.Unlock()
	f.log.Info("Added partition", zap.Stringer("partition", tp), zap.Int64("fetch-offset", fetchOffset), zap.Bool("truncating", truncating))
	f.wakeUp()
}

func (f *replicaFetcher) remove(tp kafka.TopicPartition) {
	f.mu.Lock()
	delete(f.partitions, tp)
	f.mu.Unlock()
}

func (f *replicaFetcher) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.partitions) == 0
}

// doWork runs one round; false means back off before the next.
func (f *replicaFetcher) doWork() bool {
	f.mu.Lock()
	n := len(f.partitions)
	f.mu.Unlock()
	if n == 0 {
		select {
		case <-f.ctx.Done():
		case <-f.wake:
		}
		return true
	}
	if err := f.connect(); err != nil {
		f.log.Warn("Cannot connect to the leader", zap.Error(err))
		return false
	}
	if !f.truncateAndReset() {
		return false
	}
	req, sent := f.buildFetch()
	if len(sent) == 0 {
		return false
	}
	f.session.build(req)
	ctx, cancel := context.WithTimeout(f.ctx, f.rm.cfg.fetchWaitMax+30*time.Second)
	resp, err := f.client.RequestVersion(ctx, req, fetchVersion)
	cancel()
	if err != nil {
		if f.ctx.Err() == nil {
			f.log.Warn("Fetch from the leader failed", zap.Error(err))
		}
		f.disconnect()
		f.session.handleError()
		return false
	}
	fr := resp.(*kmsg.FetchResponse)
	f.session.handleResponse(fr)
	if fr.ErrorCode == kerr.FetchSessionIDNotFound.Code || fr.ErrorCode == kerr.InvalidFetchSessionEpoch.Code {
		// The next fetch is a full one, which no session error can meet: no back-off.
		f.log.Info("Fetch session lost; the next fetch is full", zap.Int32("session-id", req.SessionID), zap.Int32("session-epoch", req.SessionEpoch), zap.Error(kerr.ErrorForCode(fr.ErrorCode)))
		return true
	}
	return f.processFetch(fr, sent)
}

func (f *replicaFetcher) connect() error {
	if f.client != nil {
		return nil
	}
	addr, ok := f.rm.brokerAddr(f.leader)
	if !ok {
		return errors.New("leader's inter-broker endpoint unknown")
	}
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	c, err := wire.DialSecure(ctx, addr, "replica-fetcher", f.rm.interBroker)
	if err != nil {
		return err
	}
	// Each response is applied (its records appended) before the next request.
	c.ReuseResponseFrames()
	f.client = c
	return nil
}

func (f *replicaFetcher) disconnect() {
	if f.client != nil {
		f.client.Close()
		f.client = nil
	}
}

// buildFetch makes the Fetch request for every partition ready to fetch.
func (f *replicaFetcher) buildFetch() (*kmsg.FetchRequest, map[kafka.TopicPartition]fetchState) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.rm.brokerID
	req.MaxWaitMillis = int32(f.rm.cfg.fetchWaitMax.Milliseconds())
	req.MinBytes = f.rm.cfg.fetchMinBytes
	req.MaxBytes = replicaFetchResponseMaxBytes
	sent := map[kafka.TopicPartition]fetchState{}
	now := time.Now()
	throttle := f.rm.followerQuota
	exceeded := throttle.Exceeded()
	f.mu.Lock()
	defer f.mu.Unlock()
	topics := map[string]int{}
	for tp, st := range f.partitions {
		if st.truncating || st.resetting || now.Before(st.delayUntil) {
			continue
		}
		if exceeded && st.lag != 0 && throttle.IsThrottled(tp.Topic, tp.Partition) {
			continue
		}
		i, ok := topics[tp.Topic]
		if !ok {
			i = len(req.Topics)
			topics[tp.Topic] = i
			req.Topics = append(req.Topics, kmsg.FetchRequestTopic{Topic: tp.Topic})
		}
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = tp.Partition
		fp.CurrentLeaderEpoch = st.leaderEpoch
		fp.FetchOffset = st.fetchOffset
		fp.LastFetchedEpoch = st.lastFetchedEpoch
		fp.LogStartOffset = st.p.log.LogStartOffset()
		fp.PartitionMaxBytes = f.rm.cfg.fetchMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, fp)
		sent[tp] = *st
	}
	return req, sent
}

// processFetch applies a fetch response; false means every partition in it failed. An incremental
// fetch's response leaves out the partitions with nothing new: none is progress too.
func (f *replicaFetcher) processFetch(resp *kmsg.FetchResponse, sent map[kafka.TopicPartition]fetchState) bool {
	if resp.ErrorCode != 0 {
		f.log.Warn("Fetch failed", zap.Error(kerr.ErrorForCode(resp.ErrorCode)))
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	progressed := len(resp.Topics) == 0
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			was, ok := sent[tp]
			st, cur := f.partitions[tp]
			if !ok || !cur || st.leaderEpoch != was.leaderEpoch || st.fetchOffset != was.fetchOffset || st.truncating || st.resetting {
				continue
			}
			log := f.log.With(zap.Stringer("partition", tp))
			switch err := kerr.ErrorForCode(rp.ErrorCode); {
			case err == nil && rp.DivergingEpoch.EndOffset >= 0:
				if err := f.truncateOnFetchResponse(tp, st, rp.DivergingEpoch); err != nil {
					log.Error("Truncating to the diverging epoch failed", zap.Error(err))
					st.delayUntil = time.Now().Add(f.rm.cfg.fetchBackoff)
					continue
				}
				progressed = true
			case err == nil:
				if f.rm.followerQuota.IsThrottled(tp.Topic, tp.Partition) {
					// Counted whether or not the replica is in sync, so the
					// throttled traffic as a whole stays within the rate.
					f.rm.followerQuota.Record(len(rp.RecordBatches))
				}
				if err := f.appendFetched(st, rp); err != nil {
					log.Error("Appending fetched records failed", zap.Int64("fetch-offset", st.fetchOffset), zap.Error(err))
					st.delayUntil = time.Now().Add(f.rm.cfg.fetchBackoff)
					continue
				}
				progressed = true
			case errors.Is(err, kerr.OffsetOutOfRange):
				log.Warn("Fetch offset is out of range on the leader", zap.Int64("fetch-offset", st.fetchOffset))
				st.resetting = true
				progressed = true
			default:
				// FENCED_LEADER_EPOCH waits for a new LeaderAndIsr; the rest
				// (NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, ...) retry.
				log.Info("Fetch partition error; backing off", zap.Error(err))
				st.delayUntil = time.Now().Add(f.rm.cfg.fetchBackoff)
			}
		}
	}
	return progressed
}

// appendFetched appends a partition's fetched records; the caller holds f.mu.
func (f *replicaFetcher) appendFetched(st *fetchState, rp kmsg.FetchResponseTopicPartition) error {
	if len(rp.RecordBatches) > 0 {
		info, err := st.p.appendAsFollower(rp.RecordBatches)
		if err != nil {
			return err
		}
		if info.LastOffset >= 0 {
			st.fetchOffset = info.LastOffset + 1
		}
	}
	st.fetchOffset = max(st.fetchOffset, st.p.log.LogEndOffset())
	st.lag = max(0, rp.HighWatermark-st.fetchOffset)
	st.refreshLastFetchedEpoch()
	st.p.updateFollowerHighWatermark(rp.HighWatermark)
	return st.p.followLeaderLogStartOffset(rp.LogStartOffset)
}

// truncateOnFetchResponse truncates where the leader said this replica's
// log diverged from its own; the caller holds f.mu. When the leader's epoch
// is one this replica lacks, the partition truncates as far as it can and
// goes back to OffsetForLeaderEpoch round trips, as Kafka 2.8 does.
func (f *replicaFetcher) truncateOnFetchResponse(tp kafka.TopicPartition, st *fetchState, diverging kmsg.FetchResponseTopicPartitionDivergingEpoch) error {
	leo := st.p.log.LogEndOffset()
	target, done := truncationTarget(st.p.log, st.p.HighWatermark(), diverging.Epoch, diverging.EndOffset)
	// Even at the log end: that drops an epoch this replica started there
	// as a leader and never wrote in, which the leader does not have.
	if err := st.p.truncateTo(target); err != nil {
		return err
	}
	f.log.Info("Truncated on the fetch response's diverging epoch", zap.Stringer("partition", tp),
		zap.Int32("diverging-epoch", diverging.Epoch), zap.Int64("diverging-end-offset", diverging.EndOffset),
		zap.Int64("truncation-offset", min(target, leo)), zap.Int64("previous-log-end-offset", leo), zap.Bool("complete", done))
	st.fetchOffset = st.p.log.LogEndOffset()
	st.refreshLastFetchedEpoch()
	st.truncating = !done
	return nil
}

// truncationTarget is where a follower log l truncates given the leader's
// answer for its latest epoch, the leader's epoch and that epoch's end
// offset (Kafka's getOffsetTruncationState); hw is where it truncates when
// the leader cannot place the epoch. Not done means the leader's epoch is
// one this replica lacks, so it cuts to its own end of the epochs below it
// and asks again. A future log truncates by its current log's answers.
func truncationTarget(l PartitionLog, hw int64, leaderEpoch int32, leaderEnd int64) (target int64, done bool) {
	leo := l.LogEndOffset()
	switch {
	case leaderEnd == storage.UndefinedEpochOffset:
		// The leader cannot place the epoch: fall back to the high watermark.
		return hw, true
	case leaderEpoch == storage.UndefinedEpoch:
		return min(leaderEnd, leo), true
	}
	ownEpoch, ownEnd := l.EndOffsetForEpoch(leaderEpoch)
	switch {
	case ownEnd == storage.UndefinedEpochOffset:
		return min(leaderEnd, leo), true
	case ownEpoch != leaderEpoch:
		return min(ownEnd, leo), false
	default:
		return min(leaderEnd, ownEnd, leo), true
	}
}

// truncateAndReset does the leader round trips that partitions need before
// fetching: truncation by leader epoch, and the reset after
// OFFSET_OUT_OF_RANGE. A partition the leader answers with an error (often
// UNKNOWN_LEADER_EPOCH: the leader has not applied its LeaderAndIsr yet)
// backs off; a connection failure ends the round (false).
func (f *replicaFetcher) truncateAndReset() bool {
	now := time.Now()
	f.mu.Lock()
	var todo []kafka.TopicPartition
	for tp, st := range f.partitions {
		if (st.truncating || st.resetting) && !now.Before(st.delayUntil) {
			todo = append(todo, tp)
		}
	}
	f.mu.Unlock()
	for _, tp := range todo {
		if f.ctx.Err() != nil {
			return false
		}
		err := f.truncateOrReset(tp)
		var ke *kerr.Error
		switch {
		case err == nil:
		case errors.As(err, &ke):
			f.log.Info("Leader refused the truncation request; backing off", zap.Stringer("partition", tp), zap.Error(err))
			f.mu.Lock()
			if st, ok := f.partitions[tp]; ok {
				st.delayUntil = time.Now().Add(f.rm.cfg.fetchBackoff)
			}
			f.mu.Unlock()
		default:
			f.log.Warn("Truncation before fetching failed; retrying", zap.Stringer("partition", tp), zap.Error(err))
			f.disconnect()
			return false
		}
	}
	return true
}

func (f *replicaFetcher) truncateOrReset(tp kafka.TopicPartition) error {
	f.mu.Lock()
	st, ok := f.partitions[tp]
	var snap fetchState
	if ok {
		snap = *st
	}
	f.mu.Unlock()
	if !ok {
		return nil
	}
	if snap.resetting {
		return f.resetOffset(tp, snap)
	}
	return f.truncateByEpoch(tp, snap)
}

// truncateByEpoch asks the leader where this replica's latest epoch ends and
// truncates there (Kafka's getOffsetTruncationState). When the leader answers
// with an older epoch this replica does not have, it truncates to its own end
// of the largest epoch below that, and asks again (KIP-279).
func (f *replicaFetcher) truncateByEpoch(tp kafka.TopicPartition, snap fetchState) error {
	l := snap.p.log
	for range 100 {
		epoch, ok := l.LatestEpoch()
		target := snap.p.HighWatermark()
		done := true
		if ok {
			leaderEpoch, leaderEnd, err := f.offsetForLeaderEpoch(tp, snap.leaderEpoch, epoch)
			if err != nil {
				return err
			}
			target, done = truncationTarget(l, snap.p.HighWatermark(), leaderEpoch, leaderEnd)
		}
		if applied, err := f.truncateTo(tp, snap, target, done); err != nil || !applied || done {
			return err
		}
	}
	return errors.New("truncation by leader epoch did not converge")
}

// truncateTo cuts the log at target if the partition is still fetched as
// snap was; done ends the truncating state.
func (f *replicaFetcher) truncateTo(tp kafka.TopicPartition, snap fetchState, target int64, done bool) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.partitions[tp]
	if !ok || st.leaderEpoch != snap.leaderEpoch {
		return false, nil
	}
	leo := st.p.log.LogEndOffset()
	// Also at the log end, for the epoch cache (see truncateOnFetchResponse).
	if err := st.p.truncateTo(target); err != nil {
		return false, err
	}
	if target < leo {
		f.log.Info("Truncated by leader epoch", zap.Stringer("partition", tp), zap.Int64("truncation-offset", target), zap.Int64("previous-log-end-offset", leo))
	}
	if done {
		st.truncating = false
		st.fetchOffset = st.p.log.LogEndOffset()
		st.refreshLastFetchedEpoch()
	}
	return true, nil
}

func (f *replicaFetcher) offsetForLeaderEpoch(tp kafka.TopicPartition, currentLeaderEpoch, epoch int32) (int32, int64, error) {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = f.rm.brokerID
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = tp.Partition, currentLeaderEpoch, epoch
	req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: tp.Topic, Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{rp}}}
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	raw, err := f.client.RequestVersion(ctx, req, 3)
	if err != nil {
		return 0, 0, err
	}
	resp := raw.(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic == tp.Topic && p.Partition == tp.Partition {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return 0, 0, err
				}
				return p.LeaderEpoch, p.EndOffset, nil
			}
		}
	}
	return 0, 0, errors.New("OffsetForLeaderEpoch response lacks the partition")
}

// resetOffset handles OFFSET_OUT_OF_RANGE as Kafka's follower does: when the
// leader's log ends before this replica's, truncate to its end; when it
// starts after this replica's end, start over at its start.
func (f *replicaFetcher) resetOffset(tp kafka.TopicPartition, snap fetchState) error {
	leaderEnd, err := f.listOffset(tp, snap.leaderEpoch, storage.LatestTimestamp)
	if err != nil {
		return err
	}
	leaderStart, err := f.listOffset(tp, snap.leaderEpoch, storage.EarliestTimestamp)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.partitions[tp]
	if !ok || st.leaderEpoch != snap.leaderEpoch {
		return nil
	}
	l := st.p.log
	switch leo := l.LogEndOffset(); {
	case leaderEnd < leo:
		if err := st.p.truncateTo(leaderEnd); err != nil {
			return err
		}
	case leo < leaderStart:
		if err := st.p.truncateFullyAndStartAt(leaderStart); err != nil {
			return err
		}
	}
	st.resetting = false
	st.fetchOffset = l.LogEndOffset()
	st.refreshLastFetchedEpoch()
	f.log.Info("Reset fetch offset after OFFSET_OUT_OF_RANGE", zap.Stringer("partition", tp), zap.Int64("fetch-offset", st.fetchOffset),
		zap.Int64("leader-log-end-offset", leaderEnd), zap.Int64("leader-log-start-offset", leaderStart))
	return nil
}

func (f *replicaFetcher) listOffset(tp kafka.TopicPartition, currentLeaderEpoch int32, timestamp int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = f.rm.brokerID
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.CurrentLeaderEpoch, lp.Timestamp = tp.Partition, currentLeaderEpoch, timestamp
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: tp.Topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{lp}}}
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	raw, err := f.client.Request(ctx, req)
	if err != nil {
		return 0, err
	}
	for _, t := range raw.(*kmsg.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			if t.Topic == tp.Topic && p.Partition == tp.Partition {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return 0, err
				}
				return p.Offset, nil
			}
		}
	}
	return 0, errors.New("ListOffsets response lacks the partition")
}
