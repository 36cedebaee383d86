package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Leader elections asked for by an admin (/admin/preferred_replica_election, the ElectLeaders
// API) or by the controller itself (auto-rebalance), and the re-election of offline partitions
// when unclean leader election gets enabled.

// autoRebalanceFirstDelay is Kafka's hard-coded delay of the first leader-imbalance check after
// a failover.
const autoRebalanceFirstDelay = 5 * time.Second

// ElectionType is the ElectLeaders election type (KIP-460): the wire values.
type ElectionType int8

const (
	// PreferredElection moves leadership to the first assigned replica if it is in the ISR.
	PreferredElection ElectionType = 0
	// UncleanElection elects any live replica for partitions without a live leader.
	UncleanElection ElectionType = 1
)

// preferredElectionWatchEvent maps every firing of the exists watch on
// /admin/preferred_replica_election to the event, its deletion too: the handler's read arms the
// watch again, so the next request is seen (Kafka 2.8 enqueues the event after deleting the
// znode for the same reason).
func preferredElectionWatchEvent(zk.Event) event { return preferredReplicaElectionEvent{} }

// processPreferredReplicaElectionZnode handles /admin/preferred_replica_election: elect the
// preferred replicas of the partitions listed, skipping unknown partitions, partitions of topics
// being deleted and partitions already led by their preferred replica; then delete the znode
// (fenced). Reading it re-arms the exists watch.
func (c *Controller) processPreferredReplicaElectionZnode() error {
	if c.cc == nil {
		return nil
	}
	exists, _, err := c.existsW(zkpaths.PreferredReplicaElection, activeScope, preferredElectionWatchEvent)
	if err != nil || !exists {
		return err
	}
	data, _, err := c.store.Get(zkpaths.PreferredReplicaElection)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	var partitions []kafka.TopicPartition
	if req, err := zkpaths.DecodePreferredReplicaElectionData(data); err != nil {
		c.log.Error("Ignoring an unreadable preferred replica election request", zap.Error(err))
	} else {
		for _, p := range req.Partitions {
			partitions = append(partitions, kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition})
		}
	}
	results, err := c.electLeadersFor(partitions, PreferredElection)
	if err != nil {
		return err
	}
	for _, tp := range slices.SortedFunc(maps.Keys(results), kafka.Compare) {
		if err := results[tp]; err != nil {
			c.log.Info("Preferred replica election not done", zap.Stringer("partition", tp), zap.Error(err))
		}
	}
	return c.deleteFenced(zkpaths.PreferredReplicaElection)
}

// electLeadersFor is the core of ElectLeaders (Kafka's processReplicaLeaderElection): per
// partition nil on success, or an error wrapping UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_TOPIC_EXCEPTION (topic being deleted), ELECTION_NOT_NEEDED,
// PREFERRED_LEADER_NOT_AVAILABLE or ELIGIBLE_LEADERS_NOT_AVAILABLE.
func (c *Controller) electLeadersFor(partitions []kafka.TopicPartition, typ ElectionType) (map[kafka.TopicPartition]error, error) {
	cc := c.cc
	results := make(map[kafka.TopicPartition]error, len(partitions))
	var electable []kafka.TopicPartition
	for _, tp := range partitions {
		l, ok := cc.leadership[tp]
		switch {
		case !ok:
			results[tp] = fmt.Errorf("partition %s has no leadership information: %w", tp, kerr.UnknownTopicOrPartition)
		case cc.topicsToBeDeleted[tp.Topic]:
			results[tp] = fmt.Errorf("deletion of topic %s is in progress: %w", tp.Topic, kerr.InvalidTopicException)
		case typ == PreferredElection && len(cc.replicas(tp)) > 0 && l.leader == cc.replicas(tp)[0]:
			results[tp] = fmt.Errorf("partition %s is already led by its preferred replica: %w", tp, kerr.ElectionNotNeeded)
		case typ == UncleanElection && l.leader != noLeader && cc.isOnline(l.leader):
			results[tp] = fmt.Errorf("partition %s has a live leader: %w", tp, kerr.ElectionNotNeeded)
		default:
			electable = append(electable, tp)
		}
	}
	if len(electable) == 0 {
		return results, nil
	}
	strat := strategy{kind: preferredElection}
	notAvailable := kerr.PreferredLeaderNotAvailable
	if typ == UncleanElection {
		strat = strategy{kind: offlineElection, allowUnclean: true}
		notAvailable = kerr.EligibleLeadersNotAvailable
	}
	c.log.Info("Starting replica leader election", zap.Stringer("strategy", strat.kind), zap.Int("partitions", len(electable)))
	b := c.newBatch()
	failed, err := c.changePartitionStatesWith(b, electable, onlinePartition, strat)
	b.send()
	if err != nil {
		return nil, err
	}
	for _, tp := range electable {
		if ferr, ok := failed[tp]; ok {
			results[tp] = fmt.Errorf("%w: %w", notAvailable, ferr)
			continue
		}
		results[tp] = nil
	}
	return results, nil
}

