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

// ErrNotLegacy is returned by ExpireSession on a coordinator-mode consumer,
// which has no ZooKeeper session.
var ErrNotLegacy = errors.New("not a legacy (ZooKeeper) consumer")

// ErrNetworkCut is what requests fail with while CutNetwork's cut lasts.
var ErrNetworkCut = errors.New("network cut")

// ErrOwnerConflict means a legacy rebalance attempt failed because another
// consumer still owned a partition it claimed (NODEEXISTS on the owner
// znode): the members read ZooKeeper at different moments.
var ErrOwnerConflict = errors.New("partition ownership conflict")
