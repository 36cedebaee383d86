package transaction

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/kafka"
)

var (
	tp0 = kafka.TopicPartition{Topic: "out", Partition: 0}
	tp1 = kafka.TopicPartition{Topic: "out", Partition: 1}
)

func (h *harness) init(id string, timeoutMs int32) (int64, int16) {
	h.t.Helper()
	pid, epoch, err := h.c.InitProducerID(context.Background(), &id, timeoutMs, nil)
	if err != nil {
		h.t.Fatalf("InitProducerId %s: %v", id, err)
	}
	return pid, epoch
}

func (h *harness) add(id string, pid int64, epoch int16, tps ...kafka.TopicPartition) error {
	return h.c.AddPartitions(context.Background(), id, pid, epoch, tps)
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

func TestInitProducerIDBumpsTheEpochAndFencesThePreviousProducer(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.init("app", 60000)
	if epoch != 0 {
		t.Fatalf("first epoch %d", epoch)
	}
	pid2, epoch2 := h.init("app", 60000)
	if pid2 != pid || epoch2 != 1 {
		t.Fatalf("second init: %d/%d, want %d/1", pid2, epoch2, pid)
	}
	wantErr(t, "zombie AddPartitions", h.add("app", pid, 0, tp0), kerr.ProducerFenced)
	wantErr(t, "zombie EndTxn", h.c.EndTxn(context.Background(), "app", pid, 0, true), kerr.ProducerFenced)
	wantErr(t, "unknown producer id", h.add("app", pid+1, 1, tp0), kerr.InvalidProducerIDMapping)
	wantErr(t, "unknown transactional id", h.add("other", pid, 1, tp0), kerr.InvalidProducerIDMapping)
	if got := h.log.states(t, h.c.PartitionFor("app"), "app"); !slices.Equal(got, []State{Empty, Empty}) {
		t.Fatalf("log states %v", got)
	}
	// Without a transactional id: a fresh producer id, epoch 0, nothing written.
	idem, e, err := h.c.InitProducerID(context.Background(), nil, 0, nil)
	if err != nil || idem == pid || e != 0 {
		t.Fatalf("idempotent InitProducerId: %d/%d %v", idem, e, err)
	}
}

func TestInitProducerIDValidatesItsRequest(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	_, _, err := h.c.InitProducerID(ctx, ptr(""), 1000, nil)
	wantErr(t, "empty transactional id", err, kerr.InvalidRequest)
	_, _, err = h.c.InitProducerID(ctx, ptr("app"), int32((15*time.Minute).Milliseconds())+1, nil)
	wantErr(t, "timeout above transaction.max.timeout.ms", err, kerr.InvalidTransactionTimeout)
	_, _, err = h.c.InitProducerID(ctx, ptr("app"), 0, nil)
	wantErr(t, "zero timeout", err, kerr.InvalidTransactionTimeout)
	if _, _, err := h.c.InitProducerID(ctx, ptr("app"), int32((15 * time.Minute).Milliseconds()), nil); err != nil {
		t.Fatalf("timeout equal to the maximum: %v", err)
	}
}

// TestInitProducerIDWithExpectedEpoch is KIP-360: a producer that names its
// current epoch is bumped; a retry naming the previous epoch gets the same
// answer again; any other epoch is fenced.
func TestInitProducerIDWithExpectedEpoch(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pid, _ := h.init("app", 60000)
	p, e, err := h.c.InitProducerID(ctx, ptr("app"), 60000, &ProducerIDAndEpoch{pid, 0})
	if err != nil || p != pid || e != 1 {
		t.Fatalf("bump from the current epoch: %d/%d %v", p, e, err)
	}
	p, e, err = h.c.InitProducerID(ctx, ptr("app"), 60000, &ProducerIDAndEpoch{pid, 0})
	if err != nil || p != pid || e != 1 {
		t.Fatalf("retry naming the previous epoch: %d/%d %v", p, e, err)
	}
	_, _, err = h.c.InitProducerID(ctx, ptr("app"), 60000, &ProducerIDAndEpoch{pid, 7})
	wantErr(t, "unknown epoch", err, kerr.ProducerFenced)
	_, _, err = h.c.InitProducerID(ctx, ptr("app"), 60000, &ProducerIDAndEpoch{pid + 5, 1})
	wantErr(t, "other producer id", err, kerr.ProducerFenced)
}

func TestInitProducerIDRotatesAnExhaustedProducerID(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.init("app", 60000)
	_, md, _ := h.c.getTransactionState("app")
	md.mu.Lock()
	md.producerEpoch = math.MaxInt16 - 1
	md.mu.Unlock()
	p, e := h.init("app", 60000)
	if p == pid || e != 0 {
		t.Fatalf("after the last epoch: %d/%d, want a new producer id at epoch 0", p, e)
	}
}

// TestCommitWritesMarkersToEveryLeaderThenCompletes follows one transaction:
// PrepareCommit is written and EndTxn answered, the leader of each partition
// gets its COMMIT marker with the coordinator epoch, then CompleteCommit.
func TestCommitWritesMarkersToEveryLeaderThenCompletes(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	h.sender.setLeader(tp1, 2)
	pid, epoch := h.init("app", 60000)
	if err := h.add("app", pid, epoch, tp0); err != nil {
		t.Fatal(err)
	}
	if err := h.add("app", pid, epoch, tp0, tp1); err != nil {
		t.Fatal(err)
	}
	// Already in the transaction: nothing more is written.
	if err := h.add("app", pid, epoch, tp1); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndTxn(context.Background(), "app", pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	h.awaitState("app", CompleteCommit)
	part := h.c.PartitionFor("app")
	if got := h.log.states(t, part, "app"); !slices.Equal(got, []State{Empty, Ongoing, Ongoing, PrepareCommit, CompleteCommit}) {
		t.Fatalf("log states %v", got)
	}
	entries := h.log.entries(t, part)
	if prep := entries[3]; !slices.Equal(prep.Partitions, []kafka.TopicPartition{tp0, tp1}) {
		t.Fatalf("PrepareCommit partitions %v", prep.Partitions)
	}
	if done := entries[4]; len(done.Partitions) != 0 || done.Start != entries[1].Start {
		t.Fatalf("CompleteCommit %+v", done)
	}
	brokers := map[int32][]int32{}
	for _, s := range h.sender.sent() {
		for _, m := range s.req.Markers {
			if m.ProducerID != pid || m.ProducerEpoch != epoch || !m.Committed || m.CoordinatorEpoch != 0 {
				t.Fatalf("marker %+v", m)
			}
			for _, tt := range m.Topics {
				brokers[s.broker] = append(brokers[s.broker], tt.Partitions...)
			}
		}
	}
	if len(brokers) != 2 || !slices.Equal(brokers[1], []int32{0}) || !slices.Equal(brokers[2], []int32{1}) {
		t.Fatalf("markers by broker %v", brokers)
	}
	// The same outcome again is answered without writing; the other is refused.
	if err := h.c.EndTxn(context.Background(), "app", pid, epoch, true); err != nil {
		t.Fatalf("repeated commit: %v", err)
	}
	wantErr(t, "abort after commit", h.c.EndTxn(context.Background(), "app", pid, epoch, false), kerr.InvalidTxnState)
	// A new transaction starts from CompleteCommit.
	if err := h.add("app", pid, epoch, tp1); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.state("app"); s != Ongoing {
		t.Fatalf("state %s", s)
	}
}

// TestRequestsWhileMarkersAreInFlight: while PrepareCommit waits for its
// markers (its completion pending), every request of the producer gets
// CONCURRENT_TRANSACTIONS, as Kafka answers them.
func TestRequestsWhileMarkersAreInFlight(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	h.sender.answer = func(_ int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
		<-release
		return answerAll(req, 0), nil
	}
	ctx := context.Background()
	pid, epoch := h.init("app", 60000)
	wantErr(t, "EndTxn in Empty", h.c.EndTxn(ctx, "app", pid, epoch, true), kerr.InvalidTxnState)
	if err := h.add("app", pid, epoch, tp0); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndTxn(ctx, "app", pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "commit again", h.c.EndTxn(ctx, "app", pid, epoch, true), kerr.ConcurrentTransactions)
	wantErr(t, "abort", h.c.EndTxn(ctx, "app", pid, epoch, false), kerr.ConcurrentTransactions)
	wantErr(t, "AddPartitions", h.add("app", pid, epoch, tp1), kerr.ConcurrentTransactions)
	_, _, err := h.c.InitProducerID(ctx, ptr("app"), 60000, nil)
	wantErr(t, "InitProducerId", err, kerr.ConcurrentTransactions)
	once.Do(func() { close(release) })
	h.awaitState("app", CompleteCommit)
	if _, e := h.init("app", 60000); e != epoch+1 {
		t.Fatalf("epoch after the commit %d", e)
	}
}

// TestInitProducerIDDuringATransactionAbortsIt: the new producer fences the
// old one by an epoch bump, the open transaction is aborted under the bumped
// epoch, the new producer is told to retry, and its retry bumps again.
func TestInitProducerIDDuringATransactionAbortsIt(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	ctx := context.Background()
	pid, epoch := h.init("app", 60000)
	if err := h.add("app", pid, epoch, tp0); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.c.InitProducerID(ctx, ptr("app"), 60000, nil)
	wantErr(t, "InitProducerId during a transaction", err, kerr.ConcurrentTransactions)
	h.awaitState("app", CompleteAbort)
	for _, s := range h.sender.sent() {
		if m := s.req.Markers[0]; m.Committed || m.ProducerEpoch != epoch+1 {
			t.Fatalf("abort marker %+v, want ABORT at epoch %d", m, epoch+1)
		}
	}
	wantErr(t, "the old producer's commit", h.c.EndTxn(ctx, "app", pid, epoch, true), kerr.ProducerFenced)
	if p, e := h.init("app", 60000); p != pid || e != epoch+2 {
		t.Fatalf("retry: %d/%d, want %d/%d", p, e, pid, epoch+2)
	}
	part := h.c.PartitionFor("app")
	if got := h.log.states(t, part, "app"); !slices.Equal(got, []State{Empty, Ongoing, PrepareAbort, CompleteAbort, Empty}) {
		t.Fatalf("log states %v", got)
	}
}

func TestTimedOutTransactionIsAbortedAndItsProducerFenced(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	pid, epoch := h.init("app", 1000)
	if err := h.add("app", pid, epoch, tp0); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(999 * time.Millisecond)
	if n := h.c.AbortTimedOutTransactions(); n != 0 {
		t.Fatalf("aborted %d before the timeout", n)
	}
	h.clock.Advance(2 * time.Millisecond)
	if n := h.c.AbortTimedOutTransactions(); n != 1 {
		t.Fatalf("aborted %d after the timeout, want 1", n)
	}
	h.awaitState("app", CompleteAbort)
	wantErr(t, "the timed out producer's commit", h.c.EndTxn(context.Background(), "app", pid, epoch, true), kerr.ProducerFenced)
	wantErr(t, "the timed out producer's AddPartitions", h.add("app", pid, epoch, tp0), kerr.ProducerFenced)
}

func TestExpiredTransactionalIDIsRemoved(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.init("idle", 60000)
	h.init("busy", 60000)
	h.clock.Advance(7*24*time.Hour - time.Second)
	h.init("busy", 60000)
	h.clock.Advance(2 * time.Second)
	if n := h.c.ExpireTransactionalIDs(); n != 1 {
		t.Fatalf("expired %d ids, want 1", n)
	}
	wantErr(t, "expired id", h.add("idle", pid, epoch, tp0), kerr.InvalidProducerIDMapping)
	var tomb bool
	for _, e := range h.log.entries(t, h.c.PartitionFor("idle")) {
		tomb = tomb || e.TransactionalID == "idle" && e.Deleted
	}
	if !tomb {
		t.Fatal("no tombstone for the expired id")
	}
	if s, _ := h.state("busy"); s != Empty {
		t.Fatalf("busy id %s", s)
	}
}

// TestAppendFailureMapsTheErrorAndClearsThePendingState: a failed write
// answers with the coordinator error Kafka maps it to, and leaves the id
// free for the next request.
func TestAppendFailureMapsTheErrorAndClearsThePendingState(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.init("app", 60000)
	for _, c := range []struct{ appendErr, want error }{
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator},
		{kerr.MessageTooLarge, kerr.UnknownServerError},
	} {
		h.log.mu.Lock()
		h.log.appendErr = c.appendErr
		h.log.mu.Unlock()
		wantErr(t, "AddPartitions with "+c.appendErr.Error(), h.add("app", pid, epoch, tp0), c.want)
	}
	h.log.mu.Lock()
	h.log.appendErr = nil
	h.log.mu.Unlock()
	if err := h.add("app", pid, epoch, tp0); err != nil {
		t.Fatalf("after the failures: %v", err)
	}
}

func TestNotCoordinatorAndLoadInProgress(t *testing.T) {
	h := newHarness(t)
	part := h.c.PartitionFor("app")
	h.c.OnResign(part)
	_, _, err := h.c.InitProducerID(context.Background(), ptr("app"), 60000, nil)
	wantErr(t, "resigned partition", err, kerr.NotCoordinator)
	gate := make(chan struct{})
	h.log.mu.Lock()
	h.log.readGate = gate
	h.log.next[part] = 1 // something to read
	h.log.mu.Unlock()
	h.c.OnBecomeLeader(part, 1)
	_, _, err = h.c.InitProducerID(context.Background(), ptr("app"), 60000, nil)
	wantErr(t, "loading partition", err, kerr.CoordinatorLoadInProgress)
	close(gate)
	wait.For(t, waitTimeout, "partition loaded", func() bool { return h.c.Owns(part) })
	h.log.mu.Lock()
	h.log.leader = false
	h.log.mu.Unlock()
	_, _, err = h.c.InitProducerID(context.Background(), ptr("app"), 60000, nil)
	wantErr(t, "leadership lost without a callback", err, kerr.NotCoordinator)
	if h.c.Owns(part) {
		t.Fatal("partition still owned")
	}
}

// TestFailoverResumesTheMarkersOfADecidedTransaction: the coordinator dies
// after writing PrepareCommit; the next one loads the partition, finds the
// transaction deciding and writes its markers under its own, higher
// coordinator epoch.
func TestFailoverResumesTheMarkersOfADecidedTransaction(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	var down atomic.Bool
	down.Store(true)
	h.sender.answer = func(_ int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
		if down.Load() {
			return nil, errors.New("connection refused")
		}
		return answerAll(req, 0), nil
	}
	pid, epoch := h.init("app", 60000)
	if err := h.add("app", pid, epoch, tp0); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndTxn(context.Background(), "app", pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	h.c.Shutdown()

	down.Store(false)
	h.start(5)
	h.awaitState("app", CompleteCommit)
	var last kmsg.WriteTxnMarkersRequestMarker
	for _, s := range h.sender.sent() {
		last = s.req.Markers[0]
	}
	if !last.Committed || last.CoordinatorEpoch != 5 {
		t.Fatalf("resumed marker %+v, want COMMIT at coordinator epoch 5", last)
	}
	if p, e := h.init("app", 60000); p != pid || e != epoch+1 {
		t.Fatalf("after failover %d/%d", p, e)
	}
}

// TestMarkersAreRetriedUntilWritten: a leader that moved (NOT_LEADER) or an
// unknown leader delays the marker; a fenced coordinator drops the markers.
func TestMarkersAreRetriedUntilWritten(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	h.sender.setLeader(tp1, -1)
	var calls atomic.Int32
	h.sender.answer = func(broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
		if calls.Add(1) == 1 {
			h.sender.setLeader(tp0, 2)
			return answerAll(req, kerr.NotLeaderForPartition.Code), nil
		}
		return answerAll(req, 0), nil
	}
	pid, epoch := h.init("app", 60000)
	if err := h.add("app", pid, epoch, tp0, tp1); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndTxn(context.Background(), "app", pid, epoch, false); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the marker sent to the new leader", func() bool {
		for _, s := range h.sender.sent() {
			if s.broker == 2 {
				return true
			}
		}
		return false
	})
	if s, _ := h.state("app"); s != PrepareAbort {
		t.Fatalf("completed with a partition unwritten: %s", s)
	}
	h.sender.setLeader(tp1, 3)
	h.awaitState("app", CompleteAbort)
}

