package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
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
