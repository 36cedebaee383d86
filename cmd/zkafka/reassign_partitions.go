package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
)

var reassignOptions = []optionSpec{
	flagOpt("verify", "Verify if the reassignment completed as specified by the --reassignment-json-file option. "+
		"If there is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle will be removed"),
	flagOpt("generate", "Generate a candidate partition reassignment configuration. Note that this only generates a candidate assignment, it does not execute it."),
	flagOpt("execute", "Kick off the reassignment as specified by the --reassignment-json-file option."),
	flagOpt("cancel", "Cancel an active reassignment."),
	flagOpt("list", "List all active partition reassignments."),
	argOpt("bootstrap-server", "Server(s) to use for bootstrapping", "the server(s) to use for bootstrapping. REQUIRED if an absolute path of the log directory "+
		"is specified for any replica in the reassignment json file, or if --zookeeper is not given."),
	argOpt("command-config", "Admin client property file", "Property file containing configs to be passed to Admin Client."),
	argOpt("zookeeper", "urls", "DEPRECATED: The connection string for the zookeeper connection in the form host:port. "+
		"Multiple URLS can be given to allow fail-over.  Please use --bootstrap-server instead."),
	argOpt("reassignment-json-file", "manual assignment json file path", "The JSON file with the partition reassignment configurationThe format to use is - \n"+
		`{"partitions":`+"\n\t"+`[{"topic": "foo",`+"\n\t"+`  "partition": 1,`+"\n\t"+`  "replicas": [1,2,3],`+"\n\t"+`  "log_dirs": ["dir1","dir2","dir3"] }],`+"\n"+`"version":1`+"\n}\n"+
		`Note that "log_dirs" is optional. When it is specified, its length must equal the length of the replicas list. The value in this list can be either "any" `+
		"or the absolution path of the log directory on the broker. If absolute log directory path is specified, the replica will be moved to the specified log directory on the broker."),
	argOpt("topics-to-move-json-file", "topics to reassign json file path", "Generate a reassignment configuration to move the partitions of the specified topics "+
		"to the list of brokers specified by the --broker-list option. The format to use is - \n"+
		`{"topics":`+"\n\t"+`[{"topic": "foo"},{"topic": "foo1"}],`+"\n"+`"version":1`+"\n}"),
	argOpt("broker-list", "brokerlist", `The list of brokers to which the partitions need to be reassigned in the form "0,1,2". `+
		"This is required if --topics-to-move-json-file is used to generate reassignment configuration"),
	flagOpt("disable-rack-aware", "Disable rack aware replica assignment"),
	argOpt("throttle", "throttle", "The movement of partitions between brokers will be throttled to this value (bytes/sec). "+
		"This option can be included with --execute when a reassignment is started, and it can be altered by resubmitting the current reassignment "+
		"along with the --additional flag. The throttle rate should be at least 1 KB/s.").typed("Long").defaults("-1"),
	argOpt("replica-alter-log-dirs-throttle", "replicaAlterLogDirsThrottle", "The movement of replicas between log directories on the same broker will be "+
		"throttled to this value (bytes/sec). This option can be included with --execute when a reassignment is started, and it can be altered by resubmitting "+
		"the current reassignment along with the --additional flag. The throttle rate should be at least 1 KB/s.").typed("Long").defaults("-1"),
	argOpt("timeout", "timeout", "The maximum time in ms to wait for log directory replica assignment to begin.").typed("Long").defaults("10000"),
	flagOpt("additional", "Execute this reassignment in addition to any other ongoing ones. This option can also be used to change the throttle of an ongoing reassignment."),
	flagOpt("preserve-throttles", "Do not modify broker or topic throttles."),
	helpOption,
}

