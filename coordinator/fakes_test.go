package coordinator

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/internal/clocktest"
	"github.com/zkafka/zkafka/internal/wait"
)

// newFakeClock is the tests' clock: it fires timers only when a test advances it.
func newFakeClock() *clocktest.Fake { return clocktest.New(time.UnixMilli(1_700_000_000_000)) }

// fakeLog is an in-memory __consumer_offsets: batches get offsets as the
// broker's log would assign them.
type fakeLog struct {
	mu      sync.Mutex
	batches map[int32][][]byte
	next    map[int32]int64
	// appendErr, when set, fails appends; awaitErr fails the acks=all wait.
	appendErr, awaitErr error
	// acks, when set, holds every acks=all wait until it is closed.
	acks chan struct{}
}

func newFakeLog() *fakeLog {
	return &fakeLog{batches: map[int32][][]byte{}, next: map[int32]int64{}}
}

func (l *fakeLog) Append(partition int32, batch []byte) (int64, func(context.Context) error, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.appendErr != nil {
		return 0, nil, l.appendErr
	}
	b := slices.Clone(batch)
	base := l.next[partition]
	binary.BigEndian.PutUint64(b, uint64(base))
	l.batches[partition] = append(l.batches[partition], b)
	l.next[partition] = base + int64(binary.BigEndian.Uint32(b[57:])) // record count
	awaitErr, acks := l.awaitErr, l.acks
	return base, func(ctx context.Context) error {
		if acks != nil {
			select {
			case <-acks:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return awaitErr
	}, nil
}

func (l *fakeLog) Read(partition int32, offset int64, maxBytes int32) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.batches[partition] {
		base := int64(binary.BigEndian.Uint64(b))
		last := base + int64(binary.BigEndian.Uint32(b[23:]))
		if last < offset {
			continue
		}
		if len(out) > 0 && len(out)+len(b) > int(maxBytes) {
			break
		}
		out = append(out, b...)
	}
	return out, nil
}

func (l *fakeLog) IsLeader(int32) bool { return true }

func (l *fakeLog) Bounds(partition int32) (int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return 0, l.next[partition], nil
}

// records returns every stored record of a partition.
func (l *fakeLog) records(t *testing.T, partition int32) []storedRecord {
	t.Helper()
	data, _ := l.Read(partition, 0, 1<<30)
	var out []storedRecord
	if _, err := decodeBatches(data, func(r storedRecord) { out = append(out, r) }); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return out
}

// testCoordinator returns a started coordinator owning every partition.
func testCoordinator(t *testing.T, mutate func(*Config)) (*Coordinator, *clocktest.Fake, *fakeLog) {
	t.Helper()
	clock, store := newFakeClock(), newFakeLog()
	c := startCoordinator(t, clock, store, mutate)
	return c, clock, store
}

func startCoordinator(t *testing.T, clock *clocktest.Fake, store *fakeLog, mutate func(*Config)) *Coordinator {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Clock, cfg.Logger = clock, zaptest.NewLogger(t)
	cfg.OffsetsTopicPartitions = 4
	if mutate != nil {
		mutate(&cfg)
	}
	c := New(cfg, store)
	c.Start()
	t.Cleanup(c.Shutdown)
	for p := range cfg.OffsetsTopicPartitions {
		c.OnBecomeLeader(p, 0)
		wait.For(t, waitTimeout, "partition loaded", func() bool { return c.Owns(p) })
	}
	return c
}

// waitTimeout bounds every wait.For of these tests.
const waitTimeout = 5 * time.Second

// inspect runs fn on a group under its lock.
func inspect[T any](c *Coordinator, groupID string, fn func(g *group) T) T {
	var zero T
	g, err := c.lockGroup(groupID, offsetAPI, false)
	if err != nil || g == nil {
		return zero
	}
	defer g.mu.Unlock()
	return fn(g)
}

func stateOf(c *Coordinator, groupID string) GroupState {
	return inspect(c, groupID, func(g *group) GroupState { return g.state })
}

func awaitingJoin(c *Coordinator, groupID string) int {
	return inspect(c, groupID, func(g *group) int { return g.numAwaitingJoin })
}
