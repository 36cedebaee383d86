package broker_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// kcat runs the real kcat (librdkafka) with args and stdin.
func kcat(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat is not installed; ./scripts/test.sh installs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kcat %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestKcatRoundTrip(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	bootstrap := strings.Join(c.BootstrapAddrs(), ",")
	ctrl := c.WaitForController()

	out := kcat(t, "", "-b", bootstrap, "-L")
	if !strings.Contains(out, " 3 brokers:") {
		t.Fatalf("kcat -L does not list 3 brokers:\n%s", out)
	}
	if !strings.Contains(out, "(controller)") || !strings.Contains(out, "broker "+strconv.Itoa(int(ctrl))+" at") {
		t.Fatalf("kcat -L does not mark broker %d as controller:\n%s", ctrl, out)
	}

	// librdkafka's producer defaults to acks=all, idempotence off.
	kcat(t, "k1:hello\nk2:world\nk3:!\n", "-b", bootstrap, "-t", "kcat-topic", "-P", "-K:")
	c.WaitForLeader("kcat-topic", 0)
	got := kcat(t, "", "-b", bootstrap, "-t", "kcat-topic", "-C", "-o", "beginning", "-e", "-f", "%k=%s@%o\n")
	want := "k1=hello@0\nk2=world@1\nk3=!@2\n"
	if !strings.Contains(got, want) {
		t.Fatalf("kcat -C read:\n%s\nwant:\n%s", got, want)
	}
}
