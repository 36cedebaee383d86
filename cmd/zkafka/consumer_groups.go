package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

var consumerGroupsOptions = []optionSpec{
	{"bootstrap-server", true}, {"zookeeper", true},
	{"list", false}, {"describe", false}, {"delete", false}, {"reset-offsets", false}, {"delete-offsets", false},
	{"group", true}, {"all-groups", false}, {"topic", true}, {"all-topics", false},
	{"offsets", false}, {"members", false}, {"verbose", false}, {"state", false},
	{"dry-run", false}, {"execute", false}, {"to-offset", true}, {"to-earliest", false}, {"to-latest", false},
	{"to-current", false}, {"shift-by", true}, {"to-datetime", true}, {"help", false},
}

const consumerGroupsUsage = `This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.
USAGE: zkafka consumer-groups (--bootstrap-server host:9092 | --zookeeper host:2181)
       (--list [--state [states]] | --describe [--offsets | --members [--verbose] | --state] | --delete |
        --reset-offsets | --delete-offsets --topic t[:p,p])
       (--group g ... | --all-groups)
reset: (--all-topics | --topic t[:p,p] ...) (--to-earliest | --to-latest | --to-current | --to-offset n |
       --shift-by n | --to-datetime YYYY-MM-DDTHH:mm:SS.sss) [--dry-run | --execute]
`

// errReported ends a command whose failure was printed already.
var errReported = errors.New("failure already reported")

// missing is what Kafka prints for a value a row does not have.
const missing = "-"

// runConsumerGroups is kafka-consumer-groups.sh: Kafka 2.8's
// ConsumerGroupCommand over the group coordinator's APIs, and with
// --zookeeper the 0.10 tool's view of the ZooKeeper-based groups under
// /consumers.
func runConsumerGroups(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptionsOptional(args, consumerGroupsOptions, "state")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if len(args) == 0 || opts.has("help") {
		fmt.Fprint(stderr, consumerGroupsUsage)
		return 1
	}
	if err := checkConsumerGroupsArgs(opts); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	g := &groupCommand{opts: opts, out: stdout, errOut: stderr}
	if opts.has("zookeeper") {
		fmt.Fprintln(stderr, "Note: This will only show information about consumers that use ZooKeeper (not those using the Java consumer API).")
		zkc, err := dialZooKeeper(ctx, opts.value("zookeeper"))
		if err == nil {
			defer zkc.Close()
			err = g.runZooKeeper(ctx, zkc)
		}
		return g.finish(err)
	}
	cl, adm, err := dialAdmin(opts.value("bootstrap-server"))
	if err == nil {
		defer cl.Close()
		g.cl, g.adm = cl, adm
		err = g.runAdmin(ctx)
	}
	return g.finish(err)
}

func checkConsumerGroupsArgs(opts toolOptions) error {
	actions := []string{"list", "describe", "delete", "reset-offsets", "delete-offsets"}
	if opts.count(actions...) != 1 {
		return usageErrorf("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets")
	}
	if opts.count("bootstrap-server", "zookeeper") != 1 {
		return usageErrorf("Exactly one of --bootstrap-server or --zookeeper must be specified")
	}
	for _, a := range []string{"describe", "delete", "reset-offsets"} {
		if opts.has(a) && !opts.has("group") && !opts.has("all-groups") {
			return usageErrorf("Option [%s] takes one of these options: [all-groups], [group]", a)
		}
	}
	if opts.has("delete-offsets") && (len(opts.all("group")) != 1 || !opts.has("topic")) {
		return usageErrorf("Option [delete-offsets] takes the following options: [group], [topic]")
	}
	if opts.has("zookeeper") && (opts.has("reset-offsets") || opts.has("delete-offsets") || opts.has("all-groups")) {
		return usageErrorf("Option [zookeeper] can only be used with --list, --describe --group and --delete --group")
	}
	for _, o := range []string{"offsets", "members"} {
		if err := opts.checkInvalid(o, "list", "delete", "reset-offsets"); err != nil {
			return err
		}
	}
	if err := opts.checkInvalid("state", "delete", "reset-offsets"); err != nil {
		return err
	}
	if opts.count("offsets", "members", "state") > 1 && opts.has("describe") {
		return usageErrorf("Option [describe] takes at most one of these options: [members], [offsets], [state]")
	}
	if opts.has("verbose") && !opts.has("members") {
		return usageErrorf("Option [verbose] can only be used with [describe] [members]")
	}
	specs := []string{"to-offset", "to-earliest", "to-latest", "to-current", "shift-by", "to-datetime"}
	if opts.has("reset-offsets") {
		if opts.has("dry-run") && opts.has("execute") {
			return usageErrorf("Option [reset-offsets] takes at most one of these options: [dry-run], [execute]")
		}
		if opts.count(specs...) != 1 {
			return usageErrorf("Option [reset-offsets] takes exactly one of these options: [to-offset], [to-earliest], [to-latest], [to-current], [shift-by], [to-datetime]")
		}
		if opts.count("all-topics", "topic") != 1 {
			return usageErrorf("Option [reset-offsets] takes one of these options: [all-topics], [topic]")
		}
	} else {
		for _, s := range append(specs, "dry-run", "execute", "all-topics") {
			if opts.has(s) {
				return usageErrorf("Option [%s] can only be used with [reset-offsets]", s)
			}
		}
	}
	for _, n := range []string{"to-offset", "shift-by"} {
		if opts.has(n) {
			if _, err := strconv.ParseInt(opts.value(n), 10, 64); err != nil {
				return usageErrorf("Cannot parse argument '%s' of option %s", opts.value(n), n)
			}
		}
	}
	return nil
}