func TestFencedCoordinatorStopsWritingMarkers(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	h.sender.answer = func(_ int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
		return answerAll(req, kerr.TransactionCoordinatorFenced.Code), nil
	}
	pid, epoch := h.init("app", 60000)
	if err := h.add("app", pid, epoch, tp0); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndTxn(context.Background(), "app", pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the markers dropped", func() bool { return len(h.sender.sent()) == 1 && h.c.markers.numPending() == 0 })
	if s, _ := h.state("app"); s != PrepareCommit {
		t.Fatalf("state %s: a fenced coordinator completed the transaction", s)
	}
}

// TestMarkersOfDeletedPartitionsAreSkipped: a partition the cluster no
// longer has needs no marker.
func TestMarkersOfDeletedPartitionsAreSkipped(t *testing.T) {
	h := newHarness(t)
	h.sender.setLeader(tp0, 1)
	pid, epoch := h.init("app", 60000)
	if err := h.add("app", pid, epoch, tp0, tp1); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndTxn(context.Background(), "app", pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	h.awaitState("app", CompleteCommit)
}

// TestShutdownBesideNewWork: a LeaderAndIsr that makes the broker the
// coordinator, and a decided transaction's markers, may arrive while the
// broker shuts down. Shutdown must neither race with the goroutines they
// start (the race detector reports an Add beside a Wait) nor leave one
// running (goleak, in TestMain); none starts once Shutdown has returned.
func TestShutdownBesideNewWork(t *testing.T) {
	h := &harness{t: t, clock: &fakeClock{now: time.UnixMilli(1_700_000_000_000)}, log: newFakeLog(), pids: &fakePIDs{}, sender: newFakeSender()}
	h.sender.setLeader(tp0, 1)
	cfg := DefaultConfig()
	cfg.TransactionTopicPartitions = testPartitions
	cfg.Clock, cfg.Logger = h.clock, zap.NewNop()
	for range 200 {
		c := New(cfg, h.log, h.pids, h.sender)
		c.Start()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for p := range int32(testPartitions) {
				c.OnBecomeLeader(p, 0)
			}
		}()
		go func() {
			defer wg.Done()
			md := &txnMetadata{id: "app", partitions: map[kafka.TopicPartition]bool{tp0: true}}
			c.markers.addTxnMarkersToSend(0, true, md, transit{state: CompleteCommit})
			c.markers.tryAppendToLog(&pendingCompletion{id: "app", md: md, complete: transit{state: CompleteCommit}})
		}()
		c.Shutdown()
		wg.Wait()
		c.OnBecomeLeader(0, 1)
		if c.Owns(0) {
			t.Fatal("a coordinator shut down took a partition")
		}
	}
}
