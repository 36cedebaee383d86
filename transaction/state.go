package transaction

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/kafka"
)

// State is a transactional id's state (Kafka's TransactionState); its value
// is the byte the transaction log stores. doc.go draws the machine.
type State int8

// The states, with Kafka's byte values.
const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	Dead
	PrepareEpochFence
)

func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case Ongoing:
		return "Ongoing"
	case PrepareCommit:
		return "PrepareCommit"
	case PrepareAbort:
		return "PrepareAbort"
	case CompleteCommit:
		return "CompleteCommit"
	case CompleteAbort:
		return "CompleteAbort"
	case Dead:
		return "Dead"
	case PrepareEpochFence:
		return "PrepareEpochFence"
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// expirationAllowed: a transactional id idle in these states for
// transactional.id.expiration.ms is removed.
func (s State) expirationAllowed() bool {
	return s == Empty || s == CompleteCommit || s == CompleteAbort
}

// validPreviousStates is Kafka's table: a transition to a state is legal
// only from these.
var validPreviousStates = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteAbort, CompleteCommit},
	PrepareEpochFence: {Ongoing},
}

// Producer id and epoch values with no producer, as in record batches.
const (
	noProducerID    int64 = -1
	noProducerEpoch int16 = -1
)

// epochExhausted: epochs stop one short of MaxInt16 so that the
// coordinator can always fence the current producer once more.
func epochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// transit is a transition being written to the log (Kafka's
// TxnTransitMetadata): the metadata as it will be once the record is
// replicated.
type transit struct {
	producerID, lastProducerID       int64
	producerEpoch, lastProducerEpoch int16
	timeoutMs                        int32
	state                            State
	partitions                       []kafka.TopicPartition // sorted
	startTimestamp, updateTimestamp  int64
}

// txnMetadata is one transactional id (Kafka's TransactionMetadata). mu
// guards every field but id. A transition is prepared under mu (setting
// pending, which blocks any other), written to the log without mu, and
// completed under mu once acks=all answered.
type txnMetadata struct {
	id string

	mu                               sync.Mutex
	producerID, lastProducerID       int64
	producerEpoch, lastProducerEpoch int16
	timeoutMs                        int32
	state                            State
	partitions                       map[kafka.TopicPartition]bool
	startTimestamp, updateTimestamp  int64
	// pending is the state being written, valid when hasPending.
	pending    State
	hasPending bool
	// failedEpochFence: a fencing epoch bump may not have reached the log,
	// so the next fence does not bump again (the bumped epoch never went
	// to a client).
	failedEpochFence bool
}

func newTxnMetadata(id string, producerID int64, timeoutMs int32, now int64) *txnMetadata {
	return &txnMetadata{
		id: id, producerID: producerID, lastProducerID: noProducerID, producerEpoch: noProducerEpoch,
		lastProducerEpoch: noProducerEpoch, timeoutMs: timeoutMs, state: Empty,
		partitions: map[kafka.TopicPartition]bool{}, startTimestamp: -1, updateTimestamp: now,
	}
}

// metadataFromEntry rebuilds a transactional id loaded from the log: the
// last producer id and epoch are not stored (Kafka 2.8 writes no tagged
// fields), so they are unknown.
func metadataFromEntry(e LogEntry) *txnMetadata {
	md := newTxnMetadata(e.TransactionalID, e.ProducerID, e.TimeoutMs, e.LastUpdate)
	md.producerEpoch, md.state, md.startTimestamp = e.ProducerEpoch, e.State, e.Start
	for _, tp := range e.Partitions {
		md.partitions[tp] = true
	}
	return md
}

func (md *txnMetadata) pendingTransition() bool { return md.hasPending }

// containsAll reports whether every partition is already in the transaction.
func (md *txnMetadata) containsAll(tps []kafka.TopicPartition) bool {
	for _, tp := range tps {
		if !md.partitions[tp] {
			return false
		}
	}
	return true
}

func (md *txnMetadata) hasPendingTransaction() bool {
	return md.state == Ongoing || md.state == PrepareAbort || md.state == PrepareCommit
}

// removePartition drops a partition whose marker is written.
func (md *txnMetadata) removePartition(tp kafka.TopicPartition) error {
	if md.state != PrepareCommit && md.state != PrepareAbort {
		return fmt.Errorf("%w: %s removes a partition whose marker was written in state %s", errIllegalState, md.id, md.state)
	}
	delete(md.partitions, tp)
	return nil
}

