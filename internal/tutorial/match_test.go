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
		// Ports are the sandbox's; whitespace runs are one space.
		{[]string{"broker 1 at localhost:9092"}, "  broker 1 at   localhost:39092\n", true},
		{[]string{"broker 1 at localhost:9092"}, "broker 1 at localhost:9092\n", false},
		// In order, as a subsequence of the lines.
		{[]string{"a", "c"}, "a\nb\nc\n", true},
		{[]string{"c", "a"}, "a\nb\nc\n", false},
		// A placeholder is one word, the same everywhere in a step.
		{[]string{"[<member>]", "<member>-0"}, "[m-1]\nm-1-0\n", true},
		{[]string{"[<other>]", "<other>-0"}, "[m-1]\nm-2-0\n", false},
		{[]string{"id <word>"}, "id two words\n", false},
	} {
		err := r.match(step{want: tc.want}, tc.out)
		if (err == nil) != tc.ok {
			t.Errorf("want %q in %q: err %v, want ok=%v", tc.want, tc.out, err, tc.ok)
		}
	}
	if got := r.bound["epoch"]; got != "4" {
		t.Errorf("<epoch> bound to %q, want 4", got)
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
