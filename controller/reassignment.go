package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Partition reassignment, Kafka 2.4+ (KIP-455). Names: RS is a partition's current replica set,
// ORS the original one, TRS the target; adding = TRS − ORS, removing = ORS − TRS. While a
// reassignment runs, /brokers/topics/<t> holds RS = TRS ++ ORS (distinct, target first) with
// the adding and removing lists, so a new controller can resume it. The phases:
//
//   - U: the assignment becomes RS/adding/removing (fenced write); replicas dropped by a
//     superseded reassignment are stopped and deleted.
//   - A (TRS not yet in the ISR): leader epoch + 1 and LeaderAndIsr with the new RS to every
//     replica; the adding replicas start (NewReplica) and fetch. The leader grows the ISR as they
//     catch up, which the controller sees through the state znode's data watch or an ISR change
//     notification.
//   - B (TRS ⊆ ISR): adding replicas go online; RS = TRS in memory; a leader outside TRS (or
//     dead) is replaced by the first live ISR member of TRS, otherwise the epoch is bumped so the
//     leader learns the new RS; removing replicas go offline and are deleted; the topic znode gets
//     RS = TRS; the partition's entry leaves /admin/reassign_partitions if it names TRS; every
//     broker gets UpdateMetadata.
//
// A reassignment starts from AlterPartitionReassignments or from /admin/reassign_partitions.
// As in Kafka 2.8, the controller starts the znode's request when the znode is created (or at
// failover, when it exists), and only then: it removes each partition from the znode as it
// completes, deletes the znode with the last one, and neither these rewrites nor a user's change
// of the znode's data start anything.

// PartitionReassignment is an ongoing reassignment as ListPartitionReassignments reports it.
type PartitionReassignment struct {
	Replicas         []int32 // RS: target replicas first, then the original ones being removed
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// reassignWatchEvent maps every firing of the exists watch on /admin/reassign_partitions
// (creation, data change, deletion) to the event. The handler's read arms the watch again, so
// the next request is seen (Kafka 2.8 enqueues the event after deleting the znode for the same
// reason), and the znode's czxid tells it whether the znode is a new request.
func reassignWatchEvent(zk.Event) event { return zkPartitionReassignmentEvent{} }

// originReplicas is ORS: the assigned replicas minus those being added.
func (c *Controller) originReplicas(tp kafka.TopicPartition) []int32 {
	t, ok := c.cc.topics[tp.Topic]
	if !ok {
		return nil
	}
	adding := t.assignment.AddingReplicas[tp.Partition]
	return slices.DeleteFunc(slices.Clone(t.assignment.Partitions[tp.Partition]), func(r int32) bool { return slices.Contains(adding, r) })
}

// validateReassignment checks a requested target as Kafka's API does.
func (c *Controller) validateReassignment(tp kafka.TopicPartition, target []int32) error {
	cc := c.cc
	t, ok := cc.topics[tp.Topic]
	if !ok || cc.topicsToBeDeleted[tp.Topic] {
		return fmt.Errorf("topic %s does not exist or is being deleted: %w", tp.Topic, kerr.UnknownTopicOrPartition)
	}
	if _, ok := t.assignment.Partitions[tp.Partition]; !ok {
		return fmt.Errorf("partition %s does not exist: %w", tp, kerr.UnknownTopicOrPartition)
	}
	if len(target) == 0 {
		return fmt.Errorf("empty replica list for %s: %w", tp, kerr.InvalidReplicaAssignment)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(target)))) != len(target) {
		return fmt.Errorf("duplicate replicas %v for %s: %w", target, tp, kerr.InvalidReplicaAssignment)
	}
	origin := c.originReplicas(tp)
	for _, r := range target {
		if r < 0 {
			return fmt.Errorf("invalid broker id %d for %s: %w", r, tp, kerr.InvalidReplicaAssignment)
		}
		if !slices.Contains(origin, r) && !cc.isLive(r) {
			return fmt.Errorf("replica %d of %s is not a live broker: %w", r, tp, kerr.InvalidReplicaAssignment)
		}
	}
	return nil
}

