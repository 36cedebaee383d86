package broker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/zkpaths"
)

// Unit tests of a leader's replication rules (high watermark, ISR changes,
// acks=all completion) against a fake log, a fake partition-state znode and
// a controlled clock: no ZooKeeper, no sockets, no sleeps.

// fakeLog keeps only offsets: an append of n bytes is n records.
type fakeLog struct {
	PartitionLog // the rest of a log, which these rules do not use

	mu       sync.Mutex
	leo, hw  int64
	start    int64
	epochs   []int32
	compacts bool // cleanup.policy=compact
}

func (l *fakeLog) LogStartOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start
}

func (l *fakeLog) MaybeIncrementLogStartOffset(offset int64, _ storage.LogStartOffsetReason) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if offset > l.hw {
		return kerr.OffsetOutOfRange
	}
	l.start = max(l.start, offset)
	return nil
}

func (l *fakeLog) Config() storage.LogConfig {
	cfg := storage.DefaultLogConfig()
	if l.compacts {
		cfg.CleanupPolicy = "compact"
	}
	return cfg
}

func (l *fakeLog) LogEndOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leo
}

func (l *fakeLog) HighWatermark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hw
}

func (l *fakeLog) SetHighWatermark(hw int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hw = min(max(hw, 0), l.leo)
	return l.hw
}

func (l *fakeLog) AssignLeaderEpoch(epoch int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.epochs = append(l.epochs, epoch)
	return nil
}

func (l *fakeLog) AppendAsLeader(records []byte, _ int32) (storage.AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info := storage.AppendInfo{FirstOffset: l.leo, LastOffset: l.leo + int64(len(records)) - 1}
	l.leo += int64(len(records))
	return info, nil
}

// fakeStateZnode is a partition-state znode: a write succeeds only at its
// current version, as ZooKeeper's conditional set does.
type fakeStateZnode struct {
	version int32
	state   zkpaths.LeaderAndIsr
	writes  int
}

