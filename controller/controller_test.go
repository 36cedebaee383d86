package controller

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// activeOnes returns the controllers that consider themselves active.
func activeOnes(ctls []*Controller) []*Controller {
	var active []*Controller
	for _, c := range ctls {
		if c.IsActive() {
			active = append(active, c)
		}
	}
	return active
}

func TestElection(t *testing.T) {
	c := newCluster(t)
	ctls := make([]*Controller, 3)
	sessions := make([]*zkclient.Client, 3)
	for i := range ctls {
		ctls[i], sessions[i] = c.startController(int32(i+1), false)
	}
	indexOf := func(ctl *Controller) int { return slices.Index(ctls, ctl) }

	// Three controllers race: exactly one wins epoch 1, and everyone agrees on it.
	var winner *Controller
	wait.For(t, waitTimeout, "one active controller known to all", func() bool {
		active := activeOnes(ctls)
		if len(active) != 1 {
			return false
		}
		winner = active[0]
		for _, ctl := range ctls {
			if ctl.ActiveControllerID() != winner.cfg.BrokerID {
				return false
			}
		}
		return true
	})
	if id, epoch := c.controllerZnode(); id != winner.cfg.BrokerID || epoch != 1 {
		t.Fatalf("/controller names %d with epoch %d, want %d with epoch 1", id, epoch, winner.cfg.BrokerID)
	}
	if winner.Epoch() != 1 {
		t.Fatalf("winner's epoch %d, want 1", winner.Epoch())
	}

	// The winner's session expires: another broker becomes controller with epoch 2, and the old
	// winner resigns.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := sessions[indexOf(winner)].ForceExpire(ctx); err != nil {
		t.Fatal(err)
	}
	expired := winner
	wait.For(t, waitTimeout, "a new controller after the session expiry", func() bool {
		active := activeOnes(ctls)
		if len(active) != 1 || active[0] == expired || active[0].Epoch() != 2 {
			return false
		}
		winner = active[0]
		id, epoch := c.controllerZnode()
		return id == winner.cfg.BrokerID && epoch == 2 && expired.ActiveControllerID() == winner.cfg.BrokerID
	})

	// The new winner stops and closes its session: a third election gives epoch 3.
	winner.Stop()
	if err := sessions[indexOf(winner)].Close(); err != nil {
		t.Fatal(err)
	}
	stopped := winner
	if stopped.IsActive() || stopped.ActiveControllerID() != -1 {
		t.Fatalf("stopped controller: active %v, knows controller %d", stopped.IsActive(), stopped.ActiveControllerID())
	}
	wait.For(t, waitTimeout, "a new controller after Stop", func() bool {
		active := activeOnes(ctls)
		if len(active) != 1 || active[0] == stopped || active[0].Epoch() != 3 {
			return false
		}
		id, epoch := c.controllerZnode()
		return id == active[0].cfg.BrokerID && epoch == 3
	})
}

func TestZombieControllerIsFenced(t *testing.T) {
	c := newCluster(t)
	c.registerBroker(1)
	ctl, _ := c.startController(1, false)
	wait.For(t, waitTimeout, "controller 1 active", func() bool { return ctl.IsActive() && ctl.Epoch() == 1 })

	// Another controller is elected behind this one's back: /controller_epoch moves on (an
	// election is the only writer of it), and no watch tells controller 1.
	if _, err := c.admin.Set(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(2), -1); err != nil {
		t.Fatal(err)
	}
	c.createTopic("t", map[int32][]int32{0: {1}})

	// Its fenced write of t-0's state fails; it resigns, and (since /controller still names it)
	// forces a new election, which it wins with epoch 3 and then creates the state.
	c.waitState("t", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, ControllerEpoch: 3})
	if !c.logged("Controller moved to another broker; resigning") || !c.logged("Resigned as the controller") {
		t.Error("no resignation was logged")
	}
	if _, version, _ := c.state("t", 0); version != 0 {
		t.Errorf("state znode has zkVersion %d: it was written more than once", version)
	}
	if !ctl.IsActive() || ctl.Epoch() != 3 {
		t.Errorf("controller active %v with epoch %d, want active with epoch 3", ctl.IsActive(), ctl.Epoch())
	}
	for _, req := range c.sent.to(1) {
		if l, ok := req.(*kmsg.LeaderAndISRRequest); ok && l.ControllerEpoch != 3 {
			t.Errorf("LeaderAndIsr sent with controller epoch %d; only epoch 3 knew topic t", l.ControllerEpoch)
		}
	}
}

