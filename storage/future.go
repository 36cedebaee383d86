package storage

// Future logs (KIP-113): moving a replica from one of the broker's log dirs to another. The broker
// creates a future log in the destination dir, `<topic>-<partition>.<uniqueId>-future`, copies the
// current log into it, and once the copy has caught up the Manager swaps them: the future directory
// is renamed `<topic>-<partition>` and the current one `<topic>-<partition>.<uniqueId>-delete`, then
// removed. A future log found at load is the future log again, and the copy resumes.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Suffixes of a partition directory being moved between log dirs or awaiting deletion (Kafka's
// Log.FutureDirSuffix and DeleteDirSuffix).
const (
	futureDirSuffix = "-future"
	deleteDirSuffix = "-delete"
)

// FutureDirName is a new name for the partition's future log, as Kafka's Log.logFutureDirName:
// `<topic>-<partition>.<32 hex digits>-future`. Its length does not depend on the random part.
func FutureDirName(tp kafka.TopicPartition) string { return suffixedDirName(tp, futureDirSuffix) }

func suffixedDirName(tp kafka.TopicPartition, suffix string) string {
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never returns an error
	return tp.String() + "." + hex.EncodeToString(id[:]) + suffix
}

// parseSuffixedDirName parses a `<topic>-<partition>.<uniqueId><suffix>` directory name.
func parseSuffixedDirName(name, suffix string) (kafka.TopicPartition, bool) {
	rest, ok := strings.CutSuffix(name, suffix)
	if !ok {
		return kafka.TopicPartition{}, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || i == len(rest)-1 {
		return kafka.TopicPartition{}, false
	}
	tp, err := kafka.ParseTopicPartition(rest[:i])
	return tp, err == nil
}

// logName is the partition a log directory's name stands for, for the log's logger.
func logName(dir string) string {
	name := filepath.Base(dir)
	for _, suffix := range []string{futureDirSuffix, deleteDirSuffix} {
		if tp, ok := parseSuffixedDirName(name, suffix); ok {
			return tp.String()
		}
	}
	return name
}

// DirOf returns the log.dirs entry whose absolute path is path, as Kafka matches the directories of
// AlterReplicaLogDirs and DescribeLogDirs.
func (m *Manager) DirOf(path string) (string, bool) {
	for _, d := range m.dirs {
		if abs, err := filepath.Abs(d); err == nil && abs == path {
			return d, true
		}
	}
	return "", false
}

// MaybeUpdatePreferredLogDir remembers dir as where the partition's log goes when GetOrCreate creates
// it, unless its current or future log is already there (Kafka's LogManager.maybeUpdatePreferredLogDir):
// AlterReplicaLogDirs may name a partition before this broker has its replica.
func (m *Manager) MaybeUpdatePreferredLogDir(topic string, partition int32, dir string) {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.logs[tp]; ok && filepath.Dir(l.Dir()) == dir {
		return
	}
	if l, ok := m.future[tp]; ok && filepath.Dir(l.Dir()) == dir {
		return
	}
	m.preferred[tp] = dir
}

// Future returns the partition's future log if it has one.
func (m *Manager) Future(topic string, partition int32) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.future[kafka.TopicPartition{Topic: topic, Partition: partition}]
	return l, ok
}

// Futures returns every future log by partition.
func (m *Manager) Futures() map[kafka.TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.future)
}

