package controller

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// The controller's ZooKeeper reads and writes. Every write an active controller makes goes
// through fencedMulti; only the election itself and the broker-side paths are unfenced.

// uncleanLeaderElectionConfig is the topic (and broker) config that allows unclean elections.
const uncleanLeaderElectionConfig = "unclean.leader.election.enable"

// fencedMulti runs ops atomically after a check that /controller_epoch still has the zkVersion
// this controller's election gave it (Kafka's KAFKA-6082 fencing). If another broker has been
// elected since, ZooKeeper rejects the whole transaction and fencedMulti returns
// ErrControllerMoved. Otherwise it returns the responses to ops, or the first failing op's error.
func (c *Controller) fencedMulti(ops ...any) ([]zk.MultiResponse, error) {
	if c.store.SessionID() != c.session {
		// The session that won the election is gone: a new controller may be elected at any
		// moment, and this one must not act in the replacement session.
		return nil, fmt.Errorf("%w: ZooKeeper session 0x%x ended", ErrControllerMoved, c.session)
	}
	all := make([]any, 0, len(ops)+1)
	all = append(all, &zk.CheckVersionRequest{Path: zkpaths.ControllerEpoch, Version: c.cc.epochZkVersion})
	all = append(all, ops...)
	res, err := c.store.Multi(all...)
	if err == nil {
		return res[1:], nil
	}
	if len(res) == len(all) {
		if res[0].Error != nil {
			return nil, fmt.Errorf("%w: check of %s at zkVersion %d: %w",
				ErrControllerMoved, zkpaths.ControllerEpoch, c.cc.epochZkVersion, res[0].Error)
		}
		for _, r := range res[1:] {
			if r.Error != nil {
				return nil, r.Error
			}
		}
	}
	return nil, err
}

