package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestRunScale runs the scale run on a small cluster of cluster.sh's: every step completes against
// real broker processes, and the figures come from them.
func TestRunScale(t *testing.T) {
	l := testcluster.StartScripted(t, "ZK_SERVER_HEAP=192")
	pid, err := l.Pid(0)
	if err != nil {
		t.Fatal(err)
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil || !bytes.Contains(cmdline, []byte("\x00-Xmx192m\x00")) {
		t.Errorf("ZooKeeper's command line %q (%v), want -Xmx192m from ZK_SERVER_HEAP", cmdline, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var log bytes.Buffer
	var res *ScaleResult
	res, err = RunScale(ctx, ScaleOptions{Cluster: l, Partitions: 30, Topics: 2, StepTimeout: 2 * time.Minute}, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	names := []string{"create 30 partitions in 2 topics, RF 3", "every replica in sync", "kill -9 the controller", "restart broker",
		"back in every ISR", "preferred leader election", "controlled shutdown of broker", "process exited after SIGTERM", "start broker"}
	if len(res.Steps) != len(names) {
		t.Fatalf("steps %+v, want %d", res.Steps, len(names))
	}
	for i, s := range res.Steps {
		if !strings.Contains(s.Name, names[i]) || s.Took <= 0 {
			t.Errorf("step %d: %q took %v, want %q", i, s.Name, s.Took, names[i])
		}
	}
	if d := res.Steps[2].Detail; !strings.Contains(d, "elected") || !strings.Contains(d, "after the kill") {
		t.Errorf("failover detail %q, want the new controller's election time", d)
	}
	// A third of the partitions each once preferred leadership is back (Kafka's assignment gives each
	// broker 5 of a topic's 15 preferred replicas); the shutdown step names how many the broker led.
	if s := res.Steps[6].Name; !strings.Contains(s, "(leading 10)") {
		t.Errorf("controlled shutdown step %q, want a broker leading 10 of 30", s)
	}
	for _, id := range l.Brokers() {
		if u := res.After[id]; u.RSS <= 0 || u.Files <= res.Before[id].Files {
			t.Errorf("broker %d: before %+v, after %+v; want memory and more open files once it holds the partitions", id, res.Before[id], u)
		}
		if !l.Running(id) {
			t.Errorf("broker %d is not running after the run", id)
		}
	}
	var out bytes.Buffer
	WriteScale(&out, res)
	if !strings.Contains(out.String(), "per 1,000 partitions") || !strings.Contains(out.String(), "(controller)") {
		t.Errorf("report:\n%s", out.String())
	}
}
