package broker_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

func processProps(t *testing.T) (map[string]string, string) {
	port := testcluster.FreePort(t)
	return map[string]string{
		"broker.id":                    "1",
		"listeners":                    fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
		"log.dirs":                     t.TempDir(),
		"zookeeper.connect":            zktest.NewChroot(t),
		"zookeeper.session.timeout.ms": "4000",
		"log.segment.bytes":            "262144",
	}, "127.0.0.1:" + strconv.Itoa(port)
}

// TestKillDuringProduceLosesNoAcknowledgedRecord kill -9s a broker process
// while a producer with acks=1 is writing, restarts it, and checks that every
// acknowledged record is there at its offset and the log is contiguous.
func TestKillDuringProduceLosesNoAcknowledgedRecord(t *testing.T) {
	props, addr := processProps(t)
	p := testcluster.StartProcess(t, props)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.RecordRetries(0), kgo.DefaultProduceTopic("crash"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := ctxT(t, 60*time.Second)
	wait.For(t, 30*time.Second, "the broker to create a topic", func() bool {
		resp, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "crash")
		return err == nil && resp.Err == nil
	})

	var mu sync.Mutex
	acked := map[string]*kgo.Record{}
	produceCtx, stopProducing := context.WithCancel(ctx)
	var wg, inflight sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; produceCtx.Err() == nil; i++ {
			r := &kgo.Record{Value: []byte("record-" + strconv.Itoa(i) + "-padding-padding-padding")}
			inflight.Add(1)
			cl.Produce(produceCtx, r, func(r *kgo.Record, err error) {
				defer inflight.Done()
				if err == nil {
					mu.Lock()
					acked[string(r.Value)] = r
					mu.Unlock()
				}
			})
		}
	}()
	wait.For(t, 30*time.Second, "20000 acknowledged records", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 20000
	})
	p.Kill()
	stopProducing()
	wg.Wait()
	cl.Close()
	// kgo may still run callbacks after Close returns: count acknowledgements
	// only once every record has had its callback.
	inflight.Wait()

	mu.Lock()
	want := len(acked)
	mu.Unlock()
	p.Restart()
	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("crash"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	next := map[int32]int64{}
	found := 0
	adm := kadm.NewClient(consumer)
	var ends kadm.ListedOffsets
	wait.For(t, 30*time.Second, "the restarted broker to lead both partitions", func() bool {
		ends, err = adm.ListEndOffsets(ctx, "crash")
		return err == nil && ends.Error() == nil && len(ends["crash"]) == 2
	})
	total := int64(0)
	for _, o := range ends["crash"] {
		total += o.Offset
	}
	for consumed := int64(0); consumed < total; {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records after restart", consumed, total)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d follows %d: the log has a gap", r.Partition, r.Offset, next[r.Partition]-1)
			}
			next[r.Partition]++
			consumed++
			if a, ok := acked[string(r.Value)]; ok {
				if a.Partition != r.Partition || a.Offset != r.Offset {
					t.Fatalf("%s acknowledged at %d/%d, found at %d/%d", r.Value, a.Partition, a.Offset, r.Partition, r.Offset)
				}
				found++
			}
		})
	}
	if found != want {
		t.Fatalf("found %d of %d acknowledged records after kill -9 and restart", found, want)
	}
	t.Logf("%d acknowledged records survived kill -9; %d records in the log", want, total)
}

// TestSigtermDeregisters checks the process's clean-shutdown path: SIGTERM
// removes /brokers/ids/<id> at once and exits 0.
func TestSigtermDeregisters(t *testing.T) {
	props, _ := processProps(t)
	p := testcluster.StartProcess(t, props)
	zk := zkSession(t, props["zookeeper.connect"])
	wait.For(t, 30*time.Second, "registration", func() bool {
		ok, _, _ := zk.Exists(zkpaths.BrokerPath(1))
		return ok
	})
	p.Terminate()
	if exited, code := p.Exited(); !exited || code != 0 {
		t.Fatalf("exit code %d after SIGTERM; log:\n%s", code, p.Log())
	}
	if ok, _, _ := zk.Exists(zkpaths.BrokerPath(1)); ok {
		t.Fatal("/brokers/ids/1 still there after SIGTERM")
	}
}

// TestFastRestartReplacesItsOwnRegistration: after kill -9, the restarted
// broker finds /brokers/ids/1 still held by its dead session (which would
// live on for the 40 s session timeout) and replaces it at once, as
// KAFKA-7165 does.
func TestFastRestartReplacesItsOwnRegistration(t *testing.T) {
	props, _ := processProps(t)
	props["zookeeper.session.timeout.ms"] = "40000"
	p := testcluster.StartProcess(t, props)
	zk := zkSession(t, props["zookeeper.connect"])
	var first int64
	wait.For(t, 30*time.Second, "registration", func() bool {
		_, stat, err := zk.Get(zkpaths.BrokerPath(1))
		if err == nil {
			first = stat.EphemeralOwner
		}
		return err == nil
	})
	p.Kill()
	p.Restart()
	wait.For(t, 60*time.Second, "a registration by the new session", func() bool {
		_, stat, err := zk.Get(zkpaths.BrokerPath(1))
		return err == nil && stat.EphemeralOwner != first
	})
	// The log, not the clock, tells replacing from waiting out the old session:
	// a slow machine may take as long to restart as the session lives.
	if log := p.Log(); !strings.Contains(log, "Replacing the registration left by this broker's previous session") ||
		strings.Contains(log, "Waiting for the previous registration of this broker id to expire") {
		t.Fatalf("the restarted broker did not replace its previous registration at once; log:\n%s", log)
	}
}
