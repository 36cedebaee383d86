package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestChaosFuzzCommand: `zkafka chaos fuzz` against a broker prints the requests per kind and
// ends with the summary line; bad flags are refused with exit 2.
func TestChaosFuzzCommand(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	var stdout, stderr bytes.Buffer
	code := run([]string{"chaos", "fuzz", "--bootstrap-server", strings.Join(c.BootstrapAddrs(), ","),
		"--connections", "100", "--concurrency", "4", "--read-timeout", "300ms", "--topic", "fuzz-cli", "--seed", "7", "--quiet"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("zkafka chaos fuzz: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, kind := range []string{"valid", "mutated", "header", "frame", "random"} {
		if !regexp.MustCompile(`(?m)^` + kind + `\s+[1-9][0-9]*$`).MatchString(out) {
			t.Errorf("no %s requests in the table:\n%s", kind, out)
		}
	}
	last := regexp.MustCompile(`(?m)^connections=100 requests=[0-9]+ answered=[0-9]+ closed=[0-9]+ unanswered=[0-9]+ produced=[1-9][0-9]* produce-failed=0 panics=0 verdict=PASS\n\z`)
	if !last.MatchString(out) {
		t.Errorf("zkafka chaos fuzz does not end with the summary line:\n%s", out)
	}

	for _, args := range [][]string{
		{"chaos", "fuzz", "--rate", "0", "--bootstrap-server", c.Addr(1)},
		{"chaos", "fuzz", "extra"},
	} {
		var so, se bytes.Buffer
		if code := run(args, &so, &se); code == 0 || !strings.HasPrefix(se.String(), "zkafka chaos fuzz: ") {
			t.Errorf("zkafka %v: exit %d, stderr %q; want a failure saying why", args, code, se.String())
		}
	}
}
