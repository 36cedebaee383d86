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

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

var reassignOptions = []optionSpec{
	{"verify", false}, {"generate", false}, {"execute", false}, {"cancel", false}, {"list", false},
	{"bootstrap-server", true}, {"zookeeper", true},
	{"reassignment-json-file", true}, {"topics-to-move-json-file", true}, {"broker-list", true},
	{"disable-rack-aware", false}, {"throttle", true}, {"replica-alter-log-dirs-throttle", true},
	{"timeout", true}, {"additional", false}, {"preserve-throttles", false}, {"help", false},
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
		"verify":   {"bootstrap-server", "preserve-throttles", "zookeeper"},
		"generate": {"bootstrap-server", "broker-list", "disable-rack-aware", "zookeeper"},
		"execute": {"additional", "bootstrap-server", "throttle",
			"replica-alter-log-dirs-throttle", "timeout", "zookeeper"},
		"cancel": {"bootstrap-server", "preserve-throttles", "timeout"},
		"list":   {"bootstrap-server"},
	}
	reassignBootstrapOnly = []string{"additional", "cancel", "replica-alter-log-dirs-throttle", "list", "timeout"}
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
		if cl, _, err = dialAdmin(opts.value("bootstrap-server")); err == nil {
			defer cl.Close()
			r.cl = cl
			err = r.runAdmin(opts, action)
		}
	} else {
		fmt.Fprintln(stdout, "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.")
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		var zkc *zkclient.Client
		if zkc, err = dialZooKeeper(ctx, opts.value("zookeeper")); err == nil {
			defer zkc.Close()
			r.zk = zkc
			err = r.runZooKeeper(opts, action)
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

// reassigner runs one action against the brokers (cl) or ZooKeeper (zk).
type reassigner struct {
	out io.Writer
	cl  *kgo.Client
	zk  *zkclient.Client
}

// assignment maps partitions to replica lists.
type assignment map[zkpaths.TopicPartition][]int32

// reassignTarget is one entry of a reassignment JSON file.
type reassignTarget struct {
	tp       zkpaths.TopicPartition
	replicas []int32
	logDirs  []string
}

func (r *reassigner) runAdmin(opts toolOptions, action string) error {
	switch action {
	case "generate":
		brokers, topics, err := readGenerateArgs(opts)
		if err != nil {
			return err
		}
		current, err := r.adminAssignment(topics, nil)
		if err != nil {
			return err
		}
		racks, err := r.adminBrokerRacks()
		if err != nil {
			return err
		}
		return r.generate(current, brokers, racks, !opts.has("disable-rack-aware"))
	case "execute":
		targets, err := readExecuteArgs(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return r.adminExecute(targets, opts)
	case "verify":
		targets, err := readReassignmentFile(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return r.adminVerify(targets, opts.has("preserve-throttles"))
	case "cancel":
		targets, err := readReassignmentFile(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return r.adminCancel(targets, opts.has("preserve-throttles"))
	default: // list
		ongoing, err := r.listReassignments(nil)
		if err != nil {
			return err
		}
		r.printReassignments(ongoing)
		return nil
	}
}

// printReassignments is --list's output.
func (r *reassigner) printReassignments(ongoing map[zkpaths.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition) {
	if len(ongoing) == 0 {
		fmt.Fprintln(r.out, "No partition reassignments found.")
		return
	}
	fmt.Fprintln(r.out, "Current partition reassignments:")
	for _, tp := range sortedPartitions(ongoing) {
		p := ongoing[tp]
		line := fmt.Sprintf("%s: replicas: %s.", tpString(tp), joinInt32s(p.Replicas))
		if len(p.AddingReplicas) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinInt32s(p.AddingReplicas))
		}
		if len(p.RemovingReplicas) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinInt32s(p.RemovingReplicas))
		}
		fmt.Fprintln(r.out, line)
	}
}

func (r *reassigner) runZooKeeper(opts toolOptions, action string) error {
	switch action {
	case "generate":
		brokers, topics, err := readGenerateArgs(opts)
		if err != nil {
			return err
		}
		current, err := r.zkAssignment(topics)
		if err != nil {
			return err
		}
		racks, err := r.zkBrokerRacks()
		if err != nil {
			return err
		}
		return r.generate(current, brokers, racks, !opts.has("disable-rack-aware"))
	case "execute":
		targets, err := readExecuteArgs(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return r.zkExecute(targets, opts)
	default: // verify
		targets, err := readReassignmentFile(opts.value("reassignment-json-file"))
		if err != nil {
			return err
		}
		return r.zkVerify(targets, opts.has("preserve-throttles"))
	}
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
		t := reassignTarget{tp: zkpaths.TopicPartition{Topic: *p.Topic, Partition: *p.Partition}, replicas: *p.Replicas}
		if p.LogDirs != nil {
			t.logDirs = *p.LogDirs
		} else {
			for range t.replicas {
				t.logDirs = append(t.logDirs, "any")
			}
		}
		if len(t.logDirs) != len(t.replicas) {
			return nil, fmt.Errorf("Size of replicas list %s is different from size of log dirs list %s for partition %s",
				scalaList(t.replicas), scalaList(t.logDirs), tpString(t.tp))
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// readExecuteArgs is readReassignmentFile plus --execute's checks. Moving a
// replica to a given log directory (log_dirs other than "any") needs
// AlterReplicaLogDirs, which these brokers do not serve.
func readExecuteArgs(path string) ([]reassignTarget, error) {
	targets, err := readReassignmentFile(path)
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, errors.New("Partition reassignment list cannot be empty")
	}
	var seen, dupParts []zkpaths.TopicPartition
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
			dupReplicas = append(dupReplicas, fmt.Sprintf("%s contains multiple entries for %s", tpString(t.tp), joinInt32s(d)))
		}
		for _, dir := range t.logDirs {
			if dir != "any" {
				return nil, fmt.Errorf("log_dirs %q for partition %s: moving replicas between log directories (AlterReplicaLogDirs) is not supported; use \"any\"",
					dir, tpString(t.tp))
			}
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

// generate prints the current assignment of the topics and a proposal that
// spreads each topic over the given brokers (those that are live, with their
// racks), keeping its partition count and replication factor. Placement is
// Kafka's rack-unaware algorithm; with racks it needs --disable-rack-aware,
// since this project has no rack-aware placement.
func (r *reassigner) generate(current assignment, brokers []int32, racks map[int32]string, rackAware bool) error {
	var usable []int32
	racked := 0
	for _, id := range brokers {
		if rack, ok := racks[id]; ok {
			usable = append(usable, id)
			if rack != "" {
				racked++
			}
		}
	}
	switch {
	case rackAware && racked > 0 && racked < len(usable):
		return errors.New("Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.")
	case rackAware && racked > 0:
		return errors.New("rack-aware replica assignment is not implemented here: add --disable-rack-aware to place replicas without rack information")
	}
	proposed := assignment{}
	byTopic := map[string]int32{}
	rf := map[string]int16{}
	for tp, replicas := range current {
		byTopic[tp.Topic]++
		rf[tp.Topic] = int16(len(replicas))
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		placed, err := controller.AssignReplicasRandom(usable, byTopic[topic], rf[topic])
		if err != nil {
			return err
		}
		for p, replicas := range placed {
			proposed[zkpaths.TopicPartition{Topic: topic, Partition: p}] = replicas
		}
	}
	fmt.Fprintf(r.out, "Current partition replica assignment\n%s\n\n", reassignmentJSON(current))
	fmt.Fprintf(r.out, "Proposed partition reassignment configuration\n%s\n", reassignmentJSON(proposed))
	return nil
}

func (r *reassigner) printRollback(targets []reassignTarget, current assignment) {
	kept := assignment{}
	for _, t := range targets {
		if replicas, ok := current[t.tp]; ok {
			kept[t.tp] = replicas
		}
	}
	fmt.Fprintf(r.out, "Current partition replica assignment\n\n%s\n\nSave this to use as the --reassignment-json-file option during rollback\n",
		reassignmentJSON(kept))
}

func (r *reassigner) printStarted(targets []reassignTarget) {
	tps := make([]zkpaths.TopicPartition, len(targets))
	for i, t := range targets {
		tps[i] = t.tp
	}
	slices.SortFunc(tps, compareTP)
	fmt.Fprintf(r.out, "Successfully started partition reassignment%s for %s\n", plural(len(tps)), joinPartitions(tps, ","))
}

func (r *reassigner) adminExecute(targets []reassignTarget, opts toolOptions) error {
	throttle, err := longOption(opts, "throttle")
	if err != nil {
		return err
	}
	logDirThrottle, err := longOption(opts, "replica-alter-log-dirs-throttle")
	if err != nil {
		return err
	}
	// --timeout bounds the wait for log-dir moves to start; there are none
	// (readExecuteArgs refuses them), so it is only checked.
	if _, err := longOption(opts, "timeout"); err != nil {
		return err
	}
	ongoing, err := r.listReassignments(nil)
	if err != nil {
		return err
	}
	if !opts.has("additional") && len(ongoing) > 0 {
		return &terseError{cannotExecuteMessage}
	}
	live, err := r.adminBrokers()
	if err != nil {
		return err
	}
	for _, t := range targets {
		for _, id := range t.replicas {
			if !slices.Contains(live, id) {
				return fmt.Errorf("Unknown broker id %d", id)
			}
		}
	}
	current, err := r.adminAssignment(targetTopics(targets), targets)
	if err != nil {
		return err
	}
	r.printRollback(targets, current)
	if throttle >= 0 || logDirThrottle >= 0 {
		fmt.Fprintln(r.out, "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.")
	}
	if throttle >= 0 {
		moves := proposedMoves(ongoing, targets, current)
		if err := r.alterConfigs(topicThrottleOps(moves), brokerThrottleOps(moves, throttle)); err != nil {
			return err
		}
		fmt.Fprintf(r.out, "The inter-broker throttle limit was set to %d B/s\n", throttle)
	}
	if logDirThrottle >= 0 {
		// Kafka sets it on the brokers with log-dir moves: none here.
		fmt.Fprintf(r.out, "The replica-alter-dir throttle limit was set to %d B/s\n", logDirThrottle)
	}
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	for _, t := range targets {
		addReassignTopic(req, t.tp, t.replicas)
	}
	failed, err := r.alterReassignments(req)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return &terseError{"Error reassigning partition(s):\n" + strings.Join(failed, "\n")}
	}
	r.printStarted(targets)
	return nil
}

// alterReassignments sends an AlterPartitionReassignments request and
// returns Kafka's "t-0: message" line for every partition that failed.
func (r *reassigner) alterReassignments(req *kmsg.AlterPartitionAssignmentsRequest) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, r.cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, brokerError(err, resp.ErrorMessage)
	}
	type failure struct {
		tp  zkpaths.TopicPartition
		msg string
	}
	var failures []failure
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				failures = append(failures, failure{zkpaths.TopicPartition{Topic: t.Topic, Partition: p.Partition},
					brokerError(err, p.ErrorMessage).Error()})
			}
		}
	}
	slices.SortFunc(failures, func(a, b failure) int { return compareTP(a.tp, b.tp) })
	lines := make([]string, len(failures))
	for i, f := range failures {
		lines[i] = tpString(f.tp) + ": " + f.msg
	}
	return lines, nil
}