// GetOrCreateFuture returns the partition's future log, creating it in dir when it has none (Kafka's
// getOrCreateLog with isFuture). The current log must exist elsewhere than dir, an existing future
// log must be in dir, and no log dir may be offline: a future log created while one is could
// duplicate a log the offline dir holds, so that is a KAFKA_STORAGE_ERROR, as in Kafka.
func (m *Manager) GetOrCreateFuture(topic string, partition int32, dir string, cfg LogConfig) (*Log, error) {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrManagerClosed
	}
	cur, ok := m.logs[tp]
	switch {
	case !ok:
		return nil, fmt.Errorf("storage: no current log for %s", tp)
	case filepath.Dir(cur.Dir()) == dir:
		return nil, fmt.Errorf("storage: cannot create the future log of %s in its current log dir %s", tp, dir)
	}
	if l, ok := m.future[tp]; ok {
		if filepath.Dir(l.Dir()) != dir {
			return nil, fmt.Errorf("storage: the future log of %s is in %s, not %s", tp, filepath.Dir(l.Dir()), dir)
		}
		return l, nil
	}
	if offline := m.offlineDirs(); len(offline) > 0 {
		return nil, storageError("create the future log of "+tp.String(),
			fmt.Errorf("log directories %s are offline", strings.Join(offline, ",")))
	}
	l, err := openLog(filepath.Join(dir, FutureDirName(tp)), cfg, 0, 0, m.logger.Named("log"))
	if err != nil {
		if errors.Is(err, kerr.KafkaStorageError) {
			m.dirFailed(dir, err)
		}
		return nil, err
	}
	l.onFailure = func(err error) { m.dirFailed(dir, err) }
	m.future[tp] = l
	delete(m.preferred, tp)
	m.logger.Info("Created future log", zap.Stringer("partition", tp), zap.String("dir", l.Dir()))
	return l, nil
}

// DeleteFuture removes the partition's future log, if any, and its directory: a move given up.
func (m *Manager) DeleteFuture(topic string, partition int32) error {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	l, ok := m.future[tp]
	delete(m.future, tp)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	if err := l.Delete(); err != nil {
		return err
	}
	m.logger.Info("Deleted future log", zap.Stringer("partition", tp))
	return m.Checkpoint()
}

// ReplaceCurrentWithFuture swaps the partition's future log in for its current one when both end
// at the same offset (Kafka's Partition.maybeReplaceCurrentWithFutureReplica and
// LogManager.replaceCurrentWithFutureLog), and reports whether it did. Both logs' writer locks are
// held from the comparison to the swap, so no append or truncation slips in between. The future
// directory takes the partition's name, the current one is renamed `-delete` and removed. The
// current *Log keeps its identity and takes the future log's data: the partition, the readers and
// the cleaner holding it carry on with the moved log, where Kafka swaps the Log object under the
// partition's leaderIsrUpdateLock.
func (m *Manager) ReplaceCurrentWithFuture(topic string, partition int32) (bool, error) {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	cur, fut := m.logs[tp], m.future[tp]
	m.mu.Unlock()
	if cur == nil || fut == nil {
		return false, nil
	}
	old, err := m.swapIn(tp, cur, fut)
	if err != nil || old == nil {
		return false, err
	}
	// old is the future *Log, now holding the data that was current.
	if err := old.Delete(); err != nil {
		m.logger.Warn("Deleting the replaced log failed", zap.Stringer("partition", tp), zap.Error(err))
	}
	m.logger.Info("The current replica is successfully replaced with the future replica", zap.Stringer("partition", tp),
		zap.String("dir", cur.Dir()))
	return true, m.Checkpoint()
}

// swapIn is ReplaceCurrentWithFuture's work under the logs' locks; it returns fut, now holding the
// replaced data, or nil when the logs do not end at the same offset.
func (m *Manager) swapIn(tp kafka.TopicPartition, cur, fut *Log) (*Log, error) {
	cur.mu.Lock()
	defer cur.mu.Unlock()
	fut.mu.Lock()
	defer fut.mu.Unlock()
	if err := errors.Join(cur.writable(), fut.writable()); err != nil {
		return nil, err
	}
	if cur.LogEndOffset() != fut.LogEndOffset() {
		return nil, nil
	}
	m.mu.Lock()
	current := m.logs[tp] == cur && m.future[tp] == fut
	m.mu.Unlock()
	if !current {
		return nil, nil
	}
	// Rolls start background flushes holding mu, so none starts now; the ones running finish.
	cur.flushes.Wait()
	fut.flushes.Wait()
	cur.flushMu.Lock()
	defer cur.flushMu.Unlock()
	fut.flushMu.Lock()
	defer fut.flushMu.Unlock()

	srcDir, destDir := filepath.Dir(cur.dir), filepath.Dir(fut.dir)
	if err := fut.renameDirLocked(filepath.Join(destDir, tp.String())); err != nil {
		m.dirFailed(destDir, err)
		return nil, storageError("rename the future log of "+tp.String(), err)
	}
	if err := cur.renameDirLocked(filepath.Join(srcDir, suffixedDirName(tp, deleteDirSuffix))); err != nil {
		// Both directories now carry the partition's name: the next start refuses them, as Kafka's.
		m.dirFailed(srcDir, err)
		return nil, storageError("rename the replaced log of "+tp.String(), err)
	}
	hw := cur.HighWatermark()
	exchangeContents(cur, fut)
	cur.SetHighWatermark(hw)
	m.mu.Lock()
	delete(m.future, tp)
	m.mu.Unlock()
	return fut, nil
}

