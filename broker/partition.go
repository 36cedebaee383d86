package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/internal/reqclock"
	"github.com/zkafka/zkafka/storage"
)

// PartitionLog is the log a Partition keeps its records in: a *storage.Log
// in a broker; unit tests of leadership, ISR and high watermark use a fake.
type PartitionLog interface {
	LogStartOffset() int64
	LogEndOffset() int64
	HighWatermark() int64
	// SetHighWatermark stores hw, clamped to the log's bounds, and returns
	// the value kept.
	SetHighWatermark(hw int64) int64
	AssignLeaderEpoch(epoch int32) error
	AppendAsLeader(records []byte, leaderEpoch int32) (storage.AppendInfo, error)
	AppendAsCoordinator(records []byte, leaderEpoch int32) (storage.AppendInfo, error)
	AppendAsFollower(records []byte) (storage.AppendInfo, error)
	Truncate(to int64) error
	TruncateFullyAndStartAt(offset int64) error
	Read(offset int64, maxBytes int32, maxOffset int64, minOneMessage bool) ([]byte, error)
	ReadFileRecords(offset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (*storage.FileRecords, error)
	FetchOffsetByTimestamp(ts int64) (offset, timestamp int64, ok bool)
	EndOffsetForEpoch(epoch int32) (int32, int64)
	LatestEpoch() (int32, bool)
	ProducerStates() map[int64]storage.ProducerEntry
	LastStableOffset() int64
	AbortedTransactions(from, upTo int64) []storage.AbortedTxn
	MaybeIncrementLogStartOffset(offset int64, reason storage.LogStartOffsetReason) error
	Config() storage.LogConfig
}

// Partition is one replica of a topic-partition on this broker: its log, and
// the leadership state the controller last sent. Its mutex guards leader,
// ISR, follower and high-watermark state (the log stores the high watermark,
// which also bounds retention); appends to the log are serialized by the log
// itself. ISR writes to ZooKeeper are serialized by isrMu, taken before mu
// and never while holding it.
type Partition struct {
	Topic string
	Index int32
	log   PartitionLog
	// now is the clock the lag rules read (time.Now; tests control it).
	now func() time.Time
	// onTruncate, set before the partition is shared, learns of every
	// truncation of its log (the alter-log-dirs fetcher truncates its copy,
	// as Kafka's markPartitionsForTruncation).
	onTruncate func(offset int64)

	isrMu sync.Mutex

	mu              sync.RWMutex
	brokerID        int32
	leader          int32
	leaderEpoch     int32
	controllerEpoch int32
	isr             []int32
	replicas        []int32
	zkVersion       int32
	// pendingIsr is the ISR being written (by this leader, or by the
	// controller through AlterIsr), if any. Until the write completes the high
	// watermark honours the "maximal" ISR, the union of both, as Kafka's does:
	// ZooKeeper may already name a joining follower, which the controller
	// could elect.
	pendingIsr []int32
	// lagTimeMax is replica.lag.time.max.ms: followers caught up within it
	// hold the high watermark back even outside the ISR, if isrEligible
	// (nil: always) says their broker is alive.
	lagTimeMax  time.Duration
	isrEligible func(broker int32) bool
	// leaderEpochStartOffset is the LEO when this broker became leader: a
	// follower joins the ISR only once it has reached it (KAFKA-7128).
	leaderEpochStartOffset int64
	// leaderSinceEpoch is the leader epoch in which this broker last took
	// leadership from another broker (or from none). Leadership has lasted
	// since a record was appended in epoch e exactly when it is the leader
	// and leaderSinceEpoch <= e, whatever epochs the controller added meanwhile.
	leaderSinceEpoch int32
	// minInsyncReplicas is min.insync.replicas for this topic.
	minInsyncReplicas int32
	// remote is the leader's view of each follower, from its fetches.
	remote map[int32]*replicaState
	// hwChanged is closed and replaced whenever the high watermark, the ISR
	// or the leadership changes: a one-partition wait (awaitHighWatermark)
	// waits on it. hwWaiters, the partitionWaiters of consumer fetches and
	// acks=all produces, are signalled at the same changes; dataWaiters,
	// follower fetches', at every append and leadership change. As in Kafka,
	// a follower's waiting fetch is not answered early because the high
	// watermark moved, so a follower learns the high watermark one fetch late.
	hwChanged              chan struct{}
	hwWaiters, dataWaiters map[chan struct{}]struct{}
}

// replicaState is what the leader knows of one follower (Kafka's Replica).
type replicaState struct {
	leo int64 // -1 until the follower's first fetch under this leadership
	// logStartOffset is the follower's log start offset as its latest fetch
	// said, -1 until then: the low watermark DeleteRecords waits for.
	logStartOffset int64
	// lastCaughtUp is the last time the follower's fetch reached the
	// leader's LEO as of its previous fetch; the ISR check measures lag
	// from it.
	lastCaughtUp       time.Time
	lastFetchLeaderLEO int64
	lastFetchTime      time.Time
}

func newPartition(topic string, index, brokerID int32, log PartitionLog, lagTimeMax time.Duration) *Partition {
	return &Partition{
		Topic: topic, Index: index, brokerID: brokerID, log: log, now: time.Now, lagTimeMax: lagTimeMax,
		leader: -1, leaderEpoch: -1, minInsyncReplicas: 1, remote: map[int32]*replicaState{},
		hwChanged: make(chan struct{}),
	}
}

// partitionState is the leadership a LeaderAndIsr request assigns.
type partitionState struct {
	leader, leaderEpoch, controllerEpoch, zkVersion int32
	isr, replicas                                   []int32
}

// makeLeader takes leadership (Kafka's Partition.makeLeader): the new epoch
// starts at the current LEO and is recorded in the leader-epoch cache, ISR
// followers count as caught up now, the others never; follower LEOs are
// unknown until they fetch, unless this broker led already.
func (p *Partition) makeLeader(s partitionState, minInsync int32, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	wasLeader := p.leader == p.brokerID
	p.setStateLocked(s)
	if !wasLeader {
		p.leaderSinceEpoch = s.leaderEpoch
	}
	p.minInsyncReplicas = minInsync
	p.leaderEpochStartOffset = p.log.LogEndOffset()
	old := p.remote
	p.remote = make(map[int32]*replicaState, len(s.replicas))
	for _, r := range s.replicas {
		if r == p.brokerID {
			continue
		}
		st := &replicaState{leo: -1, logStartOffset: -1}
		if prev, ok := old[r]; ok && wasLeader {
			st.leo, st.logStartOffset = prev.leo, prev.logStartOffset
		}
		if containsID(s.isr, r) {
			st.lastCaughtUp = now
		}
		p.remote[r] = st
	}
	err := p.log.AssignLeaderEpoch(s.leaderEpoch)
	p.maybeIncrementHighWatermarkLocked()
	p.notifyLocked()
	return err
}

// makeFollower takes a follower's state; followers track no replica state.
func (p *Partition) makeFollower(s partitionState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setStateLocked(s)
	p.remote = map[int32]*replicaState{}
	p.notifyLocked()
}

func (p *Partition) setStateLocked(s partitionState) {
	p.leader, p.leaderEpoch, p.controllerEpoch, p.zkVersion = s.leader, s.leaderEpoch, s.controllerEpoch, s.zkVersion
	p.isr, p.replicas, p.pendingIsr = slices.Clone(s.isr), slices.Clone(s.replicas), nil
}

// LeaderEpoch returns the current leader epoch (-1 before the first state).
func (p *Partition) LeaderEpoch() int32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.leaderEpoch
}

