package broker

// Moving replicas between this broker's log dirs (Kafka's
// ReplicaAlterLogDirsManager and ReplicaAlterLogDirsThread, KIP-113). A
// partition being moved has a future log in its destination dir
// (storage.Manager.GetOrCreateFuture); one of len(log.dirs) goroutines,
// chosen by a hash of the partition, copies the current log into it as a
// follower copies its leader's: it reads the local log from the future
// log's end, up to the log end, and appends the batches as they are. It
// first truncates the future log by leader epoch against the current log,
// and again whenever the current log is truncated, so the copy is always a
// prefix of the current log. Once the copy reaches the current log's end
// the two are swapped (storage.Manager.ReplaceCurrentWithFuture, under both
// logs' writer locks, so no append in between is lost).
//
// Each goroutine copies one partition at a time, in topic-partition order,
// and stays with it until it is moved or removed, as Kafka's thread does.
// The copy is throttled by replica.alter.log.dirs.io.max.bytes.per.second
// from this broker's dynamic config: no read while the measured rate is
// above it (replicationQuotas.alterLogDirs).

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/storage"
)

type alterLogDirsManager struct {
	rm *ReplicaManager
	n  int // goroutines: num.replica.alter.log.dirs.threads, by default the number of log dirs

	mu       sync.Mutex
	fetchers map[int]*alterLogDirsFetcher
	closed   bool
}

func newAlterLogDirsManager(rm *ReplicaManager, n int) *alterLogDirsManager {
	return &alterLogDirsManager{rm: rm, n: max(n, 1), fetchers: map[int]*alterLogDirsFetcher{}}
}

// addPartition starts copying the partition's log into future, after a
// truncation by leader epoch whose fallback offset is initOffset (Kafka's
// InitialFetchState: the future log's high watermark for a new move, the
// current log's after a restart). A partition already being copied goes on
// as it was.
func (m *alterLogDirsManager) addPartition(tp kafka.TopicPartition, p *Partition, future *storage.Log, initOffset int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	id := fetcherID(tp, m.n)
	f, ok := m.fetchers[id]
	if !ok {
		f = newAlterLogDirsFetcher(m.rm, id)
		m.fetchers[id] = f
	}
	f.add(tp, &alterLogDirsState{p: p, future: future, fetchOffset: initOffset, truncating: true})
}

// removePartition stops copying tp; when it returns, nothing more is
// appended to its future log by the copy.
func (m *alterLogDirsManager) removePartition(tp kafka.TopicPartition) {
	if f := m.fetcher(tp); f != nil {
		f.remove(tp)
	}
}

// markForTruncation tells the copy of tp that its current log was cut at
// offset: the copy truncates by leader epoch before it goes on (Kafka's
// markPartitionsForTruncation).
func (m *alterLogDirsManager) markForTruncation(tp kafka.TopicPartition, offset int64) {
	if f := m.fetcher(tp); f != nil {
		f.markForTruncation(tp, offset)
	}
}

// moving reports whether tp is being copied.
func (m *alterLogDirsManager) moving(tp kafka.TopicPartition) bool {
	f := m.fetcher(tp)
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.partitions[tp]
	return ok
}

func (m *alterLogDirsManager) fetcher(tp kafka.TopicPartition) *alterLogDirsFetcher {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fetchers[fetcherID(tp, m.n)]
}

// shutdownIdle stops the goroutines left with no partition.
func (m *alterLogDirsManager) shutdownIdle() {
	m.mu.Lock()
	idle := takeIdle(m.fetchers)
	m.mu.Unlock()
	for _, f := range idle {
		f.stop()
	}
}

func (m *alterLogDirsManager) shutdown() {
	m.mu.Lock()
	m.closed = true
	fetchers := m.fetchers
	m.fetchers = map[int]*alterLogDirsFetcher{}
	m.mu.Unlock()
	for _, f := range fetchers {
		f.stop()
	}
}

// alterLogDirsState is one partition's copy.
type alterLogDirsState struct {
	p      *Partition
	future *storage.Log
	// fetchOffset is where the future log truncates when the current log
	// cannot place its latest epoch (or it has none); truncating says it
	// must truncate before it copies more.
	fetchOffset int64
	truncating  bool
	delayUntil  time.Time
}

