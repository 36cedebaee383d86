package controller

import (
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// processTopicChange handles a change of /brokers/topics' children: new topics are read, watched
// and brought online; topics whose znode disappeared are forgotten.
func (c *Controller) processTopicChange() error {
	if c.cc == nil {
		return nil
	}
	cc := c.cc
	topics, err := c.readTopics()
	if err != nil {
		return err
	}
	var added, deleted []string
	for _, topic := range topics {
		if _, ok := cc.topics[topic]; !ok {
			added = append(added, topic)
		}
	}
	for topic := range cc.topics {
		if !slices.Contains(topics, topic) {
			deleted = append(deleted, topic)
		}
	}
	slices.Sort(added)
	slices.Sort(deleted)
	for _, topic := range deleted {
		cc.removeTopic(topic)
	}
	loaded, err := c.loadTopics(added)
	if err != nil {
		return err
	}
	var partitions []kafka.TopicPartition
	for _, topic := range added {
		t, ok := loaded[topic]
		if !ok {
			continue
		}
		cc.topics[topic] = t
		for _, p := range t.assignment.PartitionIDs() {
			partitions = append(partitions, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	if len(added) == 0 && len(deleted) == 0 {
		return nil
	}
	c.log.Info("Topics changed", zap.String("new-topics", strings.Join(added, ",")),
		zap.String("deleted-topics", strings.Join(deleted, ",")))
	return c.onNewPartitionCreation(partitions)
}

// processPartitionModifications handles a change of a topic's assignment: partitions the
// controller does not know yet are created.
func (c *Controller) processPartitionModifications(topic string) error {
	if c.cc == nil {
		return nil
	}
	known, ok := c.cc.topics[topic]
	if !ok {
		return nil // a new topic: TopicChange brings it in
	}
	if c.cc.topicsToBeDeleted[topic] {
		c.log.Info("Ignoring a partition change of a topic being deleted", zap.String("topic", topic))
		return nil
	}
	t, ok, err := c.loadTopic(topic)
	if err != nil || !ok {
		return err
	}
	if known.id == ([16]byte{}) {
		known.id, known.assignment.TopicID = t.id, t.assignment.TopicID
	}
	var (
		added []kafka.TopicPartition
		ids   []int32
	)
	for _, p := range t.assignment.PartitionIDs() {
		if _, ok := known.assignment.Partitions[p]; ok {
			continue
		}
		known.assignment.Partitions[p] = t.assignment.Partitions[p]
		added = append(added, kafka.TopicPartition{Topic: topic, Partition: p})
		ids = append(ids, p)
	}
	if len(added) == 0 {
		return nil
	}
	c.log.Info("New partitions to be added", zap.String("topic", topic), zap.Int32s("partitions", ids))
	return c.onNewPartitionCreation(added)
}

// onNewPartitionCreation brings new partitions online: partitions to NewPartition, their
// replicas to NewReplica, partitions to OnlinePartition (which creates their state znodes and
// sends LeaderAndIsr with isNew to their replicas and UpdateMetadata to every broker), replicas
// to OnlineReplica.
func (c *Controller) onNewPartitionCreation(partitions []kafka.TopicPartition) error {
	if len(partitions) == 0 {
		return nil
	}
	b := c.newBatch()
	replicas := c.cc.replicasOf(partitions)
	if err := c.changePartitionStates(b, partitions, newPartition); err != nil {
		return err
	}
	if err := c.changeReplicaStates(b, replicas, newReplica); err != nil {
		return err
	}
	if err := c.changePartitionStates(b, partitions, onlinePartition); err != nil {
		return err
	}
	if err := c.changeReplicaStates(b, replicas, onlineReplica); err != nil {
		return err
	}
	b.send()
	return nil
}