// Leader returns the current leader's id (-1 before the first state).
func (p *Partition) Leader() int32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.leader
}

// ISR returns the in-sync replicas as the leader knows them (a follower
// keeps what the controller last sent).
func (p *Partition) ISR() []int32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Clone(p.isr)
}

// FollowerLEO returns the log end offset the leader last learnt from a
// follower's fetch; false when unknown.
func (p *Partition) FollowerLEO(replica int32) (int64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	r, ok := p.remote[replica]
	if !ok || r.leo < 0 {
		return 0, false
	}
	return r.leo, true
}

// SetMinInsyncReplicas changes min.insync.replicas (a topic config change).
func (p *Partition) SetMinInsyncReplicas(n int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.minInsyncReplicas = n
}

// checkLeader returns NOT_LEADER_OR_FOLLOWER unless this broker leads, and the
// Kafka epoch errors when the client states a current leader epoch (-1 means
// it does not).
func (p *Partition) checkLeader(currentLeaderEpoch int32) (leaderEpoch int32, err error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	switch {
	case currentLeaderEpoch >= 0 && currentLeaderEpoch < p.leaderEpoch:
		return p.leaderEpoch, kerr.FencedLeaderEpoch
	case currentLeaderEpoch > p.leaderEpoch:
		return p.leaderEpoch, kerr.UnknownLeaderEpoch
	case p.leader != p.brokerID:
		return p.leaderEpoch, kerr.NotLeaderForPartition
	}
	return p.leaderEpoch, nil
}