// renameDirLocked moves the log's directory to dir and points its files there (Kafka's
// Log.renameDir). The caller holds mu and flushMu.
func (l *Log) renameDirLocked(dir string) error {
	if err := os.Rename(l.dir, dir); err != nil {
		return err
	}
	if err := syncPath(filepath.Dir(dir)); err != nil {
		return err
	}
	l.segMu.Lock()
	defer l.segMu.Unlock()
	l.dir = dir
	for _, s := range l.segments {
		s.dir = dir
		s.txnIndex.path = txnIndexPath(dir, s.baseOffset)
		s.index.file.path = segmentPath(dir, s.baseOffset, indexSuffix)
		s.timeIndex.file.path = segmentPath(dir, s.baseOffset, timeIndexSuffix)
	}
	l.epochs.mu.Lock()
	l.epochs.path = filepath.Join(dir, LeaderEpochCheckpointFile)
	l.epochs.mu.Unlock()
	return nil
}

// exchangeContents swaps the data of two logs: directory, segments, offsets, leader epochs, producer
// state and transactions. The caller holds both logs' mu and flushMu.
func exchangeContents(a, b *Log) {
	a.segMu.Lock()
	defer a.segMu.Unlock()
	b.segMu.Lock()
	defer b.segMu.Unlock()
	a.dir, b.dir = b.dir, a.dir
	a.logger, b.logger = b.logger, a.logger
	a.segments, b.segments = b.segments, a.segments
	a.logEndOffset, b.logEndOffset = b.logEndOffset, a.logEndOffset
	a.logStartOffset, b.logStartOffset = b.logStartOffset, a.logStartOffset
	a.highWatermark, b.highWatermark = b.highWatermark, a.highWatermark
	a.firstDirtyOffset, b.firstDirtyOffset = b.firstDirtyOffset, a.firstDirtyOffset
	a.recoveryPoint, b.recoveryPoint = b.recoveryPoint, a.recoveryPoint
	a.failure, b.failure = b.failure, a.failure
	a.onFailure, b.onFailure = b.onFailure, a.onFailure
	a.producers, b.producers = b.producers, a.producers
	// A flush that read the segments before the swap must not move either recovery point.
	a.truncations++
	b.truncations++

	a.epochs.mu.Lock()
	b.epochs.mu.Lock()
	a.epochs.entries, b.epochs.entries = b.epochs.entries, a.epochs.entries
	a.epochs.path, b.epochs.path = b.epochs.path, a.epochs.path
	a.epochs.dirty, b.epochs.dirty = b.epochs.dirty, a.epochs.dirty
	b.epochs.mu.Unlock()
	a.epochs.mu.Unlock()

	a.txnMu.Lock()
	b.txnMu.Lock()
	a.txns, b.txns = b.txns, a.txns
	b.txnMu.Unlock()
	a.txnMu.Unlock()
}

// offlineDirs lists the directories taken offline.
func (m *Manager) offlineDirs() []string {
	m.failMu.Lock()
	defer m.failMu.Unlock()
	var out []string
	for _, d := range m.dirs {
		if m.failed[d] {
			out = append(out, d)
		}
	}
	return out
}
