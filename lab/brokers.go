package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// BrokerControl kills a broker as a crash would (no controlled shutdown:
// its ZooKeeper session is left to expire) and starts it again. The lab
// reaches a cluster only through Kafka and ZooKeeper, so a scenario that
// kills brokers needs one.
type BrokerControl interface {
	KillBroker(ctx context.Context, id int32) error
	RestartBroker(ctx context.Context, id int32) error
}

// CommandBrokers kills and restarts brokers with shell commands in which
// {broker} stands for the broker id: for the local cluster
// "./scripts/cluster.sh kill {broker}" and "./scripts/cluster.sh restart
// {broker}", for the Docker one "docker compose kill kafka{broker}" and
// "docker compose start kafka{broker}".
type CommandBrokers struct {
	Kill, Restart string
}

// KillBroker runs the kill command for broker id.
func (c CommandBrokers) KillBroker(ctx context.Context, id int32) error {
	return runBrokerCommand(ctx, c.Kill, id)
}

// RestartBroker runs the restart command for broker id.
func (c CommandBrokers) RestartBroker(ctx context.Context, id int32) error {
	return runBrokerCommand(ctx, c.Restart, id)
}

func runBrokerCommand(ctx context.Context, template string, id int32) error {
	line := strings.ReplaceAll(template, "{broker}", strconv.Itoa(int(id)))
	out, err := exec.CommandContext(ctx, "sh", "-c", line).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", line, err, bytes.TrimSpace(out))
	}
	return nil
}

// errNoBrokerControl is Run's answer to a scenario that kills brokers
// without a way to.
var errNoBrokerControl = errors.New("the lab cannot kill a broker of an arbitrary cluster: give --kill-command and --restart-command " +
	"({broker} is the id), e.g. --kill-command './scripts/cluster.sh kill {broker}' --restart-command './scripts/cluster.sh restart {broker}'")

// brokerWait bounds the wait for the cluster to notice a killed or
// restarted broker: a ZooKeeper session timeout and a controller's work.
const brokerWait = 2 * time.Minute

// coordinatorWatch follows the group's coordinator as FindCoordinator
// answers it, logging each change.
type coordinatorWatch struct {
	mu   sync.Mutex
	node int32 // -1 until known
	stop context.CancelFunc
	done chan struct{}
}

// watchCoordinator polls the group's coordinator until the returned
// watch is stopped.
func (mr *modeRun) watchCoordinator(ctx context.Context) *coordinatorWatch {
	ctx, stop := context.WithCancel(ctx)
	w := &coordinatorWatch{node: -1, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			resp := mr.r.adm.FindGroupCoordinators(fctx, mr.group)[mr.group]
			cancel()
			if resp.Err == nil {
				w.mu.Lock()
				changed := resp.NodeID != w.node
				w.node = resp.NodeID
				w.mu.Unlock()
				if changed {
					mr.r.add(Event{Mode: mr.mode.Name, Type: TypeCoordinator, Broker: &resp.NodeID})
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *coordinatorWatch) current() int32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.node
}

func (w *coordinatorWatch) close() {
	w.stop()
	<-w.done
}

// victim is the broker the scenario kills: the group's coordinator, or for
// a legacy group, which has none, the leader of partition 0.
func (mr *modeRun) victim(ctx context.Context) (int32, error) {
	if mr.coordinator != nil {
		var id int32
		err := mr.wait(ctx, 0, brokerWait, func(*live) bool {
			id = mr.coordinator.current()
			return id >= 0
		})
		if err != nil {
			return 0, fmt.Errorf("find the coordinator of group %s: %w", mr.group, err)
		}
		return id, nil
	}
	details, err := mr.r.adm.ListTopics(ctx, mr.r.o.Topic)
	if err != nil {
		return 0, fmt.Errorf("find the leader of %s-0: %w", mr.r.o.Topic, err)
	}
	p, ok := details[mr.r.o.Topic].Partitions[0]
	if !ok || p.Leader < 0 {
		return 0, fmt.Errorf("%s-0 has no leader", mr.r.o.Topic)
	}
	return p.Leader, nil
}

// killBroker kills the victim and waits until the cluster noticed: its
// registration gone from the metadata and, for a coordinator group, the
// coordinator moved to another broker.
func (mr *modeRun) killBroker(ctx context.Context) error {
	id, err := mr.victim(ctx)
	if err != nil {
		return err
	}
	mr.r.add(Event{Mode: mr.mode.Name, Type: TypeMarker, Note: MarkKillBroker, Broker: &id})
	if err := mr.r.o.Brokers.KillBroker(ctx, id); err != nil {
		return fmt.Errorf("kill broker %d: %w", id, err)
	}
	mr.killed = &id
	if err := mr.awaitBroker(ctx, id, false); err != nil {
		return err
	}
	if mr.coordinator == nil {
		return nil
	}
	err = mr.wait(ctx, 0, brokerWait, func(*live) bool {
		c := mr.coordinator.current()
		return c >= 0 && c != id
	})
	if err != nil {
		return fmt.Errorf("the coordinator of group %s did not move from broker %d: %w", mr.group, id, err)
	}
	return nil
}

// restartBroker starts the killed broker again and waits until the
// cluster lists it, so that the next mode starts on the whole cluster.
func (mr *modeRun) restartBroker(ctx context.Context) error {
	if mr.killed == nil {
		return errors.New("restart-broker: no broker was killed")
	}
	id := *mr.killed
	mr.r.add(Event{Mode: mr.mode.Name, Type: TypeMarker, Note: MarkRestartBroker, Broker: mr.killed})
	if err := mr.r.o.Brokers.RestartBroker(ctx, id); err != nil {
		return fmt.Errorf("restart broker %d: %w", id, err)
	}
	mr.killed = nil
	return mr.awaitBroker(ctx, id, true)
}

// awaitBroker waits until the cluster's metadata lists broker id (up) or
// no longer does, and logs it.
func (mr *modeRun) awaitBroker(ctx context.Context, id int32, up bool) error {
	deadline := time.Now().Add(brokerWait)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		brokers, err := mr.r.adm.ListBrokers(lctx)
		cancel()
		if err == nil && slices.Contains(brokers.NodeIDs(), id) == up {
			typ := TypeBrokerDown
			if up {
				typ = TypeBrokerUp
			}
			mr.r.add(Event{Mode: mr.mode.Name, Type: typ, Broker: &id})
			return nil
		}
		if err != nil {
			mr.r.log.Info("list brokers", zap.Error(err))
		}
		if time.Now().After(deadline) {
			if up {
				return fmt.Errorf("broker %d is not in the cluster's metadata %v after its restart", id, brokerWait)
			}
			return fmt.Errorf("broker %d is still in the cluster's metadata %v after it was killed", id, brokerWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// restartKilled restarts a broker the scenario killed and did not restart
// (the run was interrupted), so the cluster is left whole.
func (mr *modeRun) restartKilled() {
	if mr.killed == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), brokerWait)
	defer cancel()
	if err := mr.restartBroker(ctx); err != nil {
		mr.r.log.Warn("restart of the killed broker failed", zap.Int32("broker", *mr.killed), zap.Error(err))
	}
}
