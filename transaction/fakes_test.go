package transaction

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

// waitTimeout bounds every wait.For of these tests.
const waitTimeout = 5 * time.Second

// fakeClock is a settable clock whose timers never fire: tests run the
// periodic checks themselves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

type noTimer struct{}

func (noTimer) Stop() bool { return true }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(time.Duration, func()) kafka.Timer { return noTimer{} }

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeLog is an in-memory __transaction_state: batches get offsets as the
// broker's log assigns them.
type fakeLog struct {
	mu      sync.Mutex
	batches map[int32][][]byte
	next    map[int32]int64
	// appendErr fails appends; readGate, when set, holds every Read until
	// closed.
	appendErr error
	readGate  chan struct{}
	leader    bool
}

func newFakeLog() *fakeLog {
	return &fakeLog{batches: map[int32][][]byte{}, next: map[int32]int64{}, leader: true}
}

func (l *fakeLog) Append(partition int32, batch []byte) (int64, func(context.Context) error, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.appendErr != nil {
		return 0, nil, l.appendErr
	}
	b := slices.Clone(batch)
	base := l.next[partition]
	wire.SetBaseOffset(b, base)
	l.batches[partition] = append(l.batches[partition], b)
	l.next[partition] = base + int64(binary.BigEndian.Uint32(b[wire.PosRecordCount:]))
	return base, func(context.Context) error { return nil }, nil
}

func (l *fakeLog) Read(partition int32, offset int64, _ int32) ([]byte, error) {
	l.mu.Lock()
	gate := l.readGate
	l.mu.Unlock()
	if gate != nil {
		<-gate
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.batches[partition] {
		h, _ := wire.ReadBatchHeader(b)
		if h.LastOffset() >= offset {
			out = append(out, b...)
		}
	}
	return out, nil
}

func (l *fakeLog) Bounds(partition int32) (int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return 0, l.next[partition], nil
}

func (l *fakeLog) IsLeader(int32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader
}

// entries decodes every record of a partition.
func (l *fakeLog) entries(t *testing.T, partition int32) []LogEntry {
	t.Helper()
	data, _ := l.Read(partition, 0, 1<<30)
	var out []LogEntry
	for b, err := range wire.Batches(data) {
		if err != nil {
			t.Fatal(err)
		}
		for r, err := range b.Records() {
			if err != nil {
				t.Fatal(err)
			}
			e, err := DecodeRecord(r.Key, r.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

// states lists the states an id went through in the log.
func (l *fakeLog) states(t *testing.T, partition int32, id string) []State {
	var out []State
	for _, e := range l.entries(t, partition) {
		if e.TransactionalID == id && !e.Deleted {
			out = append(out, e.State)
		}
	}
	return out
}

type fakePIDs struct {
	mu   sync.Mutex
	next int64
}

func (p *fakePIDs) GenerateProducerID() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	return 1000 + p.next, nil
}

// fakeSender answers WriteTxnMarkers with answer (by default: every
// partition written) and records each request.
type fakeSender struct {
	mu       sync.Mutex
	leaders  map[kafka.TopicPartition]int32
	answer   func(broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
	requests []sentMarkers
}

type sentMarkers struct {
	broker int32
	req    *kmsg.WriteTxnMarkersRequest
}

func newFakeSender() *fakeSender {
	return &fakeSender{leaders: map[kafka.TopicPartition]int32{}}
}

func (s *fakeSender) PartitionLeader(topic string, partition int32) (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leaders[kafka.TopicPartition{Topic: topic, Partition: partition}]
	return l, ok
}

func (s *fakeSender) setLeader(tp kafka.TopicPartition, leader int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaders[tp] = leader
}

func (s *fakeSender) WriteTxnMarkers(_ context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	s.mu.Lock()
	s.requests = append(s.requests, sentMarkers{broker, req})
	answer := s.answer
	s.mu.Unlock()
	if answer != nil {
		return answer(broker, req)
	}
	return answerAll(req, 0), nil
}

func (s *fakeSender) sent() []sentMarkers {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// answerAll answers every partition of a request with code.
func answerAll(req *kmsg.WriteTxnMarkersRequest, code int16) *kmsg.WriteTxnMarkersResponse {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

type harness struct {
	t      *testing.T
	c      *Coordinator
	clock  *fakeClock
	log    *fakeLog
	pids   *fakePIDs
	sender *fakeSender
}

// testPartitions is the transaction log's partition count in these tests.
const testPartitions = 4

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, clock: &fakeClock{now: time.UnixMilli(1_700_000_000_000)}, log: newFakeLog(), pids: &fakePIDs{}, sender: newFakeSender()}
	h.start(0)
	return h
}

// start runs a coordinator over the harness's log, leading every partition
// at coordinator epoch epoch.
func (h *harness) start(epoch int32) {
	h.t.Helper()
	cfg := DefaultConfig()
	cfg.TransactionTopicPartitions = testPartitions
	cfg.Clock, cfg.Logger = h.clock, zaptest.NewLogger(h.t)
	cfg.MarkerRetryBackoff = 5 * time.Millisecond
	h.c = New(cfg, h.log, h.pids, h.sender)
	h.c.Start()
	h.t.Cleanup(h.c.Shutdown)
	for p := range int32(testPartitions) {
		h.c.OnBecomeLeader(p, epoch)
		wait.For(h.t, waitTimeout, "partition loaded", func() bool { return h.c.Owns(p) })
	}
}

// state returns an id's state and whether a transition is pending.
func (h *harness) state(id string) (State, bool) {
	_, md, err := h.c.getTransactionState(id)
	if err != nil || md == nil {
		return Dead, false
	}
	md.mu.Lock()
	defer md.mu.Unlock()
	return md.state, md.hasPending
}

func (h *harness) awaitState(id string, want State) {
	h.t.Helper()
	wait.For(h.t, waitTimeout, id+" in "+want.String(), func() bool {
		s, pending := h.state(id)
		return s == want && !pending
	})
}

func ptr[T any](v T) *T { return &v }