// alterReassignments is the core of AlterPartitionReassignments: a target per partition, nil
// to cancel (back to the original replicas). As in Kafka, the valid ones supersede the entries
// for the same partitions in /admin/reassign_partitions, which are removed from it first.
func (c *Controller) alterReassignments(requests map[kafka.TopicPartition][]int32) (map[kafka.TopicPartition]error, error) {
	results := make(map[kafka.TopicPartition]error, len(requests))
	targets := make(map[kafka.TopicPartition][]int32, len(requests))
	for _, tp := range slices.SortedFunc(maps.Keys(requests), kafka.Compare) {
		target := requests[tp]
		if target == nil {
			if _, ok := c.cc.topics[tp.Topic]; !ok || !c.cc.isReassigning(tp) {
				results[tp] = fmt.Errorf("no reassignment of %s in progress: %w", tp, kerr.NoReassignmentInProgress)
				continue
			}
			target = c.originReplicas(tp)
		} else if err := c.validateReassignment(tp, target); err != nil {
			results[tp] = err
			continue
		}
		targets[tp] = target
	}
	err := c.removeFromReassignZnode(func(tp kafka.TopicPartition, _ []int32) bool {
		_, ok := targets[tp]
		return ok
	})
	if err != nil {
		return nil, err
	}
	for _, tp := range slices.SortedFunc(maps.Keys(targets), kafka.Compare) {
		err := c.onPartitionReassignment(tp, targets[tp])
		if errors.Is(err, ErrControllerMoved) {
			return nil, err
		}
		results[tp] = err
	}
	return results, nil
}

// listReassignments is the core of ListPartitionReassignments: the ongoing reassignments among
// partitions (all of them for nil).
func (c *Controller) listReassignments(partitions []kafka.TopicPartition) map[kafka.TopicPartition]PartitionReassignment {
	cc := c.cc
	if partitions == nil {
		partitions = cc.allPartitions()
	}
	out := map[kafka.TopicPartition]PartitionReassignment{}
	for _, tp := range partitions {
		if !cc.isReassigning(tp) {
			continue
		}
		a := cc.topics[tp.Topic].assignment
		out[tp] = PartitionReassignment{
			Replicas:         slices.Clone(a.Partitions[tp.Partition]),
			AddingReplicas:   slices.Clone(a.AddingReplicas[tp.Partition]),
			RemovingReplicas: slices.Clone(a.RemovingReplicas[tp.Partition]),
		}
	}
	return out
}

