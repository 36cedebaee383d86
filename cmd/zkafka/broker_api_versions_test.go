package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafka28Broker is what a Kafka 2.8.0 broker answers to ApiVersions.
var kafka28Broker = []kmsg.ApiVersionsResponseApiKey{
	{ApiKey: 0, MinVersion: 0, MaxVersion: 9},
	{ApiKey: 1, MinVersion: 0, MaxVersion: 12},
	{ApiKey: 2, MinVersion: 0, MaxVersion: 6},
	{ApiKey: 3, MinVersion: 0, MaxVersion: 11},
	{ApiKey: 4, MinVersion: 0, MaxVersion: 5},
	{ApiKey: 5, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 6, MinVersion: 0, MaxVersion: 7},
	{ApiKey: 7, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 8, MinVersion: 0, MaxVersion: 8},
	{ApiKey: 9, MinVersion: 0, MaxVersion: 7},
	{ApiKey: 10, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 11, MinVersion: 0, MaxVersion: 7},
	{ApiKey: 12, MinVersion: 0, MaxVersion: 4},
	{ApiKey: 13, MinVersion: 0, MaxVersion: 4},
	{ApiKey: 14, MinVersion: 0, MaxVersion: 5},
	{ApiKey: 15, MinVersion: 0, MaxVersion: 5},
	{ApiKey: 16, MinVersion: 0, MaxVersion: 4},
	{ApiKey: 17, MinVersion: 0, MaxVersion: 1},
	{ApiKey: 18, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 19, MinVersion: 0, MaxVersion: 7},
	{ApiKey: 20, MinVersion: 0, MaxVersion: 6},
	{ApiKey: 21, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 22, MinVersion: 0, MaxVersion: 4},
	{ApiKey: 23, MinVersion: 0, MaxVersion: 4},
	{ApiKey: 24, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 25, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 26, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 27, MinVersion: 0, MaxVersion: 1},
	{ApiKey: 28, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 29, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 30, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 31, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 32, MinVersion: 0, MaxVersion: 4},
	{ApiKey: 33, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 34, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 35, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 36, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 37, MinVersion: 0, MaxVersion: 3},
	{ApiKey: 38, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 39, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 40, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 41, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 42, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 43, MinVersion: 0, MaxVersion: 2},
	{ApiKey: 44, MinVersion: 0, MaxVersion: 1},
	{ApiKey: 45, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 46, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 47, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 48, MinVersion: 0, MaxVersion: 1},
	{ApiKey: 49, MinVersion: 0, MaxVersion: 1},
	{ApiKey: 50, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 51, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 56, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 57, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 60, MinVersion: 0, MaxVersion: 0},
	{ApiKey: 61, MinVersion: 0, MaxVersion: 0},
}

