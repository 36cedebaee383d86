package coordinator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/wait"
)

// slowLog is an __consumer_offsets whose appends take time under a lock per
// partition, as a broker's log does (validating, assigning offsets and
// writing the segment happen under the partition's lock). Records are not
// kept: the benchmark measures the coordinator, not a store.
type slowLog struct {
	partitions []slowPartition
	// work is what an append costs besides assigning offsets.
	work func(p *slowPartition, batch []byte)
}

type slowPartition struct {
	mu   sync.Mutex
	next int64
	sum  [sha256.Size]byte
}

// appendWork is what a CPU-bound append hashes: tens of microseconds.
var appendWork = make([]byte, 32<<10)

// hashAppend costs CPU, like checking and copying a large batch.
func hashAppend(p *slowPartition, batch []byte) {
	h := sha256.New()
	h.Write(p.sum[:])
	h.Write(batch)
	h.Write(appendWork)
	h.Sum(p.sum[:0])
}

// waitAppend costs wall-clock time without CPU, like a write that waits
// for the disk; unlike hashAppend it is measured the same on a machine
// whose cores are busy with other work. (The sleep stands for latency; it
// synchronises nothing.)
func waitAppend(*slowPartition, []byte) { time.Sleep(time.Millisecond) }

func (l *slowLog) Append(partition int32, batch []byte) (int64, func(context.Context) error, error) {
	p := &l.partitions[partition]
	p.mu.Lock()
	defer p.mu.Unlock()
	l.work(p, batch)
	base := p.next
	p.next += int64(batchRecordCount(batch))
	return base, func(context.Context) error { return nil }, nil
}

// batchRecordCount reads a record batch header's record count.
func batchRecordCount(batch []byte) int32 {
	return int32(batch[57])<<24 | int32(batch[58])<<16 | int32(batch[59])<<8 | int32(batch[60])
}

func (l *slowLog) Read(int32, int64, int32) ([]byte, error) { return nil, nil }
func (l *slowLog) Bounds(int32) (int64, int64, error)       { return 0, 0, nil }
func (l *slowLog) IsLeader(int32) bool                      { return true }

// BenchmarkCommitParallelGroups commits offsets of 100 groups from as many
// goroutines as -cpu allows. Commits of different groups share nothing but
// the coordinator, so with a lock per group the rate grows with the cores
// (append=cpu) and with the appends that can wait at once (append=wait).
func BenchmarkCommitParallelGroups(b *testing.B) {
	b.Run("append=cpu", func(b *testing.B) { benchmarkCommitParallelGroups(b, hashAppend) })
	b.Run("append=wait", func(b *testing.B) { benchmarkCommitParallelGroups(b, waitAppend) })
}

func benchmarkCommitParallelGroups(b *testing.B, work func(*slowPartition, []byte)) {
	const groups = 100
	cfg := DefaultConfig()
	cfg.Logger = zap.NewNop()
	c := New(cfg, &slowLog{partitions: make([]slowPartition, cfg.OffsetsTopicPartitions), work: work})
	c.Start()
	defer c.Shutdown()
	for p := range cfg.OffsetsTopicPartitions {
		c.OnBecomeLeader(p, 0)
		wait.For(b, waitTimeout, "partition loaded", func() bool { return c.Owns(p) })
	}
	reqs := make([]*kmsg.OffsetCommitRequest, groups)
	for i := range reqs {
		reqs[i] = commitReq(fmt.Sprintf("bench-group-%03d", i), "", -1, "t", map[int32]int64{0: 1})
	}
	var worker, failed atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		// Each goroutine walks the groups from its own starting point.
		i := int(worker.Add(1)) * 37
		for pb.Next() {
			resp := c.OffsetCommit(context.Background(), reqs[i%groups])
			if resp.Topics[0].Partitions[0].ErrorCode != 0 {
				failed.Add(1)
			}
			i++
		}
	})
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d commits failed", n)
	}
}
