package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestConsumerGroupsConsumerProtocol: kafka-consumer-groups describes a
// KIP-848 group as Kafka 4.0's tool does: its offsets, its members with
// their epochs, assignments and targets (--members --verbose), and its
// assignor and state (--state).
func TestConsumerGroupsConsumerProtocol(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"group.coordinator.rebalance.protocols": "classic,consumer",
		"group.consumer.heartbeat.interval.ms":  "5000",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bs := c.BootstrapAddrs()[0]
	adm := kadm.NewClient(c.Client())
	if resp, err := adm.CreateTopic(ctx, 3, 1, nil, "jobs"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	for p := range int32(3) {
		c.WaitForLeader("jobs", p)
	}
	producer := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, p := range []int32{0, 1, 1, 2} {
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "jobs", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	member := c.Client(kgo.ClientID("worker"), kgo.ConsumerGroup("kip848"), kgo.ConsumeTopics("jobs"), kgo.Balancers(kgo.RangeBalancer()),
		kgo.ServerSideBalancer(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	for read := 0; read < 4; {
		read += member.PollFetches(ctx).NumRecords()
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := adm.DescribeConsumerGroups(ctx, "kip848")
	if err != nil || d["kip848"].Err != nil || len(d["kip848"].Members) != 1 {
		t.Fatalf("describe: %+v %v", d, err)
	}
	m := d["kip848"].Members[0]
	epoch := fmt.Sprint(m.MemberEpoch)
	groups := func(args ...string) []string {
		return append([]string{"consumer-groups", "--bootstrap-server", bs, "--group", "kip848", "--describe"}, args...)
	}
	w := max(15, len(m.MemberID))
	offsets := "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             " + fmt.Sprintf("%-*s", w, "CONSUMER-ID") + " HOST            CLIENT-ID\n"
	for p, end := range []int{1, 2, 1} {
		offsets += fmt.Sprintf("kip848          jobs            %-10d %-15d %-15d %-15d %-*s %-15s %s\n", p, end, end, 0, w, m.MemberID, m.ClientHost, "worker")
	}
	expectToolBoth(t, 0, offsets, "", groups()...)

	members := "\n" + fmt.Sprintf("%-15s %-*s %-15s %-15s %-15s %-15s %-20s %-15s %-20s\n", "GROUP", w, "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
		"CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT") +
		fmt.Sprintf("%-15s %-*s %-15s %-15s %-15s %-15s %-20s %-15s %-20s\n", "kip848", w, m.MemberID, m.ClientHost, "worker", "3",
			epoch, "jobs:0,1,2", epoch, "jobs:0,1,2")
	expectToolBoth(t, 0, members, "", groups("--members", "--verbose")...)

	state := fmt.Sprintf("\n%-15s %-25s %-20s %-20s %s", "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS") +
		fmt.Sprintf("\n%-15s %-25s %-20s %-20s %s\n", "kip848", bs+"  (1)", "range", "Stable", "1")
	expectToolBoth(t, 0, state, "", groups("--state")...)
}
