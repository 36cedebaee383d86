package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func runMain(args ...string) (code int, stdout, stderr string) {
	return runMainWith(nil, args...)
}

func runMainWith(ref *Reference, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Main(args, &out, &errOut, ref)
	return code, out.String(), errOut.String()
}

// kfakeReference stands in for zkafka-bench's reference: a kfake cluster
// started for each run.
func kfakeReference(t *testing.T) *Reference {
	return &Reference{Name: "kfake", Run: func(ctx context.Context, opts Options, log io.Writer) (Result, error) {
		return RunAgainst(ctx, opts, log, "kfake", newCluster(t).ListenAddrs())
	}}
}

func TestMainUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--records", "many"},
		{"--no-such-flag"},
		{"--acks", "2"},
		{"--compression", "brotli"},
		{"--partitions", "0"},
		{"--replication-factor", "70000"},
		{"--record-size", "-1"},
		{"--linger", "soon"},
		{"--rate", "-5"},
		{"--rate", "100", "--transaction-size", "10"},
		{"--idempotent", "--acks", "1"},
		{"--compare-kfake"}, // only zkafka-bench has the in-memory reference
		{"--bootstrap-server", " , "},
		{"extra"},
		{"--runs", "0"},
		{"produce", "consume"},
	} {
		code, stdout, stderr := runMain(args...)
		if code != 2 {
			t.Errorf("Main(%q) = %d, want 2", args, code)
		}
		if stdout != "" {
			t.Errorf("Main(%q) wrote to stdout: %q", args, stdout)
		}
		prefix := "zkafka bench: "
		if args[0] == ModeProduce {
			prefix = "zkafka bench produce: "
		}
		if !strings.HasPrefix(stderr, prefix) || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("Main(%q) stderr = %q, want one line starting with %q", args, stderr, prefix)
		}
	}
	for _, args := range [][]string{
		{"e2e", "--record-size", "7"},
		{"e2e", "--transaction-size", "10"},
	} {
		code, stdout, stderr := runMain(args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "zkafka bench e2e: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("Main(%q) = %d, stdout %q, stderr %q; want 2 and one line on stderr", args, code, stdout, stderr)
		}
	}
}

func TestPartitionsUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"partitions"},
		{"partitions", "many"},
		{"partitions", "0"},
		{"partitions", "10", "--topics", "11"},
		{"partitions", "10", "--replication-factor", "0"},
		{"partitions", "10", "--step-timeout", "0s"},
		{"partitions", "10", "extra"},
		{"partitions", "10", "--root", "/nonexistent"},
	} {
		code, stdout, stderr := runMain(args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "zkafka bench partitions: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("Main(%q) = %d, stdout %q, stderr %q; want 2 and one line on stderr", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := runMain("partitions", "-h")
	if code != 0 || !strings.Contains(stdout, "usage: zkafka bench partitions N") || !strings.Contains(stdout, "-topics") {
		t.Errorf("partitions -h = %d, stdout %q", code, stdout)
	}
}

func TestMainReferenceUsageError(t *testing.T) {
	code, stdout, stderr := runMainWith(kfakeReference(t), "--compare-kfake", "--only-kfake")
	if code != 2 || stdout != "" || stderr != "zkafka-bench: --compare-kfake and --only-kfake are mutually exclusive (see zkafka-bench -h)\n" {
		t.Errorf("Main = %d, stdout %q, stderr %q; want 2 and one line", code, stdout, stderr)
	}
}

func TestMainHelp(t *testing.T) {
	code, stdout, _ := runMain("-h")
	if code != 0 || !strings.Contains(stdout, "usage: zkafka bench") || !strings.Contains(stdout, "-bootstrap-server") || strings.Contains(stdout, "kfake") {
		t.Errorf("Main(-h) = %d, stdout %q; want 0 and the flag list without the kfake reference", code, stdout)
	}
	code, stdout, _ = runMainWith(kfakeReference(t), "-h")
	if code != 0 || !strings.Contains(stdout, "usage: zkafka-bench") || !strings.Contains(stdout, "-compare-kfake") || !strings.Contains(stdout, "-only-kfake") {
		t.Errorf("Main(-h) with a reference = %d, stdout %q; want 0 and the kfake flags", code, stdout)
	}
}

// tables are each mode's header and a pattern of its rows: target, records,
// size, acks (but consume), then its figures.
var tables = map[string]struct {
	header string
	row    *regexp.Regexp
}{
	ModeAll: {"target records size acks produce rec/s produce MB/s p50 ms p99 ms consume rec/s consume MB/s",
		regexp.MustCompile(`^\s*(\S+)\s+(\d+)\s+(\d+)\s+(all)(\s+\d+(\.\d+)?){6}$`)},
	ModeProduce: {"target records size acks produce rec/s produce MB/s p50 ms p99 ms",
		regexp.MustCompile(`^\s*(\S+)\s+(\d+)\s+(\d+)\s+(all)(\s+\d+(\.\d+)?){4}$`)},
	ModeConsume: {"target records size consume rec/s consume MB/s",
		regexp.MustCompile(`^\s*(\S+)\s+(\d+)\s+(\d+)()(\s+\d+(\.\d+)?){2}$`)},
	ModeE2E: {"target records size acks rate rec/s p50 ms p99 ms p99.9 ms max ms",
		regexp.MustCompile(`^\s*(\S+)\s+(\d+)\s+(\d+)\s+(all)(\s+\d+(\.\d+)?){5}$`)},
}

func checkTable(t *testing.T, stdout string, targets ...string) []string {
	t.Helper()
	return checkModeTable(t, ModeAll, stdout, targets...)
}

// checkModeTable checks mode's table of 2000 records of 100 bytes for targets
// and returns the lines after it.
func checkModeTable(t *testing.T, mode, stdout string, targets ...string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) < 1+len(targets) {
		t.Fatalf("stdout has %d lines, want a header and %d rows:\n%s", len(lines), len(targets), stdout)
	}
	table := tables[mode]
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != table.header {
		t.Errorf("header = %q, want %q", lines[0], table.header)
	}
	for i, target := range targets {
		m := table.row.FindStringSubmatch(lines[1+i])
		if m == nil {
			t.Errorf("row %d = %q, not a result row", i, lines[1+i])
			continue
		}
		if m[1] != target || m[2] != "2000" || m[3] != "100" {
			t.Errorf("row %d = %q, want target %s, 2000 records of 100 bytes", i, lines[1+i], target)
		}
	}
	return lines[1+len(targets):]
}

func TestMainOnlyKfake(t *testing.T) {
	code, stdout, stderr := runMainWith(kfakeReference(t), "--only-kfake", "--records", "2000", "--partitions", "3")
	if code != 0 {
		t.Fatalf("Main = %d, stderr:\n%s", code, stderr)
	}
	if rest := checkTable(t, stdout, "kfake"); len(rest) != 0 {
		t.Errorf("unexpected lines after the table: %q", rest)
	}
	if !strings.Contains(stderr, "produced") || !strings.Contains(stderr, "consumed") {
		t.Errorf("stderr lacks progress logs:\n%s", stderr)
	}
}

func TestMainCompareKfake(t *testing.T) {
	target := newCluster(t) // stands in for zkafka
	addrs := strings.Join(target.ListenAddrs(), ",")
	code, stdout, stderr := runMainWith(kfakeReference(t), "--bootstrap-server", addrs, "--compare-kfake", "--records", "2000", "--partitions", "3")
	if code != 0 {
		t.Fatalf("Main = %d, stderr:\n%s", code, stderr)
	}
	rest := checkTable(t, stdout, addrs, "kfake")
	if len(rest) != 1 || !regexp.MustCompile(`^zkafka/kfake produce ratio \d+\.\d\d, consume ratio \d+\.\d\d$`).MatchString(rest[0]) {
		t.Errorf("want one ratio line after the table, got %q", rest)
	}
}