// appendAsLeader appends a produce request's records and advances the high
// watermark when the ISR allows. With acks=all it first checks
// min.insync.replicas (NOT_ENOUGH_REPLICAS, nothing appended). It returns the
// leader epoch the records were written in.
func (p *Partition) appendAsLeader(records []byte, acks int16) (storage.AppendInfo, int32, error) {
	return p.appendRecordsAsLeader(records, acks, p.log.AppendAsLeader)
}

// appendAsCoordinator appends a coordinator's records (group and
// transaction metadata, transaction markers), always with acks=all.
func (p *Partition) appendAsCoordinator(records []byte) (storage.AppendInfo, int32, error) {
	return p.appendRecordsAsLeader(records, -1, p.log.AppendAsCoordinator)
}

func (p *Partition) appendRecordsAsLeader(records []byte, acks int16, appendFn func([]byte, int32) (storage.AppendInfo, error)) (storage.AppendInfo, int32, error) {
	// The read lock is held across the append, as Kafka holds its
	// leaderIsrUpdateLock: a LeaderAndIsr that demotes this broker waits for
	// the append, so nothing is acknowledged by a former leader.
	p.mu.RLock()
	leader, epoch, isrSize, minInsync := p.leader, p.leaderEpoch, len(p.isr), p.minInsyncReplicas
	if leader != p.brokerID {
		p.mu.RUnlock()
		return storage.AppendInfo{}, epoch, kerr.NotLeaderForPartition
	}
	if acks == -1 && int32(isrSize) < minInsync {
		p.mu.RUnlock()
		return storage.AppendInfo{}, epoch, kerr.NotEnoughReplicas
	}
	info, err := appendFn(records, epoch)
	p.mu.RUnlock()
	if err != nil {
		return info, epoch, err
	}
	p.mu.Lock()
	p.maybeIncrementHighWatermarkLocked()
	p.notifyDataLocked()
	p.mu.Unlock()
	return info, epoch, nil
}

// produceStatus reports whether an acks=all produce of records ending at
// requiredOffset (exclusive), appended in leaderEpoch, is complete, and with
// which error (Kafka's Partition.checkEnoughReplicasReachOffset): done once
// the high watermark reaches the records. A newer leader epoch alone changes
// nothing: the controller bumps it when it drops a dead follower from the
// ISR, and the records are then committed by the remaining ISR. Only
// leadership lost since the append fails the produce, as a later leader may
// have truncated the records away.
func (p *Partition) produceStatus(requiredOffset int64, leaderEpoch int32) (done bool, err error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.leader != p.brokerID || p.leaderSinceEpoch > leaderEpoch {
		return true, kerr.NotLeaderForPartition
	}
	if p.log.HighWatermark() < requiredOffset {
		return false, nil
	}
	if int32(len(p.isr)) < p.minInsyncReplicas {
		return true, kerr.NotEnoughReplicasAfterAppend
	}
	return true, nil
}

