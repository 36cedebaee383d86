package broker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

// eosApp is a consume-transform-produce loop on franz-go's
// GroupTransactSession: every record of eos-in becomes "out-<value>" in
// eos-out, the offsets committed in the same transaction. A session that
// fails is closed and a new one started, as an application restarts its
// producer.
type eosApp struct {
	addrs     []string
	committed atomic.Int64 // input records whose transaction committed
	sessions  atomic.Int32
}

func (a *eosApp) run(ctx context.Context, t *testing.T) {
	for ctx.Err() == nil {
		sess, err := kgo.NewGroupTransactSession(
			kgo.SeedBrokers(a.addrs...), kgo.TransactionalID("eos-app"), kgo.ConsumerGroup("eos"),
			kgo.ConsumeTopics("eos-in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DefaultProduceTopic("eos-out"),
			kgo.TransactionTimeout(10*time.Second), kgo.SessionTimeout(6*time.Second), kgo.RetryTimeout(30*time.Second),
		)
		if err != nil {
			t.Errorf("new session: %v", err)
			return
		}
		a.sessions.Add(1)
		for ctx.Err() == nil {
			fs := sess.PollFetches(ctx)
			if fs.NumRecords() == 0 {
				continue
			}
			if err := sess.Begin(); err != nil {
				t.Logf("begin: %v", err)
				break
			}
			fs.EachRecord(func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Key: r.Key, Value: append([]byte("out-"), r.Value...)}, nil)
			})
			committed, err := sess.End(ctx, kgo.TryCommit)
			if err != nil {
				t.Logf("end: %v", err)
				break
			}
			if committed {
				a.committed.Add(int64(fs.NumRecords()))
			}
		}
		sess.Close()
	}
}

// TestExactlyOnceThroughCoordinatorAndLeaderKills is the proof: a
// transactional consume-transform-produce loop over 3 brokers (RF 3,
// __transaction_state min ISR 2), input arriving throughout, kill -9 of the
// transaction coordinator and then of a partition leader of the output.
// Every input record is in the read_committed output exactly once; an
// aborted transaction's records are seen by read_uncommitted readers only.
func TestExactlyOnceThroughCoordinatorAndLeaderKills(t *testing.T) {
	pc := startProcClusterWith(t, 3, map[string]string{
		"group.initial.rebalance.delay.ms":                            "0",
		"offsets.topic.num.partitions":                                "3",
		"transaction.state.log.num.partitions":                        "3",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
	})
	assignment := [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}}
	pc.createTopic("eos-in", assignment)
	pc.createTopic("eos-out", assignment)
	var addrs []string
	for _, addr := range pc.addrs {
		addrs = append(addrs, addr)
	}
	newClient := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	ctx := ctxT(t, 120*time.Second)

	// An aborted transaction of another producer.
	aborter := newClient(kgo.TransactionalID("eos-aborter"), kgo.DefaultProduceTopic("eos-out"))
	if err := aborter.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := aborter.ProduceSync(ctx, kgo.StringRecord("aborted")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := aborter.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	const total = 400
	in := newClient(kgo.DefaultProduceTopic("eos-in"), kgo.RecordRetries(1000))
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(40 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < total; i += 10 {
			var recs []*kgo.Record
			for j := i; j < i+10; j++ {
				recs = append(recs, kgo.StringRecord(fmt.Sprintf("in-%d", j)))
			}
			if err := in.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Errorf("produce input: %v", err)
				return
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
	})
	app := &eosApp{addrs: addrs}
	appCtx, stopApp := context.WithCancel(ctx)
	wg.Go(func() { app.run(appCtx, t) })
	defer func() { stopApp(); wg.Wait() }()

	pc.waitFor("a quarter of the input processed", func() bool { return app.committed.Load() >= total/4 })
	coordinator := pc.txnCoordinator("eos-app")
	t.Logf("killing the transaction coordinator, broker %d", coordinator)
	pc.killAndRestart(coordinator, func() bool { return pc.txnCoordinator("eos-app") != coordinator })

	pc.waitFor("half of the input processed", func() bool { return app.committed.Load() >= total/2 })
	s, _, _ := pc.state("eos-out", 0)
	t.Logf("killing the leader of eos-out-0, broker %d", s.Leader)
	pc.killAndRestart(s.Leader, func() bool {
		now, _, ok := pc.state("eos-out", 0)
		return ok && now.Leader >= 0 && now.Leader != s.Leader
	})

	want := map[string]bool{}
	for i := range total {
		want[fmt.Sprintf("out-in-%d", i)] = true
	}
	var out []string
	pc.waitFor("every input record in the committed output", func() bool {
		out = readTopic(t, newClient, "eos-out", true)
		seen := 0
		for _, v := range out {
			if want[v] {
				seen++
			}
		}
		return seen >= total
	})
	counts := map[string]int{}
	for _, v := range out {
		counts[v]++
	}
	for v, n := range counts {
		if n != 1 || !want[v] {
			t.Errorf("read_committed output has %q %d times", v, n)
		}
	}
	uncommitted := readTopic(t, newClient, "eos-out", false)
	if !slices.Contains(uncommitted, "aborted") {
		t.Error("read_uncommitted output misses the aborted transaction's record")
	}
	t.Logf("read_committed %d records, read_uncommitted %d, sessions %d", len(out), len(uncommitted), app.sessions.Load())
}

// txnCoordinator asks a live broker which broker coordinates a
// transactional id (-1 while none does).
func (pc *procCluster) txnCoordinator(id string) int32 {
	for _, addr := range pc.addrs {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorType = id, 1
		resp, err := rawTry(addr, req, 3)
		if err != nil {
			continue
		}
		if fc := resp.(*kmsg.FindCoordinatorResponse); fc.ErrorCode == 0 {
			return fc.NodeID
		}
	}
	return -1
}

// killAndRestart kill -9s a broker, waits until moved() (leadership left
// it), and starts it again.
func (pc *procCluster) killAndRestart(id int32, moved func() bool) {
	pc.t.Helper()
	pc.procs[id].Kill()
	pc.waitFor(fmt.Sprintf("leadership away from the killed broker %d", id), moved)
	pc.procs[id].Restart()
	pc.waitFor(fmt.Sprintf("broker %d registered again", id), func() bool { ok, _ := pc.registered(id); return ok })
}

// rawTry sends one request at version v, reporting failures instead of
// failing the test (the broker may be down).
func rawTry(addr string, req kmsg.Request, v int16) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cl, err := wire.Dial(ctx, addr, "raw-test")
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return cl.RequestVersion(ctx, req, v)
}
