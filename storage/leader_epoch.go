package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// LeaderEpochCheckpointFile is the per-partition file of Kafka's leader-epoch cache: line 1 the version
// (0), line 2 the number of entries, then one "<epoch> <startOffset>" line per entry.
const LeaderEpochCheckpointFile = "leader-epoch-checkpoint"

const leaderEpochCheckpointVersion = 0

// UndefinedEpoch and UndefinedEpochOffset are Kafka's answers for an epoch the cache cannot place.
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// EpochEntry is one leader epoch and the first offset written in it.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// leaderEpochCache is Kafka's LeaderEpochFileCache: the start offset of every leader epoch in the log,
// in increasing order of both, written to its file on every change. It lets a follower find where its
// log diverges from a new leader's (KIP-101). The Log calls it with its writer lock held.
//
// A change is written but not fsynced; the Log's flush fsyncs it (Kafka 3.7, KAFKA-15046). Kafka 2.8
// fsyncs on every change, and a LeaderAndIsr that moves a thousand leaderships waited on a thousand
// fsyncs. Nothing is lost: an epoch's start offset is also in the first record batch of the epoch,
// and the replay at load restores the epochs of the batches past the recovery point, the only ones a
// crash can leave the file without; an epoch with no batch yet tells a follower nothing the previous
// epoch's entry does not.
type leaderEpochCache struct {
	path string

	mu      sync.RWMutex // readers (OffsetForLeaderEpoch) do not take the Log's writer lock
	entries []EpochEntry
	dirty   bool // written since the last fsync
}

// loadLeaderEpochCache reads dir's leader-epoch-checkpoint. A missing file is an empty cache, and so is
// an empty one: a crash of the machine may leave the rename of an unsynced write and not its data.
func loadLeaderEpochCache(dir string) (*leaderEpochCache, error) {
	c := &leaderEpochCache{path: filepath.Join(dir, LeaderEpochCheckpointFile)}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(data) == 0 {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if c.entries, err = parseLeaderEpochCheckpoint(data); err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	return c, nil
}

func parseLeaderEpochCheckpoint(data []byte) ([]EpochEntry, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 {
		return nil, errors.New("leader epoch checkpoint lacks its version and count lines")
	}
	if v, err := strconv.Atoi(lines[0]); err != nil || v != leaderEpochCheckpointVersion {
		return nil, fmt.Errorf("unsupported leader epoch checkpoint version %q", lines[0])
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("leader epoch checkpoint count %q does not match its %d entries", lines[1], len(lines)-2)
	}
	entries := make([]EpochEntry, 0, n)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %q is not <epoch> <startOffset>", l)
		}
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || o < 0 {
			return nil, fmt.Errorf("line %q is not <epoch> <startOffset>", l)
		}
		entries = append(entries, EpochEntry{Epoch: int32(e), StartOffset: o})
	}
	return entries, nil
}

func (c *leaderEpochCache) persistLocked() error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%d\n%d\n", leaderEpochCheckpointVersion, len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&buf, "%d %d\n", e.Epoch, e.StartOffset)
	}
	c.dirty = true
	return replaceFile(c.path, buf.Bytes(), false)
}

// flush fsyncs the file and its directory if a change was written since the last flush.
func (c *leaderEpochCache) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	err := syncPath(c.path)
	if errors.Is(err, os.ErrNotExist) {
		// The log was deleted meanwhile.
		c.dirty = false
		return nil
	}
	if err == nil {
		err = syncPath(filepath.Dir(c.path))
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", c.path, err)
	}
	c.dirty = false
	return nil
}

// assign records that epoch starts at startOffset. Only a newer epoch than the latest is taken; entries
// it makes non-monotonic (a start offset at or past the new one) are dropped first, as Kafka does.
func (c *leaderEpochCache) assign(epoch int32, startOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.entries); n > 0 && c.entries[n-1].Epoch >= epoch {
		return nil
	}
	for len(c.entries) > 0 && c.entries[len(c.entries)-1].StartOffset >= startOffset {
		c.entries = c.entries[:len(c.entries)-1]
	}
	c.entries = append(c.entries, EpochEntry{Epoch: epoch, StartOffset: startOffset})
	return c.persistLocked()
}

