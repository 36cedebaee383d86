package broker_test

import (
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// txnProps make transactions quick to test on one broker: few partitions of
// the internal topics, one replica each, and a fast timeout check.
func txnProps(extra map[string]string) map[string]string {
	props := map[string]string{
		"group.initial.rebalance.delay.ms":                            "0",
		"offsets.topic.num.partitions":                                "3",
		"transaction.state.log.num.partitions":                        "3",
		"transaction.state.log.replication.factor":                    "1",
		"transaction.state.log.min.isr":                               "1",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
	}
	maps.Copy(props, extra)
	return props
}

func createTopic(t *testing.T, c *testcluster.Cluster, topic string, partitions int32, rf int16) {
	t.Helper()
	adm := kadm.NewClient(c.Client())
	ctx := ctxT(t, 30*time.Second)
	resp, err := adm.CreateTopic(ctx, partitions, rf, nil, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
	for p := range partitions {
		c.WaitForLeader(topic, p)
	}
}

// readValues reads a topic from its start with readTopic.
func readValues(t *testing.T, c *testcluster.Cluster, topic string, committed bool) []string {
	t.Helper()
	return readTopic(t, c.Client, topic, committed)
}

// sentinelPrefix starts the values readTopic writes to know where a topic
// ends; it leaves them out of what it returns.
const sentinelPrefix = "\x00sentinel-"

// readTopic reads a topic from its start, read_committed or not, with clients
// from newClient. It first writes a sentinel record to each partition, outside
// any transaction, and reads until it has seen every one: a read_committed
// reader sees a sentinel only once every transaction before it is decided,
// so what it returned is all there is. It returns the other values, in the
// order read.
func readTopic(t *testing.T, newClient func(...kgo.Opt) *kgo.Client, topic string, committed bool) []string {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	writer := newClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var ends kadm.ListedOffsets
	// Metadata may lag a leader change: ask until every partition answers.
	wait.For(t, 30*time.Second, "the partitions of "+topic, func() bool {
		var err error
		ends, err = kadm.NewClient(writer).ListEndOffsets(ctx, topic)
		return err == nil && ends.Error() == nil
	})
	sentinels := map[string]bool{}
	var recs []*kgo.Record
	ends.Each(func(o kadm.ListedOffset) {
		v := fmt.Sprintf("%s%d-%d", sentinelPrefix, time.Now().UnixNano(), o.Partition)
		sentinels[v] = true
		recs = append(recs, &kgo.Record{Topic: topic, Partition: o.Partition, Value: []byte(v)})
	})
	if err := writer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("write sentinels to %s: %v", topic, err)
	}
	isolation := kgo.ReadUncommitted()
	if committed {
		isolation = kgo.ReadCommitted()
	}
	cl := newClient(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(isolation))
	var out []string
	for len(sentinels) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %s; %d sentinels missing", len(out), topic, len(sentinels))
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			switch {
			case sentinels[v]:
				delete(sentinels, v)
			case !strings.HasPrefix(v, sentinelPrefix):
				out = append(out, v)
			}
		})
	}
	return out
}

// TestTransactionalProduceCommitAndAbort runs franz-go's transactional
// producer: a committed and an aborted transaction; read_committed readers
// see only the committed records, read_uncommitted ones both, and the
// producer state and __transaction_state show the transactions.
func TestTransactionalProduceCommitAndAbort(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: txnProps(nil)})
	createTopic(t, c, "txn-out", 2, 1)
	ctx := ctxT(t, 60*time.Second)
	cl := c.Client(kgo.TransactionalID("app-1"), kgo.DefaultProduceTopic("txn-out"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	run := func(commit bool, prefix string, n int) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	run(true, "committed", 4)
	run(false, "aborted", 4)
	run(true, "later", 2)
	// Each partition holds 2+2+1 data records and 3 markers.
	p, _ := c.Broker(1).ReplicaManager().Partition("txn-out", 0)
	c.WaitFor("the last marker replicated", func() bool { return p.Log().LastStableOffset() == 8 })
	if leo := p.Log().LogEndOffset(); leo != 8 {
		t.Fatalf("txn-out-0 ends at %d, want 8", leo)
	}
	if aborted := p.Log().AbortedTransactions(0, 8); len(aborted) != 1 || aborted[0].FirstOffset != 3 || aborted[0].LastOffset != 5 {
		t.Fatalf("aborted transactions %+v", aborted)
	}

	committed := readValues(t, c, "txn-out", true)
	slices.Sort(committed)
	want := []string{"committed-0", "committed-1", "committed-2", "committed-3", "later-0", "later-1"}
	if !slices.Equal(committed, want) {
		t.Fatalf("read_committed: %v, want %v", committed, want)
	}
	all := readValues(t, c, "txn-out", false)
	if len(all) != 10 {
		t.Fatalf("read_uncommitted: %d records %v, want 10", len(all), all)
	}
}

// TestZombieProducerIsFenced: a second producer with the same
// transactional id bumps the epoch; the first one's next writes and its
// commit are refused, and its open transaction is aborted.
func TestZombieProducerIsFenced(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: txnProps(nil)})
	createTopic(t, c, "fence", 1, 1)
	ctx := ctxT(t, 60*time.Second)
	zombie := c.Client(kgo.TransactionalID("app"), kgo.DefaultProduceTopic("fence"))
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, kgo.StringRecord("zombie")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := c.Client(kgo.TransactionalID("app"), kgo.DefaultProduceTopic("fence"))
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.ProduceSync(ctx, kgo.StringRecord("fresh")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	err := zombie.ProduceSync(ctx, kgo.StringRecord("zombie-2")).FirstErr()
	if err == nil {
		err = zombie.EndTransaction(ctx, kgo.TryCommit)
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}
	if got := readValues(t, c, "fence", true); !slices.Equal(got, []string{"fresh"}) {
		t.Fatalf("read_committed: %v, want [fresh]", got)
	}
}

