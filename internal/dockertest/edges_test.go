package dockertest

import (
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
