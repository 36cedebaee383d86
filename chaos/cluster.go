package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkafka/zkafka/internal/pace"
	"github.com/zkafka/zkafka/internal/zkclient"
)

// Cluster is what a run breaks: the processes scripts/cluster.sh runs (Local) or the containers of
// the Docker cluster (Docker). A process is named by an int32: broker N by N, ZooKeeper (every
// server of it) by 0, and server I of an ensemble by ZKServer(I).
type Cluster interface {
	// Brokers are the brokers' ids.
	Brokers() []int32
	// ZooKeeper is the connect string of every ZooKeeper server, from this machine.
	ZooKeeper() string
	// Addr is broker b's address from this machine.
	Addr(b int32) string
	// ZKServerIDs are the ensemble's server ids (none for a single server).
	ZKServerIDs() []int
	// ZKMode asks server i (0 for a single server) for its mode: leader, follower, standalone.
	ZKMode(i int) (string, error)

	Kill(ctx context.Context, n int32) error    // kill -9
	Start(ctx context.Context, n int32) error   // start after a kill or a stop, and wait until it serves
	Stop(ctx context.Context, n int32) error    // SIGTERM: a broker's controlled shutdown
	Restart(ctx context.Context, n int32) error // Stop, then Start
	Pause(ctx context.Context, n int32) error   // SIGSTOP, or the cgroup freezer: alive but silent
	Resume(ctx context.Context, n int32) error
	// Running reports whether n is alive, paused or not (for 0: every ZooKeeper server).
	Running(n int32) bool

	// zkSyncTimeout is ZooKeeper's syncLimit × tickTime: how long a leader and its followers wait
	// on each other.
	zkSyncTimeout() time.Duration
	// network is where partition and slow faults cut or slow brokers' traffic.
	network(h *History) (topology, error)
	// quorum is what zk-split faults cut a ZooKeeper server's quorum traffic with.
	quorum(h *History) (quorumCutter, error)
}

// ZKServer names server i (from 1) of an ensemble.
func ZKServer(i int) int32 { return -int32(i) }

// ensemble reports whether c's ZooKeeper is an ensemble.
func ensemble(c Cluster) bool { return len(c.ZKServerIDs()) > 0 }

// processes are every process of c: each ZooKeeper server, then the brokers.
func processes(c Cluster) []int32 {
	ps := []int32{0}
	if ensemble(c) {
		ps = nil
		for _, i := range c.ZKServerIDs() {
			ps = append(ps, ZKServer(i))
		}
	}
	return append(ps, c.Brokers()...)
}

func processName(n int32) string {
	switch {
	case n == 0:
		return "zookeeper"
	case n < 0:
		return fmt.Sprintf("zookeeper %d", -n)
	}
	return fmt.Sprintf("broker %d", n)
}

// zkLeader is the ensemble's leader, by its servers' own answers.
func zkLeader(c Cluster) (int, error) {
	var errs []error
	for _, i := range c.ZKServerIDs() {
		mode, err := c.ZKMode(i)
		if mode == "leader" {
			return i, nil
		}
		errs = append(errs, err)
	}
	return 0, fmt.Errorf("no ZooKeeper server says it leads: %w", errors.Join(errs...))
}

// ensembleWhole says why the ensemble is not whole ("" when every server serves and one leads, or
// ZooKeeper is a single server).
func ensembleWhole(c Cluster) string {
	leaders := 0
	for _, i := range c.ZKServerIDs() {
		mode, err := c.ZKMode(i)
		if err != nil {
			return fmt.Sprintf("ZooKeeper server %d: %v", i, err)
		}
		if mode == "leader" {
			leaders++
		}
	}
	if ensemble(c) && leaders != 1 {
		return fmt.Sprintf("%d ZooKeeper servers say they lead", leaders)
	}
	return ""
}

// awaitEnsemble waits up to timeout until every server of c's ensemble serves and one leads.
func awaitEnsemble(ctx context.Context, c Cluster, timeout time.Duration) error {
	var why string
	err := pace.Until(ctx, timeout, func() bool {
		why = ensembleWhole(c)
		return why == ""
	})
	if err != nil {
		return fmt.Errorf("the ZooKeeper ensemble is not whole (%s): %w", why, err)
	}
	return nil
}

// zkMode asks the ZooKeeper server at addr for its mode.
func zkMode(addr string) (string, error) { return zkclient.ServerMode(context.Background(), addr) }

// quorumCutter cuts one ZooKeeper server of an ensemble from the others' quorum and election
// traffic, while clients still reach it.
type quorumCutter interface {
	enter(ctx context.Context) error // make ready, before the first cut
	split(k int) error
	heal() error
	leave() error // undo enter
}
