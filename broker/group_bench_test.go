package broker_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// Group benchmarks, one broker, group.initial.rebalance.delay.ms=0:
//
//	go test ./broker -run '^$' -bench BenchmarkGroup -benchtime 1x
//
// ms/stable is the time from starting every member at once until the group
// is Stable with all of them and each member holds its assignment;
// ms/leave the same after one member leaves.

func BenchmarkGroupStable(b *testing.B) {
	for _, n := range []int{10, 100, 500} {
		for _, bal := range []kgo.GroupBalancer{kgo.RangeBalancer(), kgo.CooperativeStickyBalancer()} {
			b.Run(fmt.Sprintf("members=%d/%s", n, bal.ProtocolName()), func(b *testing.B) {
				c := testcluster.Start(b, testcluster.Options{Properties: groupProps})
				topic := "bench"
				adm := kadm.NewClient(c.Client())
				if _, err := adm.CreateTopic(context.Background(), int32(n), 1, nil, topic); err != nil {
					b.Fatal(err)
				}
				c.WaitFor("leaders", func() bool {
					for p := range int32(n) {
						if s, ok := c.PartitionState(topic, p); !ok || s.Leader < 0 {
							return false
						}
					}
					return true
				})
				var join, leave time.Duration
				for i := range b.N {
					group := fmt.Sprintf("bench-%d", i)
					j, l := stabilize(b, c, adm, group, topic, n, bal)
					join += j
					leave += l
				}
				b.ReportMetric(float64(join.Milliseconds())/float64(b.N), "ms/stable")
				b.ReportMetric(float64(leave.Milliseconds())/float64(b.N), "ms/leave")
			})
		}
	}
}

// stabilize starts n members at once and times the group to Stable, then
// closes one member and times the group to Stable again.
func stabilize(b *testing.B, c *testcluster.Cluster, adm *kadm.Client, group, topic string, n int, bal kgo.GroupBalancer) (join, leave time.Duration) {
	var owned atomic.Int64
	clients := make([]*kgo.Client, n)
	start := time.Now()
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.BootstrapAddrs()...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.Balancers(bal), kgo.DisableAutoCommit(),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { owned.Add(int64(len(ps[topic]))) }),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { owned.Add(-int64(len(ps[topic]))) }),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { owned.Add(-int64(len(ps[topic]))) }))
		if err != nil {
			b.Fatal(err)
		}
		clients[i] = cl
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				cl.PollFetches(ctx)
			}
		}()
	}
	stable := func(members int) bool {
		d, err := adm.DescribeGroups(context.Background(), group)
		return err == nil && d[group].State == "Stable" && len(d[group].Members) == members && owned.Load() == int64(n)
	}
	wait.For(b, 5*time.Minute, "the group to be Stable", func() bool { return stable(n) })
	join = time.Since(start)

	start = time.Now()
	clients[0].Close()
	wait.For(b, 5*time.Minute, "the group to be Stable after a leave", func() bool { return stable(n - 1) })
	leave = time.Since(start)
	cancel()
	wg.Wait()
	for _, cl := range clients[1:] {
		cl.Close()
	}
	return join, leave
}

// BenchmarkGroupOffsetCommit measures acknowledged OffsetCommit requests
// (one partition each, acks=all) per second on one coordinator, with
// __consumer_offsets on one broker and replicated to three.
func BenchmarkGroupOffsetCommit(b *testing.B) {
	for _, brokers := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", brokers), func(b *testing.B) {
			props := map[string]string{"offsets.topic.replication.factor": fmt.Sprint(brokers)}
			for k, v := range groupProps {
				props[k] = v
			}
			c := testcluster.Start(b, testcluster.Options{Brokers: brokers, Properties: props})
			adm := kadm.NewClient(c.Client())
			if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "commits"); err != nil {
				b.Fatal(err)
			}
			c.WaitForLeader("commits", 0)
			cl := c.Client()
			commit := func(group string, offset int64) {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = group, -1
				req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "commits", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: offset}}}}
				for {
					resp, err := req.RequestWith(context.Background(), cl)
					if err == nil && resp.Topics[0].Partitions[0].ErrorCode == 0 {
						return
					}
				}
			}
			commit("bench-commits", 0) // the coordinator is up
			b.ResetTimer()
			start := time.Now()
			for o := 1; o <= b.N; o++ {
				commit("bench-commits", int64(o))
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
		})
	}
}