// awaitHighWatermark waits until an append of records ending at
// requiredOffset (exclusive) in leaderEpoch is complete (Kafka's
// DelayedProduce for one partition): the high watermark passed it, or
// leadership moved (NOT_LEADER_OR_FOLLOWER), or ctx ended
// (REQUEST_TIMED_OUT at its deadline).
func (p *Partition) awaitHighWatermark(ctx context.Context, requiredOffset int64, leaderEpoch int32) error {
	defer reqclock.Waited(ctx, time.Now())
	for {
		ch := p.waitChan()
		if done, err := p.produceStatus(requiredOffset, leaderEpoch); done {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return kerr.RequestTimedOut
			}
			return ctx.Err()
		}
	}
}

// maybeIncrementHighWatermarkLocked sets the high watermark to the smallest
// log end offset among the leader, the followers of the maximal ISR (the ISR
// and a pending change) and any follower caught up within
// replica.lag.time.max.ms (Kafka 2.8's rule) whose broker is alive (Kafka
// 3.3's, KIP-841: a leader that handed its partitions over in controlled
// shutdown follows the new leader, catches up and exits, and under 2.8's
// rule held every acks=all append for the whole lag time), never moving it
// back. An ISR follower whose position is not known yet holds it where it
// is. It reports whether it moved (and woke the waiters).
func (p *Partition) maybeIncrementHighWatermarkLocked() bool {
	if p.leader != p.brokerID {
		return false
	}
	for _, r := range p.isr {
		if _, ok := p.remote[r]; !ok && r != p.brokerID {
			return false
		}
	}
	now := p.now()
	hw := p.log.LogEndOffset()
	for r, st := range p.remote {
		inIsr := containsID(p.isr, r) || containsID(p.pendingIsr, r)
		if !inIsr && (now.Sub(st.lastCaughtUp) > p.lagTimeMax || p.isrEligible != nil && !p.isrEligible(r)) {
			continue
		}
		if st.leo < 0 {
			if inIsr {
				return false
			}
			continue
		}
		hw = min(hw, st.leo)
	}
	if hw > p.log.HighWatermark() {
		p.log.SetHighWatermark(hw)
		p.notifyHighWatermarkLocked()
		return true
	}
	return false
}

// followerFetch records a follower's fetch at fetchOffset (its LEO), with its
// log start offset, when the leader's LEO was leaderLEO (Kafka's
// updateFollowerFetchState), advances the
// high watermark, and reports whether the follower should now join the ISR:
// it is not in it, has reached the high watermark and the start of the
// current leader epoch.
func (p *Partition) followerFetch(replica int32, fetchOffset, logStartOffset, leaderLEO int64, now time.Time) (expand bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.remote[replica]
	if !ok || p.leader != p.brokerID {
		return false
	}
	if logStartOffset > st.logStartOffset {
		// The low watermark may have moved: wake DeleteRecords waiters.
		st.logStartOffset = logStartOffset
		p.notifyHighWatermarkLocked()
	}
	switch {
	case fetchOffset >= leaderLEO:
		st.lastCaughtUp = maxTime(st.lastCaughtUp, now)
	case fetchOffset >= st.lastFetchLeaderLEO:
		// It reached what the leader had at its previous fetch: a steady
		// trickle of produces does not make it lag.
		st.lastCaughtUp = maxTime(st.lastCaughtUp, st.lastFetchTime)
	}
	st.lastFetchLeaderLEO, st.lastFetchTime = leaderLEO, now
	st.leo = fetchOffset
	p.maybeIncrementHighWatermarkLocked()
	return !containsID(p.isr, replica) && fetchOffset >= p.log.HighWatermark() && fetchOffset >= p.leaderEpochStartOffset
}

// inISR reports whether broker id is in the ISR.
func (p *Partition) inISR(id int32) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return containsID(p.isr, id)
}

