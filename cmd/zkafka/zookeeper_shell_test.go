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
	// zkCli prints the connection event from its event thread, so the
	// block lands before the result, after it, or not at all if the JVM
	// exits first: the real zookeeper-shell.sh behaves the same way.
	const watcher = "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n"
	got := strings.Replace(stdout.String(), watcher, "", 1)
	want := "Connecting to " + connect + "\n{\"version\":5}\n"
	if code != 0 || got != want {
		t.Errorf("exit %d\nstdout %q\nwant   %q (with or without the WATCHER block)\nstderr %q", code, stdout.String(), want, stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := runZooKeeperShell(nil, strings.NewReader(""), &stdout, &stderr); code != 1 ||
		stderr.String() != "USAGE: zookeeper-shell zookeeper_host:port[/path] [args...]\n" {
		t.Errorf("no arguments: exit %d, stderr %q", code, stderr.String())
	}
}
