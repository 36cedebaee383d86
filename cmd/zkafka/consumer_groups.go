package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
)

var consumerGroupsOptions = []optionSpec{
	argOpt("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to."),
	argOpt("command-config", "command config property file", "Property file containing configs to be passed to Admin Client and Consumer."),
	argOpt("zookeeper", "urls", "The connection string for the zookeeper connection in the form host:port, for the groups of the old "+
		"(ZooKeeper-based) consumer. Multiple URLS can be given to allow fail-over. May be used with --list, --describe --group and --delete --group only."),
	argOpt("group", "consumer group", "The consumer group we wish to act on."),
	argOpt("topic", "topic", "The topic whose consumer group information should be deleted or topic whose should be included in the reset offset process. "+
		"In `reset-offsets` case, partitions can be specified using this format: `topic1:0,1,2`, where 0,1,2 are the partition to be included in the process. "+
		"Reset-offsets also supports multiple topic inputs."),
	flagOpt("all-topics", "Consider all topics assigned to a group in the `reset-offsets` process."),
	flagOpt("list", "List all consumer groups."),
	flagOpt("describe", "Describe consumer group and list offset lag (number of messages not yet processed) related to given group."),
	flagOpt("all-groups", "Apply to all consumer groups."),
	flagOpt("delete", "Pass in groups to delete topic partition offsets and ownership information over the entire consumer group. For instance --group g1 --group g2"),
	flagOpt("reset-offsets", "Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive\n"+
		"Has 2 execution options: --dry-run (the default) to plan which offsets to reset, and --execute to update the offsets.\n"+
		"You must choose one of the following reset specifications: --to-datetime, --to-earliest, --to-latest, --shift-by, --to-offset, --to-current.\n"+
		"To define the scope use --all-topics or --topic. One scope must be specified."),
	flagOpt("delete-offsets", "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics."),
	flagOpt("dry-run", "Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets."),
	flagOpt("execute", "Execute operation. Supported operations: reset-offsets."),
	argOpt("to-offset", "offset", "Reset offsets to a specific offset.").typed("Long"),
	argOpt("to-datetime", "datetime", "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'"),
	flagOpt("to-earliest", "Reset offsets to earliest offset."),
	flagOpt("to-latest", "Reset offsets to latest offset."),
	flagOpt("to-current", "Reset offsets to current offset."),
	argOpt("shift-by", "number-of-offsets", "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.").typed("Long"),
	flagOpt("members", "Describe members of the group. This option may be used with '--describe' and '--bootstrap-server' options only.\n"+
		"Example: --bootstrap-server localhost:9092 --describe --group group1 --members"),
	flagOpt("verbose", "Provide additional information, if any, when describing the group. This option may be used with '--offsets'/'--members'/'--state' "+
		"and '--bootstrap-server' options only.\nExample: --bootstrap-server localhost:9092 --describe --group group1 --members --verbose"),
	flagOpt("offsets", "Describe the group and list all topic partitions in the group along with their offset lag. This is the default sub-action of and "+
		"may be used with '--describe' and '--bootstrap-server' options only.\nExample: --bootstrap-server localhost:9092 --describe --group group1 --offsets"),
	flagOpt("state", "When specified with '--describe', includes the state of the group.\n"+
		"Example: --bootstrap-server localhost:9092 --describe --group group1 --state\n"+
		"When specified with '--list', it displays the state of all groups. It can also be used to list groups with specific states.\n"+
		"Example: --bootstrap-server localhost:9092 --list --state stable,empty\n"+
		"This option may be used with '--describe', '--list' and '--bootstrap-server' options only.").optional(),
	helpOption,
}

// errReported ends a command whose failure was printed already.
var errReported = errors.New("failure already reported")

// missing is what Kafka prints for a value a row does not have.
const missing = "-"

// runConsumerGroups is kafka-consumer-groups.sh: Kafka 2.8's
// ConsumerGroupCommand over the group coordinator's APIs, and with
// --zookeeper the 0.10 tool's view of the ZooKeeper-based groups under
// /consumers.
func runConsumerGroups(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, consumerGroupsOptions)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if helpNeeded(args, opts, "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.",
		consumerGroupsOptions, stderr) {
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
			err = g.run(ctx, &zkGroupService{groupCommand: g, zk: zkc})
		}
		return g.finish(err)
	}
	cl, adm, err := dialAdmin(opts.value("bootstrap-server"), opts.value("command-config"))
	if err == nil {
		defer cl.Close()
		err = g.run(ctx, &adminGroupService{groupCommand: g, cl: cl, adm: adm})
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
	// Kafka 1.1, the last tool with --zookeeper, made these unavailable with it (jopt-simple's
	// availableUnless).
	if opts.has("zookeeper") {
		for _, o := range []string{"members", "verbose", "offsets", "state"} {
			if opts.has(o) {
				return usageErrorf("Option(s) [%s] are unavailable given other options on the command line", o)
			}
		}
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

// groupCommand runs one validated kafka-consumer-groups invocation; a
// groupService reaches the cluster.
type groupCommand struct {
	opts   toolOptions
	out    io.Writer
	errOut io.Writer
}

// groupService is one of the two ways to reach the groups, as topicService
// is for kafka-topics: the group coordinators (adminGroupService) or the
// ZooKeeper-based groups under /consumers (zkGroupService).
type groupService interface {
	list(ctx context.Context) error
	describe(ctx context.Context) error
	deleteGroups(ctx context.Context) error
}

// run performs the action through svc. --reset-offsets and --delete-offsets
// exist only with --bootstrap-server, which checkConsumerGroupsArgs
// requires for them.
func (g *groupCommand) run(ctx context.Context, svc groupService) error {
	switch {
	case g.opts.has("list"):
		return svc.list(ctx)
	case g.opts.has("delete"):
		return svc.deleteGroups(ctx)
	case g.opts.has("reset-offsets"):
		return svc.(*adminGroupService).resetOffsets(ctx)
	case g.opts.has("delete-offsets"):
		return svc.(*adminGroupService).deleteOffsets(ctx)
	}
	return svc.describe(ctx)
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