func (z *fakeStateZnode) writePartitionState(_ string, _ int32, state zkpaths.LeaderAndIsr, zkVersion int32, done func(int32, error)) {
	if zkVersion != z.version {
		done(0, zk.ErrBadVersion)
		return
	}
	z.version++
	z.state, z.writes = state, z.writes+1
	done(z.version, nil)
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

const testLagTimeMax = 10 * time.Second

// leaderFixture is broker 1 leading t-0 (leader epoch 5, controller epoch 2,
// state znode at version 3) with replicas [1 2 3] and 10 records.
type leaderFixture struct {
	t     *testing.T
	rm    *ReplicaManager
	p     *Partition
	log   *fakeLog
	znode *fakeStateZnode
	clock *fakeClock
}

func newLeaderFixture(t *testing.T, isr []int32, minInsync int32) *leaderFixture {
	t.Helper()
	f := &leaderFixture{t: t, log: &fakeLog{}, znode: &fakeStateZnode{version: 3}, clock: &fakeClock{t: time.Unix(1_700_000_000, 0)}}
	f.rm = &ReplicaManager{
		brokerID: 1, cfg: replicationConfig{lagTimeMax: testLagTimeMax}, stateWriter: f.znode, now: f.clock.now,
		log: zap.NewNop(), partitions: map[kafka.TopicPartition]*Partition{}, isrChange: newIsrChangePropagator(nil, zap.NewNop()),
	}
	f.p = newPartition("t", 0, 1, f.log, testLagTimeMax)
	f.p.now = f.clock.now
	f.rm.partitions[kafka.TopicPartition{Topic: "t", Partition: 0}] = f.p
	f.lead(5, 3, isr, minInsync)
	f.append(10)
	return f
}

// lead applies a LeaderAndIsr naming broker 1 leader.
func (f *leaderFixture) lead(leaderEpoch, zkVersion int32, isr []int32, minInsync int32) {
	f.t.Helper()
	s := partitionState{leader: 1, leaderEpoch: leaderEpoch, controllerEpoch: 2, zkVersion: zkVersion, isr: isr, replicas: []int32{1, 2, 3}}
	if err := f.p.makeLeader(s, minInsync, f.clock.now()); err != nil {
		f.t.Fatal(err)
	}
}

// append produces n records with acks=all and returns the offset an
// acks=all produce of them waits for.
func (f *leaderFixture) append(n int) (requiredOffset int64, leaderEpoch int32) {
	f.t.Helper()
	info, epoch, err := f.p.appendAsLeader(make([]byte, n), -1)
	if err != nil {
		f.t.Fatal(err)
	}
	return info.LastOffset + 1, epoch
}

// fetch is follower replica fetching at offset (its LEO); it reports whether
// the follower may join the ISR.
func (f *leaderFixture) fetch(replica int32, offset int64) bool {
	return f.fetchWithStart(replica, offset, -1)
}

// fetchWithStart is fetch by a follower whose log starts at logStart.
func (f *leaderFixture) fetchWithStart(replica int32, offset, logStart int64) bool {
	return f.p.followerFetch(replica, offset, logStart, f.log.LogEndOffset(), f.clock.now())
}

func (f *leaderFixture) zkVersion() int32 {
	snap, _ := f.p.leaderSnapshot()
	return snap.zkVersion
}

func TestPartitionHighWatermarkIsTheSmallestLogEndOffsetOfTheISR(t *testing.T) {
	type fetch struct {
		replica  int32
		offset   int64
		after    time.Duration // clock advance before the fetch
		appended int           // records produced before the fetch
	}
	cases := []struct {
		name    string
		isr     []int32
		fetches []fetch
		want    int64
		dead    int32 // a broker no longer alive, 0 for none
	}{
		{"no follower has fetched", []int32{1, 2, 3}, nil, 0, 0},
		{"one ISR follower unknown", []int32{1, 2, 3}, []fetch{{2, 10, 0, 0}}, 0, 0},
		{"slowest ISR follower", []int32{1, 2, 3}, []fetch{{2, 7, 0, 0}, {3, 4, 0, 0}}, 4, 0},
		{"followers move it on", []int32{1, 2, 3}, []fetch{{2, 7, 0, 0}, {3, 4, 0, 0}, {3, 9, 0, 0}}, 7, 0},
		{"whole ISR caught up", []int32{1, 2, 3}, []fetch{{2, 10, 0, 0}, {3, 10, 0, 0}}, 10, 0},
		{"never moves back", []int32{1, 2, 3}, []fetch{{2, 8, 0, 0}, {3, 8, 0, 0}, {2, 5, 0, 0}}, 8, 0},
		{"leader alone", []int32{1}, nil, 10, 0},
		{"lagging follower outside the ISR is ignored", []int32{1, 2}, []fetch{{3, 2, 0, 0}, {2, 10, 0, 0}}, 10, 0},
		// Kafka 2.8's maximal-ISR rule: a follower outside the ISR caught up
		// within replica.lag.time.max.ms still holds the high watermark.
		{"recently caught-up follower outside the ISR counts", []int32{1, 2}, []fetch{{3, 10, 0, 0}, {2, 15, time.Second, 5}}, 10, 0},
		{"until it lags past replica.lag.time.max.ms", []int32{1, 2}, []fetch{{3, 10, 0, 0}, {2, 15, testLagTimeMax + time.Millisecond, 5}}, 15, 0},
		// KIP-841: or once its broker is not alive.
		{"caught-up follower of a dead broker outside the ISR is ignored", []int32{1, 2}, []fetch{{3, 10, 0, 0}, {2, 15, time.Second, 5}}, 15, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newLeaderFixture(t, tc.isr, 1)
			f.p.isrEligible = func(id int32) bool { return id != tc.dead }
			for _, fe := range tc.fetches {
				f.clock.advance(fe.after)
				if fe.appended > 0 {
					f.append(fe.appended)
				}
				f.fetch(fe.replica, fe.offset)
			}
			if got := f.p.HighWatermark(); got != tc.want {
				t.Errorf("high watermark %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPartitionIsrExpandsWhenAFollowerReachesTheHighWatermark(t *testing.T) {
	f := newLeaderFixture(t, []int32{1, 2}, 1)
	f.fetch(2, 10)
	if f.fetch(3, 6) {
		t.Fatal("a follower below the high watermark may join the ISR")
	}
	if !f.fetch(3, 10) {
		t.Fatal("a follower at the high watermark may not join the ISR")
	}
	f.rm.maybeExpandIsr(f.p, 3)

	want := zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 5, ISR: []int32{1, 2, 3}, ControllerEpoch: 2}
	if f.znode.writes != 1 || !equalLeaderAndIsr(f.znode.state, want) {
		t.Errorf("znode after %d writes: %+v, want %+v written once at version 3", f.znode.writes, f.znode.state, want)
	}
	if got := f.p.ISR(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("ISR %v, want [1 2 3]", got)
	}
	if got := f.zkVersion(); got != 4 {
		t.Errorf("zkVersion %d, want 4: the next write must be conditional on this one", got)
	}
	if f.fetch(3, 10) {
		t.Error("an ISR member is offered the ISR again")
	}
}

// KAFKA-7128: a follower joins only once it reached the LEO this broker had
// when it became leader, which may be above the high watermark.
func TestPartitionIsrExpansionWaitsForTheLeaderEpochStart(t *testing.T) {
	f := newLeaderFixture(t, []int32{1, 2}, 1)
	f.fetch(2, 4)
	f.lead(6, 3, []int32{1, 2}, 1) // the new epoch starts at the LEO, 10
	if hw := f.p.HighWatermark(); hw != 4 {
		t.Fatalf("high watermark %d, want 4", hw)
	}
	if f.fetch(3, 4) {
		t.Error("a follower at the high watermark but below the epoch start (10) may join the ISR")
	}
	if !f.fetch(3, 10) {
		t.Error("a follower at the epoch start may not join the ISR")
	}
}

func TestPartitionIsrShrinksForAFollowerLaggingPastReplicaLagTimeMax(t *testing.T) {
	f := newLeaderFixture(t, []int32{1, 2, 3}, 1)
	f.fetch(2, 10)
	f.fetch(3, 10) // both caught up now
	required, _ := f.append(5)

	f.clock.advance(5 * time.Second)
	f.fetch(2, 15)
	f.clock.advance(testLagTimeMax - 5*time.Second)
	f.rm.maybeShrinkIsr(f.clock.now())
	if f.znode.writes != 0 {
		t.Fatalf("ISR shrunk to %v after exactly replica.lag.time.max.ms", f.znode.state.ISR)
	}
	if hw := f.p.HighWatermark(); hw != 10 {
		t.Fatalf("high watermark %d with follower 3 at 10 in the ISR, want 10", hw)
	}

	f.clock.advance(time.Millisecond)
	f.rm.maybeShrinkIsr(f.clock.now())
	want := zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 5, ISR: []int32{1, 2}, ControllerEpoch: 2}
	if f.znode.writes != 1 || !equalLeaderAndIsr(f.znode.state, want) {
		t.Fatalf("znode after %d writes: %+v, want %+v", f.znode.writes, f.znode.state, want)
	}
	if got := f.p.ISR(); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("ISR %v, want [1 2]", got)
	}
	if hw := f.p.HighWatermark(); hw != required {
		t.Errorf("high watermark %d after the shrink, want %d: the lagging follower no longer holds it", hw, required)
	}
}

func TestPartitionIsrWriteAtAStaleZkVersionKeepsTheIsr(t *testing.T) {
	f := newLeaderFixture(t, []int32{1, 2, 3}, 1)
	f.znode.version = 4 // the controller rewrote the state since our LeaderAndIsr
	f.fetch(2, 10)
	f.fetch(3, 10)
	f.append(5)
	f.clock.advance(testLagTimeMax + time.Millisecond)
	f.fetch(2, 15)
	f.rm.maybeShrinkIsr(f.clock.now())

	if f.znode.writes != 0 {
		t.Fatalf("a write at stale zkVersion 3 was applied: %+v", f.znode.state)
	}
	if got := f.p.ISR(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("ISR %v after a failed write, want [1 2 3] until the next LeaderAndIsr", got)
	}
	if got := f.zkVersion(); got != 3 {
		t.Errorf("zkVersion %d, want 3", got)
	}
	f.p.mu.RLock()
	pending := f.p.pendingIsr
	f.p.mu.RUnlock()
	if pending != nil {
		t.Errorf("pending ISR %v left after the failed write", pending)
	}

	// The controller's LeaderAndIsr brings the current version; the next
	// write succeeds at it.
	f.lead(6, 4, []int32{1, 2, 3}, 1)
	f.clock.advance(testLagTimeMax + time.Millisecond)
	f.fetch(2, 15)
	f.rm.maybeShrinkIsr(f.clock.now())
	if f.znode.writes != 1 || !slices.Equal(f.znode.state.ISR, []int32{1, 2}) || f.zkVersion() != 5 {
		t.Errorf("after the LeaderAndIsr: %d writes, znode %+v, zkVersion %d; want ISR [1 2] at version 5",
			f.znode.writes, f.znode.state, f.zkVersion())
	}
}

func equalLeaderAndIsr(a, b zkpaths.LeaderAndIsr) bool {
	return a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch && a.ControllerEpoch == b.ControllerEpoch && slices.Equal(a.ISR, b.ISR)
}

// TestPartitionAcksAllCompletion is Kafka 2.8's rule for a waiting acks=all
// produce (Partition.checkEnoughReplicasReachOffset): complete once the high
// watermark reaches the records, whatever leader epochs the controller
// bumped meanwhile; NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR is then
// below min.insync.replicas; NOT_LEADER_OR_FOLLOWER only if this broker
// stopped leading after the append.
func TestPartitionAcksAllCompletion(t *testing.T) {
	cases := []struct {
		name     string
		meantime func(f *leaderFixture)
		done     bool
		err      error
	}{
		{"waits for the ISR", func(f *leaderFixture) { f.fetch(2, 15) }, false, nil},
		{"whole ISR has it", func(f *leaderFixture) { f.fetch(2, 15); f.fetch(3, 15) }, true, nil},
		{"leader drops the lagging follower", func(f *leaderFixture) {
			f.fetch(2, 15)
			f.clock.advance(testLagTimeMax + time.Millisecond)
			f.rm.maybeShrinkIsr(f.clock.now())
		}, true, nil},
		// The controller drops a dead follower with a new leader epoch.
		{"controller drops the dead follower", func(f *leaderFixture) {
			f.fetch(2, 15)
			f.lead(6, 4, []int32{1, 2}, 2)
		}, true, nil},
		{"controller drops it before the others caught up", func(f *leaderFixture) {
			f.lead(6, 4, []int32{1, 2}, 2)
		}, false, nil},
		{"ISR below min.insync.replicas", func(f *leaderFixture) {
			f.lead(6, 4, []int32{1}, 2)
		}, true, kerr.NotEnoughReplicasAfterAppend},
		{"became follower", func(f *leaderFixture) {
			f.fetch(2, 15)
			f.p.makeFollower(partitionState{leader: 2, leaderEpoch: 6, controllerEpoch: 2, zkVersion: 4, isr: []int32{2, 3}, replicas: []int32{1, 2, 3}})
		}, true, kerr.NotLeaderForPartition},
		// Between the two, a follower may have truncated the records away;
		// a high watermark of the new term says nothing about them.
		{"became follower, then leader again", func(f *leaderFixture) {
			f.p.makeFollower(partitionState{leader: 2, leaderEpoch: 6, controllerEpoch: 2, zkVersion: 4, isr: []int32{2, 3}, replicas: []int32{1, 2, 3}})
			f.lead(7, 5, []int32{1, 2}, 2)
			f.fetch(2, 15)
		}, true, kerr.NotLeaderForPartition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newLeaderFixture(t, []int32{1, 2, 3}, 2)
			f.fetch(2, 10)
			f.fetch(3, 10)
			required, epoch := f.append(5)
			tc.meantime(f)
			done, err := f.p.produceStatus(required, epoch)
			if done != tc.done || !errors.Is(err, tc.err) {
				t.Errorf("produce status: done %v, error %v; want done %v, error %v", done, err, tc.done, tc.err)
			}
		})
	}
}

// TestDelayedProduceCompletesAfterTheControllerShrinksTheIsr: a waiting
// acks=all produce wakes at the controller's LeaderAndIsr and succeeds.
func TestDelayedProduceCompletesAfterTheControllerShrinksTheIsr(t *testing.T) {
	f := newLeaderFixture(t, []int32{1, 2, 3}, 2)
	f.fetch(2, 10)
	f.fetch(3, 10)
	required, epoch := f.append(5)
	f.fetch(2, 15)

	resp := kmsg.NewPtrProduceResponse()
	resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0}}}}
	pending := []*pendingProduce{{topic: "t", partition: 0, p: f.p, requiredOffset: required, leaderEpoch: epoch}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&Server{}).awaitReplication(context.Background(), resp, pending, time.Minute)
	}()
	f.lead(6, 4, []int32{1, 2}, 2)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the produce still waits after the ISR shrank to followers that have its records")
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Errorf("produce answered %v, want success", kerr.ErrorForCode(code))
	}
}

