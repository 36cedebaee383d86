package quota

import (
	"errors"
	"sync"
	"time"
)

// ErrThrottlingQuotaExceeded is a strict controller mutation quota's
// refusal (THROTTLING_QUOTA_EXCEEDED).
var ErrThrottlingQuotaExceeded = errors.New("throttling quota exceeded")

// Mutation is Kafka's ControllerMutationQuota for one request: the
// controller_mutation_rate that applies to its client, in partitions created
// or deleted per second, on the client's token bucket. A strict quota (the
// request versions of KIP-599) refuses a mutation once the bucket is in
// debt; a permissive one (older versions, auto-creation) accepts it and only
// throttles. A nil *Mutation is unbounded.
type Mutation struct {
	cfg    Config
	strict bool
	bound  float64
	bucket *tokenBucket

	throttle   time.Duration // the last violation's, as of recordedAt
	recordedAt time.Time
}

// Mutation returns the controller mutation quota of user and clientID for
// one request, nil when none is set.
func (m *Manager) Mutation(user, clientID string, strict bool) *Mutation {
	bound, key, ok := m.Quota(ControllerMutation, user, clientID)
	if !ok {
		return nil
	}
	b, _ := m.buckets.LoadOrStore(key, &tokenBucket{})
	return &Mutation{cfg: m.cfg, strict: strict, bound: bound, bucket: b.(*tokenBucket)}
}

// Record takes partitions mutations from the bucket. A strict quota whose
// bucket is already in debt takes nothing and returns
// ErrThrottlingQuotaExceeded; otherwise the mutations are taken even when
// they put the bucket in debt, which throttles a permissive quota's client.
func (q *Mutation) Record(partitions int) error {
	if q == nil {
		return nil
	}
	now := q.cfg.Now()
	q.bucket.mu.Lock()
	defer q.bucket.mu.Unlock()
	q.bucket.refill(now, q.bound, q.burst())
	if q.strict && q.bucket.tokens < 0 {
		q.violated(now)
		return ErrThrottlingQuotaExceeded
	}
	q.bucket.tokens = min(q.burst(), q.bucket.tokens-float64(partitions))
	if !q.strict && q.bucket.tokens < 0 {
		q.violated(now)
	}
	return nil
}

// violated notes the time the bucket needs to get out of debt (Kafka's
// throttleTimeMs: -tokens / quota); the caller holds the bucket's lock.
func (q *Mutation) violated(now time.Time) {
	q.recordedAt = now
	if q.bound <= 0 {
		q.throttle = q.cfg.Window * time.Duration(q.cfg.Samples)
		return
	}
	q.throttle = time.Duration(-q.bucket.tokens / q.bound * float64(time.Second))
}

// ThrottleTime is how long the client is still to be throttled for the
// last violation, less the time since (the request may have waited).
func (q *Mutation) ThrottleTime() time.Duration {
	if q == nil || q.throttle == 0 {
		return 0
	}
	return max(q.throttle-q.cfg.Now().Sub(q.recordedAt), 0)
}

// burst is how many mutations the bucket holds: the quota over every
// sample window (Kafka's TokenBucket).
func (q *Mutation) burst() float64 {
	return float64(q.cfg.Samples) * q.cfg.Window.Seconds() * q.bound
}

// tokenBucket is Kafka's TokenBucket: credits refilled at the quota's rate
// up to the burst, taken by mutations, in debt below zero. A new bucket is
// full.
type tokenBucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func (b *tokenBucket) refill(now time.Time, rate, burst float64) {
	if b.last.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+rate*now.Sub(b.last).Seconds())
	}
	b.last = now
}
