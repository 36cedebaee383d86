package controller

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// doControlledShutdown is the controller's side of ControlledShutdown (Kafka's
// doControlledShutdown): the broker joins the shutting-down set, from then on it may not lead or
// join an ISR; each partition it leads (replication factor above 1, topic not being deleted)
// gets a new leader from the rest of the ISR with the ISR shrunk, and it leaves the ISR of each
// partition it follows (StopReplica without delete, leader epoch + 1). The answer lists the
// partitions it still leads: those without another ISR member to take over.
func (c *Controller) doControlledShutdown(id int32, brokerEpoch int64) ([]kafka.TopicPartition, error) {
	cc := c.cc
	lb, ok := cc.liveBrokers[id]
	if !ok {
		return nil, fmt.Errorf("broker %d is not registered: %w", id, kerr.BrokerNotAvailable)
	}
	if brokerEpoch != -1 && brokerEpoch < lb.epoch {
		return nil, fmt.Errorf("broker %d sent epoch %d, older than its registration's %d: %w", id, brokerEpoch, lb.epoch, kerr.StaleBrokerEpoch)
	}
	cc.shuttingDown[id] = true
	c.log.Info("Shutting down broker", zap.Int32("broker", id),
		zap.String("live-brokers", joinIDs(cc.onlineBrokerIDs())))

	var led []kafka.TopicPartition
	var followed []partitionReplica
	for _, tp := range c.controlledShutdownPartitions(id) {
		if cc.leadership[tp].leader == id {
			led = append(led, tp)
		} else {
			followed = append(followed, partitionReplica{tp, id})
		}
	}
	b := c.newBatch()
	if _, err := c.changePartitionStatesWith(b, led, onlinePartition, strategy{kind: controlledShutdownElection}); err != nil {
		return nil, err
	}
	if err := c.changeReplicaStates(b, followed, offlineReplica); err != nil {
		return nil, err
	}
	b.send()

	var remaining []kafka.TopicPartition
	for _, tp := range c.controlledShutdownPartitions(id) {
		if cc.leadership[tp].leader == id {
			remaining = append(remaining, tp)
		}
	}
	c.log.Info("Controlled shutdown handled", zap.Int32("broker", id), zap.Int("moved-leaders", len(led)-len(remaining)),
		zap.Int("left-isrs", len(followed)), zap.Int("remaining-partitions", len(remaining)))
	return remaining, nil
}

// controlledShutdownPartitions lists the partitions a controlled shutdown acts on: those with a
// replica on the broker, more than one replica, leadership known, and topic not being deleted.
func (c *Controller) controlledShutdownPartitions(id int32) []kafka.TopicPartition {
	cc := c.cc
	return slices.DeleteFunc(cc.partitionsOnBrokers([]int32{id}), func(tp kafka.TopicPartition) bool {
		_, ok := cc.leadership[tp]
		return !ok || len(cc.replicas(tp)) <= 1 || cc.topicsToBeDeleted[tp.Topic]
	})
}