// isReplica reports whether broker id is in the partition's replica set.
func (p *Partition) isReplica(id int32) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return containsID(p.replicas, id)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// outOfSyncReplicas returns the ISR followers that have not caught up to the
// leader's LEO within maxLag (Kafka's getOutOfSyncReplicas).
func (p *Partition) outOfSyncReplicas(now time.Time, maxLag time.Duration) []int32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.leader != p.brokerID {
		return nil
	}
	leo := p.log.LogEndOffset()
	var out []int32
	for _, r := range p.isr {
		st, ok := p.remote[r]
		if r == p.brokerID || !ok {
			continue
		}
		if st.leo != leo && now.Sub(st.lastCaughtUp) > maxLag {
			out = append(out, r)
		}
	}
	return out
}

// isrSnapshot is what an ISR write to ZooKeeper is conditional on.
type isrSnapshot struct {
	leaderEpoch, controllerEpoch, zkVersion int32
	isr                                     []int32
	// pending says an ISR change is being written (pendingIsr).
	pending bool
}

func (p *Partition) leaderSnapshot() (isrSnapshot, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return isrSnapshot{p.leaderEpoch, p.controllerEpoch, p.zkVersion, slices.Clone(p.isr), p.pendingIsr != nil}, p.leader == p.brokerID
}

// setPendingIsr records (or, with nil, clears) an ISR being written to
// ZooKeeper, for the maximal-ISR high watermark.
func (p *Partition) setPendingIsr(leaderEpoch int32, isr []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leaderEpoch == leaderEpoch {
		p.pendingIsr = slices.Clone(isr)
	}
}

// adoptIsr takes an ISR this leader wrote to ZooKeeper at zkVersion, unless
// the leadership changed meanwhile.
func (p *Partition) adoptIsr(leaderEpoch int32, isr []int32, zkVersion int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader != p.brokerID || p.leaderEpoch != leaderEpoch {
		return false
	}
	p.isr, p.zkVersion, p.pendingIsr = slices.Clone(isr), zkVersion, nil
	p.maybeIncrementHighWatermarkLocked()
	p.notifyHighWatermarkLocked()
	return true
}

// lowWatermarkLocked is the smallest log start offset among the leader and
// the followers on alive brokers (Kafka's lowWatermarkIfLeader): -1 while
// such a follower has not fetched under this leadership. Records below it
// are gone from every live replica.
func (p *Partition) lowWatermarkLocked(alive func(int32) bool) int64 {
	lw := p.log.LogStartOffset()
	for r, st := range p.remote {
		if alive(r) {
			lw = min(lw, st.logStartOffset)
		}
	}
	return lw
}

// deleteRecordsOnLeader moves the leader's log start offset up to offset
// (-1: the high watermark) for DeleteRecords (Kafka's
// Partition.deleteRecordsOnLeader) and returns the low watermark after it and
// the offset it must reach for the request to complete.
func (p *Partition) deleteRecordsOnLeader(offset int64, alive func(int32) bool) (lowWatermark, required int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader != p.brokerID {
		return -1, -1, fmt.Errorf("leader not local for partition %s-%d on broker %d: %w", p.Topic, p.Index, p.brokerID, kerr.NotLeaderForPartition)
	}
	if !p.log.Config().Deletes() {
		return -1, -1, fmt.Errorf("records of partition %s-%d can not be deleted due to the configured policy: %w", p.Topic, p.Index, kerr.PolicyViolation)
	}
	if offset == -1 {
		offset = p.log.HighWatermark()
	}
	if offset < 0 {
		return -1, -1, fmt.Errorf("the offset %d for partition %s-%d is not valid: %w", offset, p.Topic, p.Index, kerr.OffsetOutOfRange)
	}
	if err := p.log.MaybeIncrementLogStartOffset(offset, storage.ClientRecordDeletion); err != nil {
		return -1, -1, err
	}
	return p.lowWatermarkLocked(alive), offset, nil
}

