package controller

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/kafka"
)

// The controller's API for the broker's request handlers. Each call becomes an event on the
// loop, so it sees and changes the controller's state like any other event; it waits for the
// answer until ctx ends. A broker that is not the active controller (or stops being it before
// the event runs) answers kerr.NotController. Per-partition errors wrap kerr values, so a
// handler takes the code with errors.As and the message with Error.

// callResult carries an API call's answer from the loop.
type callResult[T any] struct {
	v   T
	err error
}

// call runs fn on the event loop while this broker is the active controller.
func call[T any](ctx context.Context, c *Controller, label string, fn func() (T, error)) (T, error) {
	var zero T
	if c.stopped.Load() || !c.active.Load() {
		return zero, kerr.NotController
	}
	reply := submit(c, label, fn)
	select {
	case r := <-reply:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// submit queues fn as an API call; the answer arrives on the returned channel, NOT_CONTROLLER
// if this broker is not (or stops being) the active controller before the event runs.
func submit[T any](c *Controller, label string, fn func() (T, error)) <-chan callResult[T] {
	reply := make(chan callResult[T], 1)
	c.enqueue(callEvent{
		label: label,
		run: func() error {
			if c.cc == nil {
				reply <- callResult[T]{err: kerr.NotController}
				return nil
			}
			v, err := fn()
			if errors.Is(err, ErrControllerMoved) {
				reply <- callResult[T]{err: kerr.NotController}
				return err
			}
			reply <- callResult[T]{v: v, err: err}
			return nil
		},
		abandon: func() { reply <- callResult[T]{err: kerr.NotController} },
	})
	return reply
}

// ControlledShutdown moves every leadership off the broker and takes it out of every ISR, and
// returns the partitions it still leads (Kafka's ControlledShutdown handling). Errors:
// kerr.NotController, kerr.BrokerNotAvailable (not registered), kerr.StaleBrokerEpoch (an epoch
// older than its registration; -1 skips the check).
func (c *Controller) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]kafka.TopicPartition, error) {
	return call(ctx, c, "ControlledShutdown", func() ([]kafka.TopicPartition, error) {
		return c.doControlledShutdown(brokerID, brokerEpoch)
	})
}

// ElectLeaders runs preferred or unclean leader elections for partitions (every partition for
// nil) and returns each partition's outcome: nil, or an error wrapping
// kerr.UnknownTopicOrPartition, kerr.InvalidTopicException (topic being deleted),
// kerr.ElectionNotNeeded, kerr.PreferredLeaderNotAvailable or kerr.EligibleLeadersNotAvailable.
func (c *Controller) ElectLeaders(ctx context.Context, typ ElectionType, partitions []kafka.TopicPartition) (map[kafka.TopicPartition]error, error) {
	return call(ctx, c, "ReplicaLeaderElection", func() (map[kafka.TopicPartition]error, error) {
		if partitions == nil {
			partitions = c.cc.partitionsWithLeadership()
		}
		return c.electLeadersFor(partitions, typ)
	})
}

// AlterPartitionReassignments starts, supersedes or (with a nil target) cancels reassignments,
// and returns each partition's outcome: nil, or an error wrapping kerr.UnknownTopicOrPartition,
// kerr.InvalidReplicaAssignment or kerr.NoReassignmentInProgress.
func (c *Controller) AlterPartitionReassignments(ctx context.Context, targets map[kafka.TopicPartition][]int32) (map[kafka.TopicPartition]error, error) {
	return call(ctx, c, "ApiPartitionReassignment", func() (map[kafka.TopicPartition]error, error) {
		return c.alterReassignments(targets)
	})
}

// ListPartitionReassignments returns the ongoing reassignments among partitions (all of them for
// nil).
func (c *Controller) ListPartitionReassignments(ctx context.Context, partitions []kafka.TopicPartition) (map[kafka.TopicPartition]PartitionReassignment, error) {
	return call(ctx, c, "ListPartitionReassignments", func() (map[kafka.TopicPartition]PartitionReassignment, error) {
		return c.listReassignments(partitions), nil
	})
}

// TopicConfigChanged tells the controller that /config/topics/<topic> changed: if it now allows
// unclean leader election, the topic's offline partitions get a leader. It returns at once.
func (c *Controller) TopicConfigChanged(topic string) {
	c.enqueue(uncleanLeaderElectionEnabledEvent{topic: topic})
}

// BrokerConfigChanged tells the controller the broker's unclean.leader.election.enable (its
// dynamic default); offline partitions of topics without an override are elected again. It
// returns at once.
func (c *Controller) BrokerConfigChanged(uncleanLeaderElection bool) {
	c.enqueue(uncleanLeaderElectionEnabledEvent{brokerDefault: &uncleanLeaderElection})
}
