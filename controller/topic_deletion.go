package controller

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Topic deletion (Kafka's TopicDeletionManager). A topic named under /admin/delete_topics is
// queued; queued topics are left out of leader elections, rebalancing and partition addition.
// Deleting one takes its partitions offline and out of every broker's metadata (UpdateMetadata
// with leader -2), then moves each replica Offline -> ReplicaDeletionStarted (StopReplica with
// delete) -> ReplicaDeletionSuccessful as brokers answer. A replica whose broker is down, or
// whose broker failed the delete, becomes ReplicaDeletionIneligible and the topic waits; it
// resumes when that broker returns. When every replica is deleted, the znodes go, last:
// /brokers/topics/<t> (with its partition states), /config/topics/<t>, /admin/delete_topics/<t>.

// maxOpsPerMulti bounds one ZooKeeper transaction when deleting a topic's znodes (a transaction
// must fit in ZooKeeper's jute.maxbuffer).
const maxOpsPerMulti = 1000

// initializeTopicDeletion reads the pending deletions at failover: without delete.topic.enable
// the requests are removed; otherwise existing topics are queued, ineligible if a replica's
// broker is down or a reassignment is in progress.
func (c *Controller) initializeTopicDeletion() error {
	cc := c.cc
	children, err := c.childrenW(zkpaths.DeleteTopics, activeScope, func(zk.Event) event { return topicDeletionEvent{} })
	if err != nil {
		return err
	}
	slices.Sort(children)
	for _, topic := range children {
		if _, ok := cc.topics[topic]; !ok || !c.cfg.DeleteTopicEnable {
			if err := c.deleteFenced(zkpaths.DeleteTopicPath(topic)); err != nil {
				return err
			}
			continue
		}
		cc.topicsToBeDeleted[topic] = true
		offline := slices.ContainsFunc(cc.replicasOf(cc.partitionsOfTopic(topic)), func(pr partitionReplica) bool {
			return !cc.isOnline(pr.replica)
		})
		if offline || cc.topicReassigning(topic) {
			cc.topicsIneligibleForDel[topic] = true
		}
	}
	if len(cc.topicsToBeDeleted) > 0 {
		c.log.Info("Initialized topic deletion", zap.Strings("topics-to-be-deleted", slices.Sorted(maps.Keys(cc.topicsToBeDeleted))),
			zap.Strings("ineligible", slices.Sorted(maps.Keys(cc.topicsIneligibleForDel))))
	}
	return nil
}

// processTopicDeletion handles a change of /admin/delete_topics' children (Kafka's
// TopicDeletion event).
func (c *Controller) processTopicDeletion() error {
	if c.cc == nil {
		return nil
	}
	cc := c.cc
	children, err := c.childrenW(zkpaths.DeleteTopics, activeScope, func(zk.Event) event { return topicDeletionEvent{} })
	if err != nil {
		return err
	}
	slices.Sort(children)
	var queued []string
	for _, topic := range children {
		if _, ok := cc.topics[topic]; !ok {
			c.log.Info("Removing a deletion request for a topic that does not exist", zap.String("topic", topic))
			if err := c.deleteFenced(zkpaths.DeleteTopicPath(topic)); err != nil {
				return err
			}
			continue
		}
		if !cc.topicsToBeDeleted[topic] {
			queued = append(queued, topic)
		}
	}
	if len(queued) == 0 {
		return nil
	}
	if !c.cfg.DeleteTopicEnable {
		c.log.Info("Removing deletion requests: delete.topic.enable is false", zap.Strings("topics", queued))
		for _, topic := range queued {
			if err := c.deleteFenced(zkpaths.DeleteTopicPath(topic)); err != nil {
				return err
			}
		}
		return nil
	}
	c.log.Info("Starting topic deletion", zap.Strings("topics", queued))
	for _, topic := range queued {
		cc.topicsToBeDeleted[topic] = true
		if cc.topicReassigning(topic) {
			c.log.Info("Topic deletion waits for a reassignment in progress", zap.String("topic", topic))
			cc.topicsIneligibleForDel[topic] = true
		}
	}
	return c.resumeDeletions()
}

// resumeDeletionForTopics clears the ineligibility of topics (a broker hosting one of their
// replicas came back, or their reassignment ended) and resumes deletions.
func (c *Controller) resumeDeletionForTopics(topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	for _, topic := range topics {
		delete(c.cc.topicsIneligibleForDel, topic)
	}
	return c.resumeDeletions()
}

// resumeDeletions advances every queued deletion: completes those whose replicas are all
// deleted, retries ineligible replicas, and starts deleting eligible topics.
func (c *Controller) resumeDeletions() error {
	cc := c.cc
	var retry, eligible []string
	for _, topic := range slices.Sorted(maps.Keys(cc.topicsToBeDeleted)) {
		switch {
		case c.areAllReplicasInState(topic, replicaDeletionSuccessful):
			if err := c.completeDeleteTopic(topic); err != nil {
				return err
			}
			continue
		case len(c.replicasInState(topic, replicaDeletionStarted)) > 0:
			// Waiting for StopReplica responses.
		case len(c.replicasInState(topic, replicaDeletionIneligible)) > 0:
			retry = append(retry, topic)
		}
		if c.eligibleForDeletion(topic) {
			eligible = append(eligible, topic)
		}
	}
	if len(retry) > 0 {
		// Ineligible replicas go back to OfflineReplica so that a new attempt can start them.
		var replicas []partitionReplica
		for _, topic := range retry {
			replicas = append(replicas, c.replicasInState(topic, replicaDeletionIneligible)...)
		}
		b := c.newBatch()
		if err := c.changeReplicaStates(b, replicas, offlineReplica); err != nil {
			return err
		}
		b.send()
	}
	if len(eligible) > 0 {
		return c.onTopicDeletion(eligible)
	}
	return nil
}

// eligibleForDeletion: queued, no StopReplica outstanding, not waiting for a broker or a
// reassignment.
func (c *Controller) eligibleForDeletion(topic string) bool {
	cc := c.cc
	return cc.topicsToBeDeleted[topic] && !cc.topicsIneligibleForDel[topic] &&
		len(c.replicasInState(topic, replicaDeletionStarted)) == 0
}

// onTopicDeletion deletes topics' replicas: the first time, their partitions go offline and
// then non-existent; every broker drops them from its metadata (leader -2); replicas on
// brokers that are down become ineligible, the others are stopped and deleted.
func (c *Controller) onTopicDeletion(topics []string) error {
	cc := c.cc
	c.log.Info("Topic deletion callback", zap.Strings("topics", topics))
	var unseen, partitions []kafka.TopicPartition
	for _, topic := range topics {
		for _, tp := range cc.partitionsOfTopic(topic) {
			partitions = append(partitions, tp)
			if !cc.topicsDeletionStarted[topic] {
				unseen = append(unseen, tp)
			}
		}
	}
	b := c.newBatch()
	if len(unseen) > 0 {
		if err := c.changePartitionStates(b, unseen, offlinePartition); err != nil {
			return err
		}
		if err := c.changePartitionStates(b, unseen, nonExistentPartition); err != nil {
			return err
		}
		for _, topic := range topics {
			cc.topicsDeletionStarted[topic] = true
		}
	}
	b.addUpdateMetadata(cc.liveBrokerIDs(), partitions)
	b.send()

	b = c.newBatch()
	var dead, retry []partitionReplica
	for _, topic := range topics {
		for _, pr := range cc.replicasOf(cc.partitionsOfTopic(topic)) {
			switch {
			case !cc.isOnline(pr.replica):
				dead = append(dead, pr)
			case c.replicaState(pr) != replicaDeletionSuccessful:
				retry = append(retry, pr)
			}
		}
	}
	if err := c.changeReplicaStates(b, dead, replicaDeletionIneligible); err != nil {
		return err
	}
	for _, pr := range dead {
		if !cc.topicsIneligibleForDel[pr.tp.Topic] {
			c.log.Info("Topic deletion waits for a broker that is down", zap.String("topic", pr.tp.Topic), zap.Int32("broker", pr.replica))
			cc.topicsIneligibleForDel[pr.tp.Topic] = true
		}
	}
	if err := c.changeReplicaStates(b, retry, offlineReplica); err != nil {
		return err
	}
	if err := c.changeReplicaStates(b, retry, replicaDeletionStarted); err != nil {
		return err
	}
	b.send()
	return nil
}

// failReplicaDeletion marks replicas of topics being deleted ineligible (their broker died or
// failed the delete); their topics wait.
func (c *Controller) failReplicaDeletion(replicas []partitionReplica) error {
	if len(replicas) == 0 {
		return nil
	}
	b := c.newBatch()
	if err := c.changeReplicaStates(b, replicas, replicaDeletionIneligible); err != nil {
		return err
	}
	b.send()
	for _, pr := range replicas {
		c.cc.topicsIneligibleForDel[pr.tp.Topic] = true
	}
	return c.resumeDeletions()
}

// processStopReplicaResponse records, for topics being deleted, which replicas the broker
// deleted and which it failed to, and advances their deletions.
func (c *Controller) processStopReplicaResponse(broker int32, req *kmsg.StopReplicaRequest, resp kmsg.Response) error {
	if c.cc == nil {
		return nil
	}
	cc := c.cc
	r, ok := resp.(*kmsg.StopReplicaResponse)
	if !ok {
		c.log.Error("Unexpected response to StopReplica", zap.Int32("target-broker-id", broker))
		return nil
	}
	topLevel := kerr.ErrorForCode(r.ErrorCode)
	if topLevel != nil {
		c.stateLog.Error("Received error in StopReplica response", zap.Int32("target-broker-id", broker), zap.Error(topLevel))
	}
	partitionErrs := map[kafka.TopicPartition]error{}
	for _, p := range r.Partitions {
		partitionErrs[kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = kerr.ErrorForCode(p.ErrorCode)
	}
	var succeeded, failed []partitionReplica
	for _, t := range req.Topics {
		if !cc.topicsToBeDeleted[t.Topic] {
			continue
		}
		for _, p := range t.PartitionStates {
			if !p.Delete {
				continue
			}
			pr := partitionReplica{kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}, broker}
			if c.replicaState(pr) != replicaDeletionStarted {
				continue
			}
			if err := cmpOr(topLevel, partitionErrs[pr.tp]); err != nil {
				c.stateLog.Warn("Broker failed to delete a replica", zap.Stringer("replica", pr), zap.Error(err))
				failed = append(failed, pr)
				continue
			}
			succeeded = append(succeeded, pr)
		}
	}
	if len(succeeded) > 0 {
		b := c.newBatch()
		if err := c.changeReplicaStates(b, succeeded, replicaDeletionSuccessful); err != nil {
			return err
		}
		b.send()
	}
	if len(failed) > 0 {
		return c.failReplicaDeletion(failed)
	}
	if len(succeeded) > 0 {
		return c.resumeDeletions()
	}
	return nil
}

func cmpOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// completeDeleteTopic ends a deletion: replicas become non-existent, and the topic's znodes are
// removed (fenced): /brokers/topics/<t> with everything under it, /config/topics/<t>, and last
// the request /admin/delete_topics/<t>.
func (c *Controller) completeDeleteTopic(topic string) error {
	cc := c.cc
	b := c.newBatch()
	if err := c.changeReplicaStates(b, c.replicasInState(topic, replicaDeletionSuccessful), nonExistentReplica); err != nil {
		return err
	}
	b.send()
	if err := c.deleteRecursiveFenced(zkpaths.TopicPath(topic)); err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	if err := c.deleteFenced(zkpaths.TopicConfigPath(topic)); err != nil {
		return fmt.Errorf("delete config of topic %s: %w", topic, err)
	}
	if err := c.deleteFenced(zkpaths.DeleteTopicPath(topic)); err != nil {
		return fmt.Errorf("delete deletion request of topic %s: %w", topic, err)
	}
	delete(c.watches, watchKey{dataWatch, zkpaths.TopicPath(topic)})
	cc.removeTopic(topic)
	c.log.Info("Deletion of topic successfully completed", zap.String("topic", topic))
	return nil
}

// deleteRecursiveFenced deletes a znode and everything under it, children first, in fenced
// transactions of at most maxOpsPerMulti deletes.
func (c *Controller) deleteRecursiveFenced(root string) error {
	var paths []string // parents before children
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		children, _, err := c.store.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		paths = append(paths, p)
		slices.Sort(children)
		for _, child := range children {
			queue = append(queue, path.Join(p, child))
		}
	}
	slices.Reverse(paths)
	for len(paths) > 0 {
		n := min(len(paths), maxOpsPerMulti)
		ops := make([]any, 0, n)
		for _, p := range paths[:n] {
			ops = append(ops, &zk.DeleteRequest{Path: p, Version: -1})
		}
		if _, err := c.fencedMulti(ops...); err != nil {
			if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
				return err
			}
			// Someone else deleted or created a node meanwhile: fall back to one at a time.
			for _, p := range paths[:n] {
				if err := c.deleteFenced(p); err != nil && !errors.Is(err, zk.ErrNotEmpty) {
					return err
				}
			}
		}
		paths = paths[n:]
	}
	return nil
}
