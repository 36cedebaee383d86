package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Tests of the controller's admin work against fake brokers: topic deletion, controlled
// shutdown, ISR change notifications, unclean election on a config change, reassignment
// phases, preferred elections and auto-rebalance.

func TestReplicaStateTransitionTable(t *testing.T) {
	valid := [][2]replicaState{
		{nonExistentReplica, newReplica}, {newReplica, onlineReplica}, {offlineReplica, onlineReplica},
		{replicaDeletionIneligible, onlineReplica}, {onlineReplica, offlineReplica}, {offlineReplica, replicaDeletionStarted},
		{replicaDeletionStarted, replicaDeletionSuccessful}, {replicaDeletionStarted, replicaDeletionIneligible},
		{replicaDeletionSuccessful, nonExistentReplica},
	}
	invalid := [][2]replicaState{
		{onlineReplica, newReplica}, {onlineReplica, replicaDeletionStarted}, {nonExistentReplica, onlineReplica},
		{replicaDeletionSuccessful, onlineReplica}, {offlineReplica, nonExistentReplica}, {newReplica, replicaDeletionSuccessful},
	}
	for _, tr := range valid {
		if !validReplicaTransition(tr[0], tr[1]) {
			t.Errorf("%s -> %s should be valid", tr[0], tr[1])
		}
	}
	for _, tr := range invalid {
		if validReplicaTransition(tr[0], tr[1]) {
			t.Errorf("%s -> %s should be invalid", tr[0], tr[1])
		}
	}
}

// stopReplicas returns the StopReplica partition states broker id received for topic.
func (r *recorder) stopReplicas(id int32, topic string) []kmsg.StopReplicaRequestTopicPartitionState {
	var out []kmsg.StopReplicaRequestTopicPartitionState
	for _, req := range r.to(id) {
		if sr, ok := req.(*kmsg.StopReplicaRequest); ok {
			for _, t := range sr.Topics {
				if t.Topic == topic {
					out = append(out, t.PartitionStates...)
				}
			}
		}
	}
	return out
}

func (c *cluster) exists(path string) bool {
	c.t.Helper()
	ok, _, err := c.admin.Exists(path)
	if err != nil {
		c.t.Fatal(err)
	}
	return ok
}

// startControllerWith starts broker id's controller with cfg on its own session and, if
// active, waits until it is the active controller.
func (c *cluster) startControllerWith(id int32, cfg Config, active bool) *Controller {
	c.t.Helper()
	zkc := c.session()
	cfg.BrokerID, cfg.Logger, cfg.Dial = id, c.logger, c.sent.dial
	ctl := New(cfg, zkc)
	ctl.Start(context.Background())
	c.t.Cleanup(ctl.Stop)
	if active {
		wait.For(c.t, waitTimeout, "controller active", ctl.IsActive)
	}
	return ctl
}