// TestDeleteRecordsWaitsForTheLowWatermark: DeleteRecords moves the leader's
// log start offset at once (-1 meaning the high watermark) and completes when
// every follower on a live broker has followed it — the low watermark —
// while a follower on a dead broker does not hold it back; bad offsets, a
// compacted topic and lost leadership get Kafka's errors.
func TestDeleteRecordsWaitsForTheLowWatermark(t *testing.T) {
	f := newLeaderFixture(t, []int32{1, 2, 3}, 2)
	end, _ := f.append(10)
	f.fetchWithStart(2, end, 0)
	f.fetchWithStart(3, end, 0)
	if hw := f.p.HighWatermark(); hw != end {
		t.Fatalf("high watermark %d, want %d", hw, end)
	}
	// Broker 3 is dead: its replica, still starting at 0, does not hold the low watermark back.
	alive := func(id int32) bool { return id != 3 }
	all := func(int32) bool { return true }
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()

	lw, required, err := f.p.deleteRecordsOnLeader(4, alive)
	if err != nil || lw != 0 || required != 4 || f.log.LogStartOffset() != 4 {
		t.Fatalf("delete before 4: low watermark %d, required %d, %v, leader's log start %d; want 0, 4, nil, 4", lw, required, err, f.log.LogStartOffset())
	}
	if lw, err := f.p.awaitLowWatermark(expired, required, alive); !errors.Is(err, kerr.RequestTimedOut) || lw != 0 {
		t.Fatalf("with follower 2 at 0: %d, %v; want 0 and REQUEST_TIMED_OUT", lw, err)
	}
	done := make(chan int64, 1)
	go func() {
		lw, err := f.p.awaitLowWatermark(context.Background(), required, alive)
		if err != nil {
			t.Error(err)
		}
		done <- lw
	}()
	f.fetchWithStart(2, end, 4)
	if lw := <-done; lw != 4 {
		t.Fatalf("low watermark %d, want 4", lw)
	}
	if lw, err := f.p.awaitLowWatermark(expired, required, all); !errors.Is(err, kerr.RequestTimedOut) || lw != 0 {
		t.Errorf("with follower 3 alive at 0: %d, %v; want 0 and REQUEST_TIMED_OUT", lw, err)
	}

	if _, required, err := f.p.deleteRecordsOnLeader(-1, alive); err != nil || required != end {
		t.Fatalf("delete before the high watermark: required %d, %v; want %d", required, err, end)
	}
	for _, tc := range []struct {
		offset int64
		want   error
	}{{end + 1, kerr.OffsetOutOfRange}, {-2, kerr.OffsetOutOfRange}} {
		if _, _, err := f.p.deleteRecordsOnLeader(tc.offset, alive); !errors.Is(err, tc.want) {
			t.Errorf("delete before %d: %v, want %v", tc.offset, err, tc.want)
		}
	}
	f.log.compacts = true
	if _, _, err := f.p.deleteRecordsOnLeader(1, alive); !errors.Is(err, kerr.PolicyViolation) {
		t.Errorf("delete on a compacted topic: %v, want POLICY_VIOLATION", err)
	}
	f.log.compacts = false

	f.p.makeFollower(partitionState{leader: 2, leaderEpoch: 6, controllerEpoch: 2, isr: []int32{2, 3}, replicas: []int32{1, 2, 3}})
	if _, err := f.p.awaitLowWatermark(context.Background(), end, alive); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Errorf("await after losing leadership: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	if _, _, err := f.p.deleteRecordsOnLeader(1, alive); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Errorf("delete on a follower: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
}

// deferredWriter holds each proposal until the test answers it, as the
// AlterIsr manager does until the controller answers.
type deferredWriter struct {
	proposals []zkpaths.LeaderAndIsr
	answer    []func(int32, error)
}

func (w *deferredWriter) writePartitionState(_ string, _ int32, state zkpaths.LeaderAndIsr, _ int32, done func(int32, error)) {
	w.proposals, w.answer = append(w.proposals, state), append(w.answer, done)
}

// TestPartitionIsrChangeAnsweredLater: with AlterIsr the answer comes after
// changeIsr returned. Until then no second change is proposed and the
// pending ISR holds the high watermark; the answer is adopted, and after a
// new leadership an old answer is not.
func TestPartitionIsrChangeAnsweredLater(t *testing.T) {
	f := newLeaderFixture(t, []int32{1, 2}, 1)
	w := &deferredWriter{}
	f.rm.stateWriter = w
	f.fetch(2, 10)
	f.fetch(3, 10)
	f.rm.maybeExpandIsr(f.p, 3)
	if len(w.proposals) != 1 || !slices.Equal(w.proposals[0].ISR, []int32{1, 2, 3}) {
		t.Fatalf("proposals %+v, want one of ISR [1 2 3]", w.proposals)
	}
	if got := f.p.ISR(); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("ISR %v before the answer, want [1 2]", got)
	}
	f.append(5)
	f.fetch(2, 15)
	if hw := f.p.HighWatermark(); hw != 10 {
		t.Errorf("high watermark %d while 3 (at 10) is pending, want 10", hw)
	}
	f.clock.advance(testLagTimeMax + time.Second)
	f.rm.maybeShrinkIsr(f.clock.now())
	if len(w.proposals) != 1 {
		t.Fatalf("a second change was proposed while one is in flight: %+v", w.proposals)
	}
	w.answer[0](9, nil)
	if got := f.p.ISR(); !slices.Equal(got, []int32{1, 2, 3}) || f.zkVersion() != 9 {
		t.Errorf("after the answer: ISR %v at zkVersion %d, want [1 2 3] at 9", got, f.zkVersion())
	}

	// A change answered after a new leadership is not adopted, and a failed
	// one clears the pending ISR so that the next may be proposed.
	f.rm.maybeShrinkIsr(f.clock.now())
	if len(w.proposals) != 2 {
		t.Fatalf("proposals %+v, want the shrink", w.proposals)
	}
	f.lead(6, 12, []int32{1, 2, 3}, 1)
	w.answer[1](13, nil)
	if got := f.p.ISR(); !slices.Equal(got, []int32{1, 2, 3}) || f.zkVersion() != 12 {
		t.Errorf("an answer from leader epoch 5 was adopted in 6: ISR %v, zkVersion %d", got, f.zkVersion())
	}
	f.clock.advance(testLagTimeMax + time.Second)
	f.rm.maybeShrinkIsr(f.clock.now())
	if len(w.proposals) != 3 {
		t.Fatalf("proposals %+v, want the shrink in leader epoch 6", w.proposals)
	}
	w.answer[2](0, zk.ErrBadVersion)
	f.rm.maybeShrinkIsr(f.clock.now())
	if len(w.proposals) != 4 {
		t.Errorf("after a failed change, %d proposals; want the shrink proposed again", len(w.proposals))
	}
}
