package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/coordinator"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// observer watches the cluster through ZooKeeper: who acts as controller (recorded in the history
// whenever it changes) and whether the cluster is whole.
//
// A znode cannot say whether its owner still acts: after kill -9 the dead broker's session, and with
// it /controller, lives on until ZooKeeper expires it, and a paused or cut-off broker's session does
// too. So the fault injector tells the observer which sessions it silenced (suspend), and when
// ZooKeeper itself is unavailable (zkDown); /controller held by a silenced session, or no ZooKeeper,
// counts as no controller.
type observer struct {
	zk *zkclient.Client
	h  *History

	mu        sync.Mutex
	silenced  map[int64]string // session → why its broker cannot act
	zkDown    string           // why ZooKeeper cannot be used, "" when it can
	broker    int32            // the acting controller, -1 for none
	note      string
	reported  bool
	sessionOf map[int32]int64 // the last session seen registered for each broker
}

func newObserver(zkc *zkclient.Client, h *History) *observer {
	return &observer{zk: zkc, h: h, silenced: map[int64]string{}, broker: -1, sessionOf: map[int32]int64{}}
}

// run samples every 100 ms until ctx ends.
func (o *observer) run(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		o.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// controller reads /controller: the broker and its session, or -1.
func (o *observer) controller() (int32, int64, error) {
	data, stat, err := o.zk.Get(zkpaths.Controller)
	if errors.Is(err, zk.ErrNoNode) {
		return -1, 0, nil
	}
	if err != nil {
		return -1, 0, err
	}
	reg, err := zkpaths.DecodeControllerRegistration(data)
	if err != nil {
		return -1, 0, err
	}
	return reg.BrokerID, stat.EphemeralOwner, nil
}

func (o *observer) sample() {
	o.mu.Lock()
	down := o.zkDown
	o.mu.Unlock()
	if down != "" {
		return
	}
	id, session, err := o.controller()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.zkDown != "" {
		return // went down while we read
	}
	switch why, silenced := o.silenced[session]; {
	case err != nil:
		o.setLocked(-1, "ZooKeeper: "+err.Error())
	case id < 0:
		o.setLocked(-1, "no /controller")
	case silenced:
		o.setLocked(-1, fmt.Sprintf("/controller held by broker %d's session, %s", id, why))
	default:
		o.setLocked(id, "")
	}
}

// setLocked records a change of controller.
func (o *observer) setLocked(broker int32, note string) {
	if o.reported && broker == o.broker && (broker >= 0 || note == o.note) {
		return
	}
	o.reported, o.broker, o.note = true, broker, note
	o.h.Add(Op{Type: OpController, Broker: broker, Note: note})
}

// Controller is the broker acting as controller, or -1.
func (o *observer) Controller() int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.broker
}

// session reads the session broker n is registered with (0 if it is not registered).
func (o *observer) session(n int32) int64 {
	_, stat, err := o.zk.Get(zkpaths.BrokerPath(n))
	if err != nil {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.sessionOf[n]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sessionOf[n] = stat.EphemeralOwner
	return stat.EphemeralOwner
}

// silence marks broker n's current session as unable to act, for why (killed, paused, cut off), and
// returns it for unsilence.
func (o *observer) silence(n int32, why string) int64 {
	s := o.session(n)
	o.mu.Lock()
	if s != 0 {
		o.silenced[s] = fmt.Sprintf("%s (broker %d)", why, n)
	}
	o.mu.Unlock()
	o.sample()
	return s
}

// unsilence undoes silence for a session that may still be alive (a broker continued or reconnected).
func (o *observer) unsilence(session int64) {
	o.mu.Lock()
	delete(o.silenced, session)
	o.mu.Unlock()
	o.sample()
}

// setZKDown says ZooKeeper cannot be used (why) or can again ("").
func (o *observer) setZKDown(why string) {
	o.mu.Lock()
	o.zkDown = why
	if why != "" {
		o.setLocked(-1, "ZooKeeper "+why)
	}
	o.mu.Unlock()
	if why == "" {
		o.sample()
	}
}

// whole reports whether the cluster is whole: every broker registered, a live controller, and every
// partition of the topics with a leader and every replica in its ISR. It says what is missing
// otherwise.
func (o *observer) whole(brokers []int32, topics ...string) (bool, string) {
	ids, _, err := o.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		return false, "ZooKeeper: " + err.Error()
	}
	if len(ids) != len(brokers) {
		return false, fmt.Sprintf("%d of %d brokers registered", len(ids), len(brokers))
	}
	if o.Controller() < 0 {
		return false, "no controller"
	}
	for _, topic := range topics {
		children, _, err := o.zk.Children(zkpaths.TopicPartitionsPath(topic))
		if errors.Is(err, zk.ErrNoNode) {
			continue // not created yet
		}
		if err != nil {
			return false, fmt.Sprintf("partitions of %s: %v", topic, err)
		}
		for _, c := range children {
			p, err := strconv.ParseInt(c, 10, 32)
			if err != nil {
				continue
			}
			s, err := o.partitionState(topic, int32(p))
			if err != nil {
				return false, fmt.Sprintf("%s-%d: %v", topic, p, err)
			}
			if s.Leader < 0 || len(s.ISR) < len(brokers) {
				return false, fmt.Sprintf("%s-%d has leader %d and ISR %v", topic, p, s.Leader, s.ISR)
			}
		}
	}
	return true, ""
}

// offsetsLeader is the leader, as ZooKeeper has it, of the __consumer_offsets partition that holds
// group: its coordinator.
func (o *observer) offsetsLeader(group string) (int32, error) {
	const topic = "__consumer_offsets"
	children, _, err := o.zk.Children(zkpaths.TopicPartitionsPath(topic))
	if err != nil {
		return -1, err
	}
	if len(children) == 0 {
		return -1, fmt.Errorf("%s has no partitions", topic)
	}
	s, err := o.partitionState(topic, coordinator.PartitionFor(group, int32(len(children))))
	if err != nil {
		return -1, err
	}
	return s.Leader, nil
}

// partitionState reads a partition's leader and ISR from ZooKeeper.
func (o *observer) partitionState(topic string, p int32) (zkpaths.LeaderAndIsr, error) {
	data, _, err := o.zk.Get(zkpaths.PartitionStatePath(topic, p))
	if err != nil {
		return zkpaths.LeaderAndIsr{}, err
	}
	return zkpaths.DecodeLeaderAndIsr(data)
}
