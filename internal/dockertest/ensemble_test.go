package dockertest

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
)

// TestEnsemble runs the three-server ZooKeeper of docker-compose.ensemble.yml,
// kills its leader, and checks that the brokers stay registered and the
// cluster keeps serving.
func TestEnsemble(t *testing.T) {
	t.Parallel()
	p := NewProject(t, Ensemble, sessionTimeout)
	p.Up()
	h := newHost(t, p, 3)
	h.waitRegistered("1", "2", "3")
	h.createTopic("before", "1:2:3", "min.insync.replicas=2")

	services := []string{"zookeeper", "zoo2", "zoo3"}
	leader := -1
	wait.For(t, time.Minute, "a ZooKeeper leader", func() bool {
		for i := range services {
			if zkMode(p.ZooKeeperPorts[i]) == "leader" {
				leader = i
				return true
			}
		}
		return false
	})
	MustDocker(t, time.Minute, "kill", p.Container(services[leader]))
	wait.For(t, time.Minute, "a new ZooKeeper leader", func() bool {
		for i := range services {
			if i != leader && zkMode(p.ZooKeeperPorts[i]) == "leader" {
				return true
			}
		}
		return false
	})

	h.waitRegistered("1", "2", "3")
	want := values("quorum-of-two", 10)
	if acked := h.produce(h.seeds(), "before", kgo.AllISRAcks(), 30*time.Second, want); !slices.Equal(acked, want) {
		t.Errorf("with %s killed, acked %v of %v", services[leader], acked, want)
	}
	h.createTopic("after", "3:1:2")
	if acked := h.produce(h.seeds(), "after", kgo.AllISRAcks(), 30*time.Second, want); !slices.Equal(acked, want) {
		t.Errorf("a topic made with %s killed: acked %v of %v", services[leader], acked, want)
	}
	if got := h.consume("before"); !slices.Equal(got, want) {
		t.Errorf("read back %v, want %v", got, want)
	}
}

// zkMode asks the ZooKeeper server on a host port for its mode (standalone,
// leader, follower); "" when it does not answer.
func zkMode(port int) string {
	mode, _ := zkclient.ServerMode(context.Background(), net.JoinHostPort("localhost", strconv.Itoa(port)))
	return mode
}