func addReassignTopic(req *kmsg.AlterPartitionAssignmentsRequest, tp zkpaths.TopicPartition, replicas []int32) {
	i := slices.IndexFunc(req.Topics, func(t kmsg.AlterPartitionAssignmentsRequestTopic) bool { return t.Topic == tp.Topic })
	if i < 0 {
		req.Topics = append(req.Topics, kmsg.AlterPartitionAssignmentsRequestTopic{Topic: tp.Topic})
		i = len(req.Topics) - 1
	}
	req.Topics[i].Partitions = append(req.Topics[i].Partitions,
		kmsg.AlterPartitionAssignmentsRequestTopicPartition{Partition: tp.Partition, Replicas: replicas})
}

// reassignmentState is what --verify reports for one partition.
type reassignmentState struct {
	current, target []int32
	done            bool
}

func (r *reassigner) printStates(states map[zkpaths.TopicPartition]reassignmentState) {
	fmt.Fprintln(r.out, "Status of partition reassignment:")
	for _, tp := range sortedPartitions(states) {
		s := states[tp]
		switch {
		case !s.done:
			fmt.Fprintf(r.out, "Reassignment of partition %s is still in progress.\n", tpString(tp))
		case slices.Equal(s.current, s.target):
			fmt.Fprintf(r.out, "Reassignment of partition %s is complete.\n", tpString(tp))
		default:
			fmt.Fprintf(r.out, "There is no active reassignment of partition %s, but replica set is %s rather than %s.\n",
				tpString(tp), joinInt32s(s.current), joinInt32s(s.target))
		}
	}
}