func TestTopicCreation(t *testing.T) {
	c := newCluster(t)
	for id := int32(1); id <= 4; id++ {
		c.registerBroker(id)
	}
	ctl, _ := c.startController(1, false)
	wait.For(t, waitTimeout, "controller active", ctl.IsActive)

	// Broker 5 is not registered: t-3 comes online on its other replica.
	assignment := map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}, 3: {5, 1}}
	topicID := c.createTopic("orders", assignment)
	leaders := map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}, 3: {1}}
	for p, isr := range leaders {
		c.waitState("orders", p, zkpaths.LeaderAndIsr{Leader: isr[0], LeaderEpoch: 0, ISR: isr, ControllerEpoch: 1})
	}

	for p, replicas := range assignment {
		for _, broker := range replicas {
			if broker == 5 {
				continue
			}
			var (
				req *kmsg.LeaderAndISRRequest
				id  [16]byte
				ps  *kmsg.LeaderAndISRRequestTopicPartition
			)
			wait.For(t, waitTimeout, "LeaderAndIsr for a new partition", func() bool {
				req, id, ps = c.sent.leaderAndISR(broker, "orders", p)
				return ps != nil
			})
			if req.Version != 5 || req.ControllerID != 1 || req.ControllerEpoch != 1 || req.Type != 0 ||
				req.BrokerEpoch != c.brokerEpoch(broker) {
				t.Errorf("LeaderAndIsr to %d: version %d controller %d epoch %d type %d broker epoch %d",
					broker, req.Version, req.ControllerID, req.ControllerEpoch, req.Type, req.BrokerEpoch)
			}
			if id != topicID {
				t.Errorf("LeaderAndIsr to %d: topic id %x, want %x", broker, id, topicID)
			}
			isr := leaders[p]
			if !ps.IsNew || ps.Leader != isr[0] || ps.LeaderEpoch != 0 || !slices.Equal(ps.ISR, isr) ||
				ps.ZKVersion != 0 || !slices.Equal(ps.Replicas, replicas) || ps.ControllerEpoch != 1 {
				t.Errorf("LeaderAndIsr to %d for orders-%d: %+v", broker, p, ps)
			}
			if !slices.ContainsFunc(req.LiveLeaders, func(l kmsg.LeaderAndISRRequestLiveLeader) bool {
				return l.BrokerID == isr[0] && l.Host == "127.0.0.1" && l.Port == brokerPort(isr[0])
			}) {
				t.Errorf("LeaderAndIsr to %d lacks live leader %d: %+v", broker, isr[0], req.LiveLeaders)
			}
		}
	}
	if req, _, _ := c.sent.leaderAndISR(4, "orders", 0); req != nil {
		t.Errorf("broker 4 hosts no replica of orders but got LeaderAndIsr")
	}

	// Every broker gets UpdateMetadata with all four partitions, after its LeaderAndIsr.
	for broker := int32(1); broker <= 4; broker++ {
		wait.For(t, waitTimeout, "UpdateMetadata for every partition", func() bool {
			for p := range assignment {
				if _, _, ps := c.sent.updateMetadata(broker, "orders", p); ps == nil {
					return false
				}
			}
			return true
		})
		req, id, ps := c.sent.updateMetadata(broker, "orders", 3)
		if req.Version != 7 || req.ControllerEpoch != 1 || req.BrokerEpoch != c.brokerEpoch(broker) || id != topicID {
			t.Errorf("UpdateMetadata to %d: version %d epoch %d broker epoch %d topic id %x",
				broker, req.Version, req.ControllerEpoch, req.BrokerEpoch, id)
		}
		if ps.Leader != 1 || !slices.Equal(ps.Replicas, []int32{5, 1}) || !slices.Equal(ps.OfflineReplicas, []int32{5}) {
			t.Errorf("UpdateMetadata to %d for orders-3: %+v", broker, ps)
		}
		if len(req.LiveBrokers) != 4 {
			t.Fatalf("UpdateMetadata to %d lists %d live brokers, want 4", broker, len(req.LiveBrokers))
		}
		for i, lb := range req.LiveBrokers {
			id := int32(i + 1)
			want := kmsg.UpdateMetadataRequestLiveBrokerEndpoint{Port: brokerPort(id), Host: "127.0.0.1", ListenerName: "PLAINTEXT", SecurityProtocol: 0}
			if lb.ID != id || len(lb.Endpoints) != 1 || lb.Endpoints[0].Port != want.Port || lb.Endpoints[0].Host != want.Host ||
				lb.Endpoints[0].ListenerName != want.ListenerName || lb.Endpoints[0].SecurityProtocol != 0 || lb.Rack != nil {
				t.Errorf("UpdateMetadata to %d: live broker %+v", broker, lb)
			}
		}
		lai, um := -1, -1
		for i, r := range c.sent.to(broker) {
			if l, ok := r.(*kmsg.LeaderAndISRRequest); ok && lai < 0 && len(l.TopicStates) > 0 {
				lai = i
			}
			if u, ok := r.(*kmsg.UpdateMetadataRequest); ok && um < 0 && len(u.TopicStates) > 0 {
				um = i
			}
		}
		if broker != 4 && lai > um {
			t.Errorf("broker %d got UpdateMetadata for orders (request %d) before LeaderAndIsr (request %d)", broker, um, lai)
		}
	}

	// Adding a partition rewrites the assignment; only the new partition is created.
	added := zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}, 3: {5, 1}, 4: {4, 2}}}
	data, stat, err := c.admin.Get(zkpaths.TopicPath("orders"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	added.TopicID = old.TopicID
	if _, err := c.admin.Set(zkpaths.TopicPath("orders"), added.Encode(), stat.Version); err != nil {
		t.Fatal(err)
	}
	c.waitState("orders", 4, zkpaths.LeaderAndIsr{Leader: 4, LeaderEpoch: 0, ISR: []int32{4, 2}, ControllerEpoch: 1})
	wait.For(t, waitTimeout, "LeaderAndIsr for the added partition", func() bool {
		_, _, ps := c.sent.leaderAndISR(4, "orders", 4)
		return ps != nil && ps.IsNew && ps.Leader == 4
	})
	for p := range assignment {
		if _, version, _ := c.state("orders", p); version != 0 {
			t.Errorf("orders-%d was rewritten when partition 4 was added", p)
		}
	}
}

func TestBrokerFailureAndRestart(t *testing.T) {
	c := newCluster(t)
	c.registerBroker(1)
	broker2 := c.registerBroker(2)
	c.registerBroker(3)
	ctl, _ := c.startController(1, false)
	wait.For(t, waitTimeout, "controller active", ctl.IsActive)

	c.createTopic("t", map[int32][]int32{0: {2, 1, 3}, 1: {1, 2, 3}, 2: {2}})
	c.waitState("t", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 0, ISR: []int32{2, 1, 3}, ControllerEpoch: 1})
	c.waitState("t", 1, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2, 3}, ControllerEpoch: 1})
	c.waitState("t", 2, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 0, ISR: []int32{2}, ControllerEpoch: 1})

	// Broker 2 dies. t-0 gets a new leader from its ISR; 2 leaves t-1's ISR; t-2, whose only
	// replica died, is left without a leader but keeps its ISR.
	if err := broker2.Close(); err != nil {
		t.Fatal(err)
	}
	c.waitState("t", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: []int32{1, 3}, ControllerEpoch: 1})
	c.waitState("t", 1, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: []int32{1, 3}, ControllerEpoch: 1})
	c.waitState("t", 2, zkpaths.LeaderAndIsr{Leader: -1, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: 1})
	if !c.logged("Changed partition t-0 from OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=1, isr=1,3, zkVersion=1)") {
		t.Error("the state change of t-0 was not logged as Kafka does")
	}
	for _, broker := range []int32{1, 3} {
		wait.For(t, waitTimeout, "LeaderAndIsr with t-0's new leader", func() bool {
			_, _, ps := c.sent.leaderAndISR(broker, "t", 0)
			return ps != nil && ps.Leader == 1 && ps.LeaderEpoch == 1 && slices.Equal(ps.ISR, []int32{1, 3}) && !ps.IsNew
		})
		wait.For(t, waitTimeout, "UpdateMetadata with t-2 offline", func() bool {
			req, _, ps := c.sent.updateMetadata(broker, "t", 2)
			return ps != nil && ps.Leader == -1 && slices.Equal(ps.OfflineReplicas, []int32{2}) && len(req.LiveBrokers) == 2
		})
	}

	// Broker 2 comes back with a new broker epoch: it leads t-2 again, and learns every
	// partition's state.
	c.registerBroker(2)
	c.waitState("t", 2, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 2, ISR: []int32{2}, ControllerEpoch: 1})
	epoch := c.brokerEpoch(2)
	wait.For(t, waitTimeout, "LeaderAndIsr to the restarted broker", func() bool {
		req, _, ps := c.sent.leaderAndISR(2, "t", 2)
		if ps == nil || ps.Leader != 2 || ps.LeaderEpoch != 2 || req.BrokerEpoch != epoch {
			return false
		}
		req, _, ps = c.sent.leaderAndISR(2, "t", 0)
		return ps != nil && ps.Leader == 1 && ps.LeaderEpoch == 1 && req.BrokerEpoch == epoch
	})
	wait.For(t, waitTimeout, "UpdateMetadata to the restarted broker", func() bool {
		req, _, ps := c.sent.updateMetadata(2, "t", 1)
		return ps != nil && req.BrokerEpoch == epoch && len(req.LiveBrokers) == 3
	})
	for p, want := range map[int32]int32{0: 1, 1: 1} {
		if l, _, _ := c.state("t", p); l.Leader != want || l.LeaderEpoch != 1 {
			t.Errorf("t-%d changed on broker 2's return: %+v", p, l)
		}
	}
}