// alterLogDirsFetcher is one ReplicaAlterLogDirsThread.
type alterLogDirsFetcher struct {
	rm  *ReplicaManager
	log *zap.Logger
	fetcherThread

	// mu guards partitions and is held for a whole round of copying, so a
	// removal or a truncation mark waits for the round.
	mu         sync.Mutex
	partitions map[kafka.TopicPartition]*alterLogDirsState
	// inProgress is the partition being copied (loop goroutine only).
	inProgress *kafka.TopicPartition
}

func newAlterLogDirsFetcher(rm *ReplicaManager, id int) *alterLogDirsFetcher {
	f := &alterLogDirsFetcher{
		rm:            rm,
		log:           rm.log.Named("replica-alter-log-dirs").With(zap.Int("fetcher-id", id)),
		fetcherThread: newFetcherThread(),
		partitions:    map[kafka.TopicPartition]*alterLogDirsState{},
	}
	f.start(f.doWork, rm.cfg.fetchBackoff, func() {})
	return f
}

func (f *alterLogDirsFetcher) add(tp kafka.TopicPartition, st *alterLogDirsState) {
	f.mu.Lock()
	if _, ok := f.partitions[tp]; ok {
		f.mu.Unlock()
		return
	}
	f.partitions[tp] = st
	f.mu.Unlock()
	f.log.Info("Added log dir fetcher for partition", zap.Stringer("partition", tp), zap.Int64("initial-offset", st.fetchOffset),
		zap.String("future-dir", st.future.Dir()))
	f.wakeUp()
}

func (f *alterLogDirsFetcher) remove(tp kafka.TopicPartition) {
	f.mu.Lock()
	delete(f.partitions, tp)
	f.mu.Unlock()
}

func (f *alterLogDirsFetcher) markForTruncation(tp kafka.TopicPartition, offset int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st, ok := f.partitions[tp]; ok {
		st.fetchOffset = min(offset, st.future.LogEndOffset())
		st.truncating = true
		st.delayUntil = time.Time{}
	}
}

func (f *alterLogDirsFetcher) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.partitions) == 0
}

// doWork copies one batch of the partition in progress; false means back
// off before the next round.
func (f *alterLogDirsFetcher) doWork() bool {
	if f.rm.alterLogDirsQuota.Exceeded() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	tp, st := f.selectPartition()
	if st == nil {
		return false
	}
	log := f.log.With(zap.Stringer("partition", *tp))
	progressed, err := f.copyOnce(*tp, st)
	var ke *kerr.Error
	switch {
	case err == nil:
		return progressed
	case errors.Is(err, kerr.KafkaStorageError), errors.Is(err, storage.ErrLogClosed):
		// A failed log dir takes the move with it, as Kafka's failed partitions.
		log.Error("Moving the replica between log dirs failed; giving up", zap.Error(err))
		delete(f.partitions, *tp)
		f.inProgress = nil
	case errors.As(err, &ke):
		log.Warn("Copying to the future log failed; backing off", zap.Error(err))
		st.delayUntil = time.Now().Add(f.rm.cfg.fetchBackoff)
	default:
		log.Error("Copying to the future log failed; backing off", zap.Error(err))
		st.delayUntil = time.Now().Add(f.rm.cfg.fetchBackoff)
	}
	return false
}

// selectPartition keeps to the partition in progress while it is ready,
// else takes the first ready one in topic-partition order (Kafka's
// selectPartitionToFetch). The caller holds f.mu.
func (f *alterLogDirsFetcher) selectPartition() (*kafka.TopicPartition, *alterLogDirsState) {
	now := time.Now()
	if f.inProgress != nil {
		if st, ok := f.partitions[*f.inProgress]; ok && !now.Before(st.delayUntil) {
			return f.inProgress, st
		}
	}
	f.inProgress = nil
	var next *kafka.TopicPartition
	for tp, st := range f.partitions {
		if now.Before(st.delayUntil) || (next != nil && kafka.Compare(tp, *next) >= 0) {
			continue
		}
		next = &tp
	}
	if next == nil {
		return nil, nil
	}
	st := f.partitions[*next]
	f.log.Info("Beginning/resuming copy of partition", zap.Stringer("partition", *next), zap.Int64("fetch-offset", st.future.LogEndOffset()),
		zap.Int("remaining-partitions", len(f.partitions)))
	f.inProgress = next
	return next, st
}