// prepareFenceProducerEpoch bumps the epoch to fence the current producer
// before aborting its transaction (an InitProducerId during a transaction,
// or the transaction's timeout). The bumped epoch is never returned to a
// client.
func (md *txnMetadata) prepareFenceProducerEpoch() (transit, error) {
	if md.producerEpoch == math.MaxInt16 {
		return transit{}, fmt.Errorf("%w: %s cannot fence epoch %d", errIllegalState, md.id, md.producerEpoch)
	}
	epoch := md.producerEpoch + 1
	if md.failedEpochFence {
		epoch = md.producerEpoch
	}
	return md.prepareTransitionTo(PrepareEpochFence, md.producerID, epoch, noProducerEpoch, md.timeoutMs,
		md.partitionList(), md.startTimestamp, md.updateTimestamp)
}

// prepareIncrementProducerEpoch is InitProducerId's epoch bump (KIP-360):
// without an expected epoch the epoch just moves on; with one, a producer
// recovering after an error keeps its place when it names the current epoch
// (bumped) or the previous one (a retry of a bump that succeeded), and is
// fenced otherwise.
func (md *txnMetadata) prepareIncrementProducerEpoch(timeoutMs int32, expectedEpoch *int16, now int64) (transit, error) {
	if epochExhausted(md.producerEpoch) {
		return transit{}, fmt.Errorf("%w: %s has exhausted the epochs of producer %d", errIllegalState, md.id, md.producerID)
	}
	next, last := md.producerEpoch+1, noProducerEpoch
	if expectedEpoch != nil {
		switch {
		case md.producerEpoch == noProducerEpoch || *expectedEpoch == md.producerEpoch:
			last = md.producerEpoch
		case *expectedEpoch == md.lastProducerEpoch:
			next, last = md.producerEpoch, md.lastProducerEpoch
		default:
			return transit{}, kerr.ProducerFenced
		}
	}
	return md.prepareTransitionTo(Empty, md.producerID, next, last, timeoutMs, nil, -1, now)
}

// prepareProducerIDRotation moves the id to a new producer id at epoch 0
// once the old one's epochs are exhausted.
func (md *txnMetadata) prepareProducerIDRotation(producerID int64, timeoutMs int32, now int64, recordLastEpoch bool) (transit, error) {
	if md.hasPendingTransaction() {
		return transit{}, fmt.Errorf("%w: %s rotates producer ids during a transaction", errIllegalState, md.id)
	}
	last := noProducerEpoch
	if recordLastEpoch {
		last = md.producerEpoch
	}
	return md.prepareTransitionTo(Empty, producerID, 0, last, timeoutMs, nil, -1, now)
}

// prepareAddPartitions adds partitions to the transaction, starting it
// (and its clock) when none is ongoing.
func (md *txnMetadata) prepareAddPartitions(add []kafka.TopicPartition, now int64) (transit, error) {
	start := md.startTimestamp
	if md.state == Empty || md.state == CompleteAbort || md.state == CompleteCommit {
		start = now
	}
	all := maps.Clone(md.partitions)
	for _, tp := range add {
		all[tp] = true
	}
	return md.prepareTransitionTo(Ongoing, md.producerID, md.producerEpoch, md.lastProducerEpoch, md.timeoutMs,
		sortedPartitions(all), start, now)
}

func (md *txnMetadata) prepareAbortOrCommit(to State, now int64) (transit, error) {
	return md.prepareTransitionTo(to, md.producerID, md.producerEpoch, md.lastProducerEpoch, md.timeoutMs,
		md.partitionList(), md.startTimestamp, now)
}

// prepareComplete is the end of a transaction whose markers are written.
func (md *txnMetadata) prepareComplete(now int64) (transit, error) {
	to := CompleteAbort
	if md.state == PrepareCommit {
		to = CompleteCommit
	}
	md.failedEpochFence = false
	return md.prepareTransitionTo(to, md.producerID, md.producerEpoch, md.lastProducerEpoch, md.timeoutMs, nil,
		md.startTimestamp, now)
}

func (md *txnMetadata) prepareDead() (transit, error) {
	return md.prepareTransitionTo(Dead, md.producerID, md.producerEpoch, md.lastProducerEpoch, md.timeoutMs, nil,
		md.startTimestamp, md.updateTimestamp)
}

func (md *txnMetadata) partitionList() []kafka.TopicPartition { return sortedPartitions(md.partitions) }