// The actions of kafka-reassign-partitions.sh, and for each the options it
// requires and those it also permits (ReassignPartitionsCommand's tables).
var (
	reassignActions  = []string{"generate", "execute", "verify", "cancel", "list"}
	reassignRequired = map[string][]string{
		"verify": {"reassignment-json-file"}, "generate": {"topics-to-move-json-file", "broker-list"},
		"execute": {"reassignment-json-file"}, "cancel": {"reassignment-json-file"}, "list": nil,
	}
	reassignPermitted = map[string][]string{
		"verify":   {"bootstrap-server", "command-config", "preserve-throttles", "zookeeper"},
		"generate": {"bootstrap-server", "broker-list", "command-config", "disable-rack-aware", "zookeeper"},
		"execute": {"additional", "bootstrap-server", "command-config", "throttle",
			"replica-alter-log-dirs-throttle", "timeout", "zookeeper"},
		"cancel": {"bootstrap-server", "command-config", "preserve-throttles", "timeout"},
		"list":   {"bootstrap-server", "command-config"},
	}
	reassignBootstrapOnly = []string{"additional", "cancel", "command-config", "replica-alter-log-dirs-throttle", "list", "timeout"}
)

// The throttle configs a reassignment sets and --verify clears.
var (
	brokerThrottles = []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate",
		"replica.alter.log.dirs.io.max.bytes.per.second"}
	topicThrottles = []string{"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
)

const cannotExecuteMessage = "Cannot execute because there is an existing partition assignment.  " +
	"Use --additional to override this and create a new partition assignment in addition to the existing one. " +
	"The --additional flag can also be used to change the throttle by resubmitting the current reassignment."

// terseError is a failure Kafka's tool reports with its message alone;
// every other failure is printed as "Error: <message>".
type terseError struct{ msg string }

func (e *terseError) Error() string { return e.msg }

// runReassignPartitions is kafka-reassign-partitions.sh (Kafka 2.8):
// --generate proposes an assignment, --execute starts one, --verify reports
// on it and clears throttles when it is done, --cancel and --list. With
// --bootstrap-server it uses AlterPartitionReassignments and
// ListPartitionReassignments; with --zookeeper the /admin/reassign_partitions
// znode the controller watches.
func runReassignPartitions(args []string, stdout, stderr io.Writer) int {
	if opts, err := parseToolOptions(args, reassignOptions); err == nil &&
		helpNeeded(args, opts, "This tool helps to move topic partitions between replicas.", reassignOptions, stderr) {
		return 1
	}
	opts, action, err := parseReassignArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	r := &reassigner{out: stdout}
	if opts.has("bootstrap-server") {
		if opts.has("zookeeper") {
			fmt.Fprintln(stdout, "Warning: ignoring deprecated --zookeeper option because --bootstrap-server was specified.  "+
				"The --zookeeper option will be removed in a future version of Kafka.")
		}
		var cl *kgo.Client
		if cl, _, err = dialAdmin(opts.value("bootstrap-server"), opts.value("command-config")); err == nil {
			defer cl.Close()
			err = r.run(&adminReassigner{reassigner: r, cl: cl}, opts, action)
		}
	} else {
		fmt.Fprintln(stdout, "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.")
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		var zkc *zkclient.Client
		if zkc, err = dialZooKeeper(ctx, opts.value("zookeeper")); err == nil {
			defer zkc.Close()
			err = r.run(&zkReassigner{reassigner: r, zk: zkc, admin: newAdminZk(zkc)}, opts, action)
		}
	}
	if err == nil {
		return 0
	}
	var te *terseError
	if errors.As(err, &te) {
		fmt.Fprintln(stderr, te.msg)
	} else {
		fmt.Fprintf(stderr, "Error: %v\n", err)
	}
	return 1
}

// parseReassignArgs checks the command line as Kafka's
// validateAndParseArgs does, with its messages.
func parseReassignArgs(args []string) (toolOptions, string, error) {
	opts, err := parseToolOptions(args, reassignOptions)
	if err != nil {
		return opts, "", err
	}
	var given []string
	for _, a := range reassignActions {
		if opts.has(a) {
			given = append(given, a)
		}
	}
	if len(given) != 1 {
		return opts, "", usageErrorf("Command must include exactly one action: --generate, --execute, --verify, --cancel, --list")
	}
	action := given[0]
	if !opts.has("zookeeper") && !opts.has("bootstrap-server") {
		return opts, "", usageErrorf("Please specify --bootstrap-server")
	}
	if err := opts.checkRequired(reassignRequired[action]...); err != nil {
		return opts, "", err
	}
	for _, spec := range reassignOptions {
		name := spec.name
		if opts.has(name) && name != action && name != "help" &&
			!slices.Contains(reassignRequired[action], name) && !slices.Contains(reassignPermitted[action], name) {
			return opts, "", usageErrorf("Option \"[%s]\" can't be used with action \"[%s]\"", name, action)
		}
	}
	if !opts.has("bootstrap-server") {
		for _, name := range reassignBootstrapOnly {
			if opts.has(name) {
				return opts, "", fmt.Errorf("You must specify --bootstrap-server when using \"[%s]\"", name)
			}
		}
	}
	return opts, action, nil
}

