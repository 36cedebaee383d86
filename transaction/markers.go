package transaction

// The marker channels (Kafka's TransactionMarkerChannelManager and its
// TransactionMarkerRequestCompletionHandler): once a transaction is
// decided, a COMMIT or ABORT marker goes to every partition in it, through
// a queue per leader broker drained by that broker's own goroutine into
// WriteTxnMarkers requests. Partitions answered are removed from the
// transaction; those whose leader moved, or whose request failed, wait
// MarkerRetryBackoff and are sent again to their leader then. Once no
// partition is left the transaction completes (CompleteCommit or
// CompleteAbort in the log).

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// markerEntry is the marker of one transaction for some of its partitions,
// all led by one broker (Kafka's TxnIdAndMarkerEntry).
type markerEntry struct {
	id               string
	txnPartition     int32 // the id's __transaction_state partition
	producerID       int64
	producerEpoch    int16
	coordinatorEpoch int32
	commit           bool
	partitions       []kafka.TopicPartition
}

type brokerQueue struct {
	entries []markerEntry
	wake    chan struct{}
}

// markerManager owns the queues. mu guards them, the retry lists and the
// transactions awaiting their markers; it is never held while a
// transaction's lock is taken or a request is sent.
type markerManager struct {
	c      *Coordinator
	sender MarkerSender
	log    *zap.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*pendingCompletion // Kafka's transactionsWithPendingMarkers
	queues  map[int32]*brokerQueue
	// retry holds markers to resolve again after the backoff: leader
	// unknown, request failed, retriable error.
	retry []markerEntry
	// appendRetry holds completions whose append found the coordinator
	// unavailable (Kafka's txnLogAppendRetryQueue).
	appendRetry []*pendingCompletion
}

func newMarkerManager(c *Coordinator, sender MarkerSender) *markerManager {
	ctx, cancel := context.WithCancel(context.Background())
	return &markerManager{
		c: c, sender: sender, log: c.log.Named("txn-marker-channel"), ctx: ctx, cancel: cancel,
		pending: map[string]*pendingCompletion{}, queues: map[int32]*brokerQueue{},
	}
}

func (m *markerManager) start() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(m.c.cfg.MarkerRetryBackoff)
		defer t.Stop()
		for {
			select {
			case <-m.ctx.Done():
				return
			case <-t.C:
				m.retryNow()
			}
		}
	}()
}

// shutdown cancels under mu, where every goroutine is added after a check
// of the context: none is added once Wait may be running.
func (m *markerManager) shutdown() {
	m.mu.Lock()
	m.cancel()
	m.mu.Unlock()
	m.wg.Wait()
}

// retryNow sends the markers and completion appends waiting for a retry.
func (m *markerManager) retryNow() {
	m.mu.Lock()
	entries, appends := m.retry, m.appendRetry
	m.retry, m.appendRetry = nil, nil
	m.mu.Unlock()
	for _, e := range entries {
		m.addTxnMarkersToBrokerQueue(e)
	}
	for _, pc := range appends {
		m.tryAppendToLog(pc)
	}
}

// addTxnMarkersToSend starts writing a decided transaction's markers; the
// transaction completes with complete once every partition has its marker.
func (m *markerManager) addTxnMarkersToSend(coordinatorEpoch int32, commit bool, md *txnMetadata, complete transit) {
	pc := &pendingCompletion{id: md.id, coordinatorEpoch: coordinatorEpoch, commit: commit, md: md, complete: complete}
	md.mu.Lock()
	e := markerEntry{
		id: md.id, txnPartition: m.c.PartitionFor(md.id), producerID: md.producerID, producerEpoch: md.producerEpoch,
		coordinatorEpoch: coordinatorEpoch, commit: commit, partitions: md.partitionList(),
	}
	md.mu.Unlock()
	m.mu.Lock()
	m.pending[md.id] = pc
	m.mu.Unlock()
	m.addTxnMarkersToBrokerQueue(e)
	m.maybeWriteTxnCompletion(md.id)
}

