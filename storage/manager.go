package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/workers"
	"github.com/zkafka/zkafka/kafka"
)

// Manager owns the logs of every log.dirs entry, as Kafka's LogManager does: it loads them at start,
// creates and deletes them, runs retention, and keeps each directory's checkpoint files
// (recovery-point-offset-checkpoint, log-start-offset-checkpoint, replication-offset-checkpoint) and
// clean-shutdown marker.
type Manager struct {
	logger          *zap.Logger
	defaults        LogConfig
	recoveryThreads int // num.recovery.threads.per.data.dir: workers opening, and at Close flushing, a dir's logs
	dirs            []string
	locks           []*os.File

	// mu guards the maps and closed. A Log's own locks may be held when taking it (the swap of a
	// future log does), never the other way round.
	mu     sync.Mutex
	logs   map[kafka.TopicPartition]*Log
	future map[kafka.TopicPartition]*Log // logs being moved to another dir (future.go)
	// preferred is where a partition's log goes when it is created (AlterReplicaLogDirs named a
	// partition this broker had no replica of yet).
	preferred map[kafka.TopicPartition]string
	closed    bool

	checkpointMu sync.Mutex // one checkpoint writer at a time

	// failMu guards failed; it is taken last, under any other lock. offline receives each directory
	// once, when it fails: its capacity is the number of directories, so a send never blocks.
	failMu  sync.Mutex
	failed  map[string]bool
	offline chan string
}

