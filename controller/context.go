package controller

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Kafka's LeaderAndIsr constants.
const (
	noLeader           int32 = -1 // a partition no replica could be elected to lead
	leaderDuringDelete int32 = -2 // UpdateMetadata's leader for a topic being deleted
	noEpoch            int32 = -1 // StopReplica's leader epoch when none is known
	epochDuringDelete  int32 = -2 // StopReplica's leader epoch for a topic being deleted
	initialLeaderEpoch int32 = 0
	initialZkVersion   int32 = 0 // zkVersion of a freshly created znode
)

// partitionReplica is one replica of one partition: the unit of the replica state machine.
type partitionReplica struct {
	tp      kafka.TopicPartition
	replica int32
}

func (pr partitionReplica) String() string {
	return "[Topic=" + pr.tp.Topic + ",Partition=" + strconv.Itoa(int(pr.tp.Partition)) + ",Replica=" + strconv.Itoa(int(pr.replica)) + "]"
}

// leaderAndISR is a partition's leadership as stored in its state znode, with the znode's
// zkVersion, on which every write of it is conditional (Kafka's LeaderAndIsr).
type leaderAndISR struct {
	leader      int32
	leaderEpoch int32
	isr         []int32
	zkVersion   int32
}

// newLeaderAndISR is the next leadership after a controller decision: the leader epoch always
// grows by one; zkVersion is still that of the znode being replaced, for the conditional write.
func (l leaderAndISR) newLeaderAndISR(leader int32, isr []int32) leaderAndISR {
	return leaderAndISR{leader: leader, leaderEpoch: l.leaderEpoch + 1, isr: isr, zkVersion: l.zkVersion}
}

// String reads like Kafka's state-change log: LeaderAndIsr(leader=2, leaderEpoch=3, isr=2,3, zkVersion=4).
func (l leaderAndISR) String() string {
	return fmt.Sprintf("LeaderAndIsr(leader=%d, leaderEpoch=%d, isr=%s, zkVersion=%d)",
		l.leader, l.leaderEpoch, joinIDs(l.isr), l.zkVersion)
}

// leaderISRAndEpoch is a leadership with the epoch of the controller that decided it (Kafka's
// LeaderIsrAndControllerEpoch): what a partition state znode holds.
type leaderISRAndEpoch struct {
	leaderAndISR
	controllerEpoch int32
}

// znode returns the state znode's data.
func (l leaderISRAndEpoch) znode() zkpaths.LeaderAndIsr {
	return zkpaths.LeaderAndIsr{Leader: l.leader, LeaderEpoch: l.leaderEpoch, ISR: l.isr, ControllerEpoch: l.controllerEpoch}
}

// liveBroker is a registered broker and its epoch, the czxid of its /brokers/ids/<id> znode.
type liveBroker struct {
	reg   zkpaths.BrokerRegistration
	epoch int64
}

// topicInfo is a topic's replica assignment as read from /brokers/topics/<t>.
type topicInfo struct {
	id         [16]byte // zero until a topic id is assigned
	assignment zkpaths.TopicAssignment
}

// controllerContext is the active controller's picture of the cluster (Kafka's ControllerContext).
// Only the event loop reads or writes it, and resignation discards it.
type controllerContext struct {
	epoch          int32 // this controller's epoch
	epochZkVersion int32 // zkVersion of /controller_epoch after the election: the fencing token

	// liveBrokers holds every registered broker, shutting-down ones included: they still get
	// requests but may not lead (isOnline).
	liveBrokers     map[int32]liveBroker
	shuttingDown    map[int32]bool
	topics          map[string]*topicInfo
	leadership      map[kafka.TopicPartition]leaderISRAndEpoch
	partitionStates map[kafka.TopicPartition]partitionState
	replicaStates   map[partitionReplica]replicaState

	// Topic deletion (Kafka's TopicDeletionManager state): topics queued for deletion, those
	// whose deletion has begun (partitions taken offline, brokers told), and those that must
	// wait (a replica's broker is down, or a reassignment is in progress).
	topicsToBeDeleted      map[string]bool
	topicsDeletionStarted  map[string]bool
	topicsIneligibleForDel map[string]bool

	// reassignZnodeCzxid is the czxid of the /admin/reassign_partitions znode whose request
	// this controller has started. A request is started once, when its znode is created (or at
	// failover); later changes of its data, the controller's own included, start nothing.
	reassignZnodeCzxid int64
}

func newControllerContext(epoch, epochZkVersion int32) *controllerContext {
	return &controllerContext{
		epoch:           epoch,
		epochZkVersion:  epochZkVersion,
		liveBrokers:     map[int32]liveBroker{},
		topics:          map[string]*topicInfo{},
		leadership:      map[kafka.TopicPartition]leaderISRAndEpoch{},
		partitionStates: map[kafka.TopicPartition]partitionState{},
		replicaStates:   map[partitionReplica]replicaState{},
		shuttingDown:    map[int32]bool{},

		topicsToBeDeleted:      map[string]bool{},
		topicsDeletionStarted:  map[string]bool{},
		topicsIneligibleForDel: map[string]bool{},
	}
}

// isLive reports whether the broker is registered (shutting down or not): it can be sent
// requests.
func (cc *controllerContext) isLive(broker int32) bool {
	_, ok := cc.liveBrokers[broker]
	return ok
}

