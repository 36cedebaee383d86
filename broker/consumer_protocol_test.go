package broker_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// consumerProtocolProps turn on KIP-848's consumer protocol with timings a
// test can wait for.
var consumerProtocolProps = map[string]string{
	"group.coordinator.rebalance.protocols":    "classic,consumer",
	"group.consumer.min.session.timeout.ms":    "3000",
	"group.consumer.session.timeout.ms":        "6000",
	"group.consumer.min.heartbeat.interval.ms": "100",
	"group.consumer.heartbeat.interval.ms":     "300",
	"offsets.topic.num.partitions":             "3",
	"offsets.topic.replication.factor":         "1",
}

// describeConsumerGroup sends ConsumerGroupDescribe v1 for one group.
func describeConsumerGroup(t *testing.T, addr, group string) kmsg.ConsumerGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	return raw(t, addr, req, 1).(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
}

// TestConsumerProtocolWithFranzGo: franz-go consumers on KIP-848's protocol
// (the server-side assignor) share a topic: the second member's partitions
// come from the first's revocation, the two read every record between them
// and commit with their member epochs, the group settles Stable with the
// partitions split and none owned twice, and when one leaves the other gets
// them all.
func TestConsumerProtocolWithFranzGo(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: consumerProtocolProps})
	createTopic(t, c, "events", 6, 1)
	const records = 600
	p := c.Client(kgo.DefaultProduceTopic("events"))
	ctx := ctxT(t, 90*time.Second)
	for i := range records {
		p.Produce(ctx, kgo.StringRecord(fmt.Sprint(i)), nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	seen := map[string]bool{}
	consumer := func() *kgo.Client {
		return c.Client(kgo.ConsumerGroup("kip848"), kgo.ConsumeTopics("events"), kgo.Balancers(kgo.StickyBalancer()),
			kgo.ServerSideBalancer(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(2000), kgo.FetchMaxPartitionBytes(2000))
	}
	poll := func(cl *kgo.Client) {
		// A poll returns what is buffered, or waits a little for more.
		pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		fs := cl.PollRecords(pollCtx, 50)
		fs.EachRecord(func(r *kgo.Record) {
			mu.Lock()
			seen[string(r.Value)] = true
			mu.Unlock()
		})
		if err := cl.CommitUncommittedOffsets(ctx); err != nil && !errorsIsAny(err, kerr.StaleMemberEpoch, kerr.RebalanceInProgress) {
			t.Errorf("commit: %v", err)
		}
	}
	a := consumer()
	for len(seen) == 0 {
		poll(a)
	}
	b := consumer()
	addr := c.Addr(1)
	c.WaitFor("both members to settle with half the partitions each", func() bool {
		poll(a)
		poll(b)
		d := describeConsumerGroup(t, addr, "kip848")
		if d.ErrorCode != 0 || d.State != "Stable" || len(d.Members) != 2 {
			return false
		}
		owned := map[int32]string{}
		for _, m := range d.Members {
			if m.MemberEpoch != d.AssignmentEpoch || len(m.Assignment.TopicPartitions) != 1 || len(m.Assignment.TopicPartitions[0].Partitions) != 3 {
				return false
			}
			for _, p := range m.Assignment.TopicPartitions[0].Partitions {
				if other, ok := owned[p]; ok {
					t.Fatalf("partition %d owned by %s and %s", p, other, m.MemberID)
				}
				owned[p] = m.MemberID
			}
		}
		return len(owned) == 6
	})
	c.WaitFor("every record read", func() bool {
		poll(a)
		poll(b)
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == records
	})

	b.Close() // leaves with epoch -1
	c.WaitFor("the remaining member to own every partition", func() bool {
		poll(a)
		d := describeConsumerGroup(t, addr, "kip848")
		return d.State == "Stable" && len(d.Members) == 1 && len(d.Members[0].Assignment.TopicPartitions) == 1 &&
			slices.Equal(d.Members[0].Assignment.TopicPartitions[0].Partitions, []int32{0, 1, 2, 3, 4, 5})
	})
	if d := describeConsumerGroup(t, addr, "kip848"); d.AssignorName != "uniform" || d.Members[0].MemberType != 1 {
		t.Errorf("describe: assignor %q, member type %d", d.AssignorName, d.Members[0].MemberType)
	}
}

func errorsIsAny(err error, targets ...error) bool {
	return slices.ContainsFunc(targets, func(target error) bool { return errors.Is(err, target) })
}

// TestConsumerProtocolCoordinatorFailover: the broker coordinating a
// consumer-protocol group shuts down mid-stream; the next leader of its
// __consumer_offsets partition loads the group from its records (same
// members, epochs and assignment), the franz-go members carry on, every
// record is read and the commits read back at the log end.
func TestConsumerProtocolCoordinatorFailover(t *testing.T) {
	props := maps.Clone(consumerProtocolProps)
	props["offsets.topic.replication.factor"] = "3"
	// franz-go backs off against the stopped coordinator for several
	// seconds before it asks for the new one: a session as long keeps its
	// members in the group, as Kafka's 45 s default does.
	props["group.consumer.session.timeout.ms"] = "30000"
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: props})
	createTopic(t, c, "stream", 6, 3)
	const group, records = "kip848-failover", 1200
	p := c.Client(kgo.DefaultProduceTopic("stream"))
	ctx := ctxT(t, 120*time.Second)
	for i := range records {
		p.Produce(ctx, kgo.StringRecord(fmt.Sprint(i)), nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var members []*kgo.Client
	for range 2 {
		members = append(members, c.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics("stream"), kgo.Balancers(kgo.RangeBalancer()),
			kgo.ServerSideBalancer(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(1000)))
	}
	pollAll := func() {
		for _, cl := range members {
			pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			cl.PollRecords(pollCtx, 20).EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
			cancel()
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				t.Logf("commit: %v", err) // a commit racing the failover is retried by the next
			}
		}
	}
	live := []int32{1, 2, 3}
	describe := func() kmsg.ConsumerGroupDescribeResponseGroup {
		unavailable := kmsg.ConsumerGroupDescribeResponseGroup{ErrorCode: kerr.CoordinatorNotAvailable.Code}
		id := findCoordinator(t, c.Addr(live[0]), group)
		if !slices.Contains(live, id) {
			return unavailable // none yet, or the stopped broker while its leadership moves
		}
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := rawTry(c.Addr(id), req, 1)
		if err != nil {
			return unavailable
		}
		return resp.(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
	}
	var stable kmsg.ConsumerGroupDescribeResponseGroup
	c.WaitFor("the group to settle", func() bool {
		pollAll()
		stable = describe()
		return stable.ErrorCode == 0 && stable.State == "Stable" && len(stable.Members) == 2 && len(seen) > 0 && len(seen) < records
	})
	coordinator := findCoordinator(t, c.Addr(1), group)
	c.StopBroker(coordinator)
	live = slices.DeleteFunc(live, func(id int32) bool { return id == coordinator })
	c.WaitFor("a new coordinator to have loaded the group", func() bool {
		d := describe()
		return d.ErrorCode == 0 && d.Epoch >= stable.Epoch && len(d.Members) == 2 &&
			d.Members[0].MemberID == stable.Members[0].MemberID && d.Members[1].MemberID == stable.Members[1].MemberID
	})
	c.WaitFor("every record read and committed", func() bool {
		pollAll()
		if len(seen) < records {
			return false
		}
		offs, err := kadm.NewClient(c.Client()).FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		total := int64(0)
		offs.Each(func(o kadm.OffsetResponse) { total += o.At })
		return total == records
	})
	if d := describe(); d.State != "Stable" || len(d.Members) != 2 {
		t.Fatalf("after the failover: %+v", d)
	}
}

// TestConsumerProtocolReconcilesIncrementally: on a scale-out the member
// that had every partition revokes only those that move, keeps fetching the
// rest throughout (no revocation, no loss of them in its event stream), and
// the newcomer gets exactly what was revoked.
func TestConsumerProtocolReconcilesIncrementally(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: consumerProtocolProps})
	createTopic(t, c, "scale", 6, 1)
	ctx := ctxT(t, 60*time.Second)
	var mu sync.Mutex
	var revoked, lost []int32
	owned := map[string][]int32{}
	consumer := func(name string, track bool) *kgo.Client {
		opts := []kgo.Opt{kgo.ConsumerGroup("scale-out"), kgo.ConsumeTopics("scale"), kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer(),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				owned[name] = append(owned[name], m["scale"]...)
				mu.Unlock()
			})}
		if track {
			opts = append(opts,
				kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
					mu.Lock()
					revoked = append(revoked, m["scale"]...)
					mu.Unlock()
				}),
				kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
					mu.Lock()
					lost = append(lost, m["scale"]...)
					mu.Unlock()
				}))
		}
		return c.Client(opts...)
	}
	poll := func(cl *kgo.Client) {
		pollCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		cl.PollFetches(pollCtx)
	}
	a := consumer("a", true)
	c.WaitFor("a to own all six", func() bool {
		poll(a)
		mu.Lock()
		defer mu.Unlock()
		return len(owned["a"]) == 6
	})
	b := consumer("b", false)
	c.WaitFor("b to own three", func() bool {
		poll(a)
		poll(b)
		mu.Lock()
		defer mu.Unlock()
		return len(owned["b"]) == 3 && len(revoked) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(revoked)
	got := slices.Sorted(slices.Values(owned["b"]))
	if !slices.Equal(revoked, got) || len(lost) != 0 {
		t.Fatalf("a revoked %v and lost %v; b was assigned %v: want b to get exactly what a revoked, and nothing lost", revoked, lost, got)
	}
}

// TestConsumerProtocolAuthorization: ConsumerGroupHeartbeat needs READ on
// the group (GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every topic it
// names (TOPIC_AUTHORIZATION_FAILED, and the coordinator is not asked);
// ConsumerGroupDescribe answers GROUP_AUTHORIZATION_FAILED for a group the
// caller may not describe, beside the groups it may.
func TestConsumerProtocolAuthorization(t *testing.T) {
	props := maps.Clone(consumerProtocolProps)
	props["authorizer.class.name"] = "kafka.security.authorizer.AclAuthorizer"
	props["allow.everyone.if.no.acl.found"] = "true"
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: props})
	c.WaitForController()
	addr := c.Addr(1)
	for _, topic := range []string{"visible", "hidden"} {
		if code := createTopicRaw(t, addr, topic, 1); code != 0 {
			t.Fatalf("create %s: %s", topic, kerr.ErrorForCode(code))
		}
		c.WaitForLeader(topic, 0)
	}
	for i, r := range createACLs(t, addr,
		aclCreation(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationClusterAction, kmsg.ACLPermissionTypeAllow),
		aclCreation(kmsg.ACLResourceTypeTopic, "hidden", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeDeny),
		aclCreation(kmsg.ACLResourceTypeGroup, "g-denied", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeDeny),
		aclCreation(kmsg.ACLResourceTypeGroup, "g-secret", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeDeny),
	) {
		if r.ErrorCode != 0 {
			t.Fatalf("creation %d: %s", i, kerr.ErrorForCode(r.ErrorCode))
		}
	}
	// One broker coordinates every group; asking for an allowed group's
	// coordinator creates __consumer_offsets.
	c.WaitFor("the coordinator of g-ok", func() bool { return findCoordinator(t, addr, "g-ok") == 1 })
	join := func(group string, topics ...string) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, "m-"+group, 30_000
		req.SubscribedTopicNames, req.Topics = topics, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		var resp *kmsg.ConsumerGroupHeartbeatResponse
		c.WaitFor("a heartbeat answer for "+group, func() bool {
			resp = raw(t, addr, req, 1).(*kmsg.ConsumerGroupHeartbeatResponse)
			return resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code && resp.ErrorCode != kerr.NotCoordinator.Code
		})
		return resp
	}
	if resp := join("g-denied", "visible"); resp.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("heartbeat into a group without READ: %s", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := join("g-ok", "visible", "hidden"); resp.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("heartbeat naming a topic without DESCRIBE: %s", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := join("g-ok", "visible"); resp.ErrorCode != 0 || resp.MemberEpoch != 1 {
		t.Fatalf("heartbeat into g-ok: %s, epoch %d", kerr.ErrorForCode(resp.ErrorCode), resp.MemberEpoch)
	}
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{"g-secret", "g-ok"}
	groups := raw(t, addr, req, 1).(*kmsg.ConsumerGroupDescribeResponse).Groups
	if len(groups) != 2 || groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code || groups[1].ErrorCode != 0 || len(groups[1].Members) != 1 {
		t.Fatalf("describe: %+v", groups)
	}
}