// onPartitionReassignment moves a partition towards target (Kafka's onPartitionReassignment).
func (c *Controller) onPartitionReassignment(tp kafka.TopicPartition, target []int32) error {
	cc := c.cc
	if _, ok := cc.leadership[tp]; !ok {
		return fmt.Errorf("partition %s has no leader yet: %w", tp, kerr.LeaderNotAvailable)
	}
	t := cc.topics[tp.Topic]
	origin := c.originReplicas(tp)
	adding := slices.DeleteFunc(slices.Clone(target), func(r int32) bool { return slices.Contains(origin, r) })
	removing := slices.DeleteFunc(slices.Clone(origin), func(r int32) bool { return slices.Contains(target, r) })
	rs := slices.Clone(target)
	for _, r := range origin {
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	current := t.assignment.Partitions[tp.Partition]
	if !slices.Equal(current, rs) || !slices.Equal(t.assignment.AddingReplicas[tp.Partition], adding) ||
		!slices.Equal(t.assignment.RemovingReplicas[tp.Partition], removing) {
		// Phase U.
		c.log.Info("Updating the assignment for a reassignment", zap.Stringer("partition", tp),
			zap.String("replicas", joinIDs(rs)), zap.String("adding", joinIDs(adding)), zap.String("removing", joinIDs(removing)))
		dropped := slices.DeleteFunc(slices.Clone(current), func(r int32) bool { return slices.Contains(rs, r) })
		a := cloneAssignment(t.assignment)
		a.Partitions[tp.Partition] = rs
		setOrDelete(a.AddingReplicas, tp.Partition, adding)
		setOrDelete(a.RemovingReplicas, tp.Partition, removing)
		if err := c.writeAssignment(tp.Topic, a); err != nil {
			return err
		}
		t.assignment = a
		if err := c.stopRemovedReplicas(tp, dropped); err != nil {
			return err
		}
	}
	if err := c.watchPartitionState(tp); err != nil {
		return err
	}
	complete, err := c.reassignmentComplete(tp)
	if err != nil {
		return err
	}
	if !complete {
		// Phase A.
		b := c.newBatch()
		if err := c.bumpLeaderEpoch(b, tp, rs); err != nil {
			return err
		}
		var starting []partitionReplica
		for _, r := range adding {
			if pr := (partitionReplica{tp, r}); c.replicaState(pr) == nonExistentReplica {
				starting = append(starting, pr)
			}
		}
		if err := c.changeReplicaStates(b, starting, newReplica); err != nil {
			return err
		}
		b.send()
		return nil
	}
	return c.completeReassignment(tp, target, adding, removing)
}

// completeReassignment is phase B.
func (c *Controller) completeReassignment(tp kafka.TopicPartition, target, adding, removing []int32) error {
	cc := c.cc
	t := cc.topics[tp.Topic]
	c.log.Info("Completing the reassignment", zap.Stringer("partition", tp), zap.String("target", joinIDs(target)))
	b := c.newBatch()
	var addingReplicas []partitionReplica
	for _, r := range adding {
		addingReplicas = append(addingReplicas, partitionReplica{tp, r})
	}
	if err := c.changeReplicaStates(b, addingReplicas, onlineReplica); err != nil {
		return err
	}
	a := cloneAssignment(t.assignment)
	a.Partitions[tp.Partition] = slices.Clone(target)
	delete(a.AddingReplicas, tp.Partition)
	delete(a.RemovingReplicas, tp.Partition)
	t.assignment = a
	leader := cc.leadership[tp].leader
	if !slices.Contains(target, leader) || !cc.isOnline(leader) {
		failed, err := c.changePartitionStatesWith(b, []kafka.TopicPartition{tp}, onlinePartition, strategy{kind: reassignElection})
		if err != nil {
			return err
		}
		if ferr := failed[tp]; ferr != nil {
			c.log.Error("Could not move the leader into the target replicas", zap.Stringer("partition", tp), zap.Error(ferr))
		}
	} else if err := c.bumpLeaderEpoch(b, tp, target); err != nil {
		return err
	}
	b.send()
	b = c.newBatch()
	if err := c.stopRemovedReplicas(tp, removing); err != nil {
		return err
	}
	if err := c.writeAssignment(tp.Topic, a); err != nil {
		return err
	}
	delete(c.watches, watchKey{dataWatch, stateWatchPath(tp)})
	err := c.removeFromReassignZnode(func(p kafka.TopicPartition, replicas []int32) bool {
		return p == tp && slices.Equal(replicas, target)
	})
	if err != nil {
		return err
	}
	b.addUpdateMetadata(cc.liveBrokerIDs(), []kafka.TopicPartition{tp})
	b.send()
	c.log.Info("Reassignment completed", zap.Stringer("partition", tp), zap.String("replicas", joinIDs(target)))
	if cc.topicsToBeDeleted[tp.Topic] && !cc.topicReassigning(tp.Topic) {
		return c.resumeDeletionForTopics([]string{tp.Topic})
	}
	return nil
}

// stopRemovedReplicas takes replicas a partition no longer has offline and deletes them:
// OfflineReplica, ReplicaDeletionStarted, then (without waiting for the brokers' answers)
// ReplicaDeletionSuccessful and NonExistentReplica.
func (c *Controller) stopRemovedReplicas(tp kafka.TopicPartition, replicas []int32) error {
	if len(replicas) == 0 {
		return nil
	}
	var prs []partitionReplica
	for _, r := range replicas {
		prs = append(prs, partitionReplica{tp, r})
	}
	b := c.newBatch()
	for _, target := range []replicaState{offlineReplica, replicaDeletionStarted, replicaDeletionSuccessful, nonExistentReplica} {
		if err := c.changeReplicaStates(b, prs, target); err != nil {
			return err
		}
	}
	b.send()
	return nil
}

// reassignmentComplete reads the partition's state znode: the reassignment is complete when
// every target replica is in the ISR.
func (c *Controller) reassignmentComplete(tp kafka.TopicPartition) (bool, error) {
	state, ok, err := readPartitionState(c.store, tp)
	if err != nil || !ok {
		return false, err
	}
	c.cc.leadership[tp] = state
	for _, r := range c.targetReplicas(tp) {
		if !slices.Contains(state.isr, r) {
			return false, nil
		}
	}
	return true, nil
}

// bumpLeaderEpoch rewrites the partition's state with the same leader and ISR and leader epoch
// + 1 (fenced, conditional), and queues LeaderAndIsr for recipients, so they learn the new
// replica set.
func (c *Controller) bumpLeaderEpoch(b *requestBatch, tp kafka.TopicPartition, recipients []int32) error {
	cc := c.cc
	for {
		current, ok, err := readPartitionState(c.store, tp)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("partition %s has no state znode: %w", tp, kerr.LeaderNotAvailable)
		}
		next := leaderISRAndEpoch{leaderAndISR: current.newLeaderAndISR(current.leader, current.isr), controllerEpoch: cc.epoch}
		version, err := c.updatePartitionState(tp, next)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return err
		}
		next.zkVersion = version
		cc.leadership[tp] = next
		b.addLeaderAndISR(recipients, tp, false)
		return nil
	}
}