func (r *reassigner) adminVerify(targets []reassignTarget, preserveThrottles bool) error {
	ongoing, err := r.listReassignments(nil)
	if err != nil {
		return err
	}
	states := map[zkpaths.TopicPartition]reassignmentState{}
	var settled []reassignTarget
	for _, t := range targets {
		if p, ok := ongoing[t.tp]; ok {
			states[t.tp] = reassignmentState{current: p.Replicas, target: t.replicas}
		} else {
			settled = append(settled, t)
		}
	}
	current, err := r.describePartitions(targetTopics(settled))
	if err != nil {
		return err
	}
	for _, t := range settled {
		states[t.tp] = reassignmentState{current: current[t.tp], target: t.replicas, done: true}
	}
	r.printStates(states)
	// Kafka prints the (here always empty) replica log-dir move states next.
	fmt.Fprintln(r.out)
	if len(ongoing) == 0 && !preserveThrottles {
		return r.adminClearThrottles(targets)
	}
	return nil
}

func (r *reassigner) adminCancel(targets []reassignTarget, preserveThrottles bool) error {
	ongoing, err := r.listReassignments(targets)
	if err != nil {
		return err
	}
	var active []zkpaths.TopicPartition
	for tp, p := range ongoing {
		if len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0 {
			active = append(active, tp)
		}
	}
	slices.SortFunc(active, compareTP)
	if len(active) > 0 {
		req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		req.TimeoutMillis = int32(adminTimeout.Milliseconds())
		for _, tp := range active {
			addReassignTopic(req, tp, nil)
		}
		failed, err := r.alterReassignments(req)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			return &terseError{fmt.Sprintf("Error cancelling partition reassignment%s for:\n%s", plural(len(failed)), strings.Join(failed, "\n"))}
		}
		fmt.Fprintf(r.out, "Successfully cancelled partition reassignment%s for: %s\n", plural(len(active)), joinPartitions(active, ","))
	} else {
		fmt.Fprintln(r.out, "None of the specified partition reassignments are active.")
	}
	fmt.Fprintln(r.out, "None of the specified partition moves are active.")
	if !preserveThrottles {
		return r.adminClearThrottles(targets)
	}
	return nil
}