func TestMainRunFailureExits1(t *testing.T) {
	c := newCluster(t)
	addrs := strings.Join(c.ListenAddrs(), ",")
	// Three kfake brokers cannot hold four replicas, so topic creation fails.
	code, stdout, stderr := runMain("--bootstrap-server", addrs, "--replication-factor", "4", "--records", "10")
	if code != 1 {
		t.Errorf("Main = %d, want 1; stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing after a failed run", stdout)
	}
	if !strings.Contains(stderr, "INVALID_REPLICATION_FACTOR") {
		t.Errorf("stderr does not name the broker's error:\n%s", stderr)
	}
}

// TestMainTransactional runs the load in transactions of 100 beside an
// idempotent run, against both clusters, and reports the ratio and the
// commit latency.
func TestMainTransactional(t *testing.T) {
	target := newCluster(t)
	addrs := strings.Join(target.ListenAddrs(), ",")
	code, stdout, stderr := runMainWith(kfakeReference(t), "--bootstrap-server", addrs, "--compare-kfake", "--records", "2000",
		"--partitions", "3", "--transaction-size", "100")
	if code != 0 {
		t.Fatalf("Main = %d, stderr:\n%s", code, stderr)
	}
	rest := checkTable(t, stdout, addrs+"[idempotent]", addrs+"[txn=100]", "kfake[idempotent]", "kfake[txn=100]")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^zkafka/kfake produce ratio \d+\.\d\d, consume ratio \d+\.\d\d \[idempotent\]$`),
		regexp.MustCompile(`^zkafka/kfake produce ratio \d+\.\d\d, consume ratio \d+\.\d\d \[txn=100\]$`),
		regexp.MustCompile(`^\S+\[txn=100\]: transactional/idempotent produce ratio \d+\.\d\d; commit p50 \d+\.\d\d ms, p99 \d+\.\d\d ms over 20 transactions$`),
		regexp.MustCompile(`^kfake\[txn=100\]: transactional/idempotent produce ratio \d+\.\d\d; commit p50 \d+\.\d\d ms, p99 \d+\.\d\d ms over 20 transactions$`),
	}
	if len(rest) != len(want) {
		t.Fatalf("lines after the table: %q", rest)
	}
	for i, re := range want {
		if !re.MatchString(rest[i]) {
			t.Errorf("line %q does not match %s", rest[i], re)
		}
	}
}

// TestMainModes runs each mode against a kfake cluster standing in for
// zkafka, beside the reference, and checks its table and ratio line.
func TestMainModes(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		ratio *regexp.Regexp
	}{
		{ModeProduce, regexp.MustCompile(`^zkafka/kfake produce ratio \d+\.\d\d$`)},
		{ModeConsume, regexp.MustCompile(`^zkafka/kfake consume ratio \d+\.\d\d$`)},
		{ModeE2E, regexp.MustCompile(`^zkafka/kfake end-to-end latency ratio p50 \d+\.\d\d, p99 \d+\.\d\d$`)},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			target := newCluster(t)
			addrs := strings.Join(target.ListenAddrs(), ",")
			code, stdout, stderr := runMainWith(kfakeReference(t), tc.mode, "--bootstrap-server", addrs, "--compare-kfake",
				"--records", "2000", "--partitions", "3", "--rate", "20000")
			if code != 0 {
				t.Fatalf("Main = %d, stderr:\n%s", code, stderr)
			}
			rest := checkModeTable(t, tc.mode, stdout, addrs, "kfake")
			if len(rest) != 1 || !tc.ratio.MatchString(rest[0]) {
				t.Errorf("want one line matching %s after the table, got %q", tc.ratio, rest)
			}
			if produced := strings.Contains(stderr, "produced"); produced != (tc.mode != ModeE2E) {
				t.Errorf("stderr logs the produce phase: %v, want %v:\n%s", produced, tc.mode != ModeE2E, stderr)
			}
			if consumed := strings.Contains(stderr, "consumed"); consumed != (tc.mode != ModeProduce) {
				t.Errorf("stderr logs a consume phase: %v, want %v:\n%s", consumed, tc.mode != ModeProduce, stderr)
			}
		})
	}
}

// TestMainRunsReportsMedians alternates the target and the reference over
// runs, each on its own topic, and adds their medians.
func TestMainRunsReportsMedians(t *testing.T) {
	target := newCluster(t)
	addrs := strings.Join(target.ListenAddrs(), ",")
	code, stdout, stderr := runMainWith(kfakeReference(t), "produce", "--bootstrap-server", addrs, "--compare-kfake",
		"--records", "2000", "--partitions", "3", "--runs", "3", "--topic", "runs")
	if code != 0 {
		t.Fatalf("Main = %d, stderr:\n%s", code, stderr)
	}
	rest := checkModeTable(t, ModeProduce, stdout,
		addrs+"[run=1]", "kfake[run=1]", addrs+"[run=2]", "kfake[run=2]", addrs+"[run=3]", "kfake[run=3]",
		addrs+"[median]", "kfake[median]")
	if len(rest) != 1 || !regexp.MustCompile(`^zkafka/kfake produce ratio \d+\.\d\d \(medians of 3 runs\)$`).MatchString(rest[0]) {
		t.Errorf("want the ratio of the medians after the table, got %q", rest)
	}
	for i := 1; i <= 3; i++ {
		if n := storedRecords(t, target, fmt.Sprintf("runs-%d", i)); n != 2000 {
			t.Errorf("topic runs-%d holds %d records, want 2000: each run writes its own topic", i, n)
		}
	}
}

// TestMainProgress draws the bar only when asked (stderr is no terminal in
// a test), and the bar counts the records.
func TestMainProgress(t *testing.T) {
	for _, show := range []bool{false, true} {
		code, _, stderr := runMainWith(kfakeReference(t), "--only-kfake", "--records", "2000", "--partitions", "3", fmt.Sprintf("--progress=%v", show))
		if code != 0 {
			t.Fatalf("Main = %d, stderr:\n%s", code, stderr)
		}
		for _, bar := range []string{"produce", "consume"} {
			drawn := regexp.MustCompile(bar + `\s+100% .*\(2000/2000`).MatchString(stderr)
			if drawn != show {
				t.Errorf("--progress=%v: the %s bar at 2000/2000 drawn: %v; stderr:\n%s", show, bar, drawn, stderr)
			}
		}
	}
}

// topicsOf lists the cluster's topics.
func topicsOf(t *testing.T, c *kfake.Cluster) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(testContext(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return topics.Names()
}

// A run deletes the topic it named and created, so repeated runs do not fill
// the cluster; --keep-topic keeps it, and a topic named with --topic is kept.
func TestMainDeletesItsOwnTopic(t *testing.T) {
	none := func(names []string) bool { return len(names) == 0 }
	for _, tc := range []struct {
		args []string
		want func(names []string) bool
	}{
		{nil, none},
		{[]string{"--runs", "2", "--transaction-size", "100"}, none},
		{[]string{"--keep-topic"}, func(names []string) bool { return len(names) == 1 && strings.HasPrefix(names[0], "zkafka-bench-") }},
		{[]string{"--topic", "named"}, func(names []string) bool { return slices.Equal(names, []string{"named"}) }},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c := newCluster(t)
			args := append([]string{"--bootstrap-server", strings.Join(c.ListenAddrs(), ","), "--records", "200", "--partitions", "2"}, tc.args...)
			if code, _, stderr := runMain(args...); code != 0 {
				t.Fatalf("Main = %d, stderr:\n%s", code, stderr)
			}
			if names := topicsOf(t, c); !tc.want(names) {
				t.Errorf("topics after the run: %q", names)
			}
		})
	}
}