// reassigner runs one action and prints its results; a reassignBackend
// reaches the cluster.
type reassigner struct {
	out io.Writer
}

// reassignBackend is one of the two ways to reach the cluster, as
// topicService is for kafka-topics: the brokers' admin APIs
// (adminReassigner) or the znodes (zkReassigner).
type reassignBackend interface {
	// currentAssignment is the replicas of every partition of the topics.
	currentAssignment(topics []string) (assignment, error)
	// brokerRacks maps the live brokers to their racks ("" for none).
	brokerRacks() (map[int32]string, error)
	execute(targets []reassignTarget, opts toolOptions) error
	verify(targets []reassignTarget, preserveThrottles bool) error
}

// liveBrokers lists the backend's brokers in id order.
func liveBrokers(b reassignBackend) ([]int32, error) {
	racks, err := b.brokerRacks()
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(racks)), nil
}

// run performs one action through b. --cancel and --list exist only with
// --bootstrap-server, which parseReassignArgs requires for them.
func (r *reassigner) run(b reassignBackend, opts toolOptions, action string) error {
	switch action {
	case "generate":
		brokers, topics, err := readGenerateArgs(opts)
		if err != nil {
			return err
		}
		current, err := b.currentAssignment(topics)
		if err != nil {
			return err
		}
		racks, err := b.brokerRacks()
		if err != nil {
			return err
		}
		return r.generate(current, brokers, racks, !opts.has("disable-rack-aware"))
	case "execute":
		targets, err := readExecuteArgs(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return b.execute(targets, opts)
	case "verify":
		targets, err := readReassignmentFile(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return b.verify(targets, opts.has("preserve-throttles"))
	}
	admin := b.(*adminReassigner)
	if action == "cancel" {
		targets, err := readReassignmentFile(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return admin.cancel(targets, opts)
	}
	ongoing, err := admin.listReassignments(nil)
	if err != nil {
		return err
	}
	r.printReassignments(ongoing)
	return nil
}

// assignment maps partitions to replica lists.
type assignment map[kafka.TopicPartition][]int32

// reassignTarget is one entry of a reassignment JSON file.
type reassignTarget struct {
	tp       kafka.TopicPartition
	replicas []int32
	logDirs  []string
}

// readGenerateArgs reads --broker-list and --topics-to-move-json-file.
func readGenerateArgs(opts toolOptions) ([]int32, []string, error) {
	var brokers, dups []int32
	for _, s := range strings.Split(opts.value("broker-list"), ",") {
		id, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("For input string: %q", s)
		}
		if slices.Contains(brokers, int32(id)) && !slices.Contains(dups, int32(id)) {
			dups = append(dups, int32(id))
		}
		brokers = append(brokers, int32(id))
	}
	if len(dups) > 0 {
		return nil, nil, fmt.Errorf("Broker list contains duplicate entries: %s", joinInt32s(dups))
	}
	data, err := os.ReadFile(opts.value("topics-to-move-json-file"))
	if err != nil {
		return nil, nil, err
	}
	var doc struct {
		Version *int `json:"version"`
		Topics  []struct {
			Topic *string `json:"topic"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, errors.New("The input string is not a valid JSON")
	}
	if doc.Version != nil && *doc.Version != 1 {
		return nil, nil, fmt.Errorf("Not supported version field value %d", *doc.Version)
	}
	var topics, dupTopics []string
	for _, t := range doc.Topics {
		if t.Topic == nil {
			return nil, nil, errors.New("No such field exists: `topic`")
		}
		if slices.Contains(topics, *t.Topic) && !slices.Contains(dupTopics, *t.Topic) {
			dupTopics = append(dupTopics, *t.Topic)
		}
		topics = append(topics, *t.Topic)
	}
	if len(dupTopics) > 0 {
		return nil, nil, fmt.Errorf("List of topics to reassign contains duplicate entries: %s", strings.Join(dupTopics, ","))
	}
	return brokers, topics, nil
}

// readReassignmentFile parses a reassignment JSON file as Kafka's
// parsePartitionReassignmentData does: version 1, log_dirs optional ("any").
func readReassignmentFile(path string) ([]reassignTarget, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Version    *int `json:"version"`
		Partitions []struct {
			Topic     *string   `json:"topic"`
			Partition *int32    `json:"partition"`
			Replicas  *[]int32  `json:"replicas"`
			LogDirs   *[]string `json:"log_dirs"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("reassignment JSON file %s: %w", path, err)
	}
	if doc.Version != nil && *doc.Version != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", *doc.Version)
	}
	var targets []reassignTarget
	for _, p := range doc.Partitions {
		switch {
		case p.Topic == nil:
			return nil, errors.New("No such field exists: `topic`")
		case p.Partition == nil:
			return nil, errors.New("No such field exists: `partition`")
		case p.Replicas == nil:
			return nil, errors.New("No such field exists: `replicas`")
		}
		t := reassignTarget{tp: kafka.TopicPartition{Topic: *p.Topic, Partition: *p.Partition}, replicas: *p.Replicas}
		if p.LogDirs != nil {
			t.logDirs = *p.LogDirs
		} else {
			for range t.replicas {
				t.logDirs = append(t.logDirs, "any")
			}
		}
		if len(t.logDirs) != len(t.replicas) {
			return nil, fmt.Errorf("Size of replicas list %s is different from size of log dirs list %s for partition %s",
				scalaList(t.replicas), scalaList(t.logDirs), t.tp.String())
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// readExecuteArgs is readReassignmentFile plus --execute's checks.
func readExecuteArgs(path string) ([]reassignTarget, error) {
	targets, err := readReassignmentFile(path)
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, errors.New("Partition reassignment list cannot be empty")
	}
	var seen, dupParts []kafka.TopicPartition
	var dupReplicas []string
	for _, t := range targets {
		if len(t.replicas) == 0 {
			return nil, errors.New("Partition replica list cannot be empty")
		}
		if slices.Contains(seen, t.tp) && !slices.Contains(dupParts, t.tp) {
			dupParts = append(dupParts, t.tp)
		}
		seen = append(seen, t.tp)
		if d := duplicates(t.replicas); len(d) > 0 {
			dupReplicas = append(dupReplicas, fmt.Sprintf("%s contains multiple entries for %s", t.tp.String(), joinInt32s(d)))
		}
	}
	if len(dupParts) > 0 {
		return nil, fmt.Errorf("Partition reassignment contains duplicate topic partitions: %s", joinPartitions(dupParts, ","))
	}
	if len(dupReplicas) > 0 {
		return nil, fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dupReplicas, ". "))
	}
	return targets, nil
}

// longOption reads a numeric option; -1 when absent, as Kafka's defaults.
func longOption(opts toolOptions, name string) (int64, error) {
	if !opts.has(name) {
		return -1, nil
	}
	v, err := strconv.ParseInt(opts.value(name), 10, 64)
	if err != nil {
		return 0, usageErrorf("Cannot parse argument '%s' of option %s", opts.value(name), name)
	}
	return v, nil
}

func targetTopics(targets []reassignTarget) []string {
	var topics []string
	for _, t := range targets {
		if !slices.Contains(topics, t.tp.Topic) {
			topics = append(topics, t.tp.Topic)
		}
	}
	return topics
}

func duplicates(ids []int32) []int32 {
	var seen, dups []int32
	for _, id := range ids {
		if slices.Contains(seen, id) && !slices.Contains(dups, id) {
			dups = append(dups, id)
		}
		seen = append(seen, id)
	}
	return dups
}
