package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// onControllerFailover builds the new controller's picture of the cluster from ZooKeeper and
// brings every partition it can online (Kafka's onControllerFailover, for the parts this
// controller has: brokers, topics and partition leadership).
func (c *Controller) onControllerFailover() error {
	cc := c.cc
	brokers, err := c.readLiveBrokers()
	if err != nil {
		return fmt.Errorf("read live brokers: %w", err)
	}
	cc.liveBrokers = brokers
	topics, err := c.readTopics()
	if err != nil {
		return fmt.Errorf("read topics: %w", err)
	}
	for _, topic := range topics {
		t, ok, err := c.loadTopic(topic)
		if errors.Is(err, zkpaths.ErrMalformed) {
			c.log.Error("Ignoring a topic whose assignment is unreadable", zap.String("topic", topic), zap.Error(err))
			continue
		}
		if err != nil {
			return fmt.Errorf("read topic %s: %w", topic, err)
		}
		if ok {
			cc.topics[topic] = t
		}
	}
	for _, tp := range cc.allPartitions() {
		state, ok, err := c.readPartitionState(tp)
		if errors.Is(err, zkpaths.ErrMalformed) {
			c.stateLog.Error("Ignoring an unreadable partition state", zap.Stringer("partition", tp), zap.Error(err))
			continue
		}
		if err != nil {
			return fmt.Errorf("read partition %s: %w", tp, err)
		}
		if ok {
			cc.leadership[tp] = state
		}
	}
	c.log.Info("Initialized controller context",
		zap.String("live-brokers", joinIDs(cc.liveBrokerIDs())), zap.Int("topics", len(cc.topics)),
		zap.Int("partitions", len(cc.allPartitions())))

	for _, id := range cc.liveBrokerIDs() {
		c.channels.addBroker(cc.liveBrokers[id])
	}
	// Brokers need the broker list before they can act on LeaderAndIsr.
	b := c.newBatch()
	b.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	b.send()

	// Partition state machine start-up: a partition with a live leader is online, one whose
	// leader is gone is offline, one never brought online is new.
	for _, tp := range cc.allPartitions() {
		state, ok := cc.leadership[tp]
		switch {
		case !ok:
			cc.partitionStates[tp] = newPartition
		case cc.isLive(state.leader):
			cc.partitionStates[tp] = onlinePartition
		default:
			cc.partitionStates[tp] = offlinePartition
		}
	}
	b = c.newBatch()
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	if err := c.removeOfflineReplicas(b, cc.allPartitions()); err != nil {
		return err
	}
	// Every live replica learns the current state of its partitions, and every broker the
	// metadata of every partition.
	for _, tp := range cc.partitionsWithLeadership() {
		b.addLeaderAndISR(cc.liveReplicas(tp), tp, false)
	}
	b.addUpdateMetadata(cc.liveBrokerIDs(), cc.partitionsWithLeadership())
	b.send()
	c.log.Info("Controller failover complete")
	return nil
}

// removeOfflineReplicas takes every replica of partitions that lives on a dead broker out of the
// partition's ISR, broker by broker.
func (c *Controller) removeOfflineReplicas(b *requestBatch, partitions []topicPartition) error {
	byBroker := map[int32][]topicPartition{}
	for _, tp := range partitions {
		for _, r := range c.cc.replicas(tp) {
			if !c.cc.isLive(r) {
				byBroker[r] = append(byBroker[r], tp)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(byBroker)) {
		if err := c.removeReplicaFromISR(b, id, byBroker[id]); err != nil {
			return err
		}
	}
	return nil
}

// loadTopic reads a topic's assignment, arming its data watch, and gives it a topic id if it has
// none (a topic created by a tool older than Kafka 2.8). ok is false if the topic is gone.
func (c *Controller) loadTopic(topic string) (t *topicInfo, ok bool, err error) {
	t, stat, ok, err := c.readTopic(topic)
	if err != nil || !ok || t.assignment.TopicID != "" {
		return t, ok, err
	}
	withID := t.assignment
	withID.TopicID = zkpaths.NewTopicID()
	_, err = c.setFenced(zkpaths.TopicPath(topic), withID.Encode(), stat.Version)
	switch {
	case errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode):
		// Changed or deleted meanwhile: the data watch brings the topic back to us.
		return t, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("assign topic id: %w", err)
	}
	t.assignment = withID
	if t.id, err = decodeTopicID(withID.TopicID); err != nil {
		return nil, false, err
	}
	c.log.Info("Assigned topic id", zap.String("topic", topic), zap.String("topic-id", withID.TopicID))
	return t, true, nil
}
