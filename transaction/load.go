package transaction

// Coordinator failover: becoming leader of a __transaction_state partition
// loads its transactional ids from the log (requests for them get
// COORDINATOR_LOAD_IN_PROGRESS meanwhile) and finishes the transactions
// that were deciding (PrepareCommit, PrepareAbort) by writing their markers
// again; losing it unloads them (requests get NOT_COORDINATOR, markers in
// flight are dropped).

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/coordinator"
	"github.com/zkafka/zkafka/wire"
)

// OnBecomeLeader starts loading a partition this broker now leads, at the
// partition's leader epoch, which becomes its coordinator epoch. A
// partition already owned or loading keeps its state and epoch.
func (c *Coordinator) OnBecomeLeader(partition, coordinatorEpoch int32) {
	c.mu.Lock()
	if _, ok := c.partitions[partition]; ok || !c.active {
		c.mu.Unlock()
		return
	}
	p := &txnPartition{coordinatorEpoch: coordinatorEpoch, loading: true}
	c.partitions[partition] = p
	// Added under mu, where active was read: Shutdown clears active under
	// mu before it waits, so its Wait never runs beside this Add.
	c.wg.Add(1)
	c.mu.Unlock()
	c.log.Info("Elected as the transaction coordinator for partition", zap.Int32("partition", partition),
		zap.Int32("coordinator-epoch", coordinatorEpoch))
	// Whatever an earlier ownership left queued is obsolete.
	c.markers.removeMarkersForTxnTopicPartition(partition)
	go func() {
		defer c.wg.Done()
		c.load(partition, p)
	}()
}

// OnResign unloads a partition this broker no longer leads.
func (c *Coordinator) OnResign(partition int32) {
	c.mu.Lock()
	p, ok := c.partitions[partition]
	c.unloadLocked(partition)
	c.mu.Unlock()
	if ok {
		c.markers.removeMarkersForTxnTopicPartition(partition)
		c.log.Info("Resigned as the transaction coordinator for partition", zap.Int32("partition", partition),
			zap.Int32("coordinator-epoch", p.coordinatorEpoch), zap.Int("transactional-ids", len(p.txns)))
	}
}

func (c *Coordinator) unloadLocked(partition int32) { delete(c.partitions, partition) }

// Owns reports whether this coordinator serves a partition's ids (loaded).
func (c *Coordinator) Owns(partition int32) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.partitions[partition]
	return ok && !p.loading
}

// pendingCompletion is a deciding transaction found by a load: its markers
// are written again and it then completes.
type pendingCompletion struct {
	id               string
	coordinatorEpoch int32
	commit           bool
	md               *txnMetadata
	complete         transit
}

// load reads a partition back and publishes its ids, unless the partition
// was unloaded meanwhile; then it sends the markers of the transactions
// that were deciding.
func (c *Coordinator) load(partition int32, p *txnPartition) {
	start := time.Now()
	txns, err := c.readPartition(partition)
	if err != nil {
		c.mu.Lock()
		if c.partitions[partition] == p {
			c.log.Error("Loading transaction metadata failed", zap.Int32("partition", partition), zap.Error(err))
			c.unloadLocked(partition)
		}
		c.mu.Unlock()
		return
	}
	var resume []pendingCompletion
	now := c.now()
	// Counted before publishing: from then on requests add ids under mu.
	loaded := len(txns)
	c.mu.Lock()
	published := c.partitions[partition] == p
	if published {
		p.txns, p.loading = txns, false
		for id, md := range txns {
			md.mu.Lock()
			if md.state == PrepareCommit || md.state == PrepareAbort {
				if t, err := md.prepareComplete(now); err == nil {
					resume = append(resume, pendingCompletion{id: id, coordinatorEpoch: p.coordinatorEpoch, commit: md.state == PrepareCommit, md: md, complete: t})
				}
			}
			md.mu.Unlock()
		}
	}
	c.mu.Unlock()
	if !published {
		return
	}
	c.log.Info("Finished loading transaction metadata", zap.Int32("partition", partition), zap.Int("transactional-ids", loaded),
		zap.Int("completing", len(resume)), zap.Duration("took", time.Since(start)))
	for _, r := range resume {
		c.markers.addTxnMarkersToSend(r.coordinatorEpoch, r.commit, r.md, r.complete)
	}
}

// readPartition reads the partition from its start to its end; the last
// value of each id wins and a tombstone removes it.
func (c *Coordinator) readPartition(partition int32) (map[string]*txnMetadata, error) {
	txns := map[string]*txnMetadata{}
	err := coordinator.ReadLog(c.ctx, c.store, partition, c.cfg.LoadBufferSize, func(data []byte) (int64, error) {
		next := int64(-1)
		for b, err := range wire.Batches(data) {
			if err != nil {
				break
			}
			next = b.LastOffset() + 1
			if b.Attributes.Control() {
				continue
			}
			for r, err := range b.Records() {
				if err != nil {
					return next, fmt.Errorf("batch at offset %d: %w", b.BaseOffset, err)
				}
				e, err := DecodeRecord(r.Key, r.Value)
				if err != nil {
					return next, fmt.Errorf("record at offset %d: %w", b.RecordOffset(r), err)
				}
				if e.Deleted {
					delete(txns, e.TransactionalID)
				} else {
					txns[e.TransactionalID] = metadataFromEntry(e)
				}
			}
		}
		return next, nil
	})
	if err != nil {
		return nil, fmt.Errorf("__transaction_state-%d: %w", partition, err)
	}
	return txns, nil
}