// adminClearThrottles removes the reassignment throttles from every live
// broker, every target replica and every target topic.
func (r *reassigner) adminClearThrottles(targets []reassignTarget) error {
	live, err := r.adminBrokers()
	if err != nil {
		return err
	}
	brokers, topics := throttleScope(live, targets)
	fmt.Fprintf(r.out, "Clearing broker-level throttles on broker%s %s\n", plural(len(brokers)), joinInt32s(brokers))
	var brokerOps []configOps
	for _, id := range brokers {
		brokerOps = append(brokerOps, configOps{kind: kmsg.ConfigResourceTypeBroker, name: strconv.Itoa(int(id)), delete: brokerThrottles})
	}
	if err := r.alterConfigs(nil, brokerOps); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "Clearing topic-level throttles on topic%s %s\n", plural(len(topics)), strings.Join(topics, ","))
	var topicOps []configOps
	for _, t := range topics {
		topicOps = append(topicOps, configOps{kind: kmsg.ConfigResourceTypeTopic, name: t, delete: topicThrottles})
	}
	return r.alterConfigs(topicOps, nil)
}

func throttleScope(live []int32, targets []reassignTarget) ([]int32, []string) {
	brokers := slices.Clone(live)
	var topics []string
	for _, t := range targets {
		brokers = append(brokers, t.replicas...)
		topics = append(topics, t.tp.Topic)
	}
	slices.Sort(brokers)
	slices.Sort(topics)
	return slices.Compact(brokers), slices.Compact(topics)
}

// configOps are the config changes for one resource.
type configOps struct {
	kind   kmsg.ConfigResourceType
	name   string
	set    map[string]string
	delete []string
}

