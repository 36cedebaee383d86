package controller

import (
	"errors"
	"fmt"
	"maps"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// onControllerFailover builds the new controller's picture of the cluster from ZooKeeper and
// takes charge (Kafka 2.8's onControllerFailover): /feature set up, watches on every path the controller
// follows; the live brokers, every topic's assignment and every partition's state, read
// pipelined; UpdateMetadata with the broker list to every broker; the replica and partition
// state machines started (LeaderAndIsr for every partition to its live replicas, leaders elected
// where needed); then pending reassignments, deletions and preferred elections resume, and the
// auto-rebalance check is scheduled.
func (c *Controller) onControllerFailover() error {
	cc := c.cc
	if err := c.maybeSetupFeatureVersioning(); err != nil {
		return err
	}
	if err := c.armAdminWatches(); err != nil {
		return fmt.Errorf("watch admin paths: %w", err)
	}
	// Pending ISR change notifications describe states this controller is about to read anyway.
	if err := c.deleteIsrChangeNotifications(nil); err != nil {
		return err
	}
	brokers, err := c.readLiveBrokers()
	if err != nil {
		return fmt.Errorf("read live brokers: %w", err)
	}
	cc.liveBrokers = brokers
	topics, err := c.readTopics()
	if err != nil {
		return fmt.Errorf("read topics: %w", err)
	}
	loaded, err := c.loadTopics(topics)
	if err != nil {
		return err
	}
	maps.Copy(cc.topics, loaded)
	all := cc.allPartitions()
	reads := c.readPartitionStates(all)
	for i, tp := range all {
		r := reads[i]
		if errors.Is(r.err, zkpaths.ErrMalformed) {
			c.stateLog.Error("Ignoring an unreadable partition state", zap.Stringer("partition", tp), zap.Error(r.err))
			continue
		}
		if r.err != nil {
			return fmt.Errorf("read partition %s: %w", tp, r.err)
		}
		if r.ok {
			cc.leadership[tp] = r.state
		}
	}
	c.log.Info("Initialized controller context",
		zap.String("live-brokers", joinIDs(cc.liveBrokerIDs())), zap.Int("topics", len(cc.topics)),
		zap.Int("partitions", len(all)))

	for _, id := range cc.liveBrokerIDs() {
		c.channels.addBroker(cc.liveBrokers[id])
	}
	if err := c.initializeTopicDeletion(); err != nil {
		return err
	}
	// Brokers need the broker list before they can act on LeaderAndIsr.
	b := c.newBatch()
	b.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	b.send()

	// Replica state machine start-up sends every live replica its partition's current state;
	// partition state machine start-up: a partition with a live leader is online, one whose
	// leader is gone is offline, one never brought online is new, and all but the online ones
	// get an election.
	b = c.newBatch()
	if err := c.startReplicaStateMachine(b); err != nil {
		return err
	}
	for _, tp := range all {
		state, ok := cc.leadership[tp]
		switch {
		case !ok:
			cc.partitionStates[tp] = newPartition
		case cc.isOnline(state.leader):
			cc.partitionStates[tp] = onlinePartition
		default:
			cc.partitionStates[tp] = offlinePartition
		}
	}
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	b.addUpdateMetadata(cc.liveBrokerIDs(), cc.partitionsWithLeadership())
	b.send()
	c.log.Info("Sent metadata of every partition to every live broker", zap.Int("partitions", len(cc.leadership)))

	if err := c.initializeReassignments(); err != nil {
		return err
	}
	if err := c.resumeDeletions(); err != nil {
		return err
	}
	if err := c.processPreferredReplicaElectionZnode(); err != nil {
		return err
	}
	c.scheduleAutoRebalance(autoRebalanceFirstDelay)
	c.log.Info("Controller failover complete")
	return nil
}

// armAdminWatches arms the watches of the admin and notification paths (Kafka registers them
// before reading anything, so no request made during the failover is missed).
func (c *Controller) armAdminWatches() error {
	if _, err := c.childrenW(zkpaths.DeleteTopics, activeScope, func(zk.Event) event { return topicDeletionEvent{} }); err != nil {
		return err
	}
	if _, err := c.childrenW(zkpaths.IsrChangeNotification, activeScope, func(zk.Event) event { return isrChangeNotificationEvent{} }); err != nil {
		return err
	}
	if _, _, err := c.existsW(zkpaths.PreferredReplicaElection, activeScope, preferredElectionWatchEvent); err != nil {
		return err
	}
	_, _, err := c.existsW(zkpaths.ReassignPartitions, activeScope, reassignWatchEvent)
	return err
}

// loadTopics reads the assignments of topics, pipelined, arming their data watches, and gives a
// topic id to any topic without one. Topics gone meanwhile are left out; unreadable ones are
// logged and left out.
func (c *Controller) loadTopics(topics []string) (map[string]*topicInfo, error) {
	out := make(map[string]*topicInfo, len(topics))
	for _, r := range c.readTopicsW(topics) {
		switch {
		case errors.Is(r.err, zk.ErrNoNode):
			continue
		case errors.Is(r.err, zkpaths.ErrMalformed):
			c.armTopicWatch(r)
			c.log.Error("Ignoring a topic whose assignment is unreadable", zap.String("topic", r.topic), zap.Error(r.err))
			continue
		case r.err != nil:
			return nil, fmt.Errorf("read topic %s: %w", r.topic, r.err)
		}
		c.armTopicWatch(r)
		if r.t.assignment.TopicID == "" {
			t, ok, err := c.loadTopic(r.topic)
			if err != nil {
				return nil, fmt.Errorf("read topic %s: %w", r.topic, err)
			}
			if ok {
				out[r.topic] = t
			}
			continue
		}
		out[r.topic] = r.t
	}
	return out, nil
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
	if t.id, err = zkpaths.ParseUUID(withID.TopicID); err != nil {
		return nil, false, err
	}
	c.log.Info("Assigned topic id", zap.String("topic", topic), zap.String("topic-id", withID.TopicID))
	return t, true, nil
}
