package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// fakeController answers the manager's AlterIsr requests: each request's
// partitions arrive on requests, and the test answers on answers.
type fakeController struct {
	requests chan []kafka.TopicPartition
	answers  chan func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]alterIsrAnswer, error)
}

func (f *fakeController) send(ctx context.Context, items []*alterIsrItem) (map[kafka.TopicPartition]alterIsrAnswer, error) {
	tps := make([]kafka.TopicPartition, len(items))
	for i, it := range items {
		tps[i] = it.tp
	}
	select {
	case f.requests <- tps:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case answer := <-f.answers:
		return answer(tps)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answerAll stores each proposal at version 7.
func answerAll(tps []kafka.TopicPartition) (map[kafka.TopicPartition]alterIsrAnswer, error) {
	out := map[kafka.TopicPartition]alterIsrAnswer{}
	for _, tp := range tps {
		out[tp] = alterIsrAnswer{zkVersion: 7}
	}
	return out, nil
}

// doneRecorder counts each partition's done calls and keeps the last answer.
type doneRecorder struct {
	mu      sync.Mutex
	calls   map[kafka.TopicPartition]int
	results map[kafka.TopicPartition]alterIsrAnswer
	all     chan struct{} // closed when want partitions have answers
	want    int
}

func newDoneRecorder(want int) *doneRecorder {
	return &doneRecorder{calls: map[kafka.TopicPartition]int{}, results: map[kafka.TopicPartition]alterIsrAnswer{}, all: make(chan struct{}), want: want}
}

func (r *doneRecorder) done(tp kafka.TopicPartition) func(int32, error) {
	return func(v int32, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls[tp]++
		r.results[tp] = alterIsrAnswer{zkVersion: v, err: err}
		if len(r.results) == r.want && r.calls[tp] == 1 {
			close(r.all)
		}
	}
}

func startManager(t *testing.T, f *fakeController) (*alterIsrManager, context.CancelFunc) {
	t.Helper()
	m := newAlterIsrManager(f.send, zap.NewNop())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return m, cancel
}

func propose(m *alterIsrManager, r *doneRecorder, tp kafka.TopicPartition) {
	m.writePartitionState(tp.Topic, tp.Partition, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2}}, 6, r.done(tp))
}

func receive(t *testing.T, f *fakeController) []kafka.TopicPartition {
	t.Helper()
	select {
	case tps := <-f.requests:
		return tps
	case <-time.After(10 * time.Second):
		t.Fatal("no AlterIsr request was sent")
		return nil
	}
}

// TestAlterIsrManagerBatches: proposals made while a request is in flight
// go out together in the next one, every proposal is answered exactly once,
// and a second proposal for a queued partition is refused at once.
func TestAlterIsrManagerBatches(t *testing.T) {
	f := &fakeController{requests: make(chan []kafka.TopicPartition), answers: make(chan func([]kafka.TopicPartition) (map[kafka.TopicPartition]alterIsrAnswer, error))}
	m, _ := startManager(t, f)
	const n = 1000
	r := newDoneRecorder(n)
	first := kafka.TopicPartition{Topic: "t", Partition: 0}
	propose(m, r, first)
	if got := receive(t, f); len(got) != 1 || got[0] != first {
		t.Fatalf("first request carries %v, want [%v]", got, first)
	}
	for i := 1; i < n; i++ {
		propose(m, r, kafka.TopicPartition{Topic: fmt.Sprintf("t%d", i%7), Partition: int32(i)})
	}
	dup := newDoneRecorder(1)
	propose(m, dup, first)
	<-dup.all
	if a := dup.results[first]; !errors.Is(a.err, errAlterIsrInFlight) {
		t.Errorf("a second proposal for a queued partition got %+v, want errAlterIsrInFlight", a)
	}
	f.answers <- answerAll
	if got := receive(t, f); len(got) != n-1 {
		t.Errorf("second request carries %d partitions, want the %d proposed meanwhile", len(got), n-1)
	}
	f.answers <- answerAll
	<-r.all
	r.mu.Lock()
	defer r.mu.Unlock()
	for tp, c := range r.calls {
		if c != 1 || r.results[tp] != (alterIsrAnswer{zkVersion: 7}) {
			t.Errorf("%v: done called %d times, last with %+v; want once with version 7", tp, c, r.results[tp])
		}
	}
}

// TestAlterIsrManagerRetries resends after a failed request, and resends
// only the partitions an answer left out.
func TestAlterIsrManagerRetries(t *testing.T) {
	f := &fakeController{requests: make(chan []kafka.TopicPartition), answers: make(chan func([]kafka.TopicPartition) (map[kafka.TopicPartition]alterIsrAnswer, error))}
	m, _ := startManager(t, f)
	r := newDoneRecorder(2)
	a, b := kafka.TopicPartition{Topic: "t", Partition: 0}, kafka.TopicPartition{Topic: "t", Partition: 1}
	propose(m, r, a)
	receive(t, f)
	propose(m, r, b)
	f.answers <- func([]kafka.TopicPartition) (map[kafka.TopicPartition]alterIsrAnswer, error) {
		return nil, errors.New("connection refused")
	}
	if got := receive(t, f); len(got) != 2 {
		t.Fatalf("after a failed request, the next carries %v, want both partitions", got)
	}
	f.answers <- func([]kafka.TopicPartition) (map[kafka.TopicPartition]alterIsrAnswer, error) {
		return map[kafka.TopicPartition]alterIsrAnswer{a: {err: errors.New("FENCED_LEADER_EPOCH")}}, nil
	}
	if got := receive(t, f); len(got) != 1 || got[0] != b {
		t.Fatalf("after a partial answer, the next request carries %v, want [%v]", got, b)
	}
	f.answers <- answerAll
	<-r.all
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls[a] != 1 || r.results[a].err == nil || r.calls[b] != 1 || r.results[b] != (alterIsrAnswer{zkVersion: 7}) {
		t.Errorf("answers %v after calls %v; want a's error once and b's version once", r.results, r.calls)
	}
}

// TestAlterIsrManagerStopFailsQueued: a stopping broker answers what it
// still holds, so no partition keeps its pending ISR.
func TestAlterIsrManagerStopFailsQueued(t *testing.T) {
	f := &fakeController{requests: make(chan []kafka.TopicPartition), answers: make(chan func([]kafka.TopicPartition) (map[kafka.TopicPartition]alterIsrAnswer, error))}
	m, cancel := startManager(t, f)
	r := newDoneRecorder(2)
	propose(m, r, kafka.TopicPartition{Topic: "t", Partition: 0})
	receive(t, f)
	propose(m, r, kafka.TopicPartition{Topic: "t", Partition: 1})
	cancel()
	<-r.all
	r.mu.Lock()
	defer r.mu.Unlock()
	for tp, a := range r.results {
		if !errors.Is(a.err, context.Canceled) || r.calls[tp] != 1 {
			t.Errorf("%v: %d calls, last %+v; want one, with the stop's error", tp, r.calls[tp], a)
		}
	}
}