func TestTopicDeletion(t *testing.T) {
	c := newCluster(t)
	c.registerBroker(1)
	broker2 := c.registerBroker(2)
	c.registerBroker(3)
	c.startControllerWith(1, Config{DeleteTopicEnable: true}, true)
	c.createTopic("gone", map[int32][]int32{0: {1, 2}, 1: {2, 3}})
	if err := c.admin.CreateIfMissing(zkpaths.TopicConfigPath("gone"), zkpaths.EntityConfig{Config: map[string]string{}}.Encode()); err != nil {
		t.Fatal(err)
	}
	c.waitState("gone", 1, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 0, ISR: []int32{2, 3}, ControllerEpoch: 1})
	if _, err := c.admin.Create(zkpaths.DeleteTopicPath("gone"), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the topic's znodes to go", func() bool {
		return !c.exists(zkpaths.TopicPath("gone")) && !c.exists(zkpaths.TopicConfigPath("gone")) && !c.exists(zkpaths.DeleteTopicPath("gone"))
	})
	// Every replica got StopReplica with delete and the deletion epoch; every broker was told
	// leader -2 first.
	for broker, partitions := range map[int32][]int32{1: {0}, 2: {0, 1}, 3: {1}} {
		var deleted []int32
		for _, ps := range c.sent.stopReplicas(broker, "gone") {
			if ps.Delete && ps.LeaderEpoch == epochDuringDelete {
				deleted = append(deleted, ps.Partition)
			}
		}
		slices.Sort(deleted)
		if !slices.Equal(slices.Compact(deleted), partitions) {
			t.Errorf("broker %d deleted partitions %v, want %v", broker, deleted, partitions)
		}
		if _, _, ps := c.sent.updateMetadata(broker, "gone", 0); ps == nil || ps.Leader != leaderDuringDelete {
			t.Errorf("broker %d: last UpdateMetadata of gone-0 %+v, want leader -2", broker, ps)
		}
	}

	// A deletion waits while a replica's broker is down and completes when it returns.
	c.createTopic("waits", map[int32][]int32{0: {1, 2}})
	c.waitState("waits", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1})
	if err := broker2.Close(); err != nil {
		t.Fatal(err)
	}
	c.waitState("waits", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: []int32{1}, ControllerEpoch: 1})
	if _, err := c.admin.Create(zkpaths.DeleteTopicPath("waits"), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the live replica to be deleted", func() bool {
		return slices.ContainsFunc(c.sent.stopReplicas(1, "waits"), func(ps kmsg.StopReplicaRequestTopicPartitionState) bool { return ps.Delete })
	})
	if !c.exists(zkpaths.TopicPath("waits")) || !c.exists(zkpaths.DeleteTopicPath("waits")) {
		t.Fatal("the deletion completed while a replica's broker was down")
	}
	c.registerBroker(2)
	wait.For(t, waitTimeout, "the deletion to complete once broker 2 is back", func() bool {
		return !c.exists(zkpaths.TopicPath("waits")) && !c.exists(zkpaths.DeleteTopicPath("waits"))
	})
	if !slices.ContainsFunc(c.sent.stopReplicas(2, "waits"), func(ps kmsg.StopReplicaRequestTopicPartitionState) bool { return ps.Delete }) {
		t.Error("the returned broker was not told to delete its replica")
	}
}

func TestTopicDeletionDisabled(t *testing.T) {
	c := newCluster(t)
	c.registerBroker(1)
	c.startControllerWith(1, Config{}, true)
	c.createTopic("kept", map[int32][]int32{0: {1}})
	c.waitState("kept", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, ControllerEpoch: 1})
	if _, err := c.admin.Create(zkpaths.DeleteTopicPath("kept"), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the request to be removed", func() bool { return !c.exists(zkpaths.DeleteTopicPath("kept")) })
	if !c.exists(zkpaths.TopicPath("kept")) {
		t.Error("the topic was deleted with delete.topic.enable off")
	}
}

func TestControlledShutdown(t *testing.T) {
	c := newCluster(t)
	for id := int32(1); id <= 3; id++ {
		c.registerBroker(id)
	}
	ctl := c.startControllerWith(2, Config{}, true)
	c.createTopic("cs", map[int32][]int32{0: {1, 2, 3}, 1: {2, 1, 3}, 2: {1}, 3: {1, 3}})
	c.waitState("cs", 3, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 3}, ControllerEpoch: 1})
	// cs-3's ISR shrinks to broker 1 alone (its leader's doing): nobody can take over.
	_, version, _ := c.state("cs", 3)
	shrunk := zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, ControllerEpoch: 1}
	if _, err := c.admin.Set(zkpaths.PartitionStatePath("cs", 3), shrunk.Encode(), version); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := ctl.ControlledShutdown(ctx, 1, c.brokerEpoch(1)-1); !errors.Is(err, kerr.StaleBrokerEpoch) {
		t.Errorf("stale epoch: %v, want STALE_BROKER_EPOCH", err)
	}
	if _, err := ctl.ControlledShutdown(ctx, 9, -1); !errors.Is(err, kerr.BrokerNotAvailable) {
		t.Errorf("unknown broker: %v, want BROKER_NOT_AVAILABLE", err)
	}
	remaining, err := ctl.ControlledShutdown(ctx, 1, c.brokerEpoch(1))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(remaining, []kafka.TopicPartition{{Topic: "cs", Partition: 3}}) {
		t.Errorf("remaining partitions %v, want cs-3 only (cs-2 has one replica)", remaining)
	}
	c.waitState("cs", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 3}, ControllerEpoch: 1})
	c.waitState("cs", 1, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 3}, ControllerEpoch: 1})
	c.waitState("cs", 2, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, ControllerEpoch: 1})
	wait.For(t, waitTimeout, "StopReplica without delete for the partition broker 1 follows", func() bool {
		return slices.ContainsFunc(c.sent.stopReplicas(1, "cs"), func(ps kmsg.StopReplicaRequestTopicPartitionState) bool {
			return ps.Partition == 1 && !ps.Delete
		})
	})
	// A stopping broker may not lead: a new partition with it first goes to the next replica.
	c.createTopic("later", map[int32][]int32{0: {1, 3}})
	c.waitState("later", 0, zkpaths.LeaderAndIsr{Leader: 3, LeaderEpoch: 0, ISR: []int32{3}, ControllerEpoch: 1})

	if _, err := c.startControllerWith(3, Config{}, false).ControlledShutdown(ctx, 1, -1); !errors.Is(err, kerr.NotController) {
		t.Errorf("ControlledShutdown to a standby: %v, want NOT_CONTROLLER", err)
	}
}