// deleteFenced deletes a znode (any version) with a fenced write; a missing znode is no error.
func (c *Controller) deleteFenced(path string) error {
	_, err := c.fencedMulti(&zk.DeleteRequest{Path: path, Version: -1})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// createFenced creates a persistent znode with a fenced write.
func (c *Controller) createFenced(path string, data []byte) error {
	_, err := c.fencedMulti(&zk.CreateRequest{Path: path, Data: data})
	return err
}

// setFenced replaces a znode's data if its zkVersion matches, with a fenced write, and returns
// the new zkVersion.
func (c *Controller) setFenced(path string, data []byte, version int32) (int32, error) {
	res, err := c.fencedMulti(&zk.SetDataRequest{Path: path, Data: data, Version: version})
	if err != nil {
		return 0, err
	}
	return res[0].Stat.Version, nil
}

// createPartitionState creates a partition's state znode and its parent /partitions/<p> in one
// fenced transaction (and /partitions first if the topic has none yet).
func (c *Controller) createPartitionState(tp kafka.TopicPartition, state leaderISRAndEpoch) error {
	parent := zkpaths.PartitionPath(tp.Topic, tp.Partition)
	path := zkpaths.PartitionStatePath(tp.Topic, tp.Partition)
	data := state.znode().Encode()
	create := func() error {
		_, err := c.fencedMulti(&zk.CreateRequest{Path: parent}, &zk.CreateRequest{Path: path, Data: data})
		return err
	}
	err := create()
	if errors.Is(err, zk.ErrNoNode) {
		if err := c.createFenced(zkpaths.TopicPartitionsPath(tp.Topic), nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", zkpaths.TopicPartitionsPath(tp.Topic), err)
		}
		err = create()
	}
	if errors.Is(err, zk.ErrNodeExists) {
		// The partition's znode outlived an earlier state (or a half-done creation).
		err = c.createFenced(path, data)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// updatePartitionState writes a partition's new leadership, conditional on the zkVersion the
// state carries, and returns the znode's new zkVersion.
func (c *Controller) updatePartitionState(tp kafka.TopicPartition, state leaderISRAndEpoch) (int32, error) {
	path := zkpaths.PartitionStatePath(tp.Topic, tp.Partition)
	v, err := c.setFenced(path, state.znode().Encode(), state.zkVersion)
	if err != nil {
		return 0, fmt.Errorf("update %s at zkVersion %d: %w", path, state.zkVersion, err)
	}
	return v, nil
}

// znodeReader reads a znode: the controller's session or a read session.
type znodeReader interface {
	Get(path string) ([]byte, *zk.Stat, error)
}

// readPartitionState reads a partition's state znode through session (the controller's own or
// a read session); ok is false if it does not exist.
func readPartitionState(session znodeReader, tp kafka.TopicPartition) (state leaderISRAndEpoch, ok bool, err error) {
	path := zkpaths.PartitionStatePath(tp.Topic, tp.Partition)
	data, stat, err := session.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return leaderISRAndEpoch{}, false, nil
	}
	if err != nil {
		return leaderISRAndEpoch{}, false, err
	}
	l, err := zkpaths.DecodeLeaderAndIsr(data)
	if err != nil {
		return leaderISRAndEpoch{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return leaderISRAndEpoch{
		leaderAndISR:    leaderAndISR{leader: l.Leader, leaderEpoch: l.LeaderEpoch, isr: l.ISR, zkVersion: stat.Version},
		controllerEpoch: l.ControllerEpoch,
	}, true, nil
}

// readLiveBrokers reads every registration under /brokers/ids, with its czxid as the broker
// epoch, and arms the child watch and a data watch on each registration. Brokers whose znode vanished meanwhile are left out;
// unreadable registrations are logged and left out, as Kafka does.
func (c *Controller) readLiveBrokers() (map[int32]liveBroker, error) {
	children, err := c.childrenW(zkpaths.BrokerIDs, activeScope, func(zk.Event) event { return brokerChangeEvent{} })
	if err != nil {
		return nil, err
	}
	brokers := make(map[int32]liveBroker, len(children))
	for _, child := range children {
		id, err := zkpaths.ParseBrokerID(child)
		if err != nil {
			c.log.Error("Ignoring a malformed broker id", zap.Error(err))
			continue
		}
		data, stat, err := c.getW(zkpaths.BrokerPath(id), activeScope, func(ev zk.Event) event {
			if ev.Type == zk.EventNodeDataChanged {
				return brokerModificationsEvent{broker: id}
			}
			return nil // deletion is a BrokerChange
		})
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		reg, err := zkpaths.DecodeBrokerRegistration(id, data)
		if err != nil {
			c.log.Error("Ignoring an unreadable broker registration", zap.Error(err))
			continue
		}
		brokers[id] = liveBroker{reg: reg, epoch: stat.Czxid}
	}
	return brokers, nil
}

// readTopics lists /brokers/topics and arms the child watch.
func (c *Controller) readTopics() ([]string, error) {
	return c.childrenW(zkpaths.BrokerTopics, activeScope, func(zk.Event) event { return topicChangeEvent{} })
}

// readTopic reads a topic's assignment and arms its data watch; ok is false if the topic is gone.
func (c *Controller) readTopic(topic string) (t *topicInfo, stat *zk.Stat, ok bool, err error) {
	data, stat, err := c.getW(zkpaths.TopicPath(topic), activeScope, topicWatchEvent(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	if t, err = decodeTopic(topic, data); err != nil {
		return nil, nil, false, err
	}
	return t, stat, true, nil
}

// topicWatchEvent maps the data watch of /brokers/topics/<t> to its event.
func topicWatchEvent(topic string) func(zk.Event) event {
	return func(ev zk.Event) event {
		if ev.Type == zk.EventNodeDataChanged {
			return partitionModificationsEvent{topic: topic}
		}
		return nil // deletion is a TopicChange
	}
}

// armTopicWatch records the data watch of a topic read by readTopicsW.
func (c *Controller) armTopicWatch(r topicRead) {
	c.arm(watchKey{dataWatch, zkpaths.TopicPath(r.topic)}, r.watch)
}

// decodeTopic decodes a topic's assignment znode.
func decodeTopic(topic string, data []byte) (*topicInfo, error) {
	a, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zkpaths.TopicPath(topic), err)
	}
	t := &topicInfo{assignment: a}
	if a.TopicID != "" {
		if t.id, err = zkpaths.ParseUUID(a.TopicID); err != nil {
			return nil, fmt.Errorf("%s: %w", zkpaths.TopicPath(topic), err)
		}
	}
	return t, nil
}

// uncleanLeaderElectionEnabled reads the topic's override of unclean.leader.election.enable from
// /config/topics/<t>, falling back to the broker's setting.
func (c *Controller) uncleanLeaderElectionEnabled(topic string) (bool, error) {
	data, _, err := c.store.Get(zkpaths.TopicConfigPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return c.uncleanDefault, nil
	}
	if err != nil {
		return false, err
	}
	cfg, err := zkpaths.DecodeEntityConfig(data)
	if err != nil {
		return false, fmt.Errorf("%s: %w", zkpaths.TopicConfigPath(topic), err)
	}
	v, ok := cfg.Config[uncleanLeaderElectionConfig]
	if !ok {
		return c.uncleanDefault, nil
	}
	// Kafka's boolean configs are "true" or "false", in any case, around spaces.
	switch v = strings.TrimSpace(v); {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, fmt.Errorf("%s: %s=%q is not a boolean", zkpaths.TopicConfigPath(topic), uncleanLeaderElectionConfig, v)
}
