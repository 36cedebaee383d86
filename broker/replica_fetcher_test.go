package broker

import (
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/storage"
)

// TestFetcherAddRacesTruncation adds a partition to a fetcher while another
// goroutine, as the fetcher's loop does, finishes its truncation under the
// fetcher's lock. add must read the state it logs under that lock too; the
// race detector reports it otherwise.
func TestFetcherAddRacesTruncation(t *testing.T) {
	l, err := storage.Open(filepath.Join(t.TempDir(), "t-0"), storage.DefaultLogConfig(), 0, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	p := newPartition(tp.Topic, tp.Partition, 1, l, time.Second)
	f := &replicaFetcher{log: zap.NewNop(), fetcherThread: fetcherThread{wake: make(chan struct{}, 1)}, partitions: map[kafka.TopicPartition]*fetchState{}}

	truncated := make(chan error)
	go func() {
		snap := fetchState{leaderEpoch: 3}
		for {
			applied, err := f.truncateTo(tp, snap, 0, true)
			if err != nil || applied {
				truncated <- err
				return
			}
		}
	}()
	f.add(tp, &fetchState{p: p, leaderEpoch: 3, fetchOffset: 7, truncating: true})
	if err := <-truncated; err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if st := f.partitions[tp]; st.truncating || st.fetchOffset != 0 {
		t.Errorf("after truncation: truncating %v, fetch offset %d; want false, 0", st.truncating, st.fetchOffset)
	}
}