func TestIsrChangeNotification(t *testing.T) {
	c := newCluster(t)
	c.registerBroker(1)
	c.registerBroker(2)
	c.startControllerWith(1, Config{}, true)
	c.createTopic("n", map[int32][]int32{0: {1, 2}})
	c.waitState("n", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1})
	// The leader shrinks the ISR itself, then announces it.
	_, version, _ := c.state("n", 0)
	if _, err := c.admin.Set(zkpaths.PartitionStatePath("n", 0), zkpaths.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}.Encode(), version); err != nil {
		t.Fatal(err)
	}
	note := zkpaths.IsrChangeNotificationData{Partitions: []kafka.TopicPartition{{Topic: "n", Partition: 0}}}
	if _, err := c.admin.Create(zkpaths.IsrChangePrefix, note.Encode(), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for _, broker := range []int32{1, 2} {
		wait.For(t, waitTimeout, "UpdateMetadata with the shrunk ISR", func() bool {
			_, _, ps := c.sent.updateMetadata(broker, "n", 0)
			return ps != nil && slices.Equal(ps.ISR, []int32{1}) && ps.ZKVersion == version+1
		})
	}
	wait.For(t, waitTimeout, "the notification to be deleted", func() bool {
		children, _, err := c.admin.Children(zkpaths.IsrChangeNotification)
		return err == nil && len(children) == 0
	})
}

func TestUncleanElectionAfterConfigChange(t *testing.T) {
	c := newCluster(t)
	broker1 := c.registerBroker(1)
	c.registerBroker(2)
	ctl := c.startControllerWith(2, Config{}, true)
	c.createTopic("u", map[int32][]int32{0: {1, 2}})
	c.waitState("u", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1})
	_, version, _ := c.state("u", 0)
	if _, err := c.admin.Set(zkpaths.PartitionStatePath("u", 0), zkpaths.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}.Encode(), version); err != nil {
		t.Fatal(err)
	}
	if err := broker1.Close(); err != nil {
		t.Fatal(err)
	}
	c.waitState("u", 0, zkpaths.LeaderAndIsr{Leader: -1, LeaderEpoch: 1, ISR: []int32{1}, ControllerEpoch: 1})

	cfg := zkpaths.EntityConfig{Config: map[string]string{uncleanLeaderElectionConfig: "true"}}
	if err := c.admin.CreateIfMissing(zkpaths.TopicConfigPath("u"), cfg.Encode()); err != nil {
		t.Fatal(err)
	}
	ctl.TopicConfigChanged("u")
	c.waitState("u", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 2, ISR: []int32{2}, ControllerEpoch: 1})
}

