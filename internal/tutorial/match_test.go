package tutorial

import (
	"strings"
	"testing"
)

func TestTutorialMatcher(t *testing.T) {
	r := &tutorialRun{t: t, ports: strings.NewReplacer("9092", "39092"), bound: map[string]string{}}
	zkOut := "Connecting to localhost:2181\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n4\n"
	for _, tc := range []struct {
		want []string
		out  string
		ok   bool
	}{
		// zkCli's preamble is not an answer: <epoch> binds to 4.
		{[]string{"<epoch>"}, zkOut, true},
		{[]string{"<epoch+1>"}, "5\n", true},
		{[]string{"<epoch+1>"}, "4\n", false},
		{[]string{"<epoch>"}, "5\n", false},
		// zkCli prints its WATCHER block from another thread: after the answer too.
		{[]string{"[1, 2]"}, "Connecting to localhost:2181\n[1, 2]\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n", true},
		// ... or in the middle of the answer's line (seen once in CI).
		{[]string{"[1, 2, 3]"}, "Connecting to localhost:2181\n\nWATCHER::\n\n[1\nWatchedEvent state:SyncConnected type:None path:null\n, 2, 3]\n", true},
		{[]string{"[1, 2, 3]"}, "[1\n, 2, 3]\n", false},
		// In the container, zkCli also logs its normal exit.
		{[]string{"[1, 2, 3]"}, "Connecting to localhost:2181\n[1, 2, 3]\n2026-12-01 08:27:42,875 [myid:] - ERROR [main:ServiceUtils@42] - Exiting JVM with code 0\n", true},
		{[]string{"[1, 2, 3]"}, "[1, 2, 3]\n2026-12-01 08:27:42,875 [myid:] - ERROR [main:ServiceUtils@42] - Exiting JVM with code 1\n", false},
		// Ports are the sandbox's; whitespace runs are one space.
		{[]string{"broker 1 at localhost:9092"}, "  broker 1 at   localhost:39092\n", true},
		{[]string{"broker 1 at localhost:9092"}, "broker 1 at localhost:9092\n", false},
		// The whole output, line by line: a wrong line, a missing one or an
		// extra one anywhere fails.
		{[]string{"a", "b", "c"}, "a\nb\nc\n", true},
		{[]string{"a", "b", "c"}, "a\nB\nc\n", false},
		{[]string{"a", "c"}, "a\nb\nc\n", false},
		{[]string{"b", "c"}, "a\nb\nc\n", false},
		{[]string{"a", "b"}, "a\nb\nc\n", false},
		{[]string{"a", "b", "c", "d"}, "a\nb\nc\n", false},
		{nil, "", true},
		{nil, "unexpected\n", false},
		{[]string{"a"}, "", false},
		// Order matters.
		{[]string{"c", "b", "a"}, "a\nb\nc\n", false},
		// Blank lines are not compared.
		{[]string{"a", "b"}, "\na\n\n\nb\n\n", true},
		// "..." stands for one or more lines, at the start, in the middle
		// or at the end, with or without words saying what they are.
		{[]string{"a", "...", "d"}, "a\nb\nc\nd\n", true},
		{[]string{"a", "... two lines", "d"}, "a\nb\nc\nd\n", true},
		{[]string{"...", "d"}, "a\nb\nc\nd\n", true},
		{[]string{"a", "..."}, "a\nb\nc\nd\n", true},
		{[]string{"a", "...", "d"}, "a\nd\n", false},
		{[]string{"a", "..."}, "a\n", false},
		{[]string{"a", "...", "d"}, "a\nb\nc\n", false},
		{[]string{"a", "...", "c", "...", "e"}, "a\nb\nc\nd\ne\n", true},
		{[]string{"a", "...", "d", "...", "b"}, "a\nb\nc\nd\ne\n", false},
		// A word that starts with "..." is not an elision.
		{[]string{"a", "...b"}, "a\nb\n", false},
		// A placeholder is one word, the same everywhere in a step.
		{[]string{"[<member>]", "<member>-0"}, "[m-1]\nm-1-0\n", true},
		{[]string{"[<other>]", "<other>-0"}, "[m-1]\nm-2-0\n", false},
		{[]string{"id <word>"}, "id two words\n", false},
		// After an elision, a placeholder binds to the line that lets the
		// rest match: here the second "id", not the first.
		{[]string{"...", "id <late>", "<late>!"}, "id 1\nid 2\n2!\n", true},
	} {
		err := r.match(step{want: tc.want}, tc.out)
		if (err == nil) != tc.ok {
			t.Errorf("want %q in %q: err %v, want ok=%v", tc.want, tc.out, err, tc.ok)
		}
	}
	for name, want := range map[string]string{"epoch": "4", "member": "m-1", "late": "2"} {
		if got := r.bound[name]; got != want {
			t.Errorf("<%s> bound to %q, want %q", name, got, want)
		}
	}
	if _, ok := r.bound["other"]; ok {
		t.Error("a failed match bound <other>")
	}
	if cmd, err := r.substitute("./scripts/cluster.sh kill <epoch>"); err != nil || cmd != "./scripts/cluster.sh kill 4" {
		t.Errorf("substitute: %q, %v", cmd, err)
	}
	if _, err := r.substitute("kill <unknown>"); err == nil {
		t.Error("an unbound placeholder in a command must be an error")
	}
}

// TestTutorialMatcherSays checks that a mismatch names the line at fault.
func TestTutorialMatcherSays(t *testing.T) {
	r := &tutorialRun{t: t, ports: strings.NewReplacer(), bound: map[string]string{}}
	for _, tc := range []struct {
		want []string
		out  string
		says string
	}{
		{[]string{"a", "b"}, "a\nx\n", `output line 2 "x" is not "b"`},
		{[]string{"a", "b"}, "a\n", `the output ends where the doc shows "b"`},
		{[]string{"a"}, "a\nb\n", `output line 2 "b" is not in the doc`},
		{[]string{"a", "...", "c"}, "a\nb\nd\n", `the doc's "..." is never followed by "c"`},
	} {
		err := r.match(step{want: tc.want}, tc.out)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("want %q in %q: err %v, want it to say %s", tc.want, tc.out, err, tc.says)
		}
	}
}

// TestTutorialReaderOutput: what the test's setup prints is turned into what
// a reader sees before matching, and a line only a reader sees is not
// expected from it.
func TestTutorialReaderOutput(t *testing.T) {
	r := &tutorialRun{t: t, ports: strings.NewReplacer(), bound: map[string]string{}, reader: readerView{
		replace:    strings.NewReplacer("ZKAFKA_ZK_PORT=1 ", ""),
		notPrinted: []string{"building bin/zkafka"},
	}}
	want := []string{"starting", "building bin/zkafka", "./scripts/cluster.sh status"}
	if err := r.match(step{want: want}, "starting\nZKAFKA_ZK_PORT=1 ./scripts/cluster.sh status\n"); err != nil {
		t.Error(err)
	}
	if err := r.match(step{want: want}, "starting\nZKAFKA_ZK_PORT=2 ./scripts/cluster.sh status\n"); err == nil {
		t.Error("settings the setup did not use were removed")
	}
}