// writeAssignment replaces a topic's assignment znode (fenced).
func (c *Controller) writeAssignment(topic string, a zkpaths.TopicAssignment) error {
	_, err := c.setFenced(zkpaths.TopicPath(topic), a.Encode(), -1)
	if err != nil {
		return fmt.Errorf("write assignment of %s: %w", topic, err)
	}
	return nil
}

func stateWatchPath(tp kafka.TopicPartition) string {
	return zkpaths.PartitionStatePath(tp.Topic, tp.Partition)
}

// watchPartitionState arms a data watch on a reassigning partition's state znode: the leader
// rewrites it when new replicas join the ISR. With AlterIsr the controller makes those writes
// itself and arms none, as Kafka 2.8 does.
func (c *Controller) watchPartitionState(tp kafka.TopicPartition) error {
	if c.cfg.AlterIsr {
		return nil
	}
	_, _, err := c.getW(stateWatchPath(tp), activeScope, func(ev zk.Event) event {
		if ev.Type == zk.EventNodeDataChanged {
			return partitionStateChangeEvent{tp: tp}
		}
		return nil
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// processPartitionReassignmentIsrChange handles a change of a reassigning partition's state
// znode: the reassignment completes if the target replicas are all in the ISR now.
func (c *Controller) processPartitionReassignmentIsrChange(tp kafka.TopicPartition) error {
	if c.cc == nil {
		return nil
	}
	return c.maybeCompleteReassignments([]kafka.TopicPartition{tp})
}

// maybeCompleteReassignments completes the reassignments among partitions whose target replicas
// have all joined the ISR, and re-arms the state watch of the others.
func (c *Controller) maybeCompleteReassignments(partitions []kafka.TopicPartition) error {
	for _, tp := range partitions {
		if !c.cc.isReassigning(tp) {
			continue
		}
		if err := c.watchPartitionState(tp); err != nil {
			return err
		}
		complete, err := c.reassignmentComplete(tp)
		if err != nil {
			return err
		}
		if complete {
			if err := c.onPartitionReassignment(tp, c.targetReplicas(tp)); err != nil {
				if errors.Is(err, ErrControllerMoved) {
					return err
				}
				c.log.Error("Reassignment step failed", zap.Stringer("partition", tp), zap.Error(err))
			}
		}
	}
	return nil
}

// resumeReassignments runs the reassignments of partitions again from their recorded state
// (after a failover, or when a target broker came back).
func (c *Controller) resumeReassignments(partitions []kafka.TopicPartition) error {
	for _, tp := range partitions {
		if !c.cc.isReassigning(tp) {
			continue
		}
		if err := c.onPartitionReassignment(tp, c.targetReplicas(tp)); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return err
			}
			c.log.Error("Could not resume a reassignment", zap.Stringer("partition", tp), zap.Error(err))
		}
	}
	return nil
}

// initializeReassignments resumes reassignments at failover: those requested in
// /admin/reassign_partitions first, then the others recorded in topic znodes.
func (c *Controller) initializeReassignments() error {
	started, err := c.startZkPartitionReassignment()
	if err != nil {
		return err
	}
	var recorded []kafka.TopicPartition
	for _, tp := range c.cc.allPartitions() {
		if c.cc.isReassigning(tp) && !started[tp] {
			recorded = append(recorded, tp)
		}
	}
	return c.resumeReassignments(recorded)
}

// processZkPartitionReassignment handles a firing of the watch on /admin/reassign_partitions.
func (c *Controller) processZkPartitionReassignment() error {
	_, err := c.startZkPartitionReassignment()
	return err
}

// startZkPartitionReassignment starts the request in /admin/reassign_partitions unless this
// controller has started that znode's request already: each listed partition is reassigned,
// superseding one in progress, and the entries that fail are removed from the znode; the others
// leave it as they complete. It returns the partitions started. Reading the znode re-arms the
// exists watch.
func (c *Controller) startZkPartitionReassignment() (map[kafka.TopicPartition]bool, error) {
	if c.cc == nil {
		return nil, nil
	}
	exists, _, err := c.existsW(zkpaths.ReassignPartitions, activeScope, reassignWatchEvent)
	if err != nil || !exists {
		return nil, err
	}
	data, stat, err := c.store.Get(zkpaths.ReassignPartitions)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if stat.Czxid == c.cc.reassignZnodeCzxid {
		return nil, nil
	}
	c.cc.reassignZnodeCzxid = stat.Czxid
	req, err := zkpaths.DecodeReassignPartitionsData(data)
	if err != nil {
		c.log.Error("Removing an unreadable reassignment request", zap.Error(err))
		return nil, c.deleteFenced(zkpaths.ReassignPartitions)
	}
	started := map[kafka.TopicPartition]bool{}
	failed := map[kafka.TopicPartition]bool{}
	for _, p := range req.Partitions {
		tp := kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		if err := c.validateReassignment(tp, p.Replicas); err != nil {
			c.log.Error("Rejecting a reassignment from "+zkpaths.ReassignPartitions, zap.Stringer("partition", tp), zap.Error(err))
			failed[tp] = true
			continue
		}
		if err := c.onPartitionReassignment(tp, p.Replicas); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return nil, err
			}
			c.log.Error("Reassignment failed", zap.Stringer("partition", tp), zap.Error(err))
			failed[tp] = true
			continue
		}
		started[tp] = true
	}
	if len(failed) > 0 {
		err := c.removeFromReassignZnode(func(tp kafka.TopicPartition, _ []int32) bool { return failed[tp] })
		if err != nil {
			return nil, err
		}
	}
	return started, nil
}