// truncateFromEnd removes the epochs starting at or after endOffset (the log was cut there).
func (c *leaderEpochCache) truncateFromEnd(endOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.entries)
	for len(c.entries) > 0 && c.entries[len(c.entries)-1].StartOffset >= endOffset {
		c.entries = c.entries[:len(c.entries)-1]
	}
	if len(c.entries) == n {
		return nil
	}
	return c.persistLocked()
}

// truncateFromStart drops the epochs that start at or before startOffset (the log now starts there)
// but the latest of them, which is moved to start at startOffset: the records from the log start on
// keep their epoch (Kafka's LeaderEpochFileCache.truncateFromStart).
func (c *leaderEpochCache) truncateFromStart(startOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for n < len(c.entries) && c.entries[n].StartOffset <= startOffset {
		n++
	}
	if n == 0 || n == 1 && c.entries[0].StartOffset == startOffset {
		return nil
	}
	first := EpochEntry{Epoch: c.entries[n-1].Epoch, StartOffset: startOffset}
	c.entries = append([]EpochEntry{first}, c.entries[n:]...)
	return c.persistLocked()
}

// drop empties the cache and removes its file, as Kafka does for a log in a message format older than
// v2, whose batches carry no leader epoch.
func (c *leaderEpochCache) drop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries, c.dirty = nil, false
	if err := os.Remove(c.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// clear empties the cache (the log was replaced wholesale).
func (c *leaderEpochCache) clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == 0 {
		return nil
	}
	c.entries = nil
	return c.persistLocked()
}

func (c *leaderEpochCache) snapshot() []EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]EpochEntry(nil), c.entries...)
}

// endOffsetFor is Kafka's LeaderEpochFileCache.endOffsetFor: for the latest epoch, the LEO; for an older
// one, the start offset of the first epoch after it, paired with the largest epoch not above the
// requested one (KIP-279); undefined when no later epoch is known.
func (c *leaderEpochCache) endOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.entries)
	switch {
	case requested == UndefinedEpoch || n == 0:
		return UndefinedEpoch, UndefinedEpochOffset
	case requested == c.entries[n-1].Epoch:
		return requested, logEndOffset
	}
	floor := UndefinedEpoch
	for _, e := range c.entries {
		if e.Epoch > requested {
			if floor == UndefinedEpoch {
				// The requested epoch is older than anything known: its end is where the log's first
				// known epoch begins.
				return requested, e.StartOffset
			}
			return floor, e.StartOffset
		}
		floor = e.Epoch
	}
	return UndefinedEpoch, UndefinedEpochOffset
}

// LeaderEpochs returns the cache's entries, oldest first.
func (l *Log) LeaderEpochs() []EpochEntry { return l.epochs.snapshot() }

// LatestEpoch returns the newest leader epoch in the log, if any. A
// follower reads it after every fetch, so it copies nothing.
func (l *Log) LatestEpoch() (int32, bool) {
	c := l.epochs
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return UndefinedEpoch, false
	}
	return c.entries[len(c.entries)-1].Epoch, true
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the end offset of the requested epoch in this log
// (exclusive) and the epoch that answer belongs to, or (UndefinedEpoch, UndefinedEpochOffset).
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return l.epochs.endOffsetFor(epoch, l.LogEndOffset())
}

// AssignLeaderEpoch records that epoch starts at the current LEO, as a new leader does (Kafka 2.1+) so
// that followers can truncate to the leader's log even before it appends in the new epoch.
func (l *Log) AssignLeaderEpoch(epoch int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	return l.assignEpochLocked(epoch, l.LogEndOffset())
}