// isOnline reports whether a replica on the broker may lead or join an ISR: registered and not
// shutting down (Kafka's isReplicaOnline).
func (cc *controllerContext) isOnline(broker int32) bool {
	return cc.isLive(broker) && !cc.shuttingDown[broker]
}

// onlineBrokerIDs returns the live brokers that are not shutting down, in id order.
func (cc *controllerContext) onlineBrokerIDs() []int32 {
	return slices.DeleteFunc(cc.liveBrokerIDs(), func(id int32) bool { return cc.shuttingDown[id] })
}

// isReassigning reports whether the partition has a reassignment in progress.
func (cc *controllerContext) isReassigning(tp kafka.TopicPartition) bool {
	t, ok := cc.topics[tp.Topic]
	return ok && (len(t.assignment.AddingReplicas[tp.Partition]) > 0 || len(t.assignment.RemovingReplicas[tp.Partition]) > 0)
}

// topicReassigning reports whether any partition of the topic is being reassigned.
func (cc *controllerContext) topicReassigning(topic string) bool {
	t, ok := cc.topics[topic]
	if !ok {
		return false
	}
	return len(t.assignment.AddingReplicas) > 0 || len(t.assignment.RemovingReplicas) > 0
}

// anyReassigning reports whether a reassignment is in progress anywhere in the cluster.
func (cc *controllerContext) anyReassigning() bool {
	for topic := range cc.topics {
		if cc.topicReassigning(topic) {
			return true
		}
	}
	return false
}

// partitionsOfTopic returns the topic's partitions, sorted.
func (cc *controllerContext) partitionsOfTopic(topic string) []kafka.TopicPartition {
	t, ok := cc.topics[topic]
	if !ok {
		return nil
	}
	var out []kafka.TopicPartition
	for _, p := range t.assignment.PartitionIDs() {
		out = append(out, kafka.TopicPartition{Topic: topic, Partition: p})
	}
	return out
}

// replicasOf lists every (partition, replica) pair of partitions.
func (cc *controllerContext) replicasOf(partitions []kafka.TopicPartition) []partitionReplica {
	var out []partitionReplica
	for _, tp := range partitions {
		for _, r := range cc.replicas(tp) {
			out = append(out, partitionReplica{tp, r})
		}
	}
	return out
}

// liveBrokerIDs returns the live brokers in id order.
func (cc *controllerContext) liveBrokerIDs() []int32 {
	return slices.Sorted(maps.Keys(cc.liveBrokers))
}

// replicas returns a partition's assigned replicas in assignment order (first = preferred leader).
func (cc *controllerContext) replicas(tp kafka.TopicPartition) []int32 {
	if t, ok := cc.topics[tp.Topic]; ok {
		return t.assignment.Partitions[tp.Partition]
	}
	return nil
}

// liveReplicas returns the assigned replicas whose brokers are online, in assignment order.
func (cc *controllerContext) liveReplicas(tp kafka.TopicPartition) []int32 {
	var live []int32
	for _, r := range cc.replicas(tp) {
		if cc.isOnline(r) {
			live = append(live, r)
		}
	}
	return live
}

// allPartitions returns every assigned partition, sorted.
func (cc *controllerContext) allPartitions() []kafka.TopicPartition {
	var all []kafka.TopicPartition
	for topic, t := range cc.topics {
		for p := range t.assignment.Partitions {
			all = append(all, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	slices.SortFunc(all, kafka.Compare)
	return all
}

// partitionsOnBrokers returns, sorted, the partitions with a replica on any of brokers.
func (cc *controllerContext) partitionsOnBrokers(brokers []int32) []kafka.TopicPartition {
	var on []kafka.TopicPartition
	for _, tp := range cc.allPartitions() {
		if slices.ContainsFunc(cc.replicas(tp), func(r int32) bool { return slices.Contains(brokers, r) }) {
			on = append(on, tp)
		}
	}
	return on
}

// partitionsWithLeadership returns, sorted, the partitions whose state znode has been read or
// written, i.e. those UpdateMetadata can describe.
func (cc *controllerContext) partitionsWithLeadership() []kafka.TopicPartition {
	return slices.SortedFunc(maps.Keys(cc.leadership), kafka.Compare)
}

// partitionsInStates returns, sorted, the partitions in any of states.
func (cc *controllerContext) partitionsInStates(states ...partitionState) []kafka.TopicPartition {
	var in []kafka.TopicPartition
	for tp, s := range cc.partitionStates {
		if slices.Contains(states, s) {
			in = append(in, tp)
		}
	}
	slices.SortFunc(in, kafka.Compare)
	return in
}

// removeTopic forgets a topic, its partitions and replicas.
func (cc *controllerContext) removeTopic(topic string) {
	for _, pr := range cc.replicasOf(cc.partitionsOfTopic(topic)) {
		delete(cc.replicaStates, pr)
	}
	delete(cc.topicsToBeDeleted, topic)
	delete(cc.topicsDeletionStarted, topic)
	delete(cc.topicsIneligibleForDel, topic)
	delete(cc.topics, topic)
	for tp := range cc.leadership {
		if tp.Topic == topic {
			delete(cc.leadership, tp)
		}
	}
	for tp := range cc.partitionStates {
		if tp.Topic == topic {
			delete(cc.partitionStates, tp)
		}
	}
}

// joinIDs formats broker ids as Kafka's mkString(","): "1,2,3".
func joinIDs(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	return b.String()
}
