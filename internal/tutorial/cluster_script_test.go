package tutorial

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/wait"
)

// TestClusterScript drives scripts/cluster.sh as a user would: up, produce
// with kcat, kill the leader, consume everything from the survivors, pause
// and resume, restart, restart and kill ZooKeeper, down (data kept), reset (data gone).
func TestClusterScript(t *testing.T) {
	s := newSandbox(t)
	const minute = time.Minute
	// Every broker, so the tools and kcat find the cluster while one is down.
	bootstrap := fmt.Sprintf("localhost:%d,localhost:%d,localhost:%d", s.basePort, s.basePort+1, s.basePort+2)

	out := s.mustRun(2*minute, "./scripts/cluster.sh up")
	if want := fmt.Sprintf("brokers localhost:%d, localhost:%d, localhost:%d", s.basePort, s.basePort+1, s.basePort+2); !strings.Contains(out, want) {
		t.Errorf("up printed %q, want %q", out, want)
	}
	s.expectStatus(map[string]string{"zookeeper": "running", "broker-1": "running", "broker-2": "running", "broker-3": "running"})

	s.mustRun(minute, "./scripts/kafka-topics.sh --bootstrap-server "+bootstrap+" --create --topic e2e --replica-assignment 1:2:3")
	s.await("e2e led by broker 1 with a full ISR", func() bool {
		out, err := s.run(minute, "./scripts/kafka-topics.sh --bootstrap-server "+bootstrap+" --describe --topic e2e")
		return err == nil && regexp.MustCompile(`Leader: 1\s+Replicas: 1,2,3\s+Isr: 1,2,3`).MatchString(out)
	})
	// kcat exits 0 even when deliveries fail; it says so on stderr.
	if out := s.mustRun(minute, "seq 1 100 | kcat -b "+bootstrap+" -t e2e -P -X acks=all"); strings.Contains(out, "failed") {
		t.Fatalf("kcat -P: %s", out)
	}

	s.mustRun(minute, "./scripts/cluster.sh kill 1")
	s.expectStatus(map[string]string{"broker-1": "stopped", "broker-2": "running"})
	// The controller acts once broker 1's ZooKeeper session expires
	// (zookeeper.session.timeout.ms=18000 in config/server-N.properties).
	s.await("broker 2 leading e2e with broker 1 out of the ISR", func() bool {
		out, err := s.run(minute, "./scripts/kafka-topics.sh --bootstrap-server "+bootstrap+" --describe --topic e2e")
		return err == nil && regexp.MustCompile(`Leader: 2\s+Replicas: 1,2,3\s+Isr: 2,3`).MatchString(out)
	})
	// The new leader's high watermark reaches the log end once broker 3
	// fetches from it; until then kcat -e stops short.
	var lines []string
	s.await("kcat to read 1..100 from the survivors", func() bool {
		out, err := s.run(minute, "kcat -b "+bootstrap+" -t e2e -C -o beginning -e -q 2>/dev/null")
		lines = strings.Fields(out)
		return err == nil && len(lines) >= 100
	})
	if len(lines) != 100 || lines[0] != "1" || lines[99] != "100" {
		t.Errorf("consumed %d records after the kill (first %q), want 1..100", len(lines), first(lines))
	}

	s.mustRun(minute, "./scripts/cluster.sh pause 2")
	s.expectStatus(map[string]string{"broker-2": "paused"})
	s.mustRun(minute, "./scripts/cluster.sh resume 2")
	s.expectStatus(map[string]string{"broker-2": "running"})

	s.mustRun(2*minute, "./scripts/cluster.sh restart 1")
	s.expectStatus(map[string]string{"broker-1": "running"})
	// In whatever order: a broker that fell out of the ISR while paused (a loaded machine) rejoins
	// at its end too.
	s.await("broker 1 back in the ISR", func() bool {
		out, err := s.run(minute, "./scripts/kafka-topics.sh --bootstrap-server "+bootstrap+" --describe --topic e2e")
		m := regexp.MustCompile(`Isr: ([0-9,]+)`).FindStringSubmatch(out)
		if err != nil || m == nil {
			return false
		}
		isr := strings.Split(m[1], ",")
		slices.Sort(isr)
		return slices.Equal(isr, []string{"1", "2", "3"})
	})

	// ZooKeeper restarted in place, then killed and restarted: the brokers reconnect within their
	// sessions and keep their registrations (the data directory is kept).
	s.mustRun(2*minute, "./scripts/cluster.sh restart zk")
	s.expectStatus(map[string]string{"zookeeper": "running"})
	s.mustRun(minute, "./scripts/cluster.sh kill zk")
	s.expectStatus(map[string]string{"zookeeper": "stopped", "broker-1": "running"})
	s.mustRun(2*minute, "./scripts/cluster.sh restart zk")
	s.expectStatus(map[string]string{"zookeeper": "running"})
	s.await("all three brokers registered after ZooKeeper's restarts", func() bool {
		out, err := s.run(minute, "./scripts/zookeeper-shell.sh localhost:"+strconv.Itoa(s.zkPort)+" ls /brokers/ids")
		return err == nil && strings.Contains(out, "[1, 2, 3]")
	})

	// Unknown commands and brokers are refused with the usage or a message.
	if out, err := s.run(minute, "./scripts/cluster.sh kill 7"); err == nil || !strings.Contains(out, "unknown broker '7'") {
		t.Errorf("kill 7: %v %q", err, out)
	}
	if out, err := s.run(minute, "./scripts/cluster.sh frobnicate"); err == nil || !strings.Contains(out, "pause N|zk") {
		t.Errorf("frobnicate: %v %q", err, out)
	}

	s.mustRun(2*minute, "./scripts/cluster.sh down")
	s.expectStatus(map[string]string{"zookeeper": "stopped", "broker-1": "stopped", "broker-2": "stopped", "broker-3": "stopped"})
	data := filepath.Join(s.root, "data")
	for _, dir := range []string{"zookeeper", "broker-1/e2e-0"} {
		if _, err := os.Stat(filepath.Join(data, dir)); err != nil {
			t.Errorf("down should keep the data: %v", err)
		}
	}
	s.mustRun(minute, "./scripts/cluster.sh reset")
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("reset left %s: %v", data, err)
	}
}

// expectStatus checks the STATE column of cluster.sh status for some processes.
func (s *sandbox) expectStatus(want map[string]string) {
	s.t.Helper()
	out := s.mustRun(time.Minute, "./scripts/cluster.sh status")
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			got[f[0]] = f[1]
		}
	}
	for proc, state := range want {
		if got[proc] != state {
			s.t.Errorf("status: %s is %q, want %q\n%s", proc, got[proc], state, out)
		}
	}
}

func (s *sandbox) await(what string, cond func() bool) {
	s.t.Helper()
	wait.For(s.t, time.Minute, what, cond)
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}
