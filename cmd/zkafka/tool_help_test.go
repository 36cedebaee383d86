package main

import (
	"slices"
	"strings"
	"testing"
)

// kafkaTools are the Kafka-named tools with joptsimple options: the message
// each prints before its options, as Kafka 2.8's do.
var kafkaTools = []struct {
	name, message string
	specs         []optionSpec
}{
	{"topics", "This tool helps to create, delete, describe, or change a topic.", topicsOptions},
	{"configs", "This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip", configsOptions},
	{"acls", "This tool helps to manage acls on kafka.", aclsOptions},
	{"consumer-groups", "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.", consumerGroupsOptions},
	{"console-producer", "This tool helps to read data from standard input and publish it to Kafka.", consoleProducerOptions},
	{"console-consumer", "This tool helps to read data from Kafka topics and outputs it to standard output.", consoleConsumerOptions},
	{"reassign-partitions", "This tool helps to move topic partitions between replicas.", reassignOptions},
	{"leader-election", "This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are preferred replicas and unclean replicas.", leaderElectionOptions},
	{"preferred-replica-election", "This tool helps to causes leadership for each partition to be transferred back to the 'preferred replica', it can be used to balance leadership among the servers.", preferredReplicaElectionOptions},
	{"dump-log", "This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment.", dumpLogOptions},
	{"log-dirs", "This tool helps to query log directory usage on the specified brokers.", logDirsOptions},
	{"delete-records", "This tool helps to delete records of the given partitions down to the specified offset.", deleteRecordsOptions},
	{"broker-api-versions", "This tool helps to retrieve broker version information.", brokerAPIVersionsOptions},
	{"delegation-tokens", "This tool helps to create, renew, expire, or describe delegation tokens.", delegationTokensOptions},
	{"zookeeper-security-migration", zkSecurityMigrationUsage, zkSecurityMigrationOptions},
}

// TestToolHelp: with --help, and with no arguments, every tool exits 1 with
// its message and joptsimple's table on stderr: the header, every option
// once in name order at the start of a line, two columns of fixed width
// within 80 characters.
func TestToolHelp(t *testing.T) {
	for _, tool := range kafkaTools {
		for _, args := range [][]string{{tool.name, "--help"}, {tool.name}} {
			code, stdout, stderr := runTool(args...)
			if code != 1 || stdout != "" && !strings.HasPrefix(stdout, "This tool is deprecated") {
				t.Errorf("zkafka %v: exit %d, stdout %q; want exit 1", args, code, stdout)
			}
			message, table, _ := strings.Cut(stderr, "\n")
			if message != tool.message {
				t.Errorf("zkafka %v: first line %q, want %q", args, message, tool.message)
			}
			if table != formatHelp(tool.specs) {
				t.Errorf("zkafka %v: the table is not formatHelp's:\n%s", args, table)
			}
		}
		checkHelpLayout(t, tool.name, formatHelp(tool.specs), tool.specs)
	}
}

func checkHelpLayout(t *testing.T, tool, table string, specs []optionSpec) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	col := strings.Index(lines[0], "Description")
	if !strings.HasPrefix(lines[0], "Option ") || col < 0 || !strings.HasPrefix(lines[1], "------ ") || strings.Index(lines[1], "-----------") != col {
		t.Fatalf("%s: header\n%s\n%s", tool, lines[0], lines[1])
	}
	if len(lines[0]) > 80 {
		t.Errorf("%s: the table is %d characters wide, more than joptsimple's 80", tool, len(lines[0]))
	}
	var names []string
	for i, line := range lines {
		if len(line) < len(lines[0]) {
			t.Errorf("%s: line %q is not padded to the table's width %d", tool, line, len(lines[0]))
		}
		if rest, ok := strings.CutPrefix(line, "--"); ok && i >= 2 {
			name, _, _ := strings.Cut(rest, " ")
			names = append(names, name)
		}
		if line[col-2:col] != "  " {
			t.Errorf("%s: line %q does not keep the description column at %d", tool, line, col)
		}
	}
	var want []string
	for _, s := range specs {
		want = append(want, s.name)
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("%s: options %v, want %v", tool, names, want)
	}
}

// TestHelpFormatterGolden holds the bytes of two tables as Kafka 2.8's
// joptsimple (5.0.4) prints them: wrapped option and description cells,
// arguments with their types, defaults, embedded line breaks and tabs, and
// Java's break after hyphens and before brackets.
func TestHelpFormatterGolden(t *testing.T) {
	for _, tc := range []struct {
		specs []optionSpec
		want  string
	}{
		{[]optionSpec{
			argOpt("bootstrap-server", "server(s) to use for bootstrapping", "REQUIRED: The server to connect to."),
			helpOption,
		}, "" +
			"Option                                 Description                        \n" +
			"------                                 -----------                        \n" +
			"--bootstrap-server <String: server(s)  REQUIRED: The server to connect to.\n" +
			"  to use for bootstrapping>                                               \n" +
			"--help                                 Print usage information.           \n"},
		{[]optionSpec{
			argOpt("timeout", "timeout (ms)", "The timeout that can be set for some use cases.").typed("Long").defaults("5000"),
			argOpt("state", "", "When specified with '--describe', includes the state of the group.\nExample: --list --state stable,empty").optional(),
			argOpt("property", "prop", "Default properties include:\n\tparse.key=true|false"),
			argOpt("election-type", "election type", "Type of election (user-defined k2=[v1,v2]).").typed("[PREFERRED,UNCLEAN]"),
		}, "" +
			"Option                                 Description                           \n" +
			"------                                 -----------                           \n" +
			"--election-type <[PREFERRED,UNCLEAN]:  Type of election (user-defined k2=[v1,\n" +
			"  election type>                         v2]).                               \n" +
			"--property <String: prop>              Default properties include:           \n" +
			"                                       \tparse.key=true|false                 \n" +
			"--state [String]                       When specified with '--describe',     \n" +
			"                                         includes the state of the group.    \n" +
			"                                       Example: --list --state stable,empty  \n" +
			"--timeout <Long: timeout (ms)>         The timeout that can be set for some  \n" +
			"                                         use cases. (default: 5000)          \n"},
	} {
		if got := formatHelp(tc.specs); got != tc.want {
			t.Errorf("formatHelp:\n%s\nwant:\n%s", got, tc.want)
		}
	}
}
