package broker_test

import (
	"bytes"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/zkpaths"
)

// TestReplicationThrottles sets a replication throttle of 1 byte/s, on the
// leader's side (broker 1) or the follower's (broker 2), as
// kafka-reassign-partitions --throttle does:
//   - an in-sync replica of a throttled partition is never held back: 256
//     KiB produced with acks=all goes through, and puts the rate far above
//     the throttle for the 30 s window;
//   - a replica that must catch up (broker 2 was down) gets at most one
//     fetch's worth of a throttled partition, while an unthrottled partition
//     of the same topic, in the same fetches, catches up and rejoins the ISR;
//   - once the rate is removed, the throttled one catches up too.
func TestReplicationThrottles(t *testing.T) {
	for _, side := range []struct {
		name           string
		broker         int32 // whose rate and list entries apply
		rate, replicas string
	}{
		{"leader", 1, "leader.replication.throttled.rate", "leader.replication.throttled.replicas"},
		{"follower", 2, "follower.replication.throttled.rate", "follower.replication.throttled.replicas"},
	} {
		t.Run(side.name, func(t *testing.T) {
			props := replicationProps()
			props["replica.fetch.max.bytes"] = "16384"
			props["replication.quota.window.size.seconds"] = "30"
			c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: props})
			admin := adminzk.New(c.ZooKeeper(), zap.NewNop())
			id := strconv.Itoa(int(side.broker))
			setRate := func(value string) {
				t.Helper()
				err := admin.ChangeEntityConfig(zkpaths.EntityBrokers, id, func(cfg map[string]string) (bool, error) {
					if value == "" {
						delete(cfg, side.rate)
					} else {
						cfg[side.rate] = value
					}
					return true, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				// The broker describes a rate only once it applies.
				c.WaitFor("broker "+id+" to load "+side.rate+"="+value, func() bool {
					described := false
					for _, e := range describeRaw(t, c.Addr(side.broker), kmsg.ConfigResourceTypeBroker, id).Configs {
						described = described || e.Name == side.rate
					}
					return described == (value != "")
				})
			}
			setRate("1")

			createAssigned(t, c.Addr(1), "in-sync", [][]int32{{1, 2}}, map[string]string{side.replicas: "*", "min.insync.replicas": "2"})
			c.WaitFor("ISR [1 2] of in-sync-0", isr(c, "in-sync", 0, 1, 2))
			for range 16 {
				req := produceReq("in-sync", 0, valueBatch(4, 4096))
				req.Acks, req.TimeoutMillis = -1, 10000
				if code, _ := produceCode(t, c, c.Addr(1), req); code != 0 {
					t.Fatalf("acks=all through an in-sync throttled replica: error %d", code)
				}
			}

			createAssigned(t, c.Addr(1), "catch-up", [][]int32{{1, 2}, {1, 2}}, map[string]string{side.replicas: "0:" + id})
			c.StopBroker(2)
			end := map[int32]int64{}
			for p := range int32(2) {
				c.WaitFor("broker 2 out of the ISR", isr(c, "catch-up", p, 1))
				for range 64 {
					_, end[p] = produceCode(t, c, c.Addr(1), produceReq("catch-up", p, valueBatch(4, 1024)))
				}
				end[p] += 4
			}
			c.StartBroker(2)
			leo := func(p int32) int64 {
				rp, ok := c.Broker(2).ReplicaManager().Partition("catch-up", p)
				if !ok {
					return -1
				}
				return rp.Log().LogEndOffset()
			}
			c.WaitFor("the unthrottled partition to catch up and rejoin the ISR", func() bool {
				return leo(1) == end[1] && isr(c, "catch-up", 1, 1, 2)()
			})
			// One fetch brings at most 16 KiB, four 4 KiB batches of 4 records.
			if got := leo(0); got > 16 {
				t.Errorf("the throttled partition reached offset %d of %d while the unthrottled one caught up: more than one fetch", got, end[0])
			}
			if isr(c, "catch-up", 0, 1, 2)() {
				t.Error("the throttled replica joined the ISR")
			}

			setRate("")
			c.WaitFor("the throttled partition to catch up and rejoin the ISR once the rate is removed", func() bool {
				return leo(0) == end[0] && isr(c, "catch-up", 0, 1, 2)()
			})
		})
	}
}

// isr reports whether the partition's state znode has exactly the ISR want.
func isr(c *testcluster.Cluster, topic string, partition int32, want ...int32) func() bool {
	return func() bool {
		s, ok := c.PartitionState(topic, partition)
		return ok && slices.Equal(slices.Sorted(slices.Values(s.ISR)), want)
	}
}

// valueBatch is a record batch of n values of size bytes.
func valueBatch(n, size int) []byte {
	values := make([][]byte, n)
	for i := range values {
		values[i] = bytes.Repeat([]byte{'x'}, size)
	}
	return recordBatch(values...)
}