// awaitLowWatermark waits until the low watermark reaches required (Kafka's
// DelayedDeleteRecords for one partition) and returns it; leadership lost
// fails it with NOT_LEADER_OR_FOLLOWER, and ctx's deadline with
// REQUEST_TIMED_OUT.
func (p *Partition) awaitLowWatermark(ctx context.Context, required int64, alive func(int32) bool) (int64, error) {
	defer reqclock.Waited(ctx, time.Now())
	for {
		p.mu.RLock()
		ch, leading, lw := p.hwChanged, p.leader == p.brokerID, p.lowWatermarkLocked(alive)
		p.mu.RUnlock()
		switch {
		case !leading:
			return -1, kerr.NotLeaderForPartition
		case lw >= required:
			return lw, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return lw, kerr.RequestTimedOut
			}
			return lw, ctx.Err()
		}
	}
}

// followLeaderLogStartOffset moves a follower's log start offset up to its
// leader's, as Kafka's ReplicaFetcherThread does after each fetch, once its
// high watermark has reached it.
func (p *Partition) followLeaderLogStartOffset(leaderLogStartOffset int64) error {
	if leaderLogStartOffset <= p.log.LogStartOffset() || leaderLogStartOffset > p.log.HighWatermark() {
		return nil
	}
	return p.log.MaybeIncrementLogStartOffset(leaderLogStartOffset, storage.LeaderOffsetIncremented)
}

// updateFollowerHighWatermark is a follower's high watermark after a fetch:
// the leader's, bounded by its own LEO.
func (p *Partition) updateFollowerHighWatermark(leaderHW int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if hw := min(leaderHW, p.log.LogEndOffset()); hw > p.log.HighWatermark() {
		p.log.SetHighWatermark(hw)
	}
}

// notifyLocked wakes every waiter: the leadership changed.
func (p *Partition) notifyLocked() {
	p.notifyHighWatermarkLocked()
	p.notifyDataLocked()
}

func (p *Partition) notifyHighWatermarkLocked() {
	close(p.hwChanged)
	p.hwChanged = make(chan struct{})
	signalWaiters(p.hwWaiters)
}

func (p *Partition) notifyDataLocked() {
	signalWaiters(p.dataWaiters)
}

// addWaiter has ch signalled at each change of what a consumer (follower
// false) or a follower (true) may read.
func (p *Partition) addWaiter(ch chan struct{}, follower bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := &p.hwWaiters
	if follower {
		m = &p.dataWaiters
	}
	if *m == nil {
		*m = map[chan struct{}]struct{}{}
	}
	(*m)[ch] = struct{}{}
}

// removeWaiter undoes addWaiter.
func (p *Partition) removeWaiter(ch chan struct{}, follower bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if follower {
		delete(p.dataWaiters, ch)
	} else {
		delete(p.hwWaiters, ch)
	}
}

// HighWatermark returns the offset below which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 { return p.log.HighWatermark() }

// waitChan returns a channel closed at the next change of what a consumer
// may read.
func (p *Partition) waitChan() <-chan struct{} {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.hwChanged
}

// Log returns the partition's log.
func (p *Partition) Log() PartitionLog { return p.log }

// appendAsFollower appends batches fetched from the leader, keeping their
// offsets and leader epochs.
func (p *Partition) appendAsFollower(records []byte) (storage.AppendInfo, error) {
	return p.log.AppendAsFollower(records)
}

// truncateTo cuts the log at offset (whole batches), as a follower does
// before fetching from a new leader.
func (p *Partition) truncateTo(offset int64) error {
	if err := p.log.Truncate(offset); err != nil {
		return err
	}
	p.truncated(offset)
	return nil
}

// truncateFullyAndStartAt empties the log and restarts it at offset, for a
// follower whose log ends before the leader's starts.
func (p *Partition) truncateFullyAndStartAt(offset int64) error {
	if err := p.log.TruncateFullyAndStartAt(offset); err != nil {
		return err
	}
	p.truncated(offset)
	return nil
}

// truncated tells a copy of this replica to another log dir that the log
// was cut at offset: what it copied from there on may be gone.
func (p *Partition) truncated(offset int64) {
	if p.onTruncate != nil {
		p.onTruncate(offset)
	}
}