// groupCommand runs one validated kafka-consumer-groups invocation.
type groupCommand struct {
	opts   toolOptions
	cl     *kgo.Client
	adm    *kadm.Client
	out    io.Writer
	errOut io.Writer
}

// printError is Kafka's ConsumerGroupCommand.printError (on stderr here).
func (g *groupCommand) printError(format string, args ...any) {
	fmt.Fprintf(g.errOut, "\nError: "+format+"\n", args...)
}

func (g *groupCommand) finish(err error) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	switch {
	case errors.Is(err, errReported):
		return 1
	case errors.As(err, &ue):
		fmt.Fprintln(g.errOut, ue.msg)
		return 1
	}
	g.printError("Executing consumer group command failed due to %s", kafkaMessage(err))
	return 1
}

func (g *groupCommand) groupIDs(ctx context.Context) ([]string, error) {
	if g.opts.has("all-groups") {
		listed, err := g.adm.ListGroups(ctx)
		if err != nil {
			return nil, err
		}
		return listed.Groups(), nil
	}
	ids := slices.Clone(g.opts.all("group"))
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func (g *groupCommand) runAdmin(ctx context.Context) error {
	switch {
	case g.opts.has("list"):
		return g.list(ctx)
	case g.opts.has("delete"):
		return g.deleteGroups(ctx)
	case g.opts.has("reset-offsets"):
		return g.resetOffsets(ctx)
	case g.opts.has("delete-offsets"):
		return g.deleteOffsets(ctx)
	}
	groups, err := g.groupIDs(ctx)
	if err != nil {
		return err
	}
	described, err := g.adm.DescribeGroups(ctx, groups...)
	if err != nil && len(described) == 0 {
		return err
	}
	for _, id := range groups {
		d, ok := described[id]
		if !ok {
			g.printError("The consumer group '%s' does not exist.", id)
			continue
		}
		if d.Err != nil {
			return fmt.Errorf("describe group %s: %w", id, d.Err)
		}
		switch {
		case g.opts.has("members"):
			g.printMembers(d)
		case g.opts.has("state"):
			g.printState(d)
		default:
			if err := g.printOffsets(ctx, d); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *groupCommand) list(ctx context.Context) error {
	if !g.opts.has("state") {
		listed, err := g.adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		for _, id := range listed.Groups() {
			fmt.Fprintln(g.out, id)
		}
		return nil
	}
	var states []string
	for s := range strings.SplitSeq(g.opts.value("state"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		canonical, ok := groupStates[strings.ToLower(s)]
		if !ok {
			return fmt.Errorf("State '%s' is not valid", s)
		}
		states = append(states, canonical)
	}
	listed, err := g.adm.ListGroups(ctx, states...)
	if err != nil {
		return err
	}
	ids := listed.Groups()
	width := 15
	for _, id := range ids {
		width = max(width, len(id))
	}
	fmt.Fprintf(g.out, "%-*s %s\n", width, "GROUP", "STATE")
	for _, id := range ids {
		fmt.Fprintf(g.out, "%-*s %s\n", width, id, listed[id].State)
	}
	return nil
}

// groupStates are Kafka's ConsumerGroupState names by lower case.
var groupStates = map[string]string{
	"preparingrebalance": "PreparingRebalance", "completingrebalance": "CompletingRebalance",
	"stable": "Stable", "dead": "Dead", "empty": "Empty",
}

// shouldPrint is Kafka's shouldPrintMemberState: the state notes, and
// whether there are rows to print.
func (g *groupCommand) shouldPrint(group, state string, rows int) bool {
	switch state {
	case "Dead":
		g.printError("Consumer group '%s' does not exist.", group)
	case "Empty":
		fmt.Fprintf(g.errOut, "\nConsumer group '%s' has no active members.\n", group)
	case "PreparingRebalance", "CompletingRebalance":
		fmt.Fprintf(g.errOut, "\nWarning: Consumer group '%s' is rebalancing.\n", group)
	}
	return state != "Dead" && rows > 0
}

// offsetRow is one line of --describe --offsets.
type offsetRow struct {
	topic                      string
	partition                  int32 // -1: none
	offset, logEnd             int64 // -1: unknown
	consumerID, host, clientID string
}

func (r offsetRow) cells() (topic, partition, offset, logEnd, lag string) {
	topic, partition, offset, logEnd, lag = r.topic, missing, missing, missing, missing
	if r.partition >= 0 {
		partition = strconv.Itoa(int(r.partition))
	}
	if r.offset >= 0 {
		offset = strconv.FormatInt(r.offset, 10)
	}
	if r.logEnd >= 0 {
		logEnd = strconv.FormatInt(r.logEnd, 10)
	}
	if r.offset >= 0 && r.logEnd >= 0 {
		lag = strconv.FormatInt(r.logEnd-r.offset, 10)
	}
	return
}

type memberPartitions struct {
	member kadm.DescribedGroupMember
	tps    []kadm.Partition
}

func assignedPartitions(m kadm.DescribedGroupMember) []kadm.Partition {
	var tps []kadm.Partition
	if a, ok := m.Assigned.AsConsumer(); ok {
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, kadm.Partition{Topic: t.Topic, Partition: p})
			}
		}
	}
	// Kafka sorts a member's rows by partition.
	slices.SortStableFunc(tps, func(a, b kadm.Partition) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	return tps
}

func (g *groupCommand) printOffsets(ctx context.Context, d kadm.DescribedGroup) error {
	committed, err := g.adm.FetchOffsets(ctx, d.Group)
	if err != nil {
		return err
	}
	var members []memberPartitions
	for _, m := range d.Members {
		if tps := assignedPartitions(m); len(tps) > 0 {
			members = append(members, memberPartitions{m, tps})
		}
	}
	slices.SortStableFunc(members, func(a, b memberPartitions) int { return len(b.tps) - len(a.tps) })
	topicSet := map[string]bool{}
	assigned := map[kadm.Partition]bool{}
	for _, m := range members {
		for _, tp := range m.tps {
			topicSet[tp.Topic], assigned[tp] = true, true
		}
	}
	var unassigned []kadm.Partition
	committed.Each(func(o kadm.OffsetResponse) {
		tp := kadm.Partition{Topic: o.Topic, Partition: o.Partition}
		if o.Err == nil && o.At >= 0 && !assigned[tp] {
			unassigned = append(unassigned, tp)
			topicSet[o.Topic] = true
		}
	})
	// Kafka sorts the rows without a consumer by partition.
	slices.SortFunc(unassigned, func(a, b kadm.Partition) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	ends := kadm.ListedOffsets{}
	if len(topicSet) > 0 {
		if ends, err = g.adm.ListEndOffsets(ctx, sortedKeys(topicSet)...); err != nil {
			return err
		}
	}
	row := func(tp kadm.Partition, consumerID, host, clientID string) offsetRow {
		r := offsetRow{topic: tp.Topic, partition: tp.Partition, offset: -1, logEnd: -1, consumerID: consumerID, host: host, clientID: clientID}
		if o, ok := committed.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.At >= 0 {
			r.offset = o.At
		}
		if e, ok := ends.Lookup(tp.Topic, tp.Partition); ok && e.Err == nil {
			r.logEnd = e.Offset
		}
		return r
	}
	var rows []offsetRow
	for _, m := range members {
		for _, tp := range m.tps {
			rows = append(rows, row(tp, m.member.MemberID, m.member.ClientHost, m.member.ClientID))
		}
	}
	for _, tp := range unassigned {
		rows = append(rows, row(tp, missing, missing, missing))
	}
	if !g.shouldPrint(d.Group, d.State, len(rows)) {
		return nil
	}
	groupW, topicW, consumerW, hostW := 15, 15, 15, 15
	for _, r := range rows {
		groupW, topicW = max(groupW, len(d.Group)), max(topicW, len(r.topic))
		consumerW, hostW = max(consumerW, len(r.consumerID)), max(hostW, len(r.host))
	}
	format := fmt.Sprintf("%%-%ds %%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds %%-%ds %%s\n", groupW, topicW, consumerW, hostW)
	fmt.Fprintf(g.out, "\n"+format, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, r := range rows {
		topic, partition, offset, logEnd, lag := r.cells()
		fmt.Fprintf(g.out, format, d.Group, topic, partition, offset, logEnd, lag, r.consumerID, r.host, r.clientID)
	}
	return nil
}

func (g *groupCommand) printMembers(d kadm.DescribedGroup) {
	if !g.shouldPrint(d.Group, d.State, len(d.Members)) {
		return
	}
	verbose := g.opts.has("verbose")
	groupW, consumerW, instanceW, hostW, clientW := max(15, len(d.Group)), 15, 17, 15, 15
	withInstance := false
	instanceID := func(m kadm.DescribedGroupMember) string {
		if m.InstanceID == nil {
			return ""
		}
		return *m.InstanceID
	}
	for _, m := range d.Members {
		consumerW, hostW, clientW = max(consumerW, len(m.MemberID)), max(hostW, len(m.ClientHost)), max(clientW, len(m.ClientID))
		instanceW = max(instanceW, len(instanceID(m)))
		withInstance = withInstance || instanceID(m) != ""
	}
	// The GROUP-INSTANCE-ID column appears only for groups with static members.
	row := func(group, member, instance, host, client, partitions string) {
		if withInstance {
			fmt.Fprintf(g.out, "%-*s %-*s %-*s %-*s %-*s %-15s ", groupW, group, consumerW, member, instanceW, instance, hostW, host, clientW, client, partitions)
		} else {
			fmt.Fprintf(g.out, "%-*s %-*s %-*s %-*s %-15s ", groupW, group, consumerW, member, hostW, host, clientW, client, partitions)
		}
	}
	fmt.Fprintln(g.out)
	row("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
	if verbose {
		fmt.Fprint(g.out, "ASSIGNMENT")
	}
	fmt.Fprintln(g.out)
	for _, m := range d.Members {
		tps := assignedPartitions(m)
		row(d.Group, m.MemberID, instanceID(m), m.ClientHost, m.ClientID, strconv.Itoa(len(tps)))
		if verbose {
			fmt.Fprint(g.out, assignmentString(tps))
		}
		fmt.Fprintln(g.out)
	}
}

// assignmentString is "t1(0,2), t2(1)" with topics and partitions sorted,
// or "-".
func assignmentString(tps []kadm.Partition) string {
	if len(tps) == 0 {
		return missing
	}
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	var parts []string
	for _, t := range sortedKeys(byTopic) {
		ps := byTopic[t]
		slices.Sort(ps)
		parts = append(parts, t+"("+joinInt32s(ps)+")")
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func (g *groupCommand) printState(d kadm.DescribedGroup) {
	if !g.shouldPrint(d.Group, d.State, 1) {
		return
	}
	coordinator := fmt.Sprintf("%s:%d (%d)", d.Coordinator.Host, d.Coordinator.Port, d.Coordinator.NodeID)
	width := max(25, len(coordinator))
	format := fmt.Sprintf("%%-%ds %%-25s %%-20s %%-15s %%s", width)
	fmt.Fprintf(g.out, "\n"+format, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
	fmt.Fprintf(g.out, "\n"+format+"\n", d.Group, coordinator, d.Protocol, d.State, strconv.Itoa(len(d.Members)))
}

// exceptionNames are the Java exceptions Kafka's tools print for the error
// codes a group deletion gets.
var exceptionNames = map[*kerr.Error]string{
	kerr.NonEmptyGroup:            "GroupNotEmptyException",
	kerr.GroupIDNotFound:          "GroupIdNotFoundException",
	kerr.InvalidGroupID:           "InvalidGroupIdException",
	kerr.CoordinatorNotAvailable:  "CoordinatorNotAvailableException",
	kerr.NotCoordinator:           "NotCoordinatorException",
	kerr.GroupAuthorizationFailed: "GroupAuthorizationException",
}

func groupDeleteException(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if name, ok := exceptionNames[ke]; ok {
			return "org.apache.kafka.common.errors." + name + ": " + ke.Description
		}
		return ke.Message + ": " + ke.Description
	}
	return err.Error()
}

func (g *groupCommand) deleteGroups(ctx context.Context) error {
	groups, err := g.groupIDs(ctx)
	if err != nil {
		return err
	}
	resp, err := g.adm.DeleteGroups(ctx, groups...)
	if err != nil && len(resp) == 0 {
		return err
	}
	var ok []string
	failed := map[string]error{}
	for _, id := range groups {
		r, found := resp[id]
		switch {
		case !found:
			failed[id] = err
		case r.Err != nil:
			failed[id] = r.Err
		default:
			ok = append(ok, id)
		}
	}
	quoted := func(ids []string) string { return "'" + strings.Join(ids, "', '") + "'" }
	if len(failed) == 0 {
		fmt.Fprintf(g.out, "Deletion of requested consumer groups (%s) was successful.\n", quoted(ok))
		return nil
	}
	g.printError("Deletion of some consumer groups failed:")
	for _, id := range sortedKeys(failed) {
		fmt.Fprintf(g.errOut, "* Group '%s' could not be deleted due to: %s\n", id, groupDeleteException(failed[id]))
	}
	if len(ok) > 0 {
		fmt.Fprintf(g.out, "\nThese consumer groups were deleted successfully: %s\n", quoted(ok))
	}
	return errReported
}

// resetOffsets computes (and with --execute commits) new offsets for
// inactive groups and prints the plan.
func (g *groupCommand) resetOffsets(ctx context.Context) error {
	if !g.opts.has("dry-run") && !g.opts.has("execute") {
		fmt.Fprintln(g.errOut, "WARN: No action will be performed as the --execute option is missing."+
			"In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run."+
			" You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.")
	}
	groups, err := g.groupIDs(ctx)
	if err != nil {
		return err
	}
	described, err := g.adm.DescribeGroups(ctx, groups...)
	if err != nil && len(described) == 0 {
		return err
	}
	plans := map[string]kadm.Offsets{}
	for _, id := range groups {
		state := described[id].State
		if state != "Empty" && state != "Dead" {
			g.printError("Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", id, state)
			plans[id] = kadm.Offsets{}
			continue
		}
		plan, err := g.planReset(ctx, id)
		if err != nil {
			return err
		}
		if g.opts.has("execute") {
			if err := g.adm.CommitAllOffsets(ctx, id, plan); err != nil {
				return err
			}
		}
		plans[id] = plan
	}
	if len(plans) == 0 {
		return nil
	}
	const format = "%-30s %-30s %-10s %-15s\n"
	fmt.Fprintf(g.out, "\n"+format, "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
	for _, id := range sortedKeys(plans) {
		for _, o := range plans[id].Sorted() {
			fmt.Fprintf(g.out, format, id, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.At, 10))
		}
	}
	return nil
}

// partitionsToReset is the reset scope: the group's committed partitions
// (--all-topics) or the --topic arguments, "t" or "t:0,1".
func (g *groupCommand) partitionsToReset(ctx context.Context, committed kadm.OffsetResponses) ([]kadm.Partition, error) {
	var tps []kadm.Partition
	if g.opts.has("all-topics") {
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil {
				tps = append(tps, kadm.Partition{Topic: o.Topic, Partition: o.Partition})
			}
		})
		return tps, nil
	}
	for _, arg := range g.opts.all("topic") {
		topic, parts, hasParts := strings.Cut(arg, ":")
		if hasParts {
			for p := range strings.SplitSeq(parts, ",") {
				n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
				if err != nil {
					return nil, fmt.Errorf("Invalid partition '%s' specified in topic arg '%s''", p, arg)
				}
				tps = append(tps, kadm.Partition{Topic: topic, Partition: int32(n)})
			}
			continue
		}
		meta, err := g.adm.Metadata(ctx, topic)
		if err != nil {
			return nil, err
		}
		td, ok := meta.Topics[topic]
		if !ok || td.Err != nil {
			return nil, &messageError{msg: fmt.Sprintf("Topic '%s' does not exist", topic), code: kerr.UnknownTopicOrPartition}
		}
		for _, p := range td.Partitions.Sorted() {
			tps = append(tps, kadm.Partition{Topic: topic, Partition: p.Partition})
		}
	}
	return tps, nil
}

func (g *groupCommand) planReset(ctx context.Context, group string) (kadm.Offsets, error) {
	committed, err := g.adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	tps, err := g.partitionsToReset(ctx, committed)
	if err != nil {
		return nil, err
	}
	topicSet := map[string]bool{}
	for _, tp := range tps {
		topicSet[tp.Topic] = true
	}
	topics := sortedKeys(topicSet)
	plan := kadm.Offsets{}
	if len(tps) == 0 {
		return plan, nil
	}
	starts, err := g.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	ends, err := g.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var byTime kadm.ListedOffsets
	if g.opts.has("to-datetime") {
		ms, err := parseResetDatetime(g.opts.value("to-datetime"))
		if err != nil {
			return nil, err
		}
		if byTime, err = g.adm.ListOffsetsAfterMilli(ctx, ms, topics...); err != nil {
			return nil, err
		}
	}
	for _, tp := range tps {
		start, okS := starts.Lookup(tp.Topic, tp.Partition)
		end, okE := ends.Lookup(tp.Topic, tp.Partition)
		if !okS || !okE || start.Err != nil || end.Err != nil {
			return nil, fmt.Errorf("Error getting offsets of topic partition: %s-%d", tp.Topic, tp.Partition)
		}
		current, hasCurrent := committed.Lookup(tp.Topic, tp.Partition)
		hasCurrent = hasCurrent && current.Err == nil && current.At >= 0
		var target int64
		switch {
		case g.opts.has("to-earliest"):
			target = start.Offset
		case g.opts.has("to-latest"):
			target = end.Offset
		case g.opts.has("to-current"):
			target = end.Offset
			if hasCurrent {
				target = current.At
			}
		case g.opts.has("to-datetime"):
			target = end.Offset
			// kadm falls back to the end offset itself, leaving no timestamp.
			if o, ok := byTime.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.Offset >= 0 && o.Timestamp >= 0 {
				target = o.Offset
			} else {
				fmt.Fprintf(g.out, "\nWarn: Partition %d from topic %s is empty. Falling back to latest known offset.\n", tp.Partition, tp.Topic)
			}
		case g.opts.has("to-offset"):
			n, _ := strconv.ParseInt(g.opts.value("to-offset"), 10, 64)
			target = g.clamp(tp, n, start.Offset, end.Offset)
		case g.opts.has("shift-by"):
			if !hasCurrent {
				return nil, fmt.Errorf("Cannot shift offset for partition %s-%d since there is no current committed offset", tp.Topic, tp.Partition)
			}
			n, _ := strconv.ParseInt(g.opts.value("shift-by"), 10, 64)
			target = g.clamp(tp, current.At+n, start.Offset, end.Offset)
		}
		plan.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: target, LeaderEpoch: -1})
	}
	return plan, nil
}

// clamp is Kafka's checkOffsetsRange: a new offset outside the log is moved
// to its nearer end, with a warning.
func (g *groupCommand) clamp(tp kadm.Partition, offset, start, end int64) int64 {
	switch {
	case offset > end:
		fmt.Fprintf(g.errOut, "WARN: New offset (%d) is higher than latest offset for topic partition %s-%d. Value will be set to %d\n", offset, tp.Topic, tp.Partition, end)
		return end
	case offset < start:
		fmt.Fprintf(g.errOut, "WARN: New offset (%d) is lower than earliest offset for topic partition %s-%d. Value will be set to %d\n", offset, tp.Topic, tp.Partition, start)
		return start
	}
	return offset
}

// parseResetDatetime reads --to-datetime's 'YYYY-MM-DDTHH:mm:SS.sss' with an
// optional zone (UTC when absent), as Kafka's convertTimestamp.
func parseResetDatetime(s string) (int64, error) {
	_, timePart, _ := strings.Cut(s, "T")
	v := s
	if !strings.ContainsAny(timePart, "+-Z") {
		v += "Z"
	}
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000Z07"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("Unparseable date: \"%s\"", v)
}

// runZooKeeper is the 0.10 tool's ZkConsumerGroupService: groups of the
// ZooKeeper-based consumer, read from /consumers.
func (g *groupCommand) runZooKeeper(ctx context.Context, zkc *zkclient.Client) error {
	switch {
	case g.opts.has("list"):
		groups, _, err := zkc.Children(zkpaths.Consumers)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		slices.Sort(groups)
		for _, id := range groups {
			fmt.Fprintln(g.out, id)
		}
		return nil
	case g.opts.has("delete"):
		return g.deleteZooKeeperGroups(zkc)
	}
	for _, group := range g.opts.all("group") {
		if err := g.describeZooKeeperGroup(ctx, zkc, group); err != nil {
			return err
		}
	}
	return nil
}

func childrenOrNone(zkc *zkclient.Client, path string) ([]string, error) {
	c, _, err := zkc.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(c)
	return c, err
}

func (g *groupCommand) describeZooKeeperGroup(ctx context.Context, zkc *zkclient.Client, group string) error {
	if ok, _, err := zkc.Exists(zkpaths.ConsumerGroupPath(group)); err != nil {
		return err
	} else if !ok {
		g.printError("The consumer group '%s' does not exist.", group)
		return nil
	}
	owned, err := childrenOrNone(zkc, zkpaths.ConsumerGroupPath(group)+"/owners")
	if err != nil {
		return err
	}
	withOffsets, err := childrenOrNone(zkc, zkpaths.ConsumerGroupPath(group)+"/offsets")
	if err != nil {
		return err
	}
	topics := slices.Compact(slices.Sorted(slices.Values(append(owned, withOffsets...))))
	consumers, err := childrenOrNone(zkc, zkpaths.ConsumerIDsPath(group))
	if err != nil {
		return err
	}
	var (
		rows     []offsetRow
		tps      []kadm.Partition
		owning   = map[string]bool{}
		leaderOf = map[kadm.Partition]bool{}
	)
	for _, topic := range topics {
		data, _, err := zkc.Get(zkpaths.TopicPath(topic))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		ta, err := zkpaths.DecodeTopicAssignment(data)
		if err != nil {
			return err
		}
		for _, p := range ta.PartitionIDs() {
			tp := kadm.Partition{Topic: topic, Partition: p}
			tps = append(tps, tp)
			if state, _, err := zkc.Get(zkpaths.PartitionStatePath(topic, p)); err == nil {
				if st, err := zkpaths.DecodeLeaderAndIsr(state); err == nil && st.Leader >= 0 {
					leaderOf[tp] = true
				}
			}
		}
	}
	ends, err := zkLogEndOffsets(ctx, zkc, tps)
	if err != nil {
		return err
	}
	for _, tp := range tps {
		r := offsetRow{topic: tp.Topic, partition: tp.Partition, offset: -1, logEnd: -1, consumerID: missing}
		if owner, _, err := zkc.Get(zkpaths.ConsumerOwnerPath(group, tp.Topic, tp.Partition)); err == nil {
			// The owner is a consumer thread id, "<consumer id>-<thread>".
			id := string(owner)
			if i := strings.LastIndexByte(id, '-'); i > 0 {
				id = id[:i]
			}
			r.consumerID, owning[id] = id, true
		}
		if data, _, err := zkc.Get(zkpaths.ConsumerOffsetPath(group, tp.Topic, tp.Partition)); err == nil {
			if off, err := zkpaths.DecodeConsumerOffset(data); err == nil {
				r.offset = off
			}
		} else {
			g.printError("Could not fetch offset from zookeeper for group '%s' partition '%s-%d' due to missing offset data in zookeeper.", group, tp.Topic, tp.Partition)
		}
		if e, ok := ends.Lookup(tp.Topic, tp.Partition); ok && e.Err == nil && leaderOf[tp] {
			r.logEnd = e.Offset
		}
		rows = append(rows, r)
	}
	// Members owning nothing get a row per subscribed topic.
	for _, id := range consumers {
		if owning[id] {
			continue
		}
		data, _, err := zkc.Get(zkpaths.ConsumerIDPath(group, id))
		if err != nil {
			continue
		}
		reg, err := zkpaths.DecodeConsumerRegistration(data)
		if err != nil {
			return err
		}
		for range reg.Subscription {
			rows = append(rows, offsetRow{topic: missing, partition: -1, offset: -1, logEnd: -1, consumerID: id})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	topicW, consumerW := 15, 15
	for _, r := range rows {
		topicW, consumerW = max(topicW, len(r.topic)), max(consumerW, len(r.consumerID))
	}
	format := fmt.Sprintf("%%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds \n", topicW, consumerW)
	fmt.Fprintf(g.out, "\n"+format, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID")
	for _, r := range rows {
		topic, partition, offset, logEnd, lag := r.cells()
		fmt.Fprintf(g.out, format, topic, partition, offset, logEnd, lag, r.consumerID)
	}
	return nil
}

// zkLogEndOffsets asks the brokers registered in ZooKeeper for the log end
// offsets of tps.
func zkLogEndOffsets(ctx context.Context, zkc *zkclient.Client, tps []kadm.Partition) (kadm.ListedOffsets, error) {
	if len(tps) == 0 {
		return kadm.ListedOffsets{}, nil
	}
	ids, err := childrenOrNone(zkc, zkpaths.BrokerIDs)
	if err != nil {
		return nil, err
	}
	var seeds []string
	for _, id := range ids {
		n, err := strconv.ParseInt(id, 10, 32)
		if err != nil {
			continue
		}
		data, _, err := zkc.Get(zkpaths.BrokerPath(int32(n)))
		if err != nil {
			continue
		}
		reg, err := zkpaths.DecodeBrokerRegistration(int32(n), data)
		if err != nil {
			continue
		}
		if len(reg.Endpoints) > 0 {
			seeds = append(seeds, fmt.Sprintf("%s:%d", reg.Endpoints[0].Host, reg.Endpoints[0].Port))
		} else {
			seeds = append(seeds, fmt.Sprintf("%s:%d", reg.Host, reg.Port))
		}
	}
	if len(seeds) == 0 {
		return kadm.ListedOffsets{}, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("ConsumerGroupCommand"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	return kadm.NewClient(cl).ListEndOffsets(ctx, sortedKeys(topics)...)
}

// deleteZooKeeperGroups removes inactive ZooKeeper groups, as 0.10's
// AdminUtils.deleteConsumerGroupInZK: a group with registered consumers stays.
func (g *groupCommand) deleteZooKeeperGroups(zkc *zkclient.Client) error {
	failed := false
	for _, group := range g.opts.all("group") {
		path := zkpaths.ConsumerGroupPath(group)
		if ok, _, err := zkc.Exists(path); err != nil {
			return err
		} else if !ok {
			g.printError("Delete for group '%s' failed because group does not exist.", group)
			failed = true
			continue
		}
		ids, err := childrenOrNone(zkc, zkpaths.ConsumerIDsPath(group))
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			g.printError("Delete for group '%s' failed because its consumers are still active.", group)
			failed = true
			continue
		}
		if err := deleteRecursive(zkc, path); err != nil {
			return err
		}
		fmt.Fprintf(g.out, "Deleted all consumer group information for group '%s' in zookeeper.\n", group)
	}
	if failed {
		return errReported
	}
	return nil
}

func deleteRecursive(zkc *zkclient.Client, path string) error {
	children, err := childrenOrNone(zkc, path)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := deleteRecursive(zkc, path+"/"+c); err != nil {
			return err
		}
	}
	if err := zkc.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

// deleteOffsets is --delete-offsets: OffsetDelete for the --topic
// partitions ("t" for all of a topic's partitions, "t:0,1"), then Kafka's
// per-partition status table.
func (g *groupCommand) deleteOffsets(ctx context.Context) error {
	group := g.opts.value("group")
	type result struct {
		tp  kadm.Partition
		err error
	}
	var results []result
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	topics := g.opts.all("topic")
	for _, arg := range topics {
		topic, parts, hasParts := strings.Cut(arg, ":")
		var partitions []int32
		if hasParts {
			for p := range strings.SplitSeq(parts, ",") {
				n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
				if err != nil {
					return fmt.Errorf("Invalid partition '%s' specified in topic arg '%s''", p, arg)
				}
				partitions = append(partitions, int32(n))
			}
		} else {
			meta, err := g.adm.Metadata(ctx, topic)
			if err != nil {
				return err
			}
			td, ok := meta.Topics[topic]
			if !ok || td.Err != nil {
				results = append(results, result{kadm.Partition{Topic: topic, Partition: -1}, kerr.UnknownTopicOrPartition})
				continue
			}
			for _, p := range td.Partitions.Sorted() {
				partitions = append(partitions, p.Partition)
			}
		}
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = topic
		for _, p := range partitions {
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, g.cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			results = append(results, result{kadm.Partition{Topic: t.Topic, Partition: p.Partition}, kerr.ErrorForCode(p.ErrorCode)})
		}
	}
	top := kerr.ErrorForCode(resp.ErrorCode)
	// The Java admin client fails the whole call with the first partition's
	// error, and the tool reports that as the top-level result.
	for _, r := range results {
		if top == nil && r.err != nil {
			top = r.err
		}
	}
	switch top {
	case nil:
		fmt.Fprintf(g.out, "Request succeed for deleting offsets with topic %s group %s\n", strings.Join(topics, ", "), group)
	case kerr.InvalidGroupID:
		g.printError("'%s' is not valid.", group)
	case kerr.GroupIDNotFound:
		g.printError("'%s' does not exist.", group)
	case kerr.GroupAuthorizationFailed:
		g.printError("Access to '%s' is not authorized.", group)
	case kerr.NonEmptyGroup:
		g.printError("Deleting offsets of a consumer group '%s' is forbidden if the group is not empty.", group)
	case kerr.GroupSubscribedToTopic, kerr.TopicAuthorizationFailed, kerr.UnknownTopicOrPartition:
		g.printError("Encounter some partition level error, see the follow-up details:")
	default:
		name := top.Error()
		var ke *kerr.Error
		if errors.As(top, &ke) {
			name = ke.Message
		}
		g.printError("Encounter some unknown error: %s", name)
	}
	// Kafka orders the rows by topic and partition as one string.
	slices.SortFunc(results, func(a, b result) int {
		return strings.Compare(a.tp.Topic+strconv.Itoa(int(a.tp.Partition)), b.tp.Topic+strconv.Itoa(int(b.tp.Partition)))
	})
	const format = "%-30s %-15s %-15s\n"
	fmt.Fprintf(g.out, "\n"+format, "TOPIC", "PARTITION", "STATUS")
	failed := top != nil
	for _, r := range results {
		partition, status := strconv.Itoa(int(r.tp.Partition)), "Successful"
		if r.tp.Partition < 0 {
			partition = "Not Provided"
		}
		if r.err != nil {
			failed = true
			status = "Error: " + kafkaMessage(r.err)
		}
		fmt.Fprintf(g.out, format, r.tp.Topic, partition, status)
	}
	if failed {
		return errReported
	}
	return nil
}
