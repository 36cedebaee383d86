package quota

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Keys of the replication throttles (Kafka 2.8's DynamicConfig.Broker and
// LogConfig): the rates are per-broker dynamic configs, the replica lists
// topic configs.
const (
	LeaderReplicationThrottledRate     = "leader.replication.throttled.rate"
	FollowerReplicationThrottledRate   = "follower.replication.throttled.rate"
	LeaderReplicationThrottledReplicas = "leader.replication.throttled.replicas"
	// FollowerReplicationThrottledReplicas lists the replicas whose
	// fetching from their leader is throttled.
	FollowerReplicationThrottledReplicas = "follower.replication.throttled.replicas"
)

// Unbounded is a replication throttle's rate when none is set
// (Long.MaxValue bytes per second in Kafka).
const Unbounded = math.MaxInt64

// Replication is Kafka's ReplicationQuotaManager: one byte rate over all the
// throttled replication traffic of one side of a broker (its leaders
// answering followers, or its followers fetching), and which partitions are
// throttled. Callers decide what to hold back: Kafka throttles only replicas
// outside the ISR, so a throttle never shrinks the ISR, but counts every
// throttled partition's bytes.
type Replication struct {
	cfg   Config
	bound atomic.Int64 // bytes per second

	mu        sync.RWMutex
	throttled map[string]throttledPartitions // topic → partitions
	any       atomic.Bool                    // throttled is not empty: the fast path's check

	r rate
}

// throttledPartitions are a topic's throttled partitions on this broker.
type throttledPartitions struct {
	all        bool
	partitions map[int32]bool
}

// NewReplication returns a replication quota with an unbounded rate and no
// throttled partition.
func NewReplication(cfg Config) *Replication {
	q := &Replication{cfg: cfg.withDefaults(), throttled: map[string]throttledPartitions{}}
	q.bound.Store(Unbounded)
	return q
}

// SetRate sets the rate bound in bytes per second.
func (q *Replication) SetRate(bytesPerSecond int64) { q.bound.Store(bytesPerSecond) }

// Rate is the rate bound in bytes per second.
func (q *Replication) Rate() int64 { return q.bound.Load() }

// MarkThrottled replaces the throttled partitions of topic with those
// parsed from a throttled replicas list; an empty list removes the
// throttle, as Kafka's TopicConfigHandler does.
func (q *Replication) MarkThrottled(topic string, list ThrottledReplicas) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !list.All && len(list.Partitions) == 0 {
		delete(q.throttled, topic)
	} else {
		t := throttledPartitions{all: list.All, partitions: map[int32]bool{}}
		for _, p := range list.Partitions {
			t.partitions[p] = true
		}
		q.throttled[topic] = t
	}
	q.any.Store(len(q.throttled) > 0)
}

// IsThrottled reports whether the partition is throttled.
func (q *Replication) IsThrottled(topic string, partition int32) bool {
	if !q.any.Load() {
		return false
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	t, ok := q.throttled[topic]
	return ok && (t.all || t.partitions[partition])
}

// Exceeded reports whether the measured rate is above the bound.
func (q *Replication) Exceeded() bool {
	bound := q.bound.Load()
	if bound == Unbounded {
		return false
	}
	now := q.cfg.Now()
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	observed, _ := q.r.measure(now, q.cfg, q.cfg.Window)
	return observed > float64(bound)
}

// Record adds bytes of throttled replication traffic to the rate, whether
// or not the bound is exceeded.
func (q *Replication) Record(bytes int) {
	if bytes == 0 {
		return
	}
	now := q.cfg.Now()
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	q.r.record(float64(bytes), now, q.cfg)
}

// ThrottledReplicas is a throttled replicas list as it applies to one
// broker: every replica ("*"), or the partitions listed with its id.
type ThrottledReplicas struct {
	All        bool
	Partitions []int32
}

var throttledReplica = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

// ParseThrottledReplicas reads a leader or follower throttled replicas list
// ("*" or "partition:broker,...") for broker (Kafka's
// parseThrottledPartitions); an entry that is not a pair of numbers is an
// error, as ThrottledReplicaListValidator's.
func ParseThrottledReplicas(value string, broker int32) (ThrottledReplicas, error) {
	value = strings.TrimSpace(value)
	if value == "*" {
		return ThrottledReplicas{All: true}, nil
	}
	var list ThrottledReplicas
	if value == "" {
		return list, nil
	}
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if !throttledReplica.MatchString(entry) {
			return ThrottledReplicas{}, fmt.Errorf("%q must be the literal '*' or a list of replicas as [partitionId]:[brokerId],[partitionId]:[brokerId]", value)
		}
		if entry == "" {
			continue
		}
		p, b, _ := strings.Cut(entry, ":")
		partition, errP := strconv.ParseInt(p, 10, 32)
		id, errB := strconv.ParseInt(b, 10, 32)
		if errP != nil || errB != nil {
			return ThrottledReplicas{}, fmt.Errorf("%q: %q is out of range", value, entry)
		}
		if int32(id) == broker {
			list.Partitions = append(list.Partitions, int32(partition))
		}
	}
	return list, nil
}
