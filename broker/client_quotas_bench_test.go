package broker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// BenchmarkProducerQuota: a producer that could send far more is held to
// its producer_byte_rate. After the quota's window has filled (11 s), the
// bytes it writes in produce requests are measured for 55 s. The rate is
// Kafka's, measured over the window, so a client that always has data sends
// in bursts: when a busy second leaves the window the rate drops and the
// client may send that second's bytes again at once. The measurement spans
// five windows so that the bursts average out:
//
//	go test ./broker -run '^$' -bench BenchmarkProducerQuota -benchtime 1x
//
// rate/quota is the measured rate over the quota (1.0 is exact; the issue
// asks for within 10%).
func BenchmarkProducerQuota(b *testing.B) {
	const quota = 256 << 10
	c := testcluster.Start(b, testcluster.Options{Brokers: 1})
	ctx := context.Background()
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "throttled"); err != nil {
		b.Fatal(err)
	}
	c.WaitForLeader("throttled", 0)
	if _, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: []kadm.ClientQuotaEntityComponent{{Type: "client-id", Name: kadmString("capped")}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: quota}},
	}}); err != nil {
		b.Fatal(err)
	}
	var written atomic.Int64
	cl := c.Client(kgo.ClientID("capped"), kgo.DefaultProduceTopic("throttled"), kgo.ProducerLinger(5*time.Millisecond),
		kgo.WithHooks(produceBytes{&written}), kgo.ProducerBatchMaxBytes(64<<10))
	value := make([]byte, 1000)
	run, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for run.Err() == nil {
			cl.Produce(run, &kgo.Record{Value: value}, nil)
		}
	}()
	time.Sleep(12 * time.Second) // the window fills: the benchmark's warm-up, not a synchronisation
	b.ResetTimer()
	from, start := written.Load(), time.Now()
	time.Sleep(55 * time.Second)
	rate := float64(written.Load()-from) / time.Since(start).Seconds()
	b.StopTimer()
	b.ReportMetric(rate/quota, "rate/quota")
	b.ReportMetric(rate/1024, "KiB/s")
}

func kadmString(s string) *string { return &s }

// produceBytes counts the bytes of produce requests written to brokers.
type produceBytes struct{ n *atomic.Int64 }

func (h produceBytes) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, bytesWritten int, _, _ time.Duration, err error) {
	if key == 0 && err == nil {
		h.n.Add(int64(bytesWritten))
	}
}

var _ kgo.HookBrokerWrite = produceBytes{}
