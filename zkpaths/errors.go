package zkpaths

import "errors"

// ErrMalformed is wrapped by every Decode function when znode data cannot be
// read: bad JSON, a missing or mistyped field, a version below 1, a partition
// key that is not a decimal partition id. Callers treat such a znode the way
// Kafka does: log it and skip it, never trust a partial value.
var ErrMalformed = errors.New("malformed znode data")

// ErrInvalidTopicName is matched (errors.Is) by every error ValidateTopicName
// returns. The error's own text is Kafka's message, so the broker can answer
// INVALID_TOPIC_EXCEPTION with err.Error() as the error message.
var ErrInvalidTopicName = errors.New("invalid topic name")

// ErrProducerIDsExhausted means no further producer-id block fits in an int64;
// Kafka fails InitProducerId for good at that point.
var ErrProducerIDsExhausted = errors.New("producer ids exhausted")
