package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// zkafkaResult is one tool invocation's result.
type zkafkaResult struct {
	code           int
	stdout, stderr string
}

func runZkafka(args ...string) zkafkaResult {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return zkafkaResult{code, stdout.String(), stderr.String()}
}

// expectTool fails the test unless the tool exits with code and prints
// exactly stdout.
func expectZkafka(t *testing.T, r zkafkaResult, code int, stdout string) {
	t.Helper()
	if r.code != code || r.stdout != stdout {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, code, r.stdout, stdout, tail(r.stderr))
	}
}

func writeTempFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// createTopicWithAssignment creates a topic with explicit replica lists.
func createTopicWithAssignment(t *testing.T, c *testcluster.Cluster, topic string, replicas ...[]int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.CreateTopicsRequestTopic{Topic: topic, NumPartitions: -1, ReplicationFactor: -1}
	for p, r := range replicas {
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: int32(p), Replicas: r})
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, c.Client())
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic %s: %v %+v", topic, err, resp)
	}
	for p := range replicas {
		c.WaitForLeader(topic, int32(p))
	}
}

// TestAdminToolsAgainstCluster drives reassign-partitions, leader-election,
// preferred-replica-election and broker-api-versions against three brokers
// on a real ZooKeeper and checks their output against Kafka 2.8's formats.
func TestAdminToolsAgainstCluster(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	bootstrap := c.Addr(1)
	createTopicWithAssignment(t, c, "moves", []int32{1}, []int32{1})

	t.Run("broker-api-versions", func(t *testing.T) {
		r := runZkafka("broker-api-versions", "--bootstrap-server", bootstrap)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for id := int32(1); id <= 3; id++ {
			header := c.Addr(id) + fmt.Sprintf(" (id: %d rack: null) -> (\n", id)
			if !strings.Contains(r.stdout, header) {
				t.Errorf("no %q in\n%s", header, r.stdout)
			}
		}
		block := r.stdout[strings.Index(r.stdout, "(\n") : strings.Index(r.stdout, "\n)\n")+3]
		want := []string{
			"(\n\tProduce(0): 0 to 9 [usable: 9],\n\tFetch(1): 0 to 12 [usable: 12],\n",
			"\tDescribeClientQuotas(48): 0 to 1 [usable: 1],\n\tAlterClientQuotas(49): 0 to 1 [usable: 1],\n\tDescribeUserScramCredentials(50): 0 [usable: 0],\n\tAlterUserScramCredentials(51): 0 [usable: 0],\n",
			"\tLeaderAndIsr(4): 0 to 5 [usable: 5],\n",
			"\tSaslHandshake(17): 0 to 1 [usable: 1],\n",
			"\tCreateDelegationToken(38): 0 to 2 [usable: 2],\n\tRenewDelegationToken(39): 0 to 2 [usable: 2],\n\tExpireDelegationToken(40): 0 to 2 [usable: 2],\n\tDescribeDelegationToken(41): 0 to 2 [usable: 2],\n",
			"\tApiVersions(18): 0 to 3 [usable: 3],\n",
			"\tAlterIsr(56): 0 [usable: 0],\n\tUpdateFeatures(57): 0 [usable: 0],\n",
			"\tDescribeProducers(61): 0 [usable: 0]\n)\n",
		}
		for _, w := range want {
			if !strings.Contains(block, w) {
				t.Errorf("no %q in\n%s", w, block)
			}
		}
		if n := strings.Count(block, "\n\t"); n != 56 {
			t.Errorf("%d API lines, want Kafka 2.8's 56 broker APIs", n)
		}
	})

	t.Run("reassign-partitions", func(t *testing.T) {
		topics := writeTempFile(t, "topics.json", `{"topics":[{"topic":"moves"}],"version":1}`)
		r := runZkafka("reassign-partitions", "--bootstrap-server", bootstrap, "--generate",
			"--topics-to-move-json-file", topics, "--broker-list", "2,3")
		const current = `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[1],"log_dirs":["any"]},` +
			`{"topic":"moves","partition":1,"replicas":[1],"log_dirs":["any"]}]}`
		head := "Current partition replica assignment\n" + current + "\n\nProposed partition reassignment configuration\n"
		if r.code != 0 || !strings.HasPrefix(r.stdout, head) {
			t.Fatalf("generate: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var proposed struct {
			Partitions []struct {
				Replicas []int32  `json:"replicas"`
				LogDirs  []string `json:"log_dirs"`
			} `json:"partitions"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(r.stdout, head)), &proposed); err != nil || len(proposed.Partitions) != 2 {
			t.Fatalf("proposal %q: %v", strings.TrimPrefix(r.stdout, head), err)
		}
		for _, p := range proposed.Partitions {
			if len(p.Replicas) != 1 || p.Replicas[0] < 2 || !slices.Equal(p.LogDirs, []string{"any"}) {
				t.Errorf("proposed %v %v, want one replica on broker 2 or 3", p.Replicas, p.LogDirs)
			}
		}

		plan := writeTempFile(t, "plan.json", `{"version":1,"partitions":[{"topic":"moves","partition":1,"replicas":[3]},`+
			`{"topic":"moves","partition":0,"replicas":[2],"log_dirs":["any"]}]}`)
		expectZkafka(t, runZkafka("reassign-partitions", "--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", plan), 0,
			"Current partition replica assignment\n\n"+current+"\n\nSave this to use as the --reassignment-json-file option during rollback\n"+
				"Successfully started partition reassignments for moves-0,moves-1\n")
		done := "Status of partition reassignment:\nReassignment of partition moves-0 is complete.\nReassignment of partition moves-1 is complete.\n\n" +
			"Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic moves\n"
		var last zkafkaResult
		// Between the controller finishing a move and every broker's metadata
		// showing it, --verify reports "no active reassignment ... but replica
		// set is ...", as Kafka's does: wait for both partitions to read complete.
		c.WaitFor("the reassignment to complete", func() bool {
			last = runZkafka("reassign-partitions", "--bootstrap-server", bootstrap, "--verify", "--reassignment-json-file", plan)
			return strings.Count(last.stdout, " is complete.") == 2
		})
		expectZkafka(t, last, 0, done)
		expectZkafka(t, runZkafka("reassign-partitions", "--bootstrap-server", bootstrap, "--list"), 0, "No partition reassignments found.\n")
		expectZkafka(t, runZkafka("reassign-partitions", "--bootstrap-server", bootstrap, "--cancel", "--reassignment-json-file", plan), 0,
			"None of the specified partition reassignments are active.\nNone of the specified partition moves are active.\n"+
				"Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic moves\n")

		// Back to broker 1 through /admin/reassign_partitions, throttled.
		back := writeTempFile(t, "back.json", `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[1]},{"topic":"moves","partition":1,"replicas":[1]}]}`)
		moved := `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[2],"log_dirs":["any"]},` +
			`{"topic":"moves","partition":1,"replicas":[3],"log_dirs":["any"]}]}`
		warning := "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.\n"
		expectZkafka(t, runZkafka("reassign-partitions", "--zookeeper", c.ZK, "--execute", "--reassignment-json-file", back, "--throttle", "1048576"), 0,
			warning+"Current partition replica assignment\n\n"+moved+"\n\nSave this to use as the --reassignment-json-file option during rollback\n"+
				"Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\n"+
				"The inter-broker throttle limit was set to 1048576 B/s\n"+
				"Successfully started partition reassignments for moves-0,moves-1\n")
		c.WaitFor("the ZooKeeper reassignment to complete", func() bool {
			last = runZkafka("reassign-partitions", "--zookeeper", c.ZK, "--verify", "--reassignment-json-file", back)
			return strings.Count(last.stdout, " is complete.") == 2
		})
		expectZkafka(t, last, 0, warning+"Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "+
			"Use --bootstrap-server instead for more accurate results.\n"+
			"Status of partition reassignment:\nReassignment of partition moves-0 is complete.\nReassignment of partition moves-1 is complete.\n"+
			"Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic moves\n")
		for _, path := range []string{zkpaths.TopicConfigPath("moves"), zkpaths.BrokerConfigPath("2")} {
			data, _, err := c.ZooKeeper().Get(path)
			if err != nil || strings.Contains(string(data), "throttled") {
				t.Errorf("%s after verify: %s %v, want the throttles gone", path, data, err)
			}
		}
	})

	t.Run("leader-election", func(t *testing.T) {
		createTopicWithAssignment(t, c, "elect", []int32{1, 2})
		expectZkafka(t, runZkafka("leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred", "--topic", "elect", "--partition", "0"), 0,
			"Valid replica already elected for partitions elect-0\n")
		// A restart of broker 1 moves the leadership to broker 2; the
		// election moves it back once broker 1 is in the ISR again.
		c.StopBroker(1)
		c.StartBroker(1)
		c.WaitFor("broker 1 back in the ISR of elect-0", func() bool {
			s, ok := c.PartitionState("elect", 0)
			return ok && s.Leader == 2 && len(s.ISR) == 2
		})
		bootstrap := c.Addr(2)
		expectZkafka(t, runZkafka("leader-election", "--bootstrap-server", bootstrap, "--election-type", "PREFERRED", "--topic", "elect", "--partition", "0"), 0,
			"Successfully completed leader election (PREFERRED) for partitions elect-0\n")
		r := runZkafka("leader-election", "--bootstrap-server", bootstrap, "--election-type", "PREFERRED", "--topic", "elect", "--partition", "7")
		if !strings.HasPrefix(r.stdout, "Error completing leader election (PREFERRED) for partition: elect-7: "+
			"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ") || r.code != 1 || r.stderr != "1 replica(s) could not be elected\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}

		expectZkafka(t, runZkafka("leader-election", "--bootstrap-server", bootstrap, "--election-type", "PREFERRED", "--all-topic-partitions"), 0, "")
		expectZkafka(t, runZkafka("leader-election", "--bootstrap-server", bootstrap, "--election-type", "UNCLEAN", "--topic", "elect", "--partition", "0"), 0,
			"Valid replica already elected for partitions elect-0\n")

		json := writeTempFile(t, "elect.json", `{"partitions":[{"topic":"elect","partition":0},{"topic":"nosuch","partition":0}]}`)
		expectZkafka(t, runZkafka("preferred-replica-election", "--zookeeper", c.ZK, "--path-to-json-file", json), 0,
			"This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405\n"+
				"Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\n"+
				"Use --bootstrap-server instead to specify a broker to connect to.\n"+
				"Created preferred replica election path with elect-0\n"+
				"Successfully started preferred replica election for partitions Set(elect-0)\n"+
				"Skipping preferred replica leader election for partition nosuch-0 since it doesn't exist.\n")
		c.WaitFor("the controller to consume /admin/preferred_replica_election", func() bool {
			ok, _, err := c.ZooKeeper().Exists(zkpaths.PreferredReplicaElection)
			return err == nil && !ok
		})
		r = runZkafka("preferred-replica-election", "--bootstrap-server", bootstrap, "--path-to-json-file", json)
		if !strings.HasPrefix(r.stdout, "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405\n"+
			"Preferred replica already elected for partitions elect-0\n"+
			"Error completing preferred leader election for partition: nosuch-0: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ") ||
			r.code != 1 || r.stderr != "1 preferred replica(s) could not be elected\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		badJSON := writeTempFile(t, "bad.json", `{"partitions": [`)
		missing := writeTempFile(t, "missing.json", `{"topics":[{"topic":"nosuch"}],"version":1}`)
		dupJSON := writeTempFile(t, "dup.json", `{"partitions":[{"topic":"elect","partition":0},{"topic":"elect","partition":0}]}`)
		unknownBroker := writeTempFile(t, "unknown.json", `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[9]}]}`)
		for _, tc := range []struct {
			args   []string
			stderr string // a regexp
		}{
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--frobnicate"}, `^frobnicate is not a recognized option\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap}, `^Command must include exactly one action: --generate, --execute, --verify, --cancel, --list\n$`},
			{[]string{"reassign-partitions", "--list"}, `^Please specify --bootstrap-server\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--execute"}, `^Missing required argument "\[reassignment-json-file\]"\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--verify", "--reassignment-json-file", badJSON, "--throttle", "5"}, `^Option "\[throttle\]" can't be used with action "\[verify\]"\n$`},
			{[]string{"reassign-partitions", "--zookeeper", c.ZK, "--list"}, `^Option "\[zookeeper\]" can't be used with action "\[list\]"\n$`},
			{[]string{"reassign-partitions", "--zookeeper", c.ZK, "--execute", "--reassignment-json-file", badJSON, "--additional"}, `^You must specify --bootstrap-server when using "\[additional\]"\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", badJSON}, `^Error: reassignment JSON file .*bad.json: unexpected end of JSON input\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", filepath.Join(t.TempDir(), "none.json")}, `^Error: open .*none.json: no such file or directory\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", unknownBroker}, `^Error: Unknown broker id 9\n$`},
			{[]string{"reassign-partitions", "--zookeeper", c.ZK, "--execute", "--reassignment-json-file", unknownBroker}, `^Error: The proposed assignment contains non-existent brokerIDs: 9\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--generate", "--topics-to-move-json-file", missing, "--broker-list", "1,2"},
				`^Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic nosuch not found.\n$`},
			{[]string{"reassign-partitions", "--bootstrap-server", bootstrap, "--generate", "--topics-to-move-json-file", badJSON, "--broker-list", "1,1"}, `^Error: Broker list contains duplicate entries: 1\n$`},
			{[]string{"leader-election", "--bootstrap-server", bootstrap, "--topic", "t"}, `^Missing required option\(s\): election-type\n$`},
			{[]string{"leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred", "--all-topic-partitions", "--topic", "t"}, `^One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file\n$`},
			{[]string{"leader-election", "--bootstrap-server", bootstrap, "--election-type", "sideways", "--all-topic-partitions"}, `^Cannot parse argument 'sideways' of option election-type\n$`},
			{[]string{"leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred", "--path-to-json-file", badJSON}, `^Replica election data is empty\n$`},
			{[]string{"preferred-replica-election", "--path-to-json-file", badJSON}, `^Exactly one of '\[bootstrap-server\]' or '\[zookeeper\]' must be provided\n$`},
			{[]string{"broker-api-versions", "--help"}, `^This tool helps to retrieve broker version information.\nOption +Description *\n------ +----------- *\n--bootstrap-server <String: server\(s\) +REQUIRED: The server to connect to\.`},
			{[]string{"reassign-partitions"}, `^This tool helps to move topic partitions between replicas.\nOption +Description *\n------ +----------- *\n--additional `},
			{[]string{"leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred", "--path-to-json-file", dupJSON}, `^Replica election data contains duplicate partitions: elect-0\n$`},
			{[]string{"leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred", "--partition", "0", "--all-topic-partitions"}, `^Option partition is only allowed if topic is used\n$`},
		} {
			r := runZkafka(tc.args...)
			if r.code == 0 || !regexp.MustCompile(tc.stderr).MatchString(r.stderr) {
				t.Errorf("zkafka %v: exit %d, stderr %q, want %s", tc.args, r.code, r.stderr, tc.stderr)
			}
		}
	})
}

// TestReassignmentReports checks the texts of states a fast test cluster
// rarely shows: reassignments in progress, and a replica set that differs
// from the target with no reassignment running.
func TestReassignmentReports(t *testing.T) {
	var out bytes.Buffer
	r := &reassigner{out: &out}
	r.printStates(map[kafka.TopicPartition]reassignmentState{
		{Topic: "b", Partition: 0}:  {current: []int32{1, 2}, target: []int32{2, 3}},
		{Topic: "a", Partition: 10}: {current: []int32{3}, target: []int32{3}, done: true},
		{Topic: "a", Partition: 2}:  {current: []int32{1}, target: []int32{2}, done: true},
	})
	r.printReassignments(map[kafka.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition{
		{Topic: "b", Partition: 0}: {Replicas: []int32{2, 3, 1}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}},
		{Topic: "a", Partition: 1}: {Replicas: []int32{1, 2}},
	})
	want := "Status of partition reassignment:\n" +
		"There is no active reassignment of partition a-2, but replica set is 1 rather than 2.\n" +
		"Reassignment of partition a-10 is complete.\n" +
		"Reassignment of partition b-0 is still in progress.\n" +
		"Current partition reassignments:\n" +
		"a-1: replicas: 1,2.\n" +
		"b-0: replicas: 2,3,1. adding: 3. removing: 1.\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}

	// Kafka's throttle lists: sources throttled as leaders, new replicas
	// as followers; an ongoing reassignment keeps its original sources.
	moves := proposedMoves(map[kafka.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition{
		{Topic: "t", Partition: 1}: {Replicas: []int32{4, 1}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}},
	}, []reassignTarget{
		{tp: kafka.TopicPartition{Topic: "t", Partition: 0}, replicas: []int32{2, 3}},
		{tp: kafka.TopicPartition{Topic: "t", Partition: 1}, replicas: []int32{5}},
	}, assignment{{Topic: "t", Partition: 0}: {1, 2}, {Topic: "t", Partition: 1}: {4, 1}})
	leader, follower := topicThrottleValues(moves)
	if leader["t"] != "0:1,0:2,1:1" || follower["t"] != "0:3,1:5" {
		t.Errorf("leader throttles %q, follower throttles %q", leader["t"], follower["t"])
	}
	if got := reassigningBrokers(moves); !slices.Equal(got, []int32{1, 2, 3, 5}) {
		t.Errorf("reassigning brokers %v", got)
	}
}
