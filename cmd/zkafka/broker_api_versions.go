package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

var brokerAPIVersionsOptions = []optionSpec{
	argOpt("bootstrap-server", "server(s) to use for bootstrapping", "REQUIRED: The server to connect to."),
	argOpt("command-config", "command config property file", "A property file containing configs to be passed to Admin Client."),
	helpOption,
}

// kafka28BrokerAPIs are the API keys Kafka 2.8's tool knows a broker may
// serve (ApiKeys.brokerApis(): the KRaft controller-only keys 52–55, 58, 59,
// 62 and 63 are left out), with Kafka's names for them, which franz-go's
// kmsg.NameForKey does not always share (AlterIsr).
var kafka28BrokerAPIs = map[int16]string{
	0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 4: "LeaderAndIsr", 5: "StopReplica",
	6: "UpdateMetadata", 7: "ControlledShutdown", 8: "OffsetCommit", 9: "OffsetFetch",
	10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
	15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions",
	19: "CreateTopics", 20: "DeleteTopics", 21: "DeleteRecords", 22: "InitProducerId",
	23: "OffsetForLeaderEpoch", 24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn",
	27: "WriteTxnMarkers", 28: "TxnOffsetCommit", 29: "DescribeAcls", 30: "CreateAcls",
	31: "DeleteAcls", 32: "DescribeConfigs", 33: "AlterConfigs", 34: "AlterReplicaLogDirs",
	35: "DescribeLogDirs", 36: "SaslAuthenticate", 37: "CreatePartitions",
	38: "CreateDelegationToken", 39: "RenewDelegationToken", 40: "ExpireDelegationToken",
	41: "DescribeDelegationToken", 42: "DeleteGroups", 43: "ElectLeaders",
	44: "IncrementalAlterConfigs", 45: "AlterPartitionReassignments",
	46: "ListPartitionReassignments", 47: "OffsetDelete", 48: "DescribeClientQuotas",
	49: "AlterClientQuotas", 50: "DescribeUserScramCredentials", 51: "AlterUserScramCredentials",
	56: "AlterIsr", 57: "UpdateFeatures", 60: "DescribeCluster", 61: "DescribeProducers",
}

// runBrokerAPIVersions is kafka-broker-api-versions.sh: every broker of the
// cluster with the version range it serves of each API, and the version a
// Kafka 2.8 client would use.
func runBrokerAPIVersions(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, brokerAPIVersionsOptions)
	if err == nil && helpNeeded(args, opts, "This tool helps to retrieve broker version information.", brokerAPIVersionsOptions, stderr) {
		return 1
	}
	if err == nil {
		err = opts.checkRequired("bootstrap-server")
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cl, _, err := dialAdmin(opts.value("bootstrap-server"), opts.value("command-config"))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()

	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		fmt.Fprintf(stderr, "Error while executing broker-api-versions command : %v\n", err)
		return 1
	}
	brokers := slices.Clone(meta.Brokers)
	slices.SortFunc(brokers, func(a, b kmsg.MetadataResponseBroker) int { return int(a.NodeID - b.NodeID) })
	for _, b := range brokers {
		rack := "null"
		if b.Rack != nil {
			rack = *b.Rack
		}
		node := fmt.Sprintf("%s:%d (id: %d rack: %s)", b.Host, b.Port, b.NodeID, rack)
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "zkafka", "2.8.0"
		resp, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s -> ERROR: %v\n", node, err)
			continue
		}
		fmt.Fprintf(stdout, "%s -> %s\n", node, formatAPIVersions(resp.ApiKeys))
	}
	return 0
}

// formatAPIVersions renders a broker's versions as Kafka's
// NodeApiVersions.toString(true): one key per line in key order, keys the
// 2.8 client knows but the broker lacks as UNSUPPORTED.
func formatAPIVersions(keys []kmsg.ApiVersionsResponseApiKey) string {
	latest := kversion.V2_8_0()
	lines := map[int16]string{}
	for _, k := range keys {
		name, known := kafka28BrokerAPIs[k.ApiKey]
		var b strings.Builder
		if known {
			fmt.Fprintf(&b, "%s(%d): ", name, k.ApiKey)
		} else {
			fmt.Fprintf(&b, "UNKNOWN(%d): ", k.ApiKey)
		}
		if k.MinVersion == k.MaxVersion {
			fmt.Fprintf(&b, "%d", k.MinVersion)
		} else {
			fmt.Fprintf(&b, "%d to %d", k.MinVersion, k.MaxVersion)
		}
		if known {
			max, _ := latest.LookupMaxKeyVersion(k.ApiKey)
			switch {
			case max < k.MinVersion:
				b.WriteString(" [unusable: node too new]")
			default:
				fmt.Fprintf(&b, " [usable: %d]", min(max, k.MaxVersion))
			}
		}
		lines[k.ApiKey] = b.String()
	}
	for key, name := range kafka28BrokerAPIs {
		if _, ok := lines[key]; !ok {
			lines[key] = fmt.Sprintf("%s(%d): UNSUPPORTED", name, key)
		}
	}
	ordered := make([]string, 0, len(lines))
	for _, key := range slices.Sorted(maps.Keys(lines)) {
		ordered = append(ordered, lines[key])
	}
	return "(\n\t" + strings.Join(ordered, ",\n\t") + "\n)"
}
