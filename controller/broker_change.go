package controller

import (
	"maps"
	"slices"

	"go.uber.org/zap"
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
// broker list, the new brokers the metadata of every partition, the new brokers' replicas get
// LeaderAndIsr with their partitions' current state, and partitions without a leader get one if
// a new broker can lead them.
func (c *Controller) onBrokerStartup(brokers []int32) error {
	cc := c.cc
	c.log.Info("New broker startup callback", zap.String("brokers", joinIDs(brokers)))
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

	b = c.newBatch()
	for _, tp := range cc.partitionsOnBrokers(brokers) {
		var hosts []int32
		for _, r := range cc.replicas(tp) {
			if slices.Contains(brokers, r) {
				hosts = append(hosts, r)
			}
		}
		b.addLeaderAndISR(hosts, tp, false)
	}
	b.send()

	b = c.newBatch()
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	b.send()
	return nil
}

// onBrokerFailure reacts to brokers that died: partitions they led go offline and get a new
// leader from their ISR where possible, their replicas leave every ISR, and the remaining
// replicas and brokers are told.
func (c *Controller) onBrokerFailure(brokers []int32) error {
	cc := c.cc
	c.log.Info("Broker failure callback", zap.String("brokers", joinIDs(brokers)))
	var leaderless []topicPartition
	for _, tp := range cc.partitionsWithLeadership() {
		if !cc.isLive(cc.leadership[tp].leader) {
			leaderless = append(leaderless, tp)
		}
	}
	b := c.newBatch()
	if err := c.changePartitionStates(b, leaderless, offlinePartition); err != nil {
		return err
	}
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	for _, id := range brokers {
		if err := c.removeReplicaFromISR(b, id, cc.partitionsOnBrokers([]int32{id})); err != nil {
			return err
		}
	}
	if len(leaderless) == 0 {
		b.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	}
	b.send()
	return nil
}
