package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestChaosRunRefusesWhatTheClusterCannotDo: faults the cluster has no means for are refused
// before anything is touched, each with a one-line reason.
func TestChaosRunRefusesWhatTheClusterCannotDo(t *testing.T) {
	t.Setenv("ZKAFKA_DATA", t.TempDir())
	t.Setenv("ZKAFKA_ZK_SERVERS", "1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--faults", "zk-split", "--count", "1"}, "zk-split needs a ZooKeeper ensemble"},
		{[]string{"--faults", "zk-leader,kill", "--count", "1"}, "zk-leader needs a ZooKeeper ensemble"},
		{[]string{"--faults", "slow", "--loss", "1.5", "--count", "1"}, "give a latency of 0 or more and a loss in [0, 1)"},
		{[]string{"--faults", "netem", "--count", "1"}, `unknown fault "netem"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"chaos", "run", "--root", "../.."}, c.args...), &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("chaos run %v: exit %d, stderr %q; want one line with %q", c.args, code, stderr.String(), c.want)
		}
	}
}
