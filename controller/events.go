package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// event is one unit of controller work (Kafka's ControllerEvent). Events are processed one at a
// time by the event loop, which alone touches the controller's state.
type event interface {
	name() string
}

// queuedEvent is an event and when it was enqueued, for the queue-time log.
type queuedEvent struct {
	ev       event
	enqueued time.Time
}

// startupEvent begins the controller's life: watch /controller and run for election.
type startupEvent struct{}

// controllerChangeEvent: /controller was created or changed; resign if it no longer names us.
type controllerChangeEvent struct{}

// reelectEvent: /controller was deleted; resign if needed, then run for election.
type reelectEvent struct{}

// expireEvent: the ZooKeeper session expired; resign at once.
type expireEvent struct{}

// registerBrokerAndReelectEvent: a new session replaced the expired one. The broker has already
// re-registered /brokers/ids/<id> from its own callback; run for election again.
type registerBrokerAndReelectEvent struct{}

// brokerChangeEvent: the children of /brokers/ids changed.
type brokerChangeEvent struct{}

// topicChangeEvent: the children of /brokers/topics changed.
type topicChangeEvent struct{}

// partitionModificationsEvent: the assignment of an existing topic changed (e.g. partitions were
// added).
type partitionModificationsEvent struct{ topic string }

// leaderAndISRResponseEvent carries a broker's answer to LeaderAndIsr.
type leaderAndISRResponseEvent struct {
	broker int32
	resp   kmsg.Response
}

// updateMetadataResponseEvent carries a broker's answer to UpdateMetadata.
type updateMetadataResponseEvent struct {
	broker int32
	resp   kmsg.Response
}

// stopReplicaResponseEvent carries a broker's answer to StopReplica, with the request (the
// response names partitions, not whether they were to be deleted).
type stopReplicaResponseEvent struct {
	broker int32
	req    *kmsg.StopReplicaRequest
	resp   kmsg.Response
}

// brokerModificationsEvent: a broker's registration data changed (e.g. its endpoints).
type brokerModificationsEvent struct{ broker int32 }

// isrChangeNotificationEvent: the children of /isr_change_notification changed.
type isrChangeNotificationEvent struct{}

// partitionStateChangeEvent: the state znode of a partition being reassigned changed (its
// leader grew the ISR): the reassignment may be complete.
type partitionStateChangeEvent struct{ tp kafka.TopicPartition }

// topicDeletionEvent: the children of /admin/delete_topics changed.
type topicDeletionEvent struct{}

// preferredReplicaElectionEvent: /admin/preferred_replica_election was created.
type preferredReplicaElectionEvent struct{}

// zkPartitionReassignmentEvent: /admin/reassign_partitions was created, changed or deleted; the
// handler starts the request only if the znode is one it has not started.
type zkPartitionReassignmentEvent struct{}

// autoRebalanceEvent: time for the leader-imbalance check.
type autoRebalanceEvent struct{ term uint64 }

// uncleanLeaderElectionEnabledEvent: a topic's (or, with topic "", the broker's) unclean leader
// election setting may have changed; offline partitions are elected again.
type uncleanLeaderElectionEnabledEvent struct {
	topic         string
	brokerDefault *bool
}

// callEvent is an API request to the active controller (ControlledShutdown, ElectLeaders,
// AlterPartitionReassignments, ...): run answers it on the loop; abandon answers NOT_CONTROLLER
// when the event is dropped unprocessed.
type callEvent struct {
	label   string
	run     func() error
	abandon func()
}

func (stopReplicaResponseEvent) name() string          { return "StopReplicaResponseReceived" }
func (brokerModificationsEvent) name() string          { return "BrokerModifications" }
func (isrChangeNotificationEvent) name() string        { return "IsrChangeNotification" }
func (partitionStateChangeEvent) name() string         { return "PartitionReassignmentIsrChange" }
func (topicDeletionEvent) name() string                { return "TopicDeletion" }
func (preferredReplicaElectionEvent) name() string     { return "ReplicaLeaderElection" }
func (zkPartitionReassignmentEvent) name() string      { return "ZkPartitionReassignment" }
func (autoRebalanceEvent) name() string                { return "AutoPreferredReplicaLeaderElection" }
func (uncleanLeaderElectionEnabledEvent) name() string { return "UncleanLeaderElectionEnable" }
func (e callEvent) name() string                       { return e.label }

func (startupEvent) name() string                  { return "Startup" }
func (controllerChangeEvent) name() string         { return "ControllerChange" }
func (reelectEvent) name() string                  { return "Reelect" }
func (expireEvent) name() string                   { return "Expire" }
func (registerBrokerAndReelectEvent) name() string { return "RegisterBrokerAndReelect" }
func (brokerChangeEvent) name() string             { return "BrokerChange" }
func (topicChangeEvent) name() string              { return "TopicChange" }
func (partitionModificationsEvent) name() string   { return "PartitionModifications" }
func (leaderAndISRResponseEvent) name() string     { return "LeaderAndIsrResponseReceived" }
func (updateMetadataResponseEvent) name() string   { return "UpdateMetadataResponseReceived" }
