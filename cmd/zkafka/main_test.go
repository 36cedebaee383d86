package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/zktest"
)

// TestMain lets the tool tests share one ZooKeeper server, each cluster in
// its own chroot.
func TestMain(m *testing.M) { zktest.Main(m) }

func TestCommandLineErrors(t *testing.T) {
	dir := t.TempDir()
	noZK := filepath.Join(dir, "no-zk.properties")
	if err := os.WriteFile(noZK, []byte("broker.id=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: zkafka"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"broker"}, 2, "USAGE: zkafka broker server.properties"},
		{[]string{"broker", filepath.Join(dir, "missing.properties")}, 1, "no such file"},
		{[]string{"broker", noZK}, 1, "zookeeper.connect is required"},
		{[]string{"broker", noZK, "--override", "novalue"}, 2, `override "novalue" is not key=value`},
		{[]string{"broker", noZK, "--override", "zookeeper.connect=localhost:2181", "--override", "broker.id=x"}, 1, `broker.id="x" is not a 32-bit integer`},
		{[]string{"lab"}, 2, "zkafka lab report DIR"},
		{[]string{"lab", "report"}, 2, "zkafka lab report DIR"},
		{[]string{"chaos", "frobnicate"}, 2, `zkafka chaos: unknown command "frobnicate"`},
		{[]string{"chaos", "report", filepath.Join(dir, "none")}, 1, "zkafka chaos report: not a chaos run directory"},
		{[]string{"ui", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"ui", "--allow-actions", "--listen", "0.0.0.0:8080"}, 2, "--allow-actions serves on loopback only"},
		{[]string{"ui", "--allow-actions", "--zookeeper", "zk.example.com:2181"}, 1, "actions need a local ./scripts/cluster.sh cluster: ZooKeeper zk.example.com:2181 is not on this machine"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("zkafka %v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("zkafka %v: stderr %q, want it to mention %q", tc.args, stderr.String(), tc.want)
		}
	}
}