// alterConfigs sends IncrementalAlterConfigs: topics to any broker, each
// broker's own resource to that broker.
func (r *reassigner) alterConfigs(topicOps, brokerOps []configOps) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	for _, ops := range append(topicOps, brokerOps...) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.IncrementalAlterConfigsRequestResource{ResourceType: ops.kind, ResourceName: ops.name}
		for _, k := range slices.Sorted(maps.Keys(ops.set)) {
			res.Configs = append(res.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{
				Name: k, Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr(ops.set[k])})
		}
		for _, k := range ops.delete {
			res.Configs = append(res.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{
				Name: k, Op: kmsg.IncrementalAlterConfigOpDelete})
		}
		req.Resources = append(req.Resources, res)
		var resp *kmsg.IncrementalAlterConfigsResponse
		var err error
		if ops.kind == kmsg.ConfigResourceTypeBroker {
			id, _ := strconv.Atoi(ops.name)
			resp, err = req.RequestWith(ctx, r.cl.Broker(id))
		} else {
			resp, err = req.RequestWith(ctx, r.cl)
		}
		if err != nil {
			return err
		}
		for _, rr := range resp.Resources {
			if err := kerr.ErrorForCode(rr.ErrorCode); err != nil {
				return &messageError{msg: javaException(brokerError(err, rr.ErrorMessage)), code: err}
			}
		}
	}
	return nil
}

// partitionMove is where a partition's data comes from and goes to.
type partitionMove struct{ sources, destinations []int32 }