// removeFromReassignZnode removes the entries matching remove from /admin/reassign_partitions,
// deleting the znode when none is left (fenced, conditional on the version read). The deletion
// fires the exists watch, whose handler arms it again.
func (c *Controller) removeFromReassignZnode(remove func(tp kafka.TopicPartition, replicas []int32) bool) error {
	for {
		data, stat, err := c.store.Get(zkpaths.ReassignPartitions)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		req, err := zkpaths.DecodeReassignPartitionsData(data)
		if err != nil {
			c.log.Error("Removing an unreadable reassignment request", zap.Error(err))
			return c.deleteFenced(zkpaths.ReassignPartitions)
		}
		n := len(req.Partitions)
		req.Partitions = slices.DeleteFunc(req.Partitions, func(p zkpaths.PartitionReplicas) bool {
			return remove(kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}, p.Replicas)
		})
		switch {
		case len(req.Partitions) == n:
			return nil
		case len(req.Partitions) == 0:
			c.log.Info("No more partitions need to be reassigned; deleting " + zkpaths.ReassignPartitions)
			_, err = c.fencedMulti(&zk.DeleteRequest{Path: zkpaths.ReassignPartitions, Version: stat.Version})
		default:
			c.log.Info("Removing partitions from "+zkpaths.ReassignPartitions, zap.Int("removed", n-len(req.Partitions)))
			_, err = c.setFenced(zkpaths.ReassignPartitions, req.Encode(), stat.Version)
		}
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
			continue
		}
		return err
	}
}

func cloneAssignment(a zkpaths.TopicAssignment) zkpaths.TopicAssignment {
	clone := func(m map[int32][]int32) map[int32][]int32 {
		out := make(map[int32][]int32, len(m))
		for k, v := range m {
			out[k] = slices.Clone(v)
		}
		return out
	}
	return zkpaths.TopicAssignment{TopicID: a.TopicID, Partitions: clone(a.Partitions),
		AddingReplicas: clone(a.AddingReplicas), RemovingReplicas: clone(a.RemovingReplicas)}
}

func setOrDelete(m map[int32][]int32, p int32, replicas []int32) {
	if len(replicas) == 0 {
		delete(m, p)
		return
	}
	m[p] = replicas
}
