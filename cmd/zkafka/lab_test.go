package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/lab"
)

// TestLabList: every scenario and mode, one line each with what it teaches.
func TestLabList(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"lab", "list"}, &stdout, &stderr); code != 0 {
		t.Fatalf("zkafka lab list: exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(stdout.String(), "\n")
	find := func(name, teaches string) {
		t.Helper()
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				if !strings.Contains(l, teaches) {
					t.Errorf("line of %s %q lacks what it teaches, %q", name, l, teaches)
				}
				return
			}
		}
		t.Errorf("zkafka lab list does not list %s:\n%s", name, stdout.String())
	}
	for _, s := range lab.AllScenarios {
		find(s.Name, s.Teaches)
	}
	for _, m := range lab.AllModes {
		find(m.Name, m.Teaches)
	}
}

// TestLabRunAndReport runs a short scale-out under a legacy and a coordinator
// mode from the command line: a live progress line per mode, the comparison
// table and every output file, the raw log as CSV; then `lab report` renders
// the same directory again with the same table.
func TestLabRunAndReport(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"group.initial.rebalance.delay.ms": "0",
		"group.min.session.timeout.ms":     "500",
		"offsets.topic.num.partitions":     "3",
	}})
	dir := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	code := run([]string{"lab", "run", "--scenario", "scale-out", "--modes", "legacy-range,cooperative",
		"--members", "2", "--partitions", "4", "--rate", "100", "--processing", "5ms", "--max-poll-records", "100",
		"--session-timeout", "2s", "--heartbeat-interval", "100ms", "--max-poll-interval", "2s",
		"--zookeeper-session-timeout", "4s", "--auto-commit-interval", "1s", "--step", "1s",
		"--topic", "lab-cli", "--bootstrap-server", strings.Join(c.BootstrapAddrs(), ","), "--zookeeper", c.ZK,
		"--out", dir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("zkafka lab run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	// The progress line is rewritten in place (\r); each mode's last one ends with a newline.
	for _, mode := range []string{"legacy-range", "cooperative"} {
		var last string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if parts := strings.Split(l, "\r"); strings.HasPrefix(strings.TrimSpace(parts[len(parts)-1]), mode+" ") {
				last = parts[len(parts)-1]
			}
		}
		f := strings.Fields(last)
		if len(f) < 10 || f[1] != lab.PhaseDone || f[4] != "members" || f[6] != "rebalances" || f[8] != "processed" {
			t.Errorf("%s's last progress line %q, want \"%s done step n/n members m rebalances r processed p\"", mode, last, mode)
		}
	}
	out := stdout.String()
	if !strings.HasSuffix(out, "\nreport: "+filepath.Join(dir, "report.html")+"\n") {
		t.Errorf("zkafka lab run does not end with the report's path:\n%s", out)
	}
	table := out[:strings.LastIndex(out, "\nreport: ")]
	for _, mode := range []string{"legacy-range", "cooperative"} {
		if !strings.Contains(table, mode) {
			t.Errorf("the table lacks %s:\n%s", mode, table)
		}
	}
	for _, name := range []string{"run.json", "events.jsonl", "events.csv", "figures.json", "table.txt", "report.html",
		"timeline-legacy-range.svg", "timeline-legacy-range.png", "timeline-cooperative.svg", "timeline-cooperative.png"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}

	// The CSV holds the same events as the JSON lines, under a header.
	_, events, err := lab.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "events.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(events)+1 || rows[0][0] != "t" || rows[0][1] != "mode" {
		t.Fatalf("events.csv: %d rows, header %v; want %d events under a header", len(rows), rows[0], len(events))
	}
	for i, e := range events {
		if rows[i+1][1] != e.Mode || rows[i+1][3] != e.Type {
			t.Fatalf("events.csv row %d is %v, event %+v", i+1, rows[i+1], e)
		}
	}

	if err := os.Remove(filepath.Join(dir, "report.html")); err != nil {
		t.Fatal(err)
	}
	var again, stderr2 bytes.Buffer
	if code := run([]string{"lab", "report", dir}, &again, &stderr2); code != 0 {
		t.Fatalf("zkafka lab report: exit %d: %s", code, stderr2.String())
	}
	if again.String() != out {
		t.Errorf("zkafka lab report printed\n%s\nwant what the run printed\n%s", again.String(), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("zkafka lab report did not write report.html again: %v", err)
	}
}
