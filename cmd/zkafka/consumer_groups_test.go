package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/zkpaths"
)

// pad left-aligns s in a column of width max(15, n), as Kafka's tables do.
func pad(s string, n int) string { return fmt.Sprintf("%-*s", max(15, n), s) }

// expectToolBoth runs a tool and fails unless it exits with code and prints
// exactly stdout and stderr.
func expectToolBoth(t *testing.T, code int, stdout, stderr string, args ...string) {
	t.Helper()
	c, out, errOut := runTool(args...)
	if c != code || out != stdout || errOut != stderr {
		t.Errorf("zkafka %s: exit %d (want %d)\nstdout:\n%q\nwant:\n%q\nstderr:\n%q\nwant:\n%q", strings.Join(args, " "), c, code, out, stdout, errOut, stderr)
	}
}

func TestConsumerGroupsGolden(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{"group.initial.rebalance.delay.ms": "0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bs := c.BootstrapAddrs()[0]
	adm := kadm.NewClient(c.Client())
	if resp, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	c.WaitForLeader("orders", 0)
	c.WaitForLeader("orders", 1)
	producer := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, p := range []int32{0, 0, 0, 1} {
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 1, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "idle", offsets); err != nil {
		t.Fatal(err)
	}
	groups := func(args ...string) []string {
		return append([]string{"consumer-groups", "--bootstrap-server", bs}, args...)
	}
	header := "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"

	// An empty group: its committed offsets, no consumer.
	expectToolBoth(t, 0, header+
		"idle            orders          0          1               3               2               -               -               -\n",
		"\nConsumer group 'idle' has no active members.\n", groups("--describe", "--group", "idle")...)
	expectToolBoth(t, 0, "", "\nError: Consumer group 'nope' does not exist.\n", groups("--describe", "--group", "nope")...)

	// A live member holding both partitions, having committed nothing.
	member := c.Client(kgo.ConsumerGroup("live"), kgo.ConsumeTopics("orders"), kgo.ClientID("cli-test"), kgo.DisableAutoCommit())
	wait.For(t, 20*time.Second, "the live group to be stable", func() bool {
		member.PollRecords(ctx, 1)
		d, err := adm.DescribeGroups(ctx, "live")
		g := d["live"]
		return err == nil && g.State == "Stable" && len(g.AssignedPartitions()["orders"]) == 2
	})
	d, _ := adm.DescribeGroups(ctx, "live")
	m := d["live"].Members[0]
	idW, hostW := len(m.MemberID), len(m.ClientHost)
	liveHeader := "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             " + pad("CONSUMER-ID", idW) + " " + pad("HOST", hostW) + " CLIENT-ID\n"
	expectTool(t, liveHeader+
		"live            orders          0          -               3               -               "+pad(m.MemberID, idW)+" "+pad(m.ClientHost, hostW)+" cli-test\n"+
		"live            orders          1          -               1               -               "+pad(m.MemberID, idW)+" "+pad(m.ClientHost, hostW)+" cli-test\n",
		groups("--describe", "--group", "live")...)
	expectTool(t, "\nGROUP           "+pad("CONSUMER-ID", idW)+" "+pad("HOST", hostW)+" CLIENT-ID       #PARTITIONS     ASSIGNMENT\n"+
		"live            "+pad(m.MemberID, idW)+" "+pad(m.ClientHost, hostW)+" cli-test        2               orders(0,1)\n",
		groups("--describe", "--group", "live", "--members", "--verbose")...)
	coordinator := fmt.Sprintf("%s (1)", bs)
	expectTool(t, "\n"+pad("GROUP", 25)+" COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS"+
		"\n"+pad("live", 25)+" "+pad(coordinator, 25)+" "+fmt.Sprintf("%-20s", d["live"].Protocol)+" Stable          1\n",
		groups("--describe", "--group", "live", "--state")...)
	expectTool(t, "idle\nlive\n", groups("--list")...)
	expectTool(t, "GROUP           STATE\nlive            Stable\n", groups("--list", "--state", "stable")...)

	// Resets: a plan by default, committed with --execute, refused for the live group.
	planHeader := "\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"
	warn := "WARN: No action will be performed as the --execute option is missing.In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.\n"
	expectToolBoth(t, 0, planHeader+
		"idle                           orders                         0          0              \n"+
		"idle                           orders                         1          0              \n",
		warn, groups("--reset-offsets", "--group", "idle", "--topic", "orders", "--to-earliest")...)
	expectTool(t, planHeader+"idle                           orders                         0          3              \n",
		groups("--reset-offsets", "--group", "idle", "--all-topics", "--to-latest", "--dry-run")...)
	expectTool(t, planHeader+"idle                           orders                         1          1              \n",
		groups("--reset-offsets", "--group", "idle", "--topic", "orders:1", "--to-offset", "1", "--execute")...)
	expectToolBoth(t, 0, planHeader+"idle                           orders                         0          0              \n",
		"WARN: New offset (-4) is lower than earliest offset for topic partition orders-0. Value will be set to 0\n",
		groups("--reset-offsets", "--group", "idle", "--topic", "orders:0", "--shift-by", "-5", "--execute")...)
	expectTool(t, "\nWarn: Partition 1 from topic orders is empty. Falling back to latest known offset.\n"+
		planHeader+"idle                           orders                         1          1              \n",
		groups("--reset-offsets", "--group", "idle", "--topic", "orders:1", "--to-datetime", "2999-01-01T00:00:00.000", "--dry-run")...)
	expectTool(t, planHeader+"idle                           orders                         0          0              \n",
		groups("--reset-offsets", "--group", "idle", "--topic", "orders:0", "--to-datetime", "2000-01-01T00:00:00.000+01:00", "--dry-run")...)
	expectToolBoth(t, 0, header+
		"idle            orders          0          0               3               3               -               -               -\n"+
		"idle            orders          1          1               1               0               -               -               -\n",
		"\nConsumer group 'idle' has no active members.\n", groups("--describe", "--group", "idle")...)
	expectToolBoth(t, 0, planHeader,
		"\nError: Assignments can only be reset if the group 'live' is inactive, but the current state is Stable.\n",
		groups("--reset-offsets", "--group", "live", "--all-topics", "--to-earliest", "--dry-run")...)

	// Offsets of one partition go; the live group's subscribed topic keeps them.
	statusHeader := "\nTOPIC                          PARTITION       STATUS         \n"
	expectTool(t, "Request succeed for deleting offsets with topic orders:1 group idle\n"+statusHeader+
		"orders                         1               Successful     \n", groups("--delete-offsets", "--group", "idle", "--topic", "orders:1")...)
	expectToolBoth(t, 1, statusHeader+
		"orders                         0               Error: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.\n"+
		"orders                         1               Error: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.\n",
		"\nError: Encounter some partition level error, see the follow-up details:\n", groups("--delete-offsets", "--group", "live", "--topic", "orders")...)

	// A static member adds the GROUP-INSTANCE-ID column.
	static := c.Client(kgo.ConsumerGroup("static"), kgo.ConsumeTopics("orders"), kgo.ClientID("cli-static"), kgo.InstanceID("i-1"), kgo.DisableAutoCommit())
	wait.For(t, 20*time.Second, "the static group to be stable", func() bool {
		static.PollRecords(ctx, 1)
		d, err := adm.DescribeGroups(ctx, "static")
		return err == nil && d["static"].State == "Stable"
	})
	d, _ = adm.DescribeGroups(ctx, "static")
	sm := d["static"].Members[0]
	expectTool(t, "\nGROUP           "+pad("CONSUMER-ID", len(sm.MemberID))+" GROUP-INSTANCE-ID "+pad("HOST", len(sm.ClientHost))+" CLIENT-ID       #PARTITIONS     \n"+
		"static          "+pad(sm.MemberID, len(sm.MemberID))+" i-1               "+pad(sm.ClientHost, len(sm.ClientHost))+" cli-static      2               \n",
		groups("--describe", "--group", "static", "--members")...)

	// --all-groups describes every group, in name order.
	code, out, _ := runTool(groups("--describe", "--all-groups", "--state")...)
	if i, j, k := strings.Index(out, "\nidle "), strings.Index(out, "\nlive "), strings.Index(out, "\nstatic "); code != 0 || i < 0 || j < i || k < j {
		t.Errorf("--describe --all-groups --state: exit %d\n%s", code, out)
	}

	// Deletion: the empty group goes, the live one stays.
	expectToolBoth(t, 1, "", "\nError: Deletion of some consumer groups failed:\n* Group 'live' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n",
		groups("--delete", "--group", "live")...)
	expectTool(t, "Deletion of requested consumer groups ('idle') was successful.\n", groups("--delete", "--group", "idle")...)
	expectTool(t, "live\nstatic\n", groups("--list")...)
}

// TestConsumerGroupsZooKeeper describes and deletes a group of the
// ZooKeeper-based consumer from its znodes, as 0.10's tool did.
func TestConsumerGroupsZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "orders"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	c.WaitForLeader("orders", 0)
	c.WaitForLeader("orders", 1)
	for _, p := range []int32{0, 0, 0, 1} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	zkc := c.ZooKeeper()
	id := zkpaths.NewConsumerID("legacy", "host", time.Now())
	idle := zkpaths.NewConsumerID("legacy", "other", time.Now())
	for path, data := range map[string][]byte{
		zkpaths.ConsumerIDPath("legacy", id):               zkpaths.ConsumerRegistration{Subscription: map[string]int32{"orders": 1}}.Encode(),
		zkpaths.ConsumerIDPath("legacy", idle):             zkpaths.ConsumerRegistration{Subscription: map[string]int32{"orders": 1}}.Encode(),
		zkpaths.ConsumerOwnerPath("legacy", "orders", 0):   []byte(zkpaths.ConsumerThreadID(id, 0)),
		zkpaths.ConsumerOffsetPath("legacy", "orders", 0):  zkpaths.EncodeConsumerOffset(2),
		zkpaths.ConsumerOffsetsTopicPath("legacy", "none"): nil,
	} {
		if err := zkc.CreateIfMissing(path, data); err != nil {
			t.Fatal(err)
		}
	}
	groups := func(args ...string) []string {
		return append([]string{"consumer-groups", "--zookeeper", c.ZK}, args...)
	}
	note := "Note: This will only show information about consumers that use ZooKeeper (not those using the Java consumer API).\n"
	w := max(len(id), len(idle))
	expectToolBoth(t, 0, "\nTOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "+pad("CONSUMER-ID", w)+" \n"+
		"orders          0          2               3               1               "+pad(id, w)+" \n"+
		"orders          1          -               1               -               "+pad("-", w)+" \n"+
		"-               -          -               -               -               "+pad(idle, w)+" \n",
		note+"\nError: Could not fetch offset from zookeeper for group 'legacy' partition 'orders-1' due to missing offset data in zookeeper.\n",
		groups("--describe", "--group", "legacy")...)
	expectToolBoth(t, 0, "legacy\n", note, groups("--list")...)
	expectToolBoth(t, 0, "", note+"\nError: The consumer group 'nope' does not exist.\n", groups("--describe", "--group", "nope")...)
	expectToolBoth(t, 1, "", note+"\nError: Delete for group 'legacy' failed because its consumers are still active.\n", groups("--delete", "--group", "legacy")...)
	for _, cid := range []string{id, idle} {
		if err := zkc.Delete(zkpaths.ConsumerIDPath("legacy", cid), -1); err != nil {
			t.Fatal(err)
		}
	}
	expectToolBoth(t, 0, "Deleted all consumer group information for group 'legacy' in zookeeper.\n", note, groups("--delete", "--group", "legacy")...)
	if ok, _, err := zkc.Exists(zkpaths.ConsumerGroupPath("legacy")); ok || err != nil {
		t.Errorf("/consumers/legacy after delete: exists %v, %v", ok, err)
	}
}

func TestConsumerGroupsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bootstrap-server", "h:9092", "--frob"}, "frob is not a recognized option\n"},
		{[]string{"--bootstrap-server", "h:9092"}, "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets\n"},
		{[]string{"--list"}, "Exactly one of --bootstrap-server or --zookeeper must be specified\n"},
		{[]string{"--bootstrap-server", "h:9092", "--describe"}, "Option [describe] takes one of these options: [all-groups], [group]\n"},
		{[]string{"--bootstrap-server", "h:9092", "--describe", "--group", "g", "--members", "--state"}, "Option [describe] takes at most one of these options: [members], [offsets], [state]\n"},
		{[]string{"--bootstrap-server", "h:9092", "--reset-offsets", "--group", "g", "--all-topics"}, "Option [reset-offsets] takes exactly one of these options: [to-offset], [to-earliest], [to-latest], [to-current], [shift-by], [to-datetime]\n"},
		{[]string{"--bootstrap-server", "h:9092", "--reset-offsets", "--group", "g", "--to-earliest"}, "Option [reset-offsets] takes one of these options: [all-topics], [topic]\n"},
		{[]string{"--bootstrap-server", "h:9092", "--reset-offsets", "--group", "g", "--all-topics", "--shift-by", "x"}, "Cannot parse argument 'x' of option shift-by\n"},
		{[]string{"--bootstrap-server", "h:9092", "--describe", "--group", "g", "--to-earliest"}, "Option [to-earliest] can only be used with [reset-offsets]\n"},
		{[]string{"--zookeeper", "h:2181", "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest"}, "Option [zookeeper] can only be used with --list, --describe --group and --delete --group\n"},
		{[]string{"--zookeeper", "h:2181", "--describe", "--group", "g", "--members"}, "Option(s) [members] are unavailable given other options on the command line\n"},
		{[]string{"--zookeeper", "h:2181", "--describe", "--group", "g", "--state"}, "Option(s) [state] are unavailable given other options on the command line\n"},
	} {
		expectToolError(t, tc.want, append([]string{"consumer-groups"}, tc.args...)...)
	}
	if _, err := parseResetDatetime("2021-13-01T00:00:00.000"); err == nil || err.Error() != `Unparseable date: "2021-13-01T00:00:00.000Z"` {
		t.Errorf("bad datetime: %v", err)
	}
	if ms, err := parseResetDatetime("2021-01-01T01:00:00.000+01:00"); err != nil || ms != 1609459200000 {
		t.Errorf("datetime with zone: %d %v", ms, err)
	}
}