// proposedMoves is Kafka's calculateProposedMoveMap: the sources of a
// partition already moving stay those of its ongoing reassignment.
func proposedMoves(ongoing map[zkpaths.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition,
	targets []reassignTarget, current assignment) map[zkpaths.TopicPartition]partitionMove {
	moves := map[zkpaths.TopicPartition]partitionMove{}
	for tp, p := range ongoing {
		var sources []int32
		for _, id := range p.Replicas {
			if !slices.Contains(p.AddingReplicas, id) {
				sources = append(sources, id)
			}
		}
		moves[tp] = partitionMove{sources: sources, destinations: p.AddingReplicas}
	}
	for _, t := range targets {
		sources := current[t.tp]
		if m, ok := moves[t.tp]; ok {
			sources = m.sources
		}
		var dest []int32
		for _, id := range t.replicas {
			if !slices.Contains(sources, id) {
				dest = append(dest, id)
			}
		}
		moves[t.tp] = partitionMove{sources: sources, destinations: dest}
	}
	return moves
}

// topicThrottleOps sets leader.replication.throttled.replicas to the
// "partition:broker" sources and follower.…replicas to the destinations.
func topicThrottleOps(moves map[zkpaths.TopicPartition]partitionMove) []configOps {
	leader, follower := topicThrottleValues(moves)
	var ops []configOps
	for _, t := range slices.Sorted(maps.Keys(leader)) {
		ops = append(ops, configOps{kind: kmsg.ConfigResourceTypeTopic, name: t, set: map[string]string{
			topicThrottles[0]: leader[t], topicThrottles[1]: follower[t]}})
	}
	return ops
}

func topicThrottleValues(moves map[zkpaths.TopicPartition]partitionMove) (leader, follower map[string]string) {
	leaderSets, followerSets := map[string][]string{}, map[string][]string{}
	for tp, m := range moves {
		leaderSets[tp.Topic] = append(leaderSets[tp.Topic], replicaEntries(tp.Partition, m.sources)...)
		followerSets[tp.Topic] = append(followerSets[tp.Topic], replicaEntries(tp.Partition, m.destinations)...)
	}
	leader, follower = map[string]string{}, map[string]string{}
	for t := range leaderSets {
		// Kafka keeps the entries in a sorted set of strings.
		l, f := leaderSets[t], followerSets[t]
		slices.Sort(l)
		slices.Sort(f)
		leader[t], follower[t] = strings.Join(slices.Compact(l), ","), strings.Join(slices.Compact(f), ",")
	}
	return leader, follower
}

// replicaEntries are the "partition:broker" entries of a throttled replica
// list.
func replicaEntries(partition int32, brokers []int32) []string {
	entries := []string{}
	for _, id := range brokers {
		entries = append(entries, fmt.Sprintf("%d:%d", partition, id))
	}
	return entries
}

// brokerThrottleOps sets the leader and follower rates on every broker a
// partition moves from or to.
func brokerThrottleOps(moves map[zkpaths.TopicPartition]partitionMove, throttle int64) []configOps {
	var ops []configOps
	for _, id := range reassigningBrokers(moves) {
		rate := strconv.FormatInt(throttle, 10)
		ops = append(ops, configOps{kind: kmsg.ConfigResourceTypeBroker, name: strconv.Itoa(int(id)),
			set: map[string]string{brokerThrottles[0]: rate, brokerThrottles[1]: rate}})
	}
	return ops
}

func reassigningBrokers(moves map[zkpaths.TopicPartition]partitionMove) []int32 {
	var ids []int32
	for _, m := range moves {
		ids = append(ids, m.sources...)
		ids = append(ids, m.destinations...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
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

// listReassignments asks the controller for the ongoing reassignments of
// the targets' partitions, or of all partitions when targets is nil.
func (r *reassigner) listReassignments(targets []reassignTarget) (map[zkpaths.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	if targets != nil {
		req.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		for _, t := range targets {
			i := slices.IndexFunc(req.Topics, func(x kmsg.ListPartitionReassignmentsRequestTopic) bool { return x.Topic == t.tp.Topic })
			if i < 0 {
				req.Topics = append(req.Topics, kmsg.ListPartitionReassignmentsRequestTopic{Topic: t.tp.Topic})
				i = len(req.Topics) - 1
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, t.tp.Partition)
		}
	}
	resp, err := req.RequestWith(ctx, r.cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, brokerError(err, resp.ErrorMessage)
	}
	out := map[zkpaths.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[zkpaths.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p
		}
	}
	return out, nil
}

// metadata fetches the brokers and the given topics (none when topics is
// empty).
func (r *reassigner) metadata(topics []string) (*kmsg.MetadataResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, t := range topics {
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(t)})
	}
	return req.RequestWith(ctx, r.cl)
}

func (r *reassigner) adminBrokers() ([]int32, error) {
	racks, err := r.adminBrokerRacks()
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(racks)), nil
}

// adminBrokerRacks maps the live brokers to their racks ("" for none).
func (r *reassigner) adminBrokerRacks() (map[int32]string, error) {
	m, err := r.metadata(nil)
	if err != nil {
		return nil, err
	}
	racks := map[int32]string{}
	for _, b := range m.Brokers {
		racks[b.NodeID] = derefOr(b.Rack, "")
	}
	return racks, nil
}

// describePartitions returns the replicas of every partition of the topics
// that exist; a missing topic has no entries (Kafka's --verify then shows
// an empty replica set).
func (r *reassigner) describePartitions(topics []string) (assignment, error) {
	if len(topics) == 0 {
		return assignment{}, nil
	}
	m, err := r.metadata(topics)
	if err != nil {
		return nil, err
	}
	out := assignment{}
	for _, t := range m.Topics {
		if kerr.ErrorForCode(t.ErrorCode) != nil {
			continue
		}
		for _, p := range t.Partitions {
			out[zkpaths.TopicPartition{Topic: *t.Topic, Partition: p.Partition}] = p.Replicas
		}
	}
	return out, nil
}

// adminAssignment is Kafka's describeTopics: every partition of the topics
// (only those of targets when given), failing when a topic is missing.
func (r *reassigner) adminAssignment(topics []string, targets []reassignTarget) (assignment, error) {
	m, err := r.metadata(topics)
	if err != nil {
		return nil, err
	}
	out := assignment{}
	for _, t := range m.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil, fmt.Errorf("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic %s not found.", *t.Topic)
			}
			return nil, fmt.Errorf("topic %s: %s", *t.Topic, javaException(err))
		}
		for _, p := range t.Partitions {
			tp := zkpaths.TopicPartition{Topic: *t.Topic, Partition: p.Partition}
			if targets == nil || slices.ContainsFunc(targets, func(x reassignTarget) bool { return x.tp == tp }) {
				out[tp] = p.Replicas
			}
		}
	}
	return out, nil
}

func (r *reassigner) zkBrokers() ([]int32, error) {
	racks, err := r.zkBrokerRacks()
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(racks)), nil
}

