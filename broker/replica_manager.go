package broker

import (
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/storage"
)

// topicPartition names one partition.
type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string { return fmt.Sprintf("%s-%d", tp.topic, tp.partition) }

// ReplicaManager owns this broker's replicas: it applies the controller's
// LeaderAndIsr decisions, creating logs as replicas appear, and serves the
// partitions to produce and fetch. It is Kafka's ReplicaManager.
type ReplicaManager struct {
	brokerID int32
	logs     *storage.Manager
	// logConfig returns the log configuration of a topic (broker defaults
	// overridden by /config/topics/<t>).
	logConfig func(topic string) (storage.LogConfig, error)
	log       *zap.Logger

	mu              sync.RWMutex
	controllerEpoch int32
	partitions      map[topicPartition]*Partition
}

func newReplicaManager(brokerID int32, logs *storage.Manager, logConfig func(string) (storage.LogConfig, error), log *zap.Logger) *ReplicaManager {
	return &ReplicaManager{brokerID: brokerID, logs: logs, logConfig: logConfig, log: log, partitions: map[topicPartition]*Partition{}}
}

// Partition returns the local replica of a partition, if this broker has one.
func (rm *ReplicaManager) Partition(topic string, partition int32) (*Partition, bool) {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	p, ok := rm.partitions[topicPartition{topic, partition}]
	return p, ok
}

// leaderPartition returns the partition if this broker leads it, with
// Kafka's error otherwise.
func (rm *ReplicaManager) leaderPartition(topic string, partition, currentLeaderEpoch int32) (*Partition, int32, error) {
	p, ok := rm.Partition(topic, partition)
	if !ok {
		return nil, -1, kerr.UnknownTopicOrPartition
	}
	epoch, err := p.checkLeader(currentLeaderEpoch)
	return p, epoch, err
}

// checkControllerEpoch rejects a request from a controller older than the
// newest one seen, and remembers a newer one.
func (rm *ReplicaManager) checkControllerEpoch(epoch int32) error {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if epoch < rm.controllerEpoch {
		return kerr.StaleControllerEpoch
	}
	rm.controllerEpoch = epoch
	return nil
}

// ControllerEpoch returns the newest controller epoch this broker accepted.
func (rm *ReplicaManager) ControllerEpoch() int32 {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	return rm.controllerEpoch
}

// lisPartition is one LeaderAndIsr partition state, whatever the version.
type lisPartition struct {
	topic string
	state kmsg.LeaderAndISRRequestTopicPartition
}

func leaderAndIsrPartitions(req *kmsg.LeaderAndISRRequest) []lisPartition {
	var out []lisPartition
	for _, p := range req.PartitionStates {
		out = append(out, lisPartition{topic: p.Topic, state: p})
	}
	for _, t := range req.TopicStates {
		for _, p := range t.PartitionStates {
			out = append(out, lisPartition{topic: t.Topic, state: p})
		}
	}
	return out
}

// becomeLeaderOrFollower applies a LeaderAndIsr request (the controller epoch
// already checked) and returns each partition's error code. A partition state
// is taken only when its leader epoch is newer than the local one.
func (rm *ReplicaManager) becomeLeaderOrFollower(req *kmsg.LeaderAndISRRequest) map[topicPartition]int16 {
	codes := make(map[topicPartition]int16)
	for _, lp := range leaderAndIsrPartitions(req) {
		tp := topicPartition{lp.topic, lp.state.Partition}
		codes[tp] = rm.applyPartitionState(tp, lp.state, req.ControllerID)
	}
	return codes
}

func (rm *ReplicaManager) applyPartitionState(tp topicPartition, s kmsg.LeaderAndISRRequestTopicPartition, controllerID int32) int16 {
	log := rm.log.With(zap.Stringer("partition", tp), zap.Int32("controller-id", controllerID), zap.Int32("leader-epoch", s.LeaderEpoch))
	if !containsID(s.Replicas, rm.brokerID) {
		log.Warn("Ignoring LeaderAndIsr for a partition this broker does not replicate", zap.Int32s("replicas", s.Replicas))
		return kerr.UnknownTopicOrPartition.Code
	}
	p, err := rm.getOrCreatePartition(tp)
	if err != nil {
		log.Error("Cannot create the log for a new replica", zap.Error(err))
		return kerr.KafkaStorageError.Code
	}
	if current := p.LeaderEpoch(); s.LeaderEpoch <= current {
		// After a controller failover the same epochs are resent: harmless.
		log.Info("Ignoring LeaderAndIsr with a leader epoch not newer than the current one", zap.Int32("current-leader-epoch", current))
		return kerr.StaleControllerEpoch.Code
	}
	isLeader := p.applyState(partitionState{
		leader: s.Leader, leaderEpoch: s.LeaderEpoch, controllerEpoch: s.ControllerEpoch,
		zkVersion: s.ZKVersion, isr: s.ISR, replicas: s.Replicas,
	})
	if isLeader {
		log.Info("Became leader", zap.Int32s("isr", s.ISR), zap.Int64("log-end-offset", p.log.LogEndOffset()))
	} else {
		log.Info("Became follower", zap.Int32("leader", s.Leader))
	}
	return 0
}

func (rm *ReplicaManager) getOrCreatePartition(tp topicPartition) (*Partition, error) {
	if p, ok := rm.Partition(tp.topic, tp.partition); ok {
		return p, nil
	}
	cfg, err := rm.logConfig(tp.topic)
	if err != nil {
		return nil, err
	}
	l, err := rm.logs.GetOrCreate(tp.topic, tp.partition, cfg)
	if err != nil {
		return nil, err
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if p, ok := rm.partitions[tp]; ok {
		return p, nil
	}
	p := newPartition(tp.topic, tp.partition, rm.brokerID, l)
	rm.partitions[tp] = p
	return p, nil
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