// NewManager locks every directory in dirs (creating missing ones) and loads every `<topic>-<partition>`
// log in them with the defaults config; GetOrCreate applies a topic's own config later. A directory with
// a `.kafka_cleanshutdown` marker was closed cleanly: its logs are trusted up to their checkpointed
// recovery point, or wholly when the checkpoint lacks them. Without the marker the logs recover from their
// checkpointed recovery points (from 0 when missing). The marker is removed once the logs are loaded.
// recoveryThreads (num.recovery.threads.per.data.dir, at least 1) workers open each directory's logs,
// and flush and close them at Close.
func NewManager(dirs []string, defaults LogConfig, recoveryThreads int, logger *zap.Logger) (*Manager, error) {
	if len(dirs) == 0 {
		return nil, errors.New("storage: no log directories")
	}
	if recoveryThreads < 1 {
		return nil, fmt.Errorf("storage: %d recovery threads per data dir, want at least 1", recoveryThreads)
	}
	if err := defaults.Validate(); err != nil {
		return nil, fmt.Errorf("storage: default log config: %w", err)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	m := &Manager{
		logger:          logger.Named("log-manager"),
		defaults:        defaults,
		recoveryThreads: recoveryThreads,
		logs:            make(map[kafka.TopicPartition]*Log),
		future:          make(map[kafka.TopicPartition]*Log),
		preferred:       make(map[kafka.TopicPartition]string),
		failed:          make(map[string]bool),
		offline:         make(chan string, len(dirs)),
	}
	start := time.Now()
	for _, dir := range dirs {
		if err := m.loadDir(dir); err != nil {
			m.abort()
			return nil, err
		}
	}
	m.logger.Info("Logs loading complete", zap.Int("logs", len(m.logs)), zap.Duration("took", time.Since(start)))
	return m, nil
}

// loadDir locks dir and loads its logs.
func (m *Manager) loadDir(dir string) error {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("storage: create log dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	m.dirs = append(m.dirs, dir)
	m.locks = append(m.locks, lock)

	recoveryPoints, err := ReadOffsetCheckpoint(filepath.Join(dir, RecoveryPointCheckpointFile))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	startOffsets, err := ReadOffsetCheckpoint(filepath.Join(dir, LogStartOffsetCheckpointFile))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	highWatermarks, err := ReadOffsetCheckpoint(filepath.Join(dir, ReplicationOffsetCheckpointFile))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	firstDirty, err := ReadOffsetCheckpoint(filepath.Join(dir, CleanerOffsetCheckpointFile))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	marker := filepath.Join(dir, CleanShutdownFile)
	_, statErr := os.Stat(marker)
	clean := statErr == nil
	m.logger.Info("Loading logs", zap.String("dir", dir), zap.Bool("clean-shutdown", clean))

	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	var jobs []loadJob
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			continue
		}
		if _, ok := parseSuffixedDirName(name, deleteDirSuffix); ok {
			// A log replaced by its future log just before a crash: Kafka deletes these after load.
			m.logger.Info("Deleting a log marked for deletion", zap.String("dir", dir), zap.String("name", name))
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return storageError("delete "+name, err)
			}
			continue
		}
		tp, isFuture := parseSuffixedDirName(name, futureDirSuffix)
		if !isFuture {
			if tp, err = kafka.ParseTopicPartition(name); err != nil {
				m.logger.Warn("Skipping directory that is not a partition log", zap.String("dir", dir), zap.String("name", name))
				continue
			}
		}
		logs := m.logs
		if isFuture {
			logs = m.future
		}
		if other, dup := logs[tp]; dup {
			// Kafka's message: a crash between the two renames of a future log's swap leaves both.
			return fmt.Errorf("storage: duplicate log directories for %s are found in both %s and %s; "+
				"it is likely because log directory failure happened while broker was replacing current replica with future replica; "+
				"recover broker from this failure by manually deleting one of the two directories for this partition",
				tp, other.Dir(), filepath.Join(dir, name))
		}
		recoveryPoint, ok := recoveryPoints[tp]
		switch {
		case !ok && clean:
			recoveryPoint = math.MaxInt64
		case !ok:
			recoveryPoint = 0
		}
		jobs = append(jobs, loadJob{name: name, tp: tp, future: isFuture, recoveryPoint: recoveryPoint})
	}
	// Kafka's num.recovery.threads.per.data.dir: the logs of a dir are opened (and recovered) by
	// that many workers.
	opened := make([]*Log, len(jobs))
	errs := make([]error, len(jobs))
	workers.ForEach(m.recoveryThreads, len(jobs), func(i int) {
		j := jobs[i]
		opened[i], errs[i] = openLog(filepath.Join(dir, j.name), m.defaults, j.recoveryPoint, startOffsets[j.tp], m.logger.Named("log"))
	})
	for i, j := range jobs {
		l := opened[i]
		if l == nil {
			continue
		}
		l.onFailure = func(err error) { m.dirFailed(dir, err) }
		l.setFirstDirtyOffset(firstDirty[j.tp])
		if j.future {
			m.future[j.tp] = l
		} else {
			m.logs[j.tp] = l
		}
		if hw, ok := highWatermarks[j.tp]; ok {
			l.SetHighWatermark(hw)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if clean {
		if err := os.Remove(marker); err != nil {
			return fmt.Errorf("storage: remove clean shutdown marker: %w", err)
		}
	}
	return nil
}

// loadJob is one log directory loadDir opens.
type loadJob struct {
	name          string
	tp            kafka.TopicPartition
	future        bool
	recoveryPoint int64
}

// abort closes what a failed NewManager opened.
func (m *Manager) abort() {
	for _, l := range m.logs {
		l.Close()
	}
	for _, l := range m.future {
		l.Close()
	}
	for _, f := range m.locks {
		unlockDir(f)
	}
}

// Dirs returns the log directories in the order given.
func (m *Manager) Dirs() []string { return append([]string(nil), m.dirs...) }

// GetOrCreate returns the partition's log, creating it in the directory holding the fewest logs when it
// does not exist. cfg becomes the log's config either way: Kafka hands topic overrides to its LogManager
// at load, but this one loads without ZooKeeper, so the broker brings them here.
func (m *Manager) GetOrCreate(topic string, partition int32, cfg LogConfig) (*Log, error) {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	if err := validTopicPartition(tp); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrManagerClosed
	}
	if l, ok := m.logs[tp]; ok {
		return l, l.SetConfig(cfg)
	}
	dir := m.dirs[0]
	if len(m.dirs) > 1 {
		// The dir holding the fewest logs, counted each time as Kafka's nextLogDirs does; with one
		// dir there is nothing to count, which at tens of thousands of partitions matters.
		counts := make(map[string]int, len(m.dirs))
		for _, l := range m.logs {
			counts[filepath.Dir(l.Dir())]++
		}
		for _, d := range m.dirs[1:] {
			if counts[d] < counts[dir] {
				dir = d
			}
		}
	}
	if d, ok := m.preferred[tp]; ok {
		dir = d
	}
	l, err := openLog(filepath.Join(dir, tp.String()), cfg, 0, 0, m.logger.Named("log"))
	if err != nil {
		if errors.Is(err, kerr.KafkaStorageError) {
			m.dirFailed(dir, err)
		}
		return nil, err
	}
	l.onFailure = func(err error) { m.dirFailed(dir, err) }
	m.logs[tp] = l
	delete(m.preferred, tp)
	m.logger.Info("Created log", zap.Stringer("partition", tp), zap.String("dir", dir))
	return l, nil
}

