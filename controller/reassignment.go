package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

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
//     RS = TRS; the partition leaves /admin/reassign_partitions; every broker gets UpdateMetadata.

// PartitionReassignment is an ongoing reassignment as ListPartitionReassignments reports it.
type PartitionReassignment struct {
	Replicas         []int32 // RS: target replicas first, then the original ones being removed
	AddingReplicas   []int32
	RemovingReplicas []int32
}

func reassignWatchEvent(ev zk.Event) event {
	if ev.Type == zk.EventNodeCreated || ev.Type == zk.EventNodeDataChanged {
		return zkPartitionReassignmentEvent{}
	}
	return nil
}

// originReplicas is ORS: the assigned replicas minus those being added.
func (c *Controller) originReplicas(tp topicPartition) []int32 {
	t, ok := c.cc.topics[tp.topic]
	if !ok {
		return nil
	}
	adding := t.assignment.AddingReplicas[tp.partition]
	return slices.DeleteFunc(slices.Clone(t.assignment.Partitions[tp.partition]), func(r int32) bool { return slices.Contains(adding, r) })
}

// validateReassignment checks a requested target as Kafka's API does.
func (c *Controller) validateReassignment(tp topicPartition, target []int32) error {
	cc := c.cc
	t, ok := cc.topics[tp.topic]
	if !ok || cc.topicsToBeDeleted[tp.topic] {
		return fmt.Errorf("topic %s does not exist or is being deleted: %w", tp.topic, kerr.UnknownTopicOrPartition)
	}
	if _, ok := t.assignment.Partitions[tp.partition]; !ok {
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
// to cancel (back to the original replicas).
func (c *Controller) alterReassignments(requests map[topicPartition][]int32) (map[topicPartition]error, error) {
	results := make(map[topicPartition]error, len(requests))
	for _, tp := range slices.SortedFunc(maps.Keys(requests), compareTopicPartitions) {
		target := requests[tp]
		if target == nil {
			if _, ok := c.cc.topics[tp.topic]; !ok || !c.cc.isReassigning(tp) {
				results[tp] = fmt.Errorf("no reassignment of %s in progress: %w", tp, kerr.NoReassignmentInProgress)
				continue
			}
			target = c.originReplicas(tp)
		} else if err := c.validateReassignment(tp, target); err != nil {
			results[tp] = err
			continue
		}
		delete(c.cc.reassignFromAdminZnode, tp)
		err := c.onPartitionReassignment(tp, target)
		if errors.Is(err, ErrControllerMoved) {
			return nil, err
		}
		results[tp] = err
	}
	return results, nil
}

// listReassignments is the core of ListPartitionReassignments: the ongoing reassignments among
// partitions (all of them for nil).
func (c *Controller) listReassignments(partitions []topicPartition) map[topicPartition]PartitionReassignment {
	cc := c.cc
	if partitions == nil {
		partitions = cc.allPartitions()
	}
	out := map[topicPartition]PartitionReassignment{}
	for _, tp := range partitions {
		if !cc.isReassigning(tp) {
			continue
		}
		a := cc.topics[tp.topic].assignment
		out[tp] = PartitionReassignment{
			Replicas:         slices.Clone(a.Partitions[tp.partition]),
			AddingReplicas:   slices.Clone(a.AddingReplicas[tp.partition]),
			RemovingReplicas: slices.Clone(a.RemovingReplicas[tp.partition]),
		}
	}
	return out
}

// onPartitionReassignment moves a partition towards target (Kafka's onPartitionReassignment).
func (c *Controller) onPartitionReassignment(tp topicPartition, target []int32) error {
	cc := c.cc
	if _, ok := cc.leadership[tp]; !ok {
		return fmt.Errorf("partition %s has no leader yet: %w", tp, kerr.LeaderNotAvailable)
	}
	t := cc.topics[tp.topic]
	origin := c.originReplicas(tp)
	adding := slices.DeleteFunc(slices.Clone(target), func(r int32) bool { return slices.Contains(origin, r) })
	removing := slices.DeleteFunc(slices.Clone(origin), func(r int32) bool { return slices.Contains(target, r) })
	rs := slices.Clone(target)
	for _, r := range origin {
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	current := t.assignment.Partitions[tp.partition]
	if !slices.Equal(current, rs) || !slices.Equal(t.assignment.AddingReplicas[tp.partition], adding) ||
		!slices.Equal(t.assignment.RemovingReplicas[tp.partition], removing) {
		// Phase U.
		c.log.Info("Updating the assignment for a reassignment", zap.Stringer("partition", tp),
			zap.String("replicas", joinIDs(rs)), zap.String("adding", joinIDs(adding)), zap.String("removing", joinIDs(removing)))
		dropped := slices.DeleteFunc(slices.Clone(current), func(r int32) bool { return slices.Contains(rs, r) })
		a := cloneAssignment(t.assignment)
		a.Partitions[tp.partition] = rs
		setOrDelete(a.AddingReplicas, tp.partition, adding)
		setOrDelete(a.RemovingReplicas, tp.partition, removing)
		if err := c.writeAssignment(tp.topic, a); err != nil {
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
func (c *Controller) completeReassignment(tp topicPartition, target, adding, removing []int32) error {
	cc := c.cc
	t := cc.topics[tp.topic]
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
	a.Partitions[tp.partition] = slices.Clone(target)
	delete(a.AddingReplicas, tp.partition)
	delete(a.RemovingReplicas, tp.partition)
	t.assignment = a
	leader := cc.leadership[tp].leader
	if !slices.Contains(target, leader) || !cc.isOnline(leader) {
		failed, err := c.changePartitionStatesWith(b, []topicPartition{tp}, onlinePartition, strategy{kind: reassignElection})
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
	if err := c.writeAssignment(tp.topic, a); err != nil {
		return err
	}
	delete(c.watches, watchKey{dataWatch, stateWatchPath(tp)})
	if cc.reassignFromAdminZnode[tp] {
		delete(cc.reassignFromAdminZnode, tp)
		if err := c.removeFromReassignZnode(tp); err != nil {
			return err
		}
	}
	b.addUpdateMetadata(cc.liveBrokerIDs(), []topicPartition{tp})
	b.send()
	c.log.Info("Reassignment completed", zap.Stringer("partition", tp), zap.String("replicas", joinIDs(target)))
	if cc.topicsToBeDeleted[tp.topic] && !cc.topicReassigning(tp.topic) {
		return c.resumeDeletionForTopics([]string{tp.topic})
	}
	return nil
}

// stopRemovedReplicas takes replicas a partition no longer has offline and deletes them:
// OfflineReplica, ReplicaDeletionStarted, then (without waiting for the brokers' answers)
// ReplicaDeletionSuccessful and NonExistentReplica.
func (c *Controller) stopRemovedReplicas(tp topicPartition, replicas []int32) error {
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
func (c *Controller) reassignmentComplete(tp topicPartition) (bool, error) {
	state, ok, err := c.readPartitionState(tp)
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
func (c *Controller) bumpLeaderEpoch(b *requestBatch, tp topicPartition, recipients []int32) error {
	cc := c.cc
	for {
		current, ok, err := c.readPartitionState(tp)
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

func stateWatchPath(tp topicPartition) string {
	return zkpaths.PartitionStatePath(tp.topic, tp.partition)
}

// watchPartitionState arms a data watch on a reassigning partition's state znode: the leader
// rewrites it when new replicas join the ISR.
func (c *Controller) watchPartitionState(tp topicPartition) error {
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
func (c *Controller) processPartitionReassignmentIsrChange(tp topicPartition) error {
	if c.cc == nil {
		return nil
	}
	return c.maybeCompleteReassignments([]topicPartition{tp})
}

// maybeCompleteReassignments completes the reassignments among partitions whose target replicas
// have all joined the ISR, and re-arms the state watch of the others.
func (c *Controller) maybeCompleteReassignments(partitions []topicPartition) error {
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
func (c *Controller) resumeReassignments(partitions []topicPartition) error {
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
// /admin/reassign_partitions first, then those recorded in topic znodes.
func (c *Controller) initializeReassignments() error {
	if err := c.processZkPartitionReassignment(); err != nil {
		return err
	}
	var recorded []topicPartition
	for _, tp := range c.cc.allPartitions() {
		if c.cc.isReassigning(tp) {
			recorded = append(recorded, tp)
		}
	}
	return c.resumeReassignments(recorded)
}

// processZkPartitionReassignment handles /admin/reassign_partitions (created, or read at
// failover): each listed partition is reassigned, superseding one in progress; entries that fail
// validation are removed from the znode at once, the others as they complete. Reading it re-arms
// the exists watch.
func (c *Controller) processZkPartitionReassignment() error {
	if c.cc == nil {
		return nil
	}
	exists, _, err := c.existsW(zkpaths.ReassignPartitions, activeScope, reassignWatchEvent)
	if err != nil || !exists {
		return err
	}
	data, _, err := c.zk.Get(zkpaths.ReassignPartitions)
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
	for _, p := range req.Partitions {
		tp := topicPartition{p.Topic, p.Partition}
		if err := c.validateReassignment(tp, p.Replicas); err != nil {
			c.log.Error("Rejecting a reassignment from "+zkpaths.ReassignPartitions, zap.Stringer("partition", tp), zap.Error(err))
			if err := c.removeFromReassignZnode(tp); err != nil {
				return err
			}
			continue
		}
		c.cc.reassignFromAdminZnode[tp] = true
		if err := c.onPartitionReassignment(tp, p.Replicas); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return err
			}
			c.log.Error("Reassignment failed", zap.Stringer("partition", tp), zap.Error(err))
			delete(c.cc.reassignFromAdminZnode, tp)
			if err := c.removeFromReassignZnode(tp); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeFromReassignZnode removes a partition from /admin/reassign_partitions, deleting the
// znode when nothing is left (fenced, conditional on the version read).
func (c *Controller) removeFromReassignZnode(tp topicPartition) error {
	for {
		data, stat, err := c.zk.Get(zkpaths.ReassignPartitions)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		req, err := zkpaths.DecodeReassignPartitionsData(data)
		if err != nil {
			return c.deleteFenced(zkpaths.ReassignPartitions)
		}
		req.Partitions = slices.DeleteFunc(req.Partitions, func(p zkpaths.PartitionReplicas) bool {
			return p.Topic == tp.topic && p.Partition == tp.partition
		})
		if len(req.Partitions) == 0 {
			_, err = c.fencedMulti(&zk.DeleteRequest{Path: zkpaths.ReassignPartitions, Version: stat.Version})
		} else {
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