func TestUncleanElectionAfterBrokerConfigChange(t *testing.T) {
	c := newCluster(t)
	broker1 := c.registerBroker(1)
	c.registerBroker(2)
	ctl := c.startControllerWith(2, Config{}, true)
	c.createTopic("v", map[int32][]int32{0: {1, 2}})
	c.waitState("v", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1})
	_, version, _ := c.state("v", 0)
	if _, err := c.admin.Set(zkpaths.PartitionStatePath("v", 0), zkpaths.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}.Encode(), version); err != nil {
		t.Fatal(err)
	}
	if err := broker1.Close(); err != nil {
		t.Fatal(err)
	}
	c.waitState("v", 0, zkpaths.LeaderAndIsr{Leader: -1, LeaderEpoch: 1, ISR: []int32{1}, ControllerEpoch: 1})
	ctl.BrokerConfigChanged(true)
	c.waitState("v", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 2, ISR: []int32{2}, ControllerEpoch: 1})
}

// assignment reads /brokers/topics/<t>.
func (c *cluster) assignment(topic string) zkpaths.TopicAssignment {
	c.t.Helper()
	data, _, err := c.admin.Get(zkpaths.TopicPath(topic))
	if err != nil {
		c.t.Fatal(err)
	}
	a, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		c.t.Fatal(err)
	}
	return a
}

func TestReassignmentPhases(t *testing.T) {
	c := newCluster(t)
	for id := int32(1); id <= 3; id++ {
		c.registerBroker(id)
	}
	ctl := c.startControllerWith(1, Config{}, true)
	c.createTopic("r", map[int32][]int32{0: {1, 2}})
	c.waitState("r", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1})

	// Through the admin znode: [1,2] -> [3,2].
	req := zkpaths.ReassignPartitionsData{Partitions: []zkpaths.PartitionReplicas{{Topic: "r", Partition: 0, Replicas: []int32{3, 2}}}}
	if _, err := c.admin.Create(zkpaths.ReassignPartitions, req.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// Phase U and A: RS = TRS ++ ORS, adding [3], removing [1]; the epoch is bumped and the new
	// replica starts.
	wait.For(t, waitTimeout, "the reassignment recorded in the topic znode", func() bool {
		a := c.assignment("r")
		return slices.Equal(a.Partitions[0], []int32{3, 2, 1}) && slices.Equal(a.AddingReplicas[0], []int32{3}) &&
			slices.Equal(a.RemovingReplicas[0], []int32{1})
	})
	wait.For(t, waitTimeout, "the leader epoch bumped for the new replica set", func() bool {
		l, _, ok := c.state("r", 0)
		return ok && l.Leader == 1 && l.LeaderEpoch >= 1 && slices.Equal(l.ISR, []int32{1, 2})
	})
	wait.For(t, waitTimeout, "LeaderAndIsr with isNew to the new replica", func() bool {
		_, _, ps := c.sent.leaderAndISR(3, "r", 0)
		return ps != nil && ps.IsNew && slices.Equal(ps.AddingReplicas, []int32{3}) && slices.Equal(ps.Replicas, []int32{3, 2, 1})
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	listed, err := ctl.ListPartitionReassignments(ctx, nil)
	if err != nil || !slices.Equal(listed[kafka.TopicPartition{Topic: "r", Partition: 0}].AddingReplicas, []int32{3}) {
		t.Errorf("ListPartitionReassignments: %v %v", listed, err)
	}

	// The leader adds broker 3 to the ISR: phase B. Leadership moves into the target, broker 1
	// leaves, the topic znode keeps the target alone, the admin znode goes.
	l, version, _ := c.state("r", 0)
	l.ISR = []int32{1, 2, 3}
	if _, err := c.admin.Set(zkpaths.PartitionStatePath("r", 0), l.Encode(), version); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the reassignment to complete", func() bool {
		a := c.assignment("r")
		l, _, _ := c.state("r", 0)
		return slices.Equal(a.Partitions[0], []int32{3, 2}) && len(a.AddingReplicas) == 0 && len(a.RemovingReplicas) == 0 &&
			l.Leader == 3 && slices.Equal(l.ISR, []int32{2, 3}) && !c.exists(zkpaths.ReassignPartitions)
	})
	wait.For(t, waitTimeout, "StopReplica with delete to the removed replica", func() bool {
		return slices.ContainsFunc(c.sent.stopReplicas(1, "r"), func(ps kmsg.StopReplicaRequestTopicPartitionState) bool { return ps.Delete })
	})

	// Through the API: cancelling without a reassignment, an unknown broker, then a move and a
	// cancellation that restores the original replicas.
	results, err := ctl.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{{Topic: "r", Partition: 0}: nil, {Topic: "r", Partition: 9}: {1}})
	if err != nil || !errors.Is(results[kafka.TopicPartition{Topic: "r", Partition: 0}], kerr.NoReassignmentInProgress) ||
		!errors.Is(results[kafka.TopicPartition{Topic: "r", Partition: 9}], kerr.UnknownTopicOrPartition) {
		t.Errorf("cancel without reassignment / unknown partition: %v %v", results, err)
	}
	results, err = ctl.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{{Topic: "r", Partition: 0}: {7}})
	if err != nil || !errors.Is(results[kafka.TopicPartition{Topic: "r", Partition: 0}], kerr.InvalidReplicaAssignment) {
		t.Errorf("reassign to a dead broker: %v %v", results, err)
	}
	results, err = ctl.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{{Topic: "r", Partition: 0}: {1, 2}})
	if err != nil || results[kafka.TopicPartition{Topic: "r", Partition: 0}] != nil {
		t.Fatalf("reassign [3,2] -> [1,2]: %v %v", results, err)
	}
	wait.For(t, waitTimeout, "the API reassignment recorded", func() bool {
		a := c.assignment("r")
		return slices.Equal(a.Partitions[0], []int32{1, 2, 3}) && slices.Equal(a.AddingReplicas[0], []int32{1})
	})
	results, err = ctl.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{{Topic: "r", Partition: 0}: nil})
	if err != nil || results[kafka.TopicPartition{Topic: "r", Partition: 0}] != nil {
		t.Fatalf("cancel: %v %v", results, err)
	}
	// As in Kafka, the original replicas are the current ones minus those being added, in the
	// order of the recorded set ([1,2,3] minus [1]).
	wait.For(t, waitTimeout, "the cancellation to restore the original replicas", func() bool {
		a := c.assignment("r")
		return slices.Equal(a.Partitions[0], []int32{2, 3}) && len(a.AddingReplicas) == 0 && len(a.RemovingReplicas) == 0
	})
}