// python3With returns a python3 that can import module (Debian's package
// pkg; scripts/lib.sh installs the ones the tests use).
func python3With(t *testing.T, module, pkg string) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import "+module).Run() == nil {
			return py
		}
	}
	t.Fatalf("no python3 with %s: install %s (scripts/test.sh does)", module, pkg)
	return ""
}

// TestLibrdkafkaTransactions: librdkafka's transactional producer commits,
// aborts and commits again, and its read_committed consumer reads only the
// committed records.
func TestLibrdkafkaTransactions(t *testing.T) {
	py := python3With(t, "confluent_kafka", "python3-confluent-kafka")
	c := testcluster.Start(t, testcluster.Options{Properties: txnProps(nil)})
	createTopic(t, c, "rdkafka-txn", 1, 1)
	ctx := ctxT(t, 90*time.Second)
	out, err := exec.CommandContext(ctx, py, "testdata/librdkafka_txn.py", c.Addr(1), "rdkafka-txn").CombinedOutput()
	if err != nil {
		t.Fatalf("librdkafka_txn.py: %v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, []string{"c1", "c2", "c3", "c4"}) {
		t.Fatalf("read_committed with librdkafka: %q", out)
	}
	if all := readValues(t, c, "rdkafka-txn", false); len(all) != 6 {
		t.Fatalf("read_uncommitted: %v", all)
	}
}

// TestTransactionsOnOneBrokerWithDefaults: with Kafka's defaults
// (__transaction_state on 3 replicas, min ISR 2) a lone broker creates the
// topic on its only replica with min ISR 1, so transactions work.
func TestTransactionsOnOneBrokerWithDefaults(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	createTopic(t, c, "lone", 1, 1)
	ctx := ctxT(t, 30*time.Second)
	cl := c.Client(kgo.TransactionalID("lone-app"), kgo.DefaultProduceTopic("lone"))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := readValues(t, c, "lone", true); !slices.Equal(got, []string{"v"}) {
		t.Fatalf("read_committed: %v", got)
	}
}

// TestListOffsetsHonoursTheIsolationLevel: while a transaction is open a
// read_committed ListOffsets answers the last stable offset (the open
// transaction's first offset) and a read_uncommitted one the high
// watermark; once the transaction commits both answer the high watermark.
// It also checks __transaction_state as the first transaction created it:
// 50 partitions, compacted, 2.8's segment size and min ISR capped by the
// replication factor it got.
func TestListOffsetsHonoursTheIsolationLevel(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	createTopic(t, c, "iso", 1, 1)
	ctx := ctxT(t, 30*time.Second)
	plain := c.Client(kgo.DefaultProduceTopic("iso"))
	if err := plain.ProduceSync(ctx, kgo.StringRecord("a"), kgo.StringRecord("b")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl := c.Client(kgo.TransactionalID("iso-app"), kgo.DefaultProduceTopic("iso"))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, kgo.StringRecord("t1"), kgo.StringRecord("t2")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(plain)
	offsets := func() (committed, uncommitted int64) {
		t.Helper()
		lc, err := adm.ListCommittedOffsets(ctx, "iso")
		if err != nil || lc.Error() != nil {
			t.Fatalf("read_committed ListOffsets: %v %v", err, lc.Error())
		}
		lu, err := adm.ListEndOffsets(ctx, "iso")
		if err != nil || lu.Error() != nil {
			t.Fatalf("read_uncommitted ListOffsets: %v %v", err, lu.Error())
		}
		oc, _ := lc.Lookup("iso", 0)
		ou, _ := lu.Lookup("iso", 0)
		return oc.Offset, ou.Offset
	}
	if committed, uncommitted := offsets(); committed != 2 || uncommitted != 4 {
		t.Fatalf("open transaction: read_committed %d, read_uncommitted %d; want 2 and 4", committed, uncommitted)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// The commit marker takes offset 4; the LSO reaches the high watermark once it is written.
	wait.For(t, 30*time.Second, "the LSO at the high watermark", func() bool {
		committed, uncommitted := offsets()
		return committed == 5 && uncommitted == 5
	})

	topics, err := adm.ListTopics(ctx, "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	if d := topics["__transaction_state"]; d.Err != nil || len(d.Partitions) != 50 || !d.IsInternal {
		t.Fatalf("__transaction_state: %d partitions, internal %v, err %v; want 50, internal", len(d.Partitions), d.IsInternal, d.Err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("__transaction_state", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe __transaction_state: %v %v", err, rc.Err)
	}
	got := map[string]string{}
	for _, cfg := range rc.Configs {
		got[cfg.Key] = cfg.MaybeValue()
	}
	for k, want := range map[string]string{
		"cleanup.policy":      "compact",
		"compression.type":    "uncompressed",
		"segment.bytes":       "104857600",
		"min.insync.replicas": "1",
	} {
		if got[k] != want {
			t.Errorf("__transaction_state %s = %q, want %q", k, got[k], want)
		}
	}
}
