package adminzk

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sentinels of the failures Kafka's AdminZkClient reports. An *Error
// matches one of them and a Kafka error code.
var (
	// ErrTopicExists: the topic to create exists already.
	ErrTopicExists = errors.New("topic exists")
	// ErrMarkedForDeletion: the topic is marked for deletion; it cannot be
	// created again until the controller has deleted it, nor marked twice.
	ErrMarkedForDeletion = errors.New("topic marked for deletion")
	// ErrTopicCollision: the name differs from an existing topic's only by
	// '.' versus '_', which collide in metric names.
	ErrTopicCollision = errors.New("topic name collides")
	// ErrInvalidReplicaAssignment: a replica assignment is malformed.
	ErrInvalidReplicaAssignment = errors.New("invalid replica assignment")
	// ErrAssignmentTooLarge: the assignment does not fit in one znode.
	ErrAssignmentTooLarge = errors.New("assignment too large for a znode")
	// ErrUnknownTopic: the topic does not exist.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrReassignmentInProgress: /admin/reassign_partitions exists.
	ErrReassignmentInProgress = errors.New("reassignment in progress")
	// ErrPreferredElectionInProgress: /admin/preferred_replica_election exists.
	ErrPreferredElectionInProgress = errors.New("preferred replica election in progress")
	// ErrUnknownGroup: no /consumers/<g>.
	ErrUnknownGroup = errors.New("unknown consumer group")
	// ErrGroupActive: the group has registered consumers.
	ErrGroupActive = errors.New("consumer group has active consumers")
)

// Error is a failed admin operation: the sentinel saying what failed, the
// Kafka error code a broker answers with (nil when Kafka has none for it),
// and Kafka's message.
type Error struct {
	Kind error
	Code *kerr.Error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap lets errors.Is match both the sentinel and the Kafka code.
func (e *Error) Unwrap() []error {
	if e.Code == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Code}
}

func adminErr(kind error, code *kerr.Error, format string, args ...any) error {
	return &Error{Kind: kind, Code: code, Msg: fmt.Sprintf(format, args...)}
}
