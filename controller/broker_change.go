package controller

import (
	"maps"
	"slices"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// processBrokerChange handles a change of /brokers/ids' children (Kafka's BrokerChange): brokers
// that registered, that died, and that re-registered (a larger czxid, i.e. a new broker epoch:
// restarted within the session timeout or re-registered after a session expiry).
func (c *Controller) processBrokerChange() error {
	if c.cc == nil {
		return nil
	}
	cc := c.cc
	current, err := c.readLiveBrokers()
	if err != nil {
		return err
	}
	var added, dead, bounced []int32
	for _, id := range slices.Sorted(maps.Keys(current)) {
		if known, ok := cc.liveBrokers[id]; !ok {
			added = append(added, id)
		} else if current[id].epoch > known.epoch {
			bounced = append(bounced, id)
		}
	}
	for _, id := range cc.liveBrokerIDs() {
		if _, ok := current[id]; !ok {
			dead = append(dead, id)
		}
	}
	c.log.Info("Broker change",
		zap.String("new-brokers", joinIDs(added)), zap.String("dead-brokers", joinIDs(dead)),
		zap.String("bounced-brokers", joinIDs(bounced)), zap.String("live-brokers", joinIDs(slices.Sorted(maps.Keys(current)))))

	for _, id := range added {
		c.channels.addBroker(current[id])
	}
	for _, id := range bounced {
		c.channels.removeBroker(id)
		c.channels.addBroker(current[id])
	}
	for _, id := range dead {
		c.channels.removeBroker(id)
	}
	if len(added) > 0 {
		for _, id := range added {
			cc.liveBrokers[id] = current[id]
		}
		if err := c.onBrokerStartup(added); err != nil {
			return err
		}
	}
	if len(bounced) > 0 {
		for _, id := range bounced {
			delete(cc.liveBrokers, id)
		}
		if err := c.onBrokerFailure(bounced); err != nil {
			return err
		}
		for _, id := range bounced {
			cc.liveBrokers[id] = current[id]
		}
		if err := c.onBrokerStartup(bounced); err != nil {
			return err
		}
	}
	if len(dead) > 0 {
		for _, id := range dead {
			delete(cc.liveBrokers, id)
		}
		return c.onBrokerFailure(dead)
	}
	return nil
}

// onBrokerStartup brings newly live brokers up to date: the existing brokers learn the new
// broker list, the new brokers the metadata of every partition; the new brokers' replicas go
// online (LeaderAndIsr with their partitions' current state); partitions without a leader get
// one if a new broker can lead them; reassignments waiting for a new broker and deletions waiting
// for one resume.
func (c *Controller) onBrokerStartup(brokers []int32) error {
	cc := c.cc
	c.log.Info("New broker startup callback", zap.String("brokers", joinIDs(brokers)))
	for _, id := range brokers {
		delete(cc.shuttingDown, id)
	}
	var existing []int32
	for _, id := range cc.liveBrokerIDs() {
		if !slices.Contains(brokers, id) {
			existing = append(existing, id)
		}
	}
	b := c.newBatch()
	b.addUpdateMetadata(existing, nil)
	b.send()
	b = c.newBatch()
	b.addUpdateMetadata(brokers, cc.partitionsWithLeadership())
	b.send()

	onNew := cc.partitionsOnBrokers(brokers)
	var replicas []partitionReplica
	for _, pr := range cc.replicasOf(onNew) {
		if slices.Contains(brokers, pr.replica) {
			replicas = append(replicas, pr)
		}
	}
	b = c.newBatch()
	if err := c.changeReplicaStates(b, replicas, onlineReplica); err != nil {
		return err
	}
	b.send()

	b = c.newBatch()
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	b.send()

	var reassigning []kafka.TopicPartition
	for _, tp := range onNew {
		if cc.isReassigning(tp) && slices.ContainsFunc(c.targetReplicas(tp), func(r int32) bool { return slices.Contains(brokers, r) }) {
			reassigning = append(reassigning, tp)
		}
	}
	if err := c.resumeReassignments(reassigning); err != nil {
		return err
	}
	var deleting []string
	for _, tp := range onNew {
		if cc.topicsToBeDeleted[tp.Topic] && !slices.Contains(deleting, tp.Topic) {
			deleting = append(deleting, tp.Topic)
		}
	}
	return c.resumeDeletionForTopics(deleting)
}

// onBrokerFailure reacts to brokers that died (Kafka's onBrokerFailure and
// onReplicasBecomeOffline): partitions they led go offline and get a new leader from their ISR
// where possible, their replicas go offline (leaving every ISR), replicas of topics being deleted
// become ineligible for deletion, and the remaining replicas and brokers are told.
func (c *Controller) onBrokerFailure(brokers []int32) error {
	cc := c.cc
	c.log.Info("Broker failure callback", zap.String("brokers", joinIDs(brokers)))
	for _, id := range brokers {
		delete(cc.shuttingDown, id)
	}
	var leaderless []kafka.TopicPartition
	for _, tp := range cc.partitionsWithLeadership() {
		if !cc.isOnline(cc.leadership[tp].leader) && !cc.topicsToBeDeleted[tp.Topic] {
			leaderless = append(leaderless, tp)
		}
	}
	var offline, deleting []partitionReplica
	for _, pr := range cc.replicasOf(cc.partitionsOnBrokers(brokers)) {
		switch {
		case !slices.Contains(brokers, pr.replica):
		case cc.topicsToBeDeleted[pr.tp.Topic]:
			deleting = append(deleting, pr)
		default:
			offline = append(offline, pr)
		}
	}
	b := c.newBatch()
	if err := c.changePartitionStates(b, leaderless, offlinePartition); err != nil {
		return err
	}
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	if err := c.changeReplicaStates(b, offline, offlineReplica); err != nil {
		return err
	}
	if len(leaderless) == 0 {
		b.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	}
	b.send()
	return c.failReplicaDeletion(deleting)
}

// processBrokerModifications handles a change of a broker's registration data (Kafka 2.0+'s
// BrokerModifications): new endpoints reach every broker through UpdateMetadata, and the
// controller reconnects to the broker.
func (c *Controller) processBrokerModifications(id int32) error {
	if c.cc == nil {
		return nil
	}
	cc := c.cc
	known, ok := cc.liveBrokers[id]
	if !ok {
		return nil
	}
	current, err := c.readLiveBrokers()
	if err != nil {
		return err
	}
	now, ok := current[id]
	if !ok || now.epoch != known.epoch || slices.Equal(now.reg.Endpoints, known.reg.Endpoints) {
		return nil // gone or re-registered (BrokerChange handles both), or nothing that matters
	}
	c.log.Info("Updated broker endpoints", zap.Int32("broker", id))
	cc.liveBrokers[id] = now
	c.channels.removeBroker(id)
	c.channels.addBroker(now)
	b := c.newBatch()
	b.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	b.send()
	return nil
}