// validTopicPartition rejects names that could not be a directory of their own.
func validTopicPartition(tp kafka.TopicPartition) error {
	if tp.Topic == "" || tp.Topic == "." || tp.Topic == ".." || strings.ContainsAny(tp.Topic, `/\`+"\x00") || tp.Partition < 0 {
		return fmt.Errorf("storage: invalid partition %q %d", tp.Topic, tp.Partition)
	}
	return nil
}

// Get returns the partition's log if it exists.
func (m *Manager) Get(topic string, partition int32) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[kafka.TopicPartition{Topic: topic, Partition: partition}]
	return l, ok
}

// All returns every log by partition.
func (m *Manager) All() map[kafka.TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.logs)
}

// Delete removes the partition's log and its future log, if any, with their directories, then
// rewrites the checkpoints of their log dirs so they no longer name them. Deleting a partition that
// has no log is not an error.
func (m *Manager) Delete(topic string, partition int32) error {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrManagerClosed
	}
	l, ok := m.logs[tp]
	fut, hasFuture := m.future[tp]
	delete(m.logs, tp)
	delete(m.future, tp)
	delete(m.preferred, tp)
	m.mu.Unlock()
	if !ok && !hasFuture {
		return nil
	}
	if ok {
		if err := l.Delete(); err != nil {
			return err
		}
		m.logger.Info("Deleted log", zap.Stringer("partition", tp))
	}
	if hasFuture {
		if err := fut.Delete(); err != nil {
			return err
		}
		m.logger.Info("Deleted future log", zap.Stringer("partition", tp))
	}
	return m.Checkpoint()
}

// Run applies retention every retentionCheckInterval (log.retention.check.interval.ms), at the time
// now tells, and writes the checkpoints every checkpointInterval until ctx is done. A non-positive
// interval turns that task off.
func (m *Manager) Run(ctx context.Context, now func() time.Time, retentionCheckInterval, checkpointInterval time.Duration, producers ProducerExpiration) {
	retention := tickerChan(retentionCheckInterval)
	defer retention.stop()
	checkpoint := tickerChan(checkpointInterval)
	defer checkpoint.stop()
	expiry := tickerChan(producers.CheckInterval)
	defer expiry.stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expiry.c:
			m.ExpireProducers(now(), producers.After)
		case <-retention.c:
			m.CleanupLogs(now())
		case <-checkpoint.c:
			if err := m.Checkpoint(); err != nil && !errors.Is(err, ErrManagerClosed) {
				m.logger.Error("Writing checkpoints failed", zap.Error(err))
			}
		}
	}
}

// ticker is a time.Ticker whose channel is nil (never ready) when the interval is off.
type ticker struct {
	t *time.Ticker
	c <-chan time.Time
}

func tickerChan(d time.Duration) ticker {
	if d <= 0 {
		return ticker{}
	}
	t := time.NewTicker(d)
	return ticker{t: t, c: t.C}
}

func (t ticker) stop() {
	if t.t != nil {
		t.t.Stop()
	}
}

// ProducerExpiration is when Run forgets idle producers: those idle for After
// (transactional.id.expiration.ms), checked every CheckInterval (Kafka 2.8's
// fixed 10 minutes, ProducerIDExpirationCheckInterval; 0 never).
type ProducerExpiration struct {
	After, CheckInterval time.Duration
}

// ProducerIDExpirationCheckInterval is Kafka's LogManager.ProducerIdExpirationCheckIntervalMs.
const ProducerIDExpirationCheckInterval = 10 * time.Minute

// ExpireProducers runs RemoveExpiredProducers at now on every log and returns how many producers
// went.
func (m *Manager) ExpireProducers(now time.Time, after time.Duration) int {
	n := 0
	for _, l := range m.All() {
		n += l.RemoveExpiredProducers(now.UnixMilli(), after)
	}
	if n > 0 {
		m.logger.Info("Removed expired producer ids", zap.Int("producers", n), zap.Duration("idle-for", after))
	}
	return n
}

// CleanupLogs runs DeleteOldSegments at now on every log and returns how many segments went.
func (m *Manager) CleanupLogs(now time.Time) int {
	total := 0
	for tp, l := range m.All() {
		n, err := l.DeleteOldSegments(now.UnixMilli())
		total += n
		if err != nil && !errors.Is(err, ErrLogClosed) {
			m.logger.Error("Retention failed", zap.Stringer("partition", tp), zap.Error(err))
		}
	}
	return total
}

// Checkpoint writes every directory's recovery points, log start offsets, high watermarks and the
// cleaner's first dirty offsets.
func (m *Manager) Checkpoint() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrManagerClosed
	}
	m.mu.Unlock()
	return m.checkpoint(m.All(), m.Futures())
}

// checkpoint writes the offsets of the current and future logs, each in its own directory.
func (m *Manager) checkpoint(current, future map[kafka.TopicPartition]*Log) error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	type offsets struct {
		recovery, start, hw, cleaner map[kafka.TopicPartition]int64
	}
	byDir := make(map[string]offsets, len(m.dirs))
	for _, dir := range m.dirs {
		// Only the live dirs are written, as Kafka's liveLogDirs.
		if !m.Offline(dir) {
			byDir[dir] = offsets{map[kafka.TopicPartition]int64{}, map[kafka.TopicPartition]int64{}, map[kafka.TopicPartition]int64{}, map[kafka.TopicPartition]int64{}}
		}
	}
	for _, logs := range []map[kafka.TopicPartition]*Log{current, future} {
		for tp, l := range logs {
			o, live := byDir[filepath.Dir(l.Dir())]
			if !live {
				continue
			}
			o.recovery[tp] = l.RecoveryPoint()
			o.start[tp] = l.LogStartOffset()
			o.hw[tp] = l.HighWatermark()
			if d := l.FirstDirtyOffset(); d > 0 {
				o.cleaner[tp] = d
			}
		}
	}
	var err error
	for dir, o := range byDir {
		derr := errors.Join(
			WriteOffsetCheckpoint(filepath.Join(dir, RecoveryPointCheckpointFile), o.recovery),
			WriteOffsetCheckpoint(filepath.Join(dir, LogStartOffsetCheckpointFile), o.start),
			WriteOffsetCheckpoint(filepath.Join(dir, ReplicationOffsetCheckpointFile), o.hw),
			WriteOffsetCheckpoint(filepath.Join(dir, CleanerOffsetCheckpointFile), o.cleaner))
		if derr != nil {
			m.dirFailed(dir, derr)
		}
		err = errors.Join(err, derr)
	}
	return err
}

// OfflineDirs delivers each log directory once, when an I/O error first takes it offline: a failed
// append, roll, flush, truncation or log creation in it, or a failed checkpoint. It is Kafka's
// LogDirFailureChannel; the broker decides what an offline directory costs it.
func (m *Manager) OfflineDirs() <-chan string { return m.offline }

// Offline reports whether dir went offline after an I/O error.
func (m *Manager) Offline(dir string) bool {
	m.failMu.Lock()
	defer m.failMu.Unlock()
	return m.failed[dir]
}

// dirFailed takes dir offline after err, once.
func (m *Manager) dirFailed(dir string, err error) {
	m.failMu.Lock()
	defer m.failMu.Unlock()
	if m.failed[dir] {
		return
	}
	m.failed[dir] = true
	m.logger.Error("Error while writing to a log dir: it is offline", zap.String("dir", dir), zap.Error(err))
	m.offline <- dir
}

// Close flushes and closes every log, writes the checkpoints and, when all of that succeeded, the clean
// shutdown marker of each directory; then it releases the directory locks. A directory taken offline
// gets none of that: its logs are closed as they are. Stop Run first.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	logs, future := m.logs, m.future
	m.mu.Unlock()

	// Each dir's logs are flushed and closed by num.recovery.threads.per.data.dir workers, the dirs
	// side by side, as Kafka's LogManager.shutdown does.
	byDir := map[string][]*Log{}
	for _, logs := range []map[kafka.TopicPartition]*Log{logs, future} {
		for _, l := range logs {
			dir := filepath.Dir(l.Dir())
			byDir[dir] = append(byDir[dir], l)
		}
	}
	dirs := slices.Sorted(maps.Keys(byDir))
	errs := make([]error, len(dirs))
	workers.ForEach(len(dirs), len(dirs), func(d int) {
		dirLogs := byDir[dirs[d]]
		if m.Offline(dirs[d]) {
			// Nothing more reaches a failed dir; its logs recover at the next start.
			for _, l := range dirLogs {
				l.Close()
			}
			return
		}
		logErrs := make([]error, len(dirLogs))
		workers.ForEach(m.recoveryThreads, len(dirLogs), func(i int) {
			l := dirLogs[i]
			if ferr := l.Flush(); ferr != nil {
				logErrs[i] = fmt.Errorf("flush %s: %w", l.Dir(), ferr)
			}
			if cerr := l.Close(); cerr != nil {
				logErrs[i] = errors.Join(logErrs[i], fmt.Errorf("close %s: %w", l.Dir(), cerr))
			}
		})
		errs[d] = errors.Join(logErrs...)
	})
	err := errors.Join(errs...)
	err = errors.Join(err, m.checkpoint(logs, future))
	if err == nil {
		for _, dir := range m.dirs {
			if m.Offline(dir) {
				continue
			}
			if werr := writeFileAtomic(filepath.Join(dir, CleanShutdownFile), nil); werr != nil {
				err = errors.Join(err, werr)
			}
		}
	}
	for _, f := range m.locks {
		err = errors.Join(err, unlockDir(f))
	}
	m.logger.Info("Log manager shut down", zap.Bool("clean", err == nil))
	return err
}
