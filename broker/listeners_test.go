package broker_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// TestNamedListeners runs the docker-compose pattern: an INTERNAL listener
// for brokers and an EXTERNAL one for the host, advertised under different
// host names. A client on each listener must be told every broker's address
// on that same listener (testcluster's own PLAINTEXT listener is a third).
func TestNamedListeners(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{
		Brokers: 3,
		Properties: map[string]string{
			"listener.security.protocol.map":   "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
			"listeners":                        "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
			"advertised.listeners":             "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,EXTERNAL://localhost:0",
			"inter.broker.listener.name":       "INTERNAL",
			"offsets.topic.replication.factor": "1",
		},
	})
	// want[listener][broker] is the address that listener advertises.
	want := map[string]map[int32]string{}
	for _, l := range []string{"PLAINTEXT", "INTERNAL", "EXTERNAL"} {
		want[l] = map[int32]string{}
		for id := int32(1); id <= 3; id++ {
			addr, ok := c.Broker(id).ListenerAddr(l)
			if !ok {
				t.Fatalf("broker %d has no %s listener", id, l)
			}
			if l == "EXTERNAL" {
				_, port, _ := net.SplitHostPort(addr)
				addr = net.JoinHostPort("localhost", port)
			}
			want[l][id] = addr
		}
	}

	// /brokers/ids/N carries every endpoint.
	for id := int32(1); id <= 3; id++ {
		data, _, err := c.ZooKeeper().Get(zkpaths.BrokerPath(id))
		if err != nil {
			t.Fatal(err)
		}
		reg, err := zkpaths.DecodeBrokerRegistration(id, data)
		if err != nil {
			t.Fatal(err)
		}
		for l, addrs := range want {
			ep, ok := reg.Endpoint(l)
			if !ok || net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))) != addrs[id] {
				t.Errorf("/brokers/ids/%d endpoint %s = %v (%v), want %s", id, l, ep, ok, addrs[id])
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(c.Client()).CreateTopic(ctx, 3, 3, nil, "listeners"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	for p := int32(0); p < 3; p++ {
		c.WaitForLeader("listeners", p)
	}

	// Each broker, asked on each listener, describes all brokers (and the
	// topic's leaders) with that listener's addresses.
	for l, addrs := range want {
		for id := int32(1); id <= 3; id++ {
			bound, _ := c.Broker(id).ListenerAddr(l)
			cl, err := wire.Dial(ctx, bound, "listeners-test")
			if err != nil {
				t.Fatal(err)
			}
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr("listeners")
			req.Topics = append(req.Topics, rt)
			resp, err := cl.Request(ctx, req)
			cl.Close()
			if err != nil {
				t.Fatal(err)
			}
			md := resp.(*kmsg.MetadataResponse)
			if len(md.Brokers) != 3 {
				t.Errorf("%s of broker %d: %d brokers, want 3", l, id, len(md.Brokers))
			}
			for _, b := range md.Brokers {
				if got := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); got != addrs[b.NodeID] {
					t.Errorf("%s of broker %d: broker %d at %s, want %s", l, id, b.NodeID, got, addrs[b.NodeID])
				}
			}
			if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 3 {
				t.Fatalf("%s of broker %d: topic metadata %+v", l, id, md.Topics)
			}
			for _, p := range md.Topics[0].Partitions {
				if p.ErrorCode != 0 || p.Leader < 1 || len(p.ISR) != 3 {
					t.Errorf("%s of broker %d: partition %d error %d leader %d isr %v", l, id, p.Partition, p.ErrorCode, p.Leader, p.ISR)
				}
			}
		}
	}

	// A real client that only knows the EXTERNAL addresses produces with
	// acks=all (replication runs over INTERNAL) and reads its records back.
	var seeds []string
	for _, a := range want["EXTERNAL"] {
		seeds = append(seeds, a)
	}
	producer, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	for i := range 30 {
		r := &kgo.Record{Topic: "listeners", Value: []byte(strconv.Itoa(i))}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce through EXTERNAL: %v", err)
		}
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("listeners"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	seen := map[string]bool{}
	for len(seen) < 30 {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 30 through EXTERNAL: %v", len(seen), err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
}
