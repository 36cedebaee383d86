package chaos_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/chaos"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zktest"
)

// TestFuzzerLeavesTheBrokerServing runs a CI-sized network fuzz (every kind of bad request over
// hundreds of connections) against a broker process while a producer writes: the broker must
// answer what it can, close the connections it cannot trust, never recover a handler panic, keep
// running and answering, and the producer must lose nothing.
func TestFuzzerLeavesTheBrokerServing(t *testing.T) {
	zk := zktest.Start(t, zktest.Options{})
	port := testcluster.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	broker := testcluster.StartProcess(t, map[string]string{
		"broker.id":                                "1",
		"listeners":                                "PLAINTEXT://" + addr,
		"log.dirs":                                 t.TempDir(),
		"zookeeper.connect":                        zk.Connect,
		"offsets.topic.replication.factor":         "1",
		"offsets.topic.num.partitions":             "3",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.num.partitions":     "3",
		"group.initial.rebalance.delay.ms":         "0",
	})
	wait.For(t, time.Minute, "the broker to listen", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	o := chaos.DefaultFuzzOptions()
	o.Bootstrap, o.Topic, o.Seed = []string{addr}, "fuzzed", 1
	o.Connections, o.Concurrency, o.ReadTimeout = 400, 16, 500*time.Millisecond
	o.PIDs = []int{broker.Pid()}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := chaos.Fuzz(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	t.Logf("\n%s", table.String())
	if exited, code := broker.Exited(); exited {
		t.Fatalf("the broker exited (%d) under the fuzzer; log:\n%s", code, broker.Log())
	}
	if n := strings.Count(broker.Log(), "Request handler panicked"); n > 0 {
		t.Errorf("%d request handlers panicked; log:\n%s", n, broker.Log())
	}
	if rep.Verdict() != "PASS" {
		t.Fatalf("verdict %s", rep.Verdict())
	}
	for _, k := range chaos.FuzzKinds {
		if rep.Requests[k] == 0 {
			t.Errorf("no %s requests sent", k)
		}
	}
	if rep.Connections < int64(o.Connections) || rep.Answered == 0 || rep.ClosedByBroker == 0 {
		t.Errorf("%d connections, %d answers, %d closed by the broker: want %d connections and both answers and closes",
			rep.Connections, rep.Answered, rep.ClosedByBroker, o.Connections)
	}
	if rep.RSSBefore[0] == 0 || rep.RSSAfter[0] == 0 {
		t.Errorf("resident memory not read: %d before, %d after", rep.RSSBefore[0], rep.RSSAfter[0])
	}
}
