package controller

import (
	"errors"
	"slices"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// ISR change notifications: a partition leader that changed its ISR in the state znode (the
// legacy ISR protocol) batches the partitions into a sequential
// /isr_change_notification/isr_change_NNNNNNNNNN. The controller re-reads those partitions'
// states, tells every broker through UpdateMetadata, checks reassignments waiting for their new
// replicas to join the ISR, and deletes the notifications it processed (fenced).

// processIsrChangeNotification handles a change of /isr_change_notification's children.
func (c *Controller) processIsrChangeNotification() error {
	if c.cc == nil {
		return nil
	}
	cc := c.cc
	children, err := c.childrenW(zkpaths.IsrChangeNotification, activeScope, func(zk.Event) event { return isrChangeNotificationEvent{} })
	if err != nil {
		return err
	}
	if len(children) == 0 {
		return nil
	}
	slices.Sort(children)
	seen := map[kafka.TopicPartition]bool{}
	var partitions []kafka.TopicPartition
	for _, child := range children {
		data, _, err := c.store.Get(zkpaths.IsrChangePath(child))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		n, err := zkpaths.DecodeIsrChangeNotificationData(data)
		if err != nil {
			c.log.Error("Ignoring an unreadable ISR change notification", zap.String("child", child), zap.Error(err))
			continue
		}
		for _, p := range n.Partitions {
			tp := kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}
			if _, ok := cc.leadership[tp]; ok && !seen[tp] {
				seen[tp] = true
				partitions = append(partitions, tp)
			}
		}
	}
	slices.SortFunc(partitions, kafka.Compare)
	reads := c.readPartitionStates(partitions)
	var changed, reassigning []kafka.TopicPartition
	for i, tp := range partitions {
		if reads[i].err != nil || !reads[i].ok {
			continue
		}
		cc.leadership[tp] = reads[i].state
		changed = append(changed, tp)
		if cc.isReassigning(tp) {
			reassigning = append(reassigning, tp)
		}
	}
	if len(changed) > 0 {
		c.log.Info("Processing ISR change notifications", zap.Int("partitions", len(changed)))
		b := c.newBatch()
		b.addUpdateMetadata(cc.liveBrokerIDs(), changed)
		b.send()
	}
	if err := c.maybeCompleteReassignments(reassigning); err != nil {
		return err
	}
	return c.deleteIsrChangeNotifications(children)
}

// deleteIsrChangeNotifications deletes the given notification children (fenced); nil means
// every child there is (at failover).
func (c *Controller) deleteIsrChangeNotifications(children []string) error {
	if children == nil {
		var err error
		if children, _, err = c.store.Children(zkpaths.IsrChangeNotification); err != nil {
			return err
		}
	}
	for _, child := range children {
		if err := c.deleteFenced(zkpaths.IsrChangePath(child)); err != nil {
			return err
		}
	}
	return nil
}