// addTxnMarkersToBrokerQueue queues a marker with the leader of each of its
// partitions. Partitions without a leader wait for a retry; partitions the
// cluster no longer has (deleted topics) are dropped from the transaction.
func (m *markerManager) addTxnMarkersToBrokerQueue(e markerEntry) {
	byBroker := map[int32][]kafka.TopicPartition{}
	var unknown, deleted []kafka.TopicPartition
	for _, tp := range e.partitions {
		leader, exists := m.sender.PartitionLeader(tp.Topic, tp.Partition)
		switch {
		case !exists:
			deleted = append(deleted, tp)
		case leader < 0:
			unknown = append(unknown, tp)
		default:
			byBroker[leader] = append(byBroker[leader], tp)
		}
	}
	m.mu.Lock()
	if m.ctx.Err() != nil {
		m.mu.Unlock()
		return
	}
	for broker, tps := range byBroker {
		q := m.queueLocked(broker)
		entry := e
		entry.partitions = tps
		q.entries = append(q.entries, entry)
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	if len(unknown) > 0 {
		entry := e
		entry.partitions = unknown
		m.retry = append(m.retry, entry)
	}
	m.mu.Unlock()
	if len(deleted) == 0 {
		return
	}
	epoch, md, err := m.c.getTransactionState(e.id)
	switch {
	case err != nil, md == nil, epoch != e.coordinatorEpoch:
		m.log.Info("Cancelling the transaction markers: the transaction moved", zap.String("transactional-id", e.id), zap.Error(err))
		m.removeMarkersForTxnID(e.id)
		return
	}
	m.log.Info("Skipping the markers of partitions the cluster no longer has", zap.String("transactional-id", e.id),
		zap.Stringers("partitions", deleted))
	md.mu.Lock()
	for _, tp := range deleted {
		if err := md.removePartition(tp); err != nil {
			m.log.Error("Cannot drop the partition from the transaction", zap.Error(err))
		}
	}
	md.mu.Unlock()
	m.maybeWriteTxnCompletion(e.id)
}

// queueLocked returns a broker's queue, starting its goroutine on first use.
// The caller holds mu and has seen the context live.
func (m *markerManager) queueLocked(broker int32) *brokerQueue {
	if q, ok := m.queues[broker]; ok {
		return q
	}
	q := &brokerQueue{wake: make(chan struct{}, 1)}
	m.queues[broker] = q
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.sendLoop(broker, q)
	}()
	return q
}

// sendLoop drains a broker's queue into WriteTxnMarkers requests, one at a
// time.
func (m *markerManager) sendLoop(broker int32, q *brokerQueue) {
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-q.wake:
		}
		m.mu.Lock()
		entries := q.entries
		q.entries = nil
		m.mu.Unlock()
		if len(entries) == 0 {
			continue
		}
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		for _, e := range entries {
			mk := kmsg.NewWriteTxnMarkersRequestMarker()
			mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = e.producerID, e.producerEpoch, e.commit, e.coordinatorEpoch
			for _, tp := range e.partitions {
				if n := len(mk.Topics); n > 0 && mk.Topics[n-1].Topic == tp.Topic {
					mk.Topics[n-1].Partitions = append(mk.Topics[n-1].Partitions, tp.Partition)
					continue
				}
				mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
				mt.Topic, mt.Partitions = tp.Topic, []int32{tp.Partition}
				mk.Topics = append(mk.Topics, mt)
			}
			req.Markers = append(req.Markers, mk)
		}
		ctx, cancel := context.WithTimeout(m.ctx, m.c.cfg.RequestTimeout)
		resp, err := m.sender.WriteTxnMarkers(ctx, broker, req)
		cancel()
		if m.ctx.Err() != nil {
			return
		}
		if err != nil {
			m.log.Info("Sending transaction markers failed; retrying", zap.Int32("broker", broker), zap.Error(err))
			for _, e := range entries {
				m.onDisconnected(e)
			}
			continue
		}
		for _, e := range entries {
			m.onResponse(e, resp)
		}
	}
}

// stillCoordinating reports whether a marker still belongs to this
// coordinator at its epoch, cancelling the transaction's markers if not.
func (m *markerManager) stillCoordinating(e markerEntry) (*txnMetadata, bool) {
	epoch, md, err := m.c.getTransactionState(e.id)
	switch {
	case err != nil:
		m.log.Info("No longer coordinating the transaction; cancelling its markers", zap.String("transactional-id", e.id), zap.Error(err))
	case md == nil:
		m.log.Error("The transaction's partition is owned but the id is not cached", zap.String("transactional-id", e.id))
	case epoch != e.coordinatorEpoch:
		m.log.Info("Transaction coordinator epoch changed; cancelling the markers", zap.String("transactional-id", e.id),
			zap.Int32("marker-coordinator-epoch", e.coordinatorEpoch), zap.Int32("coordinator-epoch", epoch))
	default:
		return md, true
	}
	m.removeMarkersForTxnID(e.id)
	return nil, false
}

// onDisconnected: the request got no answer; the markers are sent again to
// whoever leads their partitions after the backoff.
func (m *markerManager) onDisconnected(e markerEntry) {
	if _, ok := m.stillCoordinating(e); !ok {
		return
	}
	m.mu.Lock()
	m.retry = append(m.retry, e)
	m.mu.Unlock()
}