func TestPreferredElectionAndAutoRebalance(t *testing.T) {
	c := newCluster(t)
	broker1 := c.registerBroker(1)
	c.registerBroker(2)
	ctl := c.startControllerWith(2, Config{}, true)
	c.createTopic("p", map[int32][]int32{0: {1, 2}, 1: {2, 1}})
	c.waitState("p", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1})
	if err := broker1.Close(); err != nil {
		t.Fatal(err)
	}
	c.waitState("p", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: 1})
	c.registerBroker(1)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	results, err := ctl.ElectLeaders(ctx, PreferredElection, []kafka.TopicPartition{{Topic: "p", Partition: 0}, {Topic: "p", Partition: 1}, {Topic: "q", Partition: 0}})
	if err != nil {
		t.Fatal(err)
	}
	// Broker 1 is not back in p-0's ISR: not eligible.
	if !errors.Is(results[kafka.TopicPartition{Topic: "p", Partition: 0}], kerr.PreferredLeaderNotAvailable) ||
		!errors.Is(results[kafka.TopicPartition{Topic: "p", Partition: 1}], kerr.ElectionNotNeeded) ||
		!errors.Is(results[kafka.TopicPartition{Topic: "q", Partition: 0}], kerr.UnknownTopicOrPartition) {
		t.Errorf("results %v", results)
	}
	// The leader lets broker 1 back into the ISR; now the election moves p-0 home.
	_, version, _ := c.state("p", 0)
	if _, err := c.admin.Set(zkpaths.PartitionStatePath("p", 0), zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 1}, ControllerEpoch: 1}.Encode(), version); err != nil {
		t.Fatal(err)
	}
	results, err = ctl.ElectLeaders(ctx, PreferredElection, []kafka.TopicPartition{{Topic: "p", Partition: 0}})
	if err != nil || results[kafka.TopicPartition{Topic: "p", Partition: 0}] != nil {
		t.Fatalf("preferred election: %v %v", results, err)
	}
	c.waitState("p", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 2, ISR: []int32{2, 1}, ControllerEpoch: 1})
	results, err = ctl.ElectLeaders(ctx, UncleanElection, []kafka.TopicPartition{{Topic: "p", Partition: 0}})
	if err != nil || !errors.Is(results[kafka.TopicPartition{Topic: "p", Partition: 0}], kerr.ElectionNotNeeded) {
		t.Errorf("unclean election of a led partition: %v %v", results, err)
	}
}