// TestFormatAPIVersionsKafka28 renders a Kafka 2.8 broker's answer and
// compares it with kafka-broker-api-versions.sh 2.8's output for it.
func TestFormatAPIVersionsKafka28(t *testing.T) {
	want := "(\n\tProduce(0): 0 to 9 [usable: 9],\n\tFetch(1): 0 to 12 [usable: 12],\n\tListOffsets(2): 0 to 6 [usable: 6],\n\tMetadata(3): 0 to 11 [usable: 11],\n\tLeaderAndIsr(4): 0 to 5 [usable: 5],\n\tStopReplica(5): 0 to 3 [usable: 3],\n\tUpdateMetadata(6): 0 to 7 [usable: 7],\n\tControlledShutdown(7): 0 to 3 [usable: 3],\n\tOffsetCommit(8): 0 to 8 [usable: 8],\n\tOffsetFetch(9): 0 to 7 [usable: 7],\n\tFindCoordinator(10): 0 to 3 [usable: 3],\n\tJoinGroup(11): 0 to 7 [usable: 7],\n\tHeartbeat(12): 0 to 4 [usable: 4],\n\tLeaveGroup(13): 0 to 4 [usable: 4],\n\tSyncGroup(14): 0 to 5 [usable: 5],\n\tDescribeGroups(15): 0 to 5 [usable: 5],\n\tListGroups(16): 0 to 4 [usable: 4],\n\tSaslHandshake(17): 0 to 1 [usable: 1],\n\tApiVersions(18): 0 to 3 [usable: 3],\n\tCreateTopics(19): 0 to 7 [usable: 7],\n\tDeleteTopics(20): 0 to 6 [usable: 6],\n\tDeleteRecords(21): 0 to 2 [usable: 2],\n\tInitProducerId(22): 0 to 4 [usable: 4],\n\tOffsetForLeaderEpoch(23): 0 to 4 [usable: 4],\n\tAddPartitionsToTxn(24): 0 to 3 [usable: 3],\n\tAddOffsetsToTxn(25): 0 to 3 [usable: 3],\n\tEndTxn(26): 0 to 3 [usable: 3],\n\tWriteTxnMarkers(27): 0 to 1 [usable: 1],\n\tTxnOffsetCommit(28): 0 to 3 [usable: 3],\n\tDescribeAcls(29): 0 to 2 [usable: 2],\n\tCreateAcls(30): 0 to 2 [usable: 2],\n\tDeleteAcls(31): 0 to 2 [usable: 2],\n\tDescribeConfigs(32): 0 to 4 [usable: 4],\n\tAlterConfigs(33): 0 to 2 [usable: 2],\n\tAlterReplicaLogDirs(34): 0 to 2 [usable: 2],\n\tDescribeLogDirs(35): 0 to 2 [usable: 2],\n\tSaslAuthenticate(36): 0 to 2 [usable: 2],\n\tCreatePartitions(37): 0 to 3 [usable: 3],\n\tCreateDelegationToken(38): 0 to 2 [usable: 2],\n\tRenewDelegationToken(39): 0 to 2 [usable: 2],\n\tExpireDelegationToken(40): 0 to 2 [usable: 2],\n\tDescribeDelegationToken(41): 0 to 2 [usable: 2],\n\tDeleteGroups(42): 0 to 2 [usable: 2],\n\tElectLeaders(43): 0 to 2 [usable: 2],\n\tIncrementalAlterConfigs(44): 0 to 1 [usable: 1],\n\tAlterPartitionReassignments(45): 0 [usable: 0],\n\tListPartitionReassignments(46): 0 [usable: 0],\n\tOffsetDelete(47): 0 [usable: 0],\n\tDescribeClientQuotas(48): 0 to 1 [usable: 1],\n\tAlterClientQuotas(49): 0 to 1 [usable: 1],\n\tDescribeUserScramCredentials(50): 0 [usable: 0],\n\tAlterUserScramCredentials(51): 0 [usable: 0],\n\tAlterIsr(56): 0 [usable: 0],\n\tUpdateFeatures(57): 0 [usable: 0],\n\tDescribeCluster(60): 0 [usable: 0],\n\tDescribeProducers(61): 0 [usable: 0]\n)"
	if got := formatAPIVersions(kafka28Broker); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A broker newer or older than the 2.8 client: Kafka marks what it
	// cannot use and names keys it does not know.
	got := formatAPIVersions([]kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MinVersion: 10, MaxVersion: 11}, {ApiKey: 3, MinVersion: 0, MaxVersion: 12}, {ApiKey: 68, MinVersion: 0, MaxVersion: 0}})
	for _, line := range []string{"\tProduce(0): 10 to 11 [unusable: node too new],\n", "\tMetadata(3): 0 to 12 [usable: 11],\n",
		"\tFetch(1): UNSUPPORTED,\n", "\tUNKNOWN(68): 0\n)"} {
		if !strings.Contains(got, line) {
			t.Errorf("no %q in\n%s", line, got)
		}
	}
}

// TestToolScripts checks that each scripts/kafka-<tool>.sh of these tools
// runs the zkafka subcommand of the same name.
func TestToolScripts(t *testing.T) {
	for _, tool := range []string{"reassign-partitions", "leader-election", "preferred-replica-election", "broker-api-versions", "dump-log", "bench"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "scripts", "kafka-"+tool+".sh"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "exec_zkafka "+tool+` "$@"`) {
			t.Errorf("scripts/kafka-%s.sh does not run zkafka %s:\n%s", tool, tool, data)
		}
		if r := runZkafka(tool, "--help"); strings.Contains(r.stderr, "unknown command") {
			t.Errorf("zkafka %s: %s", tool, r.stderr)
		}
	}
}