// onResponse takes a broker's answer for one marker entry.
func (m *markerManager) onResponse(e markerEntry, resp *kmsg.WriteTxnMarkersResponse) {
	codes := map[kafka.TopicPartition]int16{}
	found := false
	for _, r := range resp.Markers {
		if r.ProducerID != e.producerID {
			continue
		}
		found = true
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	md, ok := m.stillCoordinating(e)
	if !ok {
		return
	}
	if !found {
		m.log.Error("WriteTxnMarkers response has no result for the producer", zap.Int64("producer-id", e.producerID))
	}
	var retry []kafka.TopicPartition
	abort := false
	md.mu.Lock()
	for _, tp := range e.partitions {
		code, answered := codes[tp]
		switch {
		case !answered:
			retry = append(retry, tp)
		case code == 0, code == kerr.UnsupportedForMessageFormat.Code, code == kerr.UnsupportedVersion.Code:
			// Written, or the partition cannot hold transactional data (so
			// the producer never wrote to it).
			if err := md.removePartition(tp); err != nil {
				m.log.Error("Cannot remove the partition from the transaction", zap.Error(err))
			}
		case code == kerr.InvalidProducerEpoch.Code, code == kerr.TransactionCoordinatorFenced.Code:
			// A newer producer or coordinator took over: this transaction's
			// markers are no longer ours to write.
			m.log.Info("Transaction marker permanently refused; cancelling the markers", zap.String("transactional-id", e.id),
				zap.Stringer("partition", tp), zap.Error(kerr.ErrorForCode(code)))
			abort = true
		case code == kerr.UnknownTopicOrPartition.Code, code == kerr.NotLeaderForPartition.Code, code == kerr.NotEnoughReplicas.Code,
			code == kerr.NotEnoughReplicasAfterAppend.Code, code == kerr.RequestTimedOut.Code, code == kerr.KafkaStorageError.Code:
			retry = append(retry, tp)
		default:
			// Kafka treats these (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, ...) as
			// bugs; the marker is retried so the transaction can still end.
			m.log.Error("Unexpected error writing a transaction marker", zap.String("transactional-id", e.id),
				zap.Stringer("partition", tp), zap.Error(kerr.ErrorForCode(code)))
			retry = append(retry, tp)
		}
	}
	md.mu.Unlock()
	switch {
	case abort:
		m.removeMarkersForTxnID(e.id)
	case len(retry) > 0:
		r := e
		r.partitions = retry
		m.mu.Lock()
		m.retry = append(m.retry, r)
		m.mu.Unlock()
	default:
		m.maybeWriteTxnCompletion(e.id)
	}
}

// maybeWriteTxnCompletion completes a transaction once none of its
// partitions awaits a marker.
func (m *markerManager) maybeWriteTxnCompletion(id string) {
	m.mu.Lock()
	pc := m.pending[id]
	m.mu.Unlock()
	if pc == nil {
		return
	}
	pc.md.mu.Lock()
	done := len(pc.md.partitions) == 0
	pc.md.mu.Unlock()
	if !done {
		return
	}
	m.mu.Lock()
	if m.pending[id] != pc {
		m.mu.Unlock()
		return
	}
	delete(m.pending, id)
	m.mu.Unlock()
	epoch, md, err := m.c.getTransactionState(id)
	switch {
	case err != nil:
		m.log.Info("No longer coordinating; not completing the transaction", zap.String("transactional-id", id), zap.Error(err))
		return
	case md == nil:
		m.log.Error("The transaction's partition is owned but the id is not cached", zap.String("transactional-id", id))
		return
	case epoch != pc.coordinatorEpoch:
		m.log.Info("Transaction coordinator epoch changed; not completing the transaction", zap.String("transactional-id", id))
		return
	}
	m.tryAppendToLog(pc)
}

// tryAppendToLog writes the completion in the background; an unavailable
// coordinator (too few replicas, a timeout) is retried with the state kept
// pending.
func (m *markerManager) tryAppendToLog(pc *pendingCompletion) {
	m.mu.Lock()
	if m.ctx.Err() != nil {
		m.mu.Unlock()
		return
	}
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		retriable := func(err error) bool { return errors.Is(err, kerr.CoordinatorNotAvailable) }
		err := m.c.appendTransactionToLog(m.ctx, pc.id, pc.coordinatorEpoch, pc.complete, retriable)
		switch {
		case err == nil:
			m.log.Debug("Completed transaction", zap.String("transactional-id", pc.id), zap.Stringer("state", pc.complete.state))
		case retriable(err):
			m.mu.Lock()
			if m.ctx.Err() == nil {
				m.appendRetry = append(m.appendRetry, pc)
			}
			m.mu.Unlock()
		default:
			m.log.Info("Not completing the transaction", zap.String("transactional-id", pc.id), zap.Error(err))
		}
	}()
}

// removeMarkersForTxnTopicPartition drops everything queued for the
// transactions of a __transaction_state partition (it was unloaded, or is
// loading afresh).
func (m *markerManager) removeMarkersForTxnTopicPartition(partition int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	drop := func(e markerEntry) bool {
		if e.txnPartition == partition {
			delete(m.pending, e.id)
			return true
		}
		return false
	}
	for _, q := range m.queues {
		q.entries = slices.DeleteFunc(q.entries, drop)
	}
	m.retry = slices.DeleteFunc(m.retry, drop)
	m.appendRetry = slices.DeleteFunc(m.appendRetry, func(pc *pendingCompletion) bool {
		return m.c.PartitionFor(pc.id) == partition
	})
	for id := range m.pending {
		if m.c.PartitionFor(id) == partition {
			delete(m.pending, id)
		}
	}
}

// removeMarkersForTxnID forgets a transaction's completion: its markers in
// flight finish, but it never completes from here.
func (m *markerManager) removeMarkersForTxnID(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pending, id)
}

// numPending counts the transactions awaiting their markers.
func (m *markerManager) numPending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending)
}