// copyOnce truncates the future log if it must, else appends what the
// current log has from the future log's end (up to
// replica.fetch.max.bytes), then swaps the logs if they now end together.
// The caller holds f.mu.
func (f *alterLogDirsFetcher) copyOnce(tp kafka.TopicPartition, st *alterLogDirsState) (bool, error) {
	cur := st.p.log
	if st.truncating {
		return true, f.truncate(tp, st)
	}
	fetchOffset := st.future.LogEndOffset()
	data, err := cur.Read(fetchOffset, f.rm.cfg.fetchMaxBytes, math.MaxInt64, true)
	if errors.Is(err, kerr.OffsetOutOfRange) {
		return true, f.reset(tp, st)
	}
	if err != nil {
		return false, err
	}
	if len(data) > 0 {
		if _, err := st.future.AppendAsFollower(data); err != nil {
			return false, err
		}
		f.rm.alterLogDirsQuota.Record(len(data))
	}
	st.future.SetHighWatermark(cur.HighWatermark())
	if start := cur.LogStartOffset(); start > st.future.LogStartOffset() && start <= st.future.HighWatermark() {
		if err := st.future.MaybeIncrementLogStartOffset(start, storage.LeaderOffsetIncremented); err != nil {
			return false, err
		}
	}
	swapped, err := f.rm.logs.ReplaceCurrentWithFuture(tp.Topic, tp.Partition)
	if err != nil {
		return false, err
	}
	if swapped {
		delete(f.partitions, tp)
		f.inProgress = nil
		return true, nil
	}
	return len(data) > 0, nil
}

// truncate cuts the future log where it diverges from the current log,
// asking the current log for the end of the future log's latest epoch as a
// follower asks its leader (Kafka's ReplicaAlterLogDirsThread truncates by
// leader epoch, never on fetch).
func (f *alterLogDirsFetcher) truncate(tp kafka.TopicPartition, st *alterLogDirsState) error {
	cur := st.p.log
	leo := st.future.LogEndOffset()
	for range 100 {
		target, done := st.fetchOffset, true
		if epoch, ok := st.future.LatestEpoch(); ok {
			currentEpoch, end := cur.EndOffsetForEpoch(epoch)
			target, done = truncationTarget(st.future, st.fetchOffset, currentEpoch, end)
		}
		if err := st.future.Truncate(target); err != nil {
			return err
		}
		if done {
			st.truncating = false
			if now := st.future.LogEndOffset(); now < leo {
				f.log.Info("Truncated the future log by leader epoch", zap.Stringer("partition", tp), zap.Int64("truncation-offset", now),
					zap.Int64("previous-log-end-offset", leo))
			}
			return nil
		}
	}
	return errors.New("truncation of the future log by leader epoch did not converge")
}

// reset handles a future log end outside the current log's offsets: past
// its end the future log truncates there, before its start it restarts at
// the start (Kafka's handling of OFFSET_OUT_OF_RANGE).
func (f *alterLogDirsFetcher) reset(tp kafka.TopicPartition, st *alterLogDirsState) error {
	cur := st.p.log
	start, end, leo := cur.LogStartOffset(), cur.LogEndOffset(), st.future.LogEndOffset()
	switch {
	case end < leo:
		if err := st.future.Truncate(end); err != nil {
			return err
		}
	case leo < start:
		if err := st.future.TruncateFullyAndStartAt(start); err != nil {
			return err
		}
	}
	f.log.Info("Reset the future log's fetch offset", zap.Stringer("partition", tp), zap.Int64("fetch-offset", st.future.LogEndOffset()),
		zap.Int64("current-log-start-offset", start), zap.Int64("current-log-end-offset", end))
	return nil
}
