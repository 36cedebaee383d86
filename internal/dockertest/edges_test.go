package dockertest

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/wait"
)

// TestBrokerStartEdges: a broker with a bad KAFKA_* value stops with one
// line saying why, and one started before ZooKeeper waits for it instead of
// crash-looping.
func TestBrokerStartEdges(t *testing.T) {
	t.Parallel()
	p := NewProject(t, Single, sessionTimeout)
	p.Override("bad-value.yml", "services:\n  kafka1:\n    environment:\n      KAFKA_NUM_PARTITIONS: \"three\"\n")

	p.MustCompose(2*time.Minute, "up", "-d", "--no-deps", "kafka1", "kafka2")
	bad := p.Container("kafka1")
	var state string
	wait.For(t, time.Minute, "kafka1 with a bad KAFKA_NUM_PARTITIONS stops", func() bool {
		state = strings.TrimSpace(MustDocker(t, time.Minute, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}}", bad))
		return strings.HasPrefix(state, "exited")
	})
	if state != "exited 1 0" {
		t.Errorf("kafka1: status, exit code and restarts %q, want \"exited 1 0\"", state)
	}
	var lines []string
	for _, line := range strings.Split(p.MustCompose(time.Minute, "logs", "--no-color", "kafka1"), "\n") {
		// compose prefixes each line with "<container> | "; v1 also says "Attaching to".
		if _, msg, ok := strings.Cut(line, "| "); ok && strings.TrimSpace(msg) != "" {
			lines = append(lines, msg)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `num.partitions="three"`) {
		t.Errorf("kafka1's logs: %q, want one line naming num.partitions=\"three\"", lines)
	}

	// kafka2 came up with no ZooKeeper: it keeps trying and becomes
	// healthy once ZooKeeper is there, without a restart.
	waiting := p.Container("kafka2")
	if s := strings.TrimSpace(MustDocker(t, time.Minute, "inspect", "--format", "{{.State.Status}}", waiting)); s != "running" {
		t.Fatalf("kafka2 before ZooKeeper: %s\n%s", s, p.logs("kafka2"))
	}
	p.Up("zookeeper")
	p.WaitHealthy("kafka2")
	if n := strings.TrimSpace(MustDocker(t, time.Minute, "inspect", "--format", "{{.RestartCount}}", waiting)); n != "0" {
		t.Errorf("kafka2 restarted %s times waiting for ZooKeeper", n)
	}
}

// TestHostPortTaken: a host port another program holds stops `up` with
// Docker's own error naming it, and the ZKAFKA_* variable that moves it
// (what README tells the user to set) brings the service up.
func TestHostPortTaken(t *testing.T) {
	t.Parallel()
	p := NewProject(t, Single, sessionTimeout)
	taken := p.ZooKeeperPorts[0]
	l, err := net.Listen("tcp", ":"+strconv.Itoa(taken))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out, err := p.Compose(2*time.Minute, "up", "-d", "zookeeper")
	if err == nil {
		t.Fatalf("up with host port %d taken succeeded:\n%s", taken, out)
	}
	if !strings.Contains(out, "address already in use") && !strings.Contains(out, "port is already allocated") {
		t.Errorf("up with host port %d taken: %v\n%s\nwant Docker's \"address already in use\" or \"port is already allocated\"", taken, err, out)
	}
	if !strings.Contains(out, strconv.Itoa(taken)) {
		t.Errorf("the error does not name port %d:\n%s", taken, out)
	}
	p.ZooKeeperPorts[0] = reservePort(t) // ZKAFKA_ZK_PORT, as README says
	p.Up("zookeeper")
}