func TestAutoRebalance(t *testing.T) {
	c := newCluster(t)
	c.registerBroker(1)
	c.registerBroker(2)
	// What a previous controller left: p-0 prefers 1 but 2 leads, with 1 in the ISR.
	if _, err := c.admin.Create(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(1), 0, nil); err != nil {
		t.Fatal(err)
	}
	c.createTopic("ar", map[int32][]int32{0: {1, 2}})
	c.writeState("ar", 0, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 3, ISR: []int32{2, 1}, ControllerEpoch: 1})
	start := time.Now()
	c.startControllerWith(2, Config{AutoLeaderRebalance: true, LeaderImbalancePerBrokerPercentage: 10, LeaderImbalanceCheckInterval: time.Hour}, true)
	c.waitState("ar", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 4, ISR: []int32{2, 1}, ControllerEpoch: 2})
	if waited := time.Since(start); waited < autoRebalanceFirstDelay {
		t.Errorf("rebalanced after %v, before the first check's delay", waited)
	}
}

// TestFailoverResumesAdminWork starts a controller on what a previous one left unfinished: a
// deletion request, a reassignment recorded in a topic znode and a preferred-election request.
// It finishes all three.
func TestFailoverResumesAdminWork(t *testing.T) {
	c := newCluster(t)
	for id := int32(1); id <= 3; id++ {
		c.registerBroker(id)
	}
	if _, err := c.admin.Create(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(1), 0, nil); err != nil {
		t.Fatal(err)
	}
	old := func(leader int32, isr ...int32) zkpaths.LeaderAndIsr {
		return zkpaths.LeaderAndIsr{Leader: leader, LeaderEpoch: 2, ISR: isr, ControllerEpoch: 1}
	}
	c.createTopic("del", map[int32][]int32{0: {1, 2}})
	c.writeState("del", 0, old(1, 1, 2))
	if _, err := c.admin.Create(zkpaths.DeleteTopicPath("del"), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// mov-0 was being moved from [1] to [2]; broker 2 has caught up.
	mov := zkpaths.TopicAssignment{TopicID: zkpaths.NewTopicID(), Partitions: map[int32][]int32{0: {2, 1}},
		AddingReplicas: map[int32][]int32{0: {2}}, RemovingReplicas: map[int32][]int32{0: {1}}}
	if _, err := c.admin.Create(zkpaths.TopicPath("mov"), mov.Encode(), 0, nil); err != nil {
		t.Fatal(err)
	}
	c.writeState("mov", 0, old(1, 1, 2))
	c.createTopic("pre", map[int32][]int32{0: {3, 1}})
	c.writeState("pre", 0, old(1, 1, 3))
	pre := zkpaths.PreferredReplicaElectionData{Partitions: []kafka.TopicPartition{{Topic: "pre", Partition: 0}}}
	if _, err := c.admin.Create(zkpaths.PreferredReplicaElection, pre.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	c.startControllerWith(3, Config{DeleteTopicEnable: true}, true)
	wait.For(t, waitTimeout, "the deletion to complete", func() bool {
		return !c.exists(zkpaths.TopicPath("del")) && !c.exists(zkpaths.DeleteTopicPath("del"))
	})
	wait.For(t, waitTimeout, "the reassignment to complete", func() bool {
		a := c.assignment("mov")
		l, _, _ := c.state("mov", 0)
		return slices.Equal(a.Partitions[0], []int32{2}) && len(a.AddingReplicas) == 0 && l.Leader == 2 && slices.Equal(l.ISR, []int32{2})
	})
	wait.For(t, waitTimeout, "the preferred election", func() bool {
		l, _, _ := c.state("pre", 0)
		return l.Leader == 3 && !c.exists(zkpaths.PreferredReplicaElection)
	})
}

// TestConsecutiveZkTriggeredRequests: after the controller removes /admin/preferred_replica_election
// or /admin/reassign_partitions it keeps watching, so the next request of either kind in the same
// term is carried out too (Kafka 2.8 re-registers the watch on deletion).
func TestConsecutiveZkTriggeredRequests(t *testing.T) {
	c := newCluster(t)
	for id := int32(1); id <= 3; id++ {
		c.registerBroker(id)
	}
	// What a previous controller left: p-0..2 prefer 1, 2 leads them with 1 in the ISR.
	if _, err := c.admin.Create(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(1), 0, nil); err != nil {
		t.Fatal(err)
	}
	c.createTopic("p", map[int32][]int32{0: {1, 2}, 1: {1, 2}, 2: {1, 2}})
	for p := int32(0); p < 3; p++ {
		c.writeState("p", p, zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 3, ISR: []int32{2, 1}, ControllerEpoch: 1})
	}
	c.createTopic("r", map[int32][]int32{0: {1, 2}})
	c.writeState("r", 0, zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1})
	ctl := c.startControllerWith(3, Config{}, true)

	for p := int32(0); p < 3; p++ {
		req := zkpaths.PreferredReplicaElectionData{Partitions: []kafka.TopicPartition{{Topic: "p", Partition: p}}}
		if _, err := c.admin.Create(zkpaths.PreferredReplicaElection, req.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("preferred election request %d: %v", p+1, err)
		}
		wait.For(t, waitTimeout, fmt.Sprintf("preferred election %d to move p-%d home and remove its znode", p+1, p), func() bool {
			l, _, _ := c.state("p", p)
			return l.Leader == 1 && !c.exists(zkpaths.PreferredReplicaElection)
		})
	}

	// Three moves of r-0, each adding a replica that the test then lets into the ISR, as the
	// leader would once it caught up.
	for i, target := range [][]int32{{3, 2}, {3, 1}, {2, 1}} {
		req := zkpaths.ReassignPartitionsData{Partitions: []zkpaths.PartitionReplicas{{Topic: "r", Partition: 0, Replicas: target}}}
		if _, err := c.admin.Create(zkpaths.ReassignPartitions, req.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("reassignment %d: %v", i+1, err)
		}
		wait.For(t, waitTimeout, fmt.Sprintf("reassignment %d recorded in the topic znode", i+1), func() bool {
			return len(c.assignment("r").AddingReplicas[0]) > 0
		})
		wait.For(t, waitTimeout, fmt.Sprintf("the adding replicas of reassignment %d let into the ISR", i+1), func() bool {
			l, version, _ := c.state("r", 0)
			for _, r := range target {
				if !slices.Contains(l.ISR, r) {
					l.ISR = append(l.ISR, r)
				}
			}
			_, err := c.admin.Set(zkpaths.PartitionStatePath("r", 0), l.Encode(), version)
			return err == nil
		})
		wait.For(t, waitTimeout, fmt.Sprintf("reassignment %d to complete and remove its znode", i+1), func() bool {
			a := c.assignment("r")
			l, _, _ := c.state("r", 0)
			return slices.Equal(a.Partitions[0], target) && len(a.AddingReplicas) == 0 && len(a.RemovingReplicas) == 0 &&
				slices.Contains(target, l.Leader) && !c.exists(zkpaths.ReassignPartitions)
		})
	}
	if !ctl.IsActive() || ctl.Epoch() != 2 {
		t.Errorf("controller active %v with epoch %d: the requests were not all served in one term", ctl.IsActive(), ctl.Epoch())
	}
}
