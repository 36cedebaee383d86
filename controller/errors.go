package controller

import "errors"

// ErrInvalidPartitions is returned by AssignReplicas when the partition count is not positive.
// The CreateTopics handler answers it with INVALID_PARTITIONS.
var ErrInvalidPartitions = errors.New("number of partitions must be larger than 0")

// ErrInvalidReplicationFactor is returned by AssignReplicas when the replication factor is not
// positive or exceeds the number of brokers. The CreateTopics handler answers it with
// INVALID_REPLICATION_FACTOR.
var ErrInvalidReplicationFactor = errors.New("invalid replication factor")

// ErrControllerMoved means a fenced write failed its check of /controller_epoch: another broker
// has been elected since this one (Kafka's ControllerMovedException). The event loop resigns when
// a handler returns it.
var ErrControllerMoved = errors.New("controller moved to another broker")

// kafkaError carries Kafka's own message for an error that matches a sentinel, so a handler can
// put err.Error() into a response's error message and still test the kind with errors.Is.
type kafkaError struct {
	kind error
	msg  string
}

func (e *kafkaError) Error() string { return e.msg }
func (e *kafkaError) Unwrap() error { return e.kind }

// errNoEligibleLeader marks an election that found no replica its strategy accepts.
var errNoEligibleLeader = errors.New("no eligible leader")
