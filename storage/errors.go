package storage

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrLogClosed is returned by every operation on a Log after Close or Delete.
var ErrLogClosed = errors.New("storage: log is closed")

// ErrManagerClosed is returned by Manager methods after Close.
var ErrManagerClosed = errors.New("storage: log manager is closed")

// ErrOffsetsOutOfOrder is returned by AppendAsFollower when the batches' offsets do not increase.
// Kafka raises OffsetsOutOfOrderException here; it has no wire code of its own.
var ErrOffsetsOutOfOrder = errors.New("storage: offsets in the appended batches are not increasing")

// ErrUnexpectedAppendOffset is returned by AppendAsFollower when the first batch starts below the log end
// offset: the follower must truncate before it appends (Kafka's UnexpectedAppendOffsetException).
var ErrUnexpectedAppendOffset = errors.New("storage: appended batch starts below the log end offset")

// corruptf wraps kerr.CorruptMessage with a description of what is wrong with the input.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), kerr.CorruptMessage)
}

// invalidRecordf wraps kerr.InvalidRecord, which Kafka 2.8 returns for batches that parse but break a rule
// the broker enforces (InvalidRecordException).
func invalidRecordf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), kerr.InvalidRecord)
}

// storageError marks an I/O failure as Kafka's KAFKA_STORAGE_ERROR while keeping the cause.
func storageError(op string, err error) error {
	return fmt.Errorf("%s: %w: %w", op, kerr.KafkaStorageError, err)
}