// prepareTransitionTo checks the transition against the table and marks it
// pending.
func (md *txnMetadata) prepareTransitionTo(to State, producerID int64, epoch, lastEpoch int16, timeoutMs int32,
	partitions []kafka.TopicPartition, start, now int64) (transit, error) {
	switch {
	case md.hasPending:
		return transit{}, fmt.Errorf("%w: %s prepares %s while %s is pending", errIllegalState, md.id, to, md.pending)
	case producerID < 0:
		return transit{}, fmt.Errorf("%w: %s gets producer id %d", errIllegalState, md.id, producerID)
	case epoch < 0:
		return transit{}, fmt.Errorf("%w: %s gets producer epoch %d", errIllegalState, md.id, epoch)
	case !slices.Contains(validPreviousStates[to], md.state):
		return transit{}, fmt.Errorf("%w: %s cannot go from %s to %s", errIllegalState, md.id, md.state, to)
	}
	md.pending, md.hasPending = to, true
	return transit{
		producerID: producerID, lastProducerID: md.producerID, producerEpoch: epoch, lastProducerEpoch: lastEpoch,
		timeoutMs: timeoutMs, state: to, partitions: partitions, startTimestamp: start, updateTimestamp: now,
	}, nil
}

// completeTransitionTo takes a transition whose record acks=all
// acknowledged, checking that it is the one pending and consistent with the
// metadata as Kafka's completeTransitionTo does.
func (md *txnMetadata) completeTransitionTo(t transit) error {
	if !md.hasPending || md.pending != t.state {
		return fmt.Errorf("%w: %s completes %s but %s is pending", errIllegalState, md.id, t.state, md.pendingString())
	}
	sameProducer := t.producerEpoch == md.producerEpoch && t.producerID == md.producerID
	ok := true
	switch t.state {
	case Empty:
		bump := t.producerEpoch == md.producerEpoch+1 || (t.producerEpoch == 0 && t.producerID != md.producerID)
		ok = (md.producerEpoch == t.producerEpoch || bump) && len(t.partitions) == 0 && t.startTimestamp == -1
		if ok {
			md.timeoutMs, md.producerEpoch, md.lastProducerEpoch = t.timeoutMs, t.producerEpoch, t.lastProducerEpoch
			md.producerID, md.lastProducerID = t.producerID, t.lastProducerID
		}
	case Ongoing:
		ok = sameProducer && md.timeoutMs == t.timeoutMs && isSubset(md.partitions, t.partitions)
		if ok {
			md.startTimestamp = t.startTimestamp
			for _, tp := range t.partitions {
				md.partitions[tp] = true
			}
		}
	case PrepareAbort, PrepareCommit:
		ok = sameProducer && md.timeoutMs == t.timeoutMs && md.startTimestamp == t.startTimestamp &&
			slices.Equal(md.partitionList(), t.partitions)
	case CompleteAbort, CompleteCommit:
		ok = sameProducer && md.timeoutMs == t.timeoutMs && t.startTimestamp != -1
		if ok {
			md.startTimestamp = t.startTimestamp
			clear(md.partitions)
		}
	default:
		// PrepareEpochFence is never written: the abort that follows it is.
		// Dead is never written either: the id leaves the cache.
		ok = false
	}
	if !ok {
		return fmt.Errorf("%w: %s cannot complete the transition to %+v from %s", errIllegalState, md.id, t, md)
	}
	md.updateTimestamp, md.hasPending, md.state = t.updateTimestamp, false, t.state
	return nil
}

func isSubset(set map[kafka.TopicPartition]bool, of []kafka.TopicPartition) bool {
	for tp := range set {
		if !slices.Contains(of, tp) {
			return false
		}
	}
	return true
}

func (md *txnMetadata) pendingString() string {
	if !md.hasPending {
		return "None"
	}
	return "Some(" + md.pending.String() + ")"
}

// String is Kafka's TransactionMetadata.toString.
func (md *txnMetadata) String() string {
	return fmt.Sprintf("TransactionMetadata(transactionalId=%s, producerId=%d, producerEpoch=%d, txnTimeoutMs=%d, "+
		"state=%s, pendingState=%s, topicPartitions=%s, txnStartTimestamp=%d, txnLastUpdateTimestamp=%d)",
		md.id, md.producerID, md.producerEpoch, md.timeoutMs, md.state, md.pendingString(),
		partitionSet(md.partitionList()), md.startTimestamp, md.updateTimestamp)
}
