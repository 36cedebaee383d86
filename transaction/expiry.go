package transaction

// The coordinator's periodic work: aborting transactions open longer than
// their timeout (every
// transaction.abort.timed.out.transaction.cleanup.interval.ms), and
// removing transactional ids idle for transactional.id.expiration.ms
// (every transaction.remove.expired.transaction.cleanup.interval.ms).

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/coordinator"
)

func (c *Coordinator) scheduleAbortLocked() {
	if c.cfg.AbortTimedOutTransactionsInterval <= 0 {
		return
	}
	c.abortTimer = c.clock.AfterFunc(c.cfg.AbortTimedOutTransactionsInterval, func() {
		c.AbortTimedOutTransactions()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.active {
			c.scheduleAbortLocked()
		}
	})
}

func (c *Coordinator) scheduleExpiryLocked() {
	if c.cfg.RemoveExpiredTransactionalIDsInterval <= 0 {
		return
	}
	c.expiry = c.clock.AfterFunc(c.cfg.RemoveExpiredTransactionalIDsInterval, func() {
		c.ExpireTransactionalIDs()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.active {
			c.scheduleExpiryLocked()
		}
	})
}

// timedOut is an ongoing transaction past its timeout, as seen without its
// lock (Kafka's best-effort scan); the abort checks again under it.
type timedOut struct {
	id         string
	producerID int64
}

// AbortTimedOutTransactions aborts every Ongoing transaction started more
// than its transaction.timeout.ms ago, fencing its producer with an epoch
// bump first (Kafka's abortTimedOutTransactions), and returns how many it
// aborted.
func (c *Coordinator) AbortTimedOutTransactions() int {
	now := c.now()
	var due []timedOut
	c.mu.RLock()
	for _, p := range c.partitions {
		for id, md := range p.txns {
			md.mu.Lock()
			if !md.hasPending && md.state == Ongoing && md.startTimestamp+int64(md.timeoutMs) < now {
				due = append(due, timedOut{id, md.producerID})
			}
			md.mu.Unlock()
		}
	}
	c.mu.RUnlock()
	aborted := 0
	for _, d := range due {
		_, md, err := c.getTransactionState(d.id)
		if err != nil || md == nil {
			continue
		}
		md.mu.Lock()
		var t transit
		switch {
		case md.producerID != d.producerID:
			err = errors.New("producer id changed")
		case md.pendingTransition():
			err = kerr.ConcurrentTransactions
		default:
			t, err = md.prepareFenceProducerEpoch()
		}
		md.mu.Unlock()
		if err != nil {
			continue
		}
		c.log.Info("Aborting the transaction of a timed out producer", zap.String("transactional-id", d.id),
			zap.Int64("producer-id", t.producerID), zap.Int16("producer-epoch", t.producerEpoch))
		err = c.endTransaction(c.ctx, d.id, t.producerID, t.producerEpoch, false, false)
		switch {
		case err == nil:
			aborted++
			c.log.Info("Completed rollback of the transaction due to timeout", zap.String("transactional-id", d.id))
		case errors.Is(err, kerr.InvalidProducerIDMapping), errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.ConcurrentTransactions):
			c.log.Debug("Rollback of the timed out transaction cancelled", zap.String("transactional-id", d.id), zap.Error(err))
		default:
			c.log.Warn("Rollback of the timed out transaction failed", zap.String("transactional-id", d.id), zap.Error(err))
		}
	}
	return aborted
}

// ExpireTransactionalIDs removes the transactional ids idle (Empty or
// completed) for transactional.id.expiration.ms: a tombstone per id in its
// partition, and the id leaves the cache once acks=all answered. It returns
// how many ids it removed.
func (c *Coordinator) ExpireTransactionalIDs() int {
	now := c.now()
	horizon := now - c.cfg.TransactionalIDExpiration.Milliseconds()
	type expiring struct {
		md *txnMetadata
		t  transit
	}
	byPartition := map[int32][]expiring{}
	epochs := map[int32]int32{}
	c.mu.RLock()
	for partition, p := range c.partitions {
		if p.loading {
			continue
		}
		epochs[partition] = p.coordinatorEpoch
		for _, md := range p.txns {
			md.mu.Lock()
			if !md.hasPending && md.state.expirationAllowed() && md.updateTimestamp <= horizon {
				if t, err := md.prepareDead(); err == nil {
					byPartition[partition] = append(byPartition[partition], expiring{md, t})
				}
			}
			md.mu.Unlock()
		}
	}
	c.mu.RUnlock()
	removed := 0
	for _, partition := range slices.Sorted(maps.Keys(byPartition)) {
		exp := byPartition[partition]
		recs := make([]coordinator.Record, len(exp))
		for i, e := range exp {
			recs[i] = coordinator.Record{Key: txnKey(e.md.id)}
		}
		await, err := c.appendIfCoordinator("", partition, epochs[partition], coordinator.EncodeBatch(recs, now))
		var appendErr *appendFailure
		if errors.As(err, &appendErr) {
			err = appendErr.err
		} else if err == nil {
			err = c.awaitAppend(c.ctx, await, c.cfg.RequestTimeout)
		}
		c.mu.Lock()
		p := c.partitions[partition]
		for _, e := range exp {
			e.md.mu.Lock()
			if err == nil && p != nil && p.coordinatorEpoch == epochs[partition] && e.md.hasPending && e.md.pending == Dead &&
				e.md.producerEpoch == e.t.producerEpoch && p.txns[e.md.id] == e.md {
				delete(p.txns, e.md.id)
				removed++
			} else {
				c.log.Warn("Failed to remove an expired transactional id", zap.String("transactional-id", e.md.id), zap.Error(err))
				e.md.hasPending = false
			}
			e.md.mu.Unlock()
		}
		c.mu.Unlock()
	}
	if removed > 0 {
		c.log.Info("Removed expired transactional ids", zap.Int("count", removed),
			zap.Duration("transactional.id.expiration.ms", c.cfg.TransactionalIDExpiration))
	}
	return removed
}

// timeoutOf is a transaction timeout as a duration.
func timeoutOf(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }
