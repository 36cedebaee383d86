package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zktest"
)

// TestBrokerFromEnvironmentOnly runs `zkafka broker` the way the container
// does: no arguments, everything from KAFKA_* variables, and checks it with
// the healthcheck command.
func TestBrokerFromEnvironmentOnly(t *testing.T) {
	zk := zktest.Start(t, zktest.Options{})
	internal, external := testcluster.FreePort(t), testcluster.FreePort(t)
	dir := t.TempDir()
	var log bytes.Buffer
	cmd := exec.Command(testcluster.Binary(t), "broker")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"KAFKA_BROKER_ID=7",
		"KAFKA_ZOOKEEPER_CONNECT=" + zk.Connect + "/container",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
		fmt.Sprintf("KAFKA_LISTENERS=INTERNAL://127.0.0.1:%d,EXTERNAL://127.0.0.1:%d", internal, external),
		fmt.Sprintf("KAFKA_ADVERTISED_LISTENERS=INTERNAL://127.0.0.1:%d,EXTERNAL://localhost:%d", internal, external),
		"KAFKA_INTER_BROKER_LISTENER_NAME=INTERNAL",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=1",
		"KAFKA_LOG_DIRS=" + filepath.Join(dir, "data"),
		"KAFKA_HEAP_OPTS=-Xmx1G", // a JVM setting: ignored
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	})

	for _, port := range []int{internal, external} {
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		var stdout, stderr bytes.Buffer
		wait.For(t, 30*time.Second, "broker-health on "+addr, func() bool {
			select {
			case <-done:
				t.Fatalf("broker exited: %v\n%s", waitErr, log.String())
			default:
			}
			stdout.Reset()
			stderr.Reset()
			return run([]string{"broker-health", "--bootstrap-server", addr, "--broker-id", "7"}, &stdout, &stderr) == 0
		})
		if want := "ok, broker 7 registered, controller 7"; !strings.Contains(stdout.String(), want) {
			t.Errorf("broker-health on %s printed %q, want %q", addr, stdout.String(), want)
		}
	}

	var stdout, stderr bytes.Buffer
	addr := fmt.Sprintf("127.0.0.1:%d", external)
	if code := run([]string{"broker-health", "--bootstrap-server", addr, "--broker-id", "8"}, &stdout, &stderr); code != 1 {
		t.Errorf("broker-health for an unregistered id: exit %d, want 1", code)
	}
	if want := "broker 8 is not registered"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		if waitErr != nil {
			t.Errorf("broker exit after SIGTERM: %v\n%s", waitErr, log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("broker ignored SIGTERM\n%s", log.String())
	}
	if !strings.Contains(log.String(), "KAFKA_ADVERTISED_LISTENERS") || strings.Contains(log.String(), "KAFKA_HEAP_OPTS") {
		t.Errorf("the start-up log should list the KAFKA_* variables used, and only those:\n%s", log.String())
	}
}

func TestBrokerHealthErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"broker-health", "--frob"}, 2, "flag provided but not defined: -frob"},
		{[]string{"broker-health", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"broker-health", "--bootstrap-server", fmt.Sprintf("127.0.0.1:%d", testcluster.FreePort(t)), "--timeout", "2s"}, 1, "connection refused"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("zkafka %v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("zkafka %v: stderr %q, want it to mention %q", tc.args, stderr.String(), tc.want)
		}
	}
}
