package consumer

import "errors"

// ErrInvalidConfig means a Config cannot be used.
var ErrInvalidConfig = errors.New("invalid consumer config")

// ErrClosed is returned by calls on a closed consumer.
var ErrClosed = errors.New("consumer closed")

// ErrRebalanceFailed means a legacy rebalance failed rebalance.max.retries
// times; like Kafka's ConsumerRebalanceFailedException it leaves the consumer
// registered but owning nothing until the next trigger.
var ErrRebalanceFailed = errors.New("can't rebalance")