// zkBrokerRacks maps the brokers registered in /brokers/ids to their racks.
func (r *reassigner) zkBrokerRacks() (map[int32]string, error) {
	ids, _, err := r.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		return nil, fmt.Errorf("list brokers: %w", err)
	}
	racks := map[int32]string{}
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			continue
		}
		data, _, err := r.zk.Get(zkpaths.BrokerPath(int32(id)))
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("read broker %d: %w", id, err)
		}
		reg, err := zkpaths.DecodeBrokerRegistration(int32(id), data)
		if err != nil {
			return nil, err
		}
		racks[int32(id)] = reg.Rack
	}
	return racks, nil
}

// zkAssignment reads the topics' assignments from ZooKeeper; as in Kafka's
// ZooKeeper path, a missing topic simply has no partitions.
func (r *reassigner) zkAssignment(topics []string) (assignment, error) {
	out := assignment{}
	for _, t := range topics {
		a, err := zkTopicAssignment(r.zk, t)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for p, replicas := range a.Partitions {
			out[zkpaths.TopicPartition{Topic: t, Partition: p}] = replicas
		}
	}
	return out, nil
}

func (r *reassigner) zkExecute(targets []reassignTarget, opts toolOptions) error {
	throttle, err := longOption(opts, "throttle")
	if err != nil {
		return err
	}
	current, err := r.zkAssignment(targetTopics(targets))
	if err != nil {
		return err
	}
	var missing []string
	for _, t := range targets {
		if _, ok := current[t.tp]; !ok {
			missing = append(missing, tpString(t.tp))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("The proposed assignment contains non-existent partitions: List(%s)", strings.Join(missing, ", "))
	}
	live, err := r.zkBrokers()
	if err != nil {
		return err
	}
	var unknown []int32
	for _, t := range targets {
		for _, id := range t.replicas {
			if !slices.Contains(live, id) && !slices.Contains(unknown, id) {
				unknown = append(unknown, id)
			}
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("The proposed assignment contains non-existent brokerIDs: %s", joinInt32s(unknown))
	}
	if ok, _, err := r.zk.Exists(zkpaths.ReassignPartitions); err != nil {
		return fmt.Errorf("read %s: %w", zkpaths.ReassignPartitions, err)
	} else if ok {
		return &terseError{cannotExecuteMessage}
	}
	r.printRollback(targets, current)
	if throttle >= 0 {
		fmt.Fprintln(r.out, "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.")
		moves := proposedMoves(nil, targets, current)
		leader, follower := topicThrottleValues(moves)
		for _, t := range slices.Sorted(maps.Keys(leader)) {
			err := r.zkChangeConfig("topics", t, func(c map[string]string) bool {
				c[topicThrottles[0]], c[topicThrottles[1]] = leader[t], follower[t]
				return true
			})
			if err != nil {
				return err
			}
		}
		rate := strconv.FormatInt(throttle, 10)
		for _, id := range reassigningBrokers(moves) {
			err := r.zkChangeConfig("brokers", strconv.Itoa(int(id)), func(c map[string]string) bool {
				c[brokerThrottles[0]], c[brokerThrottles[1]] = rate, rate
				return true
			})
			if err != nil {
				return err
			}
		}
		fmt.Fprintf(r.out, "The inter-broker throttle limit was set to %d B/s\n", throttle)
	}
	data := zkpaths.ReassignPartitionsData{}
	for _, t := range targets {
		data.Partitions = append(data.Partitions, zkpaths.PartitionReplicas{Topic: t.tp.Topic, Partition: t.tp.Partition, Replicas: t.replicas})
	}
	if _, err := r.zk.Create(zkpaths.ReassignPartitions, data.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return &terseError{cannotExecuteMessage}
		}
		return fmt.Errorf("create %s: %w", zkpaths.ReassignPartitions, err)
	}
	r.printStarted(targets)
	return nil
}

func (r *reassigner) zkVerify(targets []reassignTarget, preserveThrottles bool) error {
	pending := map[zkpaths.TopicPartition]bool{}
	data, _, err := r.zk.Get(zkpaths.ReassignPartitions)
	switch {
	case errors.Is(err, zk.ErrNoNode):
	case err != nil:
		return fmt.Errorf("read %s: %w", zkpaths.ReassignPartitions, err)
	default:
		d, err := zkpaths.DecodeReassignPartitionsData(data)
		if err != nil {
			return err
		}
		for _, p := range d.Partitions {
			pending[zkpaths.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = true
		}
	}
	fmt.Fprintln(r.out, "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "+
		"Use --bootstrap-server instead for more accurate results.")
	current, err := r.zkAssignment(targetTopics(targets))
	if err != nil {
		return err
	}
	states := map[zkpaths.TopicPartition]reassignmentState{}
	for _, t := range targets {
		states[t.tp] = reassignmentState{current: current[t.tp], target: t.replicas, done: !pending[t.tp]}
	}
	r.printStates(states)
	if len(pending) > 0 || preserveThrottles {
		return nil
	}
	live, err := r.zkBrokers()
	if err != nil {
		return err
	}
	brokers, topics := throttleScope(live, targets)
	fmt.Fprintf(r.out, "Clearing broker-level throttles on broker%s %s\n", plural(len(brokers)), joinInt32s(brokers))
	for _, id := range brokers {
		if err := r.zkChangeConfig("brokers", strconv.Itoa(int(id)), removeKeys(brokerThrottles)); err != nil {
			return err
		}
	}
	fmt.Fprintf(r.out, "Clearing topic-level throttles on topic%s %s\n", plural(len(topics)), strings.Join(topics, ","))
	for _, t := range topics {
		if err := r.zkChangeConfig("topics", t, removeKeys(topicThrottles)); err != nil {
			return err
		}
	}
	return nil
}

func removeKeys(keys []string) func(map[string]string) bool {
	return func(c map[string]string) bool {
		changed := false
		for _, k := range keys {
			if _, ok := c[k]; ok {
				delete(c, k)
				changed = true
			}
		}
		return changed
	}
}

// zkChangeConfig edits /config/<entityType>/<name> as Kafka's AdminZkClient
// does: write the new config, then a change notification the brokers watch.
// mutate reports whether it changed anything.
func (r *reassigner) zkChangeConfig(entityType, name string, mutate func(map[string]string) bool) error {
	path := zkpaths.TopicConfigPath(name)
	if entityType == "brokers" {
		path = zkpaths.BrokerConfigPath(name)
	}
	data, _, err := r.zk.Get(path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	cfg, err := zkpaths.DecodeEntityConfig(data)
	if err != nil {
		return err
	}
	if !mutate(cfg.Config) {
		return nil
	}
	if _, err := r.zk.Set(path, cfg.Encode(), -1); errors.Is(err, zk.ErrNoNode) {
		err = r.zk.CreateIfMissing(path, cfg.Encode())
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	} else if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	note := zkpaths.ConfigChangeNotification{EntityPath: entityType + "/" + name}.Encode()
	if _, err := r.zk.Create(zkpaths.ConfigChangePrefix, note, zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("notify config change of %s: %w", path, err)
	}
	return nil
}

// reassignmentJSON is Kafka's formatAsReassignmentJson: compact, partitions
// sorted, every log dir "any".
func reassignmentJSON(a assignment) string {
	type entry struct {
		Topic     string   `json:"topic"`
		Partition int32    `json:"partition"`
		Replicas  []int32  `json:"replicas"`
		LogDirs   []string `json:"log_dirs"`
	}
	doc := struct {
		Version    int     `json:"version"`
		Partitions []entry `json:"partitions"`
	}{Version: 1, Partitions: []entry{}}
	for _, tp := range sortedPartitions(a) {
		e := entry{Topic: tp.Topic, Partition: tp.Partition, Replicas: a[tp], LogDirs: []string{}}
		if e.Replicas == nil {
			e.Replicas = []int32{}
		}
		for range e.Replicas {
			e.LogDirs = append(e.LogDirs, "any")
		}
		doc.Partitions = append(doc.Partitions, e)
	}
	b, _ := json.Marshal(doc) // plain structs of strings and ints always marshal
	return string(b)
}

func sortedPartitions[V any](m map[zkpaths.TopicPartition]V) []zkpaths.TopicPartition {
	return slices.SortedFunc(maps.Keys(m), compareTP)
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

// scalaList prints a sequence as Scala's List.toString does.
func scalaList[T any](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "List(" + strings.Join(s, ", ") + ")"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
