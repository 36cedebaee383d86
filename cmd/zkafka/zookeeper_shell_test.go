package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
)

// TestZooKeeperShell runs the real zkCli against the shared ZooKeeper, in a
// chroot, with one command as Kafka's zookeeper-shell.sh passes it.
func TestZooKeeperShell(t *testing.T) {
	connect := zktest.NewChroot(t)
	ctx := t.Context()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	defer zkc.Close()
	if err := zkc.CreateIfMissing("/brokers/ids/1", []byte(`{"version":5}`)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runZooKeeperShell([]string{connect, "get", "/brokers/ids/1"}, strings.NewReader(""), &stdout, &stderr)
	want := "Connecting to " + connect + "\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n{\"version\":5}\n"
	if code != 0 || stdout.String() != want {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %q", code, stdout.String(), want, stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := runZooKeeperShell(nil, strings.NewReader(""), &stdout, &stderr); code != 1 ||
		stderr.String() != "USAGE: zookeeper-shell zookeeper_host:port[/path] [args...]\n" {
		t.Errorf("no arguments: exit %d, stderr %q", code, stderr.String())
	}
}