// scheduleAutoRebalance schedules the next leader-imbalance check of this term, if
// auto.leader.rebalance.enable.
func (c *Controller) scheduleAutoRebalance(after time.Duration) {
	if !c.cfg.AutoLeaderRebalance {
		return
	}
	term := c.term
	c.rebalanceTimer = c.clock.AfterFunc(after, func() { c.enqueue(autoRebalanceEvent{term: term}) })
}

// processAutoRebalance is Kafka's checkAndTriggerAutoLeaderRebalance: for each broker, the share
// of the partitions preferring it (it is their first replica) that another broker leads; above
// leader.imbalance.per.broker.percentage, preferred elections for those partitions whose
// preferred replica is online and in the ISR, unless a reassignment is in progress anywhere.
func (c *Controller) processAutoRebalance(term uint64) error {
	if c.cc == nil || term != c.term {
		return nil
	}
	defer c.scheduleAutoRebalance(c.cfg.LeaderImbalanceCheckInterval)
	cc := c.cc
	byPreferred := map[int32][]kafka.TopicPartition{}
	for _, tp := range cc.partitionsWithLeadership() {
		if cc.topicsToBeDeleted[tp.Topic] || len(cc.replicas(tp)) == 0 {
			continue
		}
		p := cc.replicas(tp)[0]
		byPreferred[p] = append(byPreferred[p], tp)
	}
	for _, broker := range slices.Sorted(maps.Keys(byPreferred)) {
		all := byPreferred[broker]
		var notLed []kafka.TopicPartition
		for _, tp := range all {
			if cc.leadership[tp].leader != broker {
				notLed = append(notLed, tp)
			}
		}
		ratio := float64(len(notLed)) / float64(len(all))
		if ratio <= float64(c.cfg.LeaderImbalancePerBrokerPercentage)/100 {
			continue
		}
		c.log.Info("Leader imbalance above the threshold", zap.Int32("broker", broker), zap.Float64("ratio", ratio))
		var candidates []kafka.TopicPartition
		for _, tp := range notLed {
			l := cc.leadership[tp]
			if !cc.anyReassigning() && !cc.topicsToBeDeleted[tp.Topic] && cc.isOnline(broker) && slices.Contains(l.isr, broker) {
				candidates = append(candidates, tp)
			}
		}
		if len(candidates) == 0 {
			continue
		}
		if _, err := c.electLeadersFor(candidates, PreferredElection); err != nil {
			return err
		}
	}
	return nil
}

// processUncleanLeaderElectionEnabled re-runs elections for offline partitions after a topic's
// or the broker's unclean.leader.election.enable changed (Kafka's UncleanLeaderElectionEnable
// and TopicUncleanLeaderElectionEnable events): if it is now enabled, they may get a leader.
func (c *Controller) processUncleanLeaderElectionEnabled(topic string, brokerDefault *bool) error {
	if brokerDefault != nil {
		c.uncleanDefault = *brokerDefault
	}
	if c.cc == nil {
		return nil
	}
	parts := c.cc.partitionsInStates(newPartition, offlinePartition)
	if topic != "" {
		parts = slices.DeleteFunc(parts, func(tp kafka.TopicPartition) bool { return tp.Topic != topic })
	}
	parts = slices.DeleteFunc(parts, func(tp kafka.TopicPartition) bool { return c.cc.topicsToBeDeleted[tp.Topic] })
	if len(parts) == 0 {
		return nil
	}
	b := c.newBatch()
	err := c.changePartitionStates(b, parts, onlinePartition)
	b.send()
	return err
}