// TestFailover: a new controller's picture of the cluster, read once through its own session
// alone and once with every partition-state read spread over its read sessions too.
func TestFailover(t *testing.T) {
	t.Run("own session", func(t *testing.T) { testFailover(t, 0) })
	t.Run("read sessions", func(t *testing.T) { testFailover(t, 1) })
}

func testFailover(t *testing.T, bulkReadMin int) {
	c := newCluster(t)
	c.bulkReadMin = bulkReadMin
	c.registerBroker(2)
	c.registerBroker(3)
	// What a previous controller (epoch 4) left behind; broker 1 has died since.
	old := func(leader int32, isr ...int32) zkpaths.LeaderAndIsr {
		return zkpaths.LeaderAndIsr{Leader: leader, LeaderEpoch: 5, ISR: isr, ControllerEpoch: 4}
	}
	if _, err := c.admin.Create(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(4), 0, nil); err != nil {
		t.Fatal(err)
	}
	c.createTopic("clean", map[int32][]int32{0: {1, 2, 3}})
	c.writeState("clean", 0, old(1, 1, 2))
	c.createTopic("stuck", map[int32][]int32{0: {1, 2}})
	c.writeState("stuck", 0, old(1, 1))
	c.createTopic("unclean", map[int32][]int32{0: {1, 3, 2}})
	c.writeState("unclean", 0, old(1, 1))
	cfg := zkpaths.EntityConfig{Config: map[string]string{"unclean.leader.election.enable": "true"}}
	if err := c.admin.CreateIfMissing(zkpaths.TopicConfigPath("unclean"), cfg.Encode()); err != nil {
		t.Fatal(err)
	}
	c.createTopic("follower", map[int32][]int32{0: {2, 1}})
	c.writeState("follower", 0, old(2, 2, 1))
	c.createTopic("fresh", map[int32][]int32{0: {1, 3}})
	// A topic written by a pre-2.8 tool, without a topic id.
	if _, err := c.admin.Create(zkpaths.TopicPath("legacy"), []byte(`{"version":1,"partitions":{"0":[3]}}`), 0, nil); err != nil {
		t.Fatal(err)
	}

	// Unreadable assignments are skipped, as Kafka skips them.
	if _, err := c.admin.Create(zkpaths.TopicPath("broken"), []byte("not json"), 0, nil); err != nil {
		t.Fatal(err)
	}

	ctl, _ := c.startController(2, false)
	wait.For(t, waitTimeout, "controller active", ctl.IsActive)
	if ctl.Epoch() != 5 {
		t.Fatalf("epoch %d, want 5", ctl.Epoch())
	}
	// As in Kafka, the replica state machine starts first: replicas on the dead broker 1 leave
	// every ISR (leader -1 where they led, epoch + 1); then the partition state machine elects
	// leaders for the partitions left without one (epoch + 1 again).
	c.waitState("clean", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 7, ISR: []int32{2}, ControllerEpoch: 5})
	c.waitState("stuck", 0, zkpaths.LeaderAndIsr{Leader: -1, LeaderEpoch: 6, ISR: []int32{1}, ControllerEpoch: 5})
	c.waitState("unclean", 0, zkpaths.LeaderAndIsr{Leader: 3, LeaderEpoch: 7, ISR: []int32{3}, ControllerEpoch: 5})
	c.waitState("follower", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 6, ISR: []int32{2}, ControllerEpoch: 5})
	c.waitState("fresh", 0, zkpaths.LeaderAndIsr{Leader: 3, LeaderEpoch: 0, ISR: []int32{3}, ControllerEpoch: 5})
	c.waitState("legacy", 0, zkpaths.LeaderAndIsr{Leader: 3, LeaderEpoch: 0, ISR: []int32{3}, ControllerEpoch: 5})

	data, _, err := c.admin.Get(zkpaths.TopicPath("legacy"))
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil || legacy.TopicID == "" {
		t.Fatalf("legacy topic got no topic id: %s (%v)", data, err)
	}
	legacyID, _ := zkpaths.ParseUUID(legacy.TopicID)

	// The first UpdateMetadata each broker gets carries the broker list alone; later every live
	// replica gets LeaderAndIsr with its partitions' state and every broker all partitions.
	for _, broker := range []int32{2, 3} {
		wait.For(t, waitTimeout, "the failover's requests", func() bool {
			_, _, ps := c.sent.leaderAndISR(broker, "unclean", 0)
			_, _, um := c.sent.updateMetadata(broker, "stuck", 0)
			return ps != nil && ps.Leader == 3 && ps.LeaderEpoch == 7 && um != nil && um.Leader == -1
		})
		first, ok := c.sent.to(broker)[0].(*kmsg.UpdateMetadataRequest)
		if !ok || len(first.TopicStates) != 0 || len(first.LiveBrokers) != 2 {
			t.Errorf("first request to %d is not a broker-list UpdateMetadata: %+v", broker, c.sent.to(broker)[0])
		}
	}
	wait.For(t, waitTimeout, "LeaderAndIsr for the legacy topic with its new id", func() bool {
		_, id, ps := c.sent.leaderAndISR(3, "legacy", 0)
		return ps != nil && id == legacyID
	})
}
