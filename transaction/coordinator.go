package transaction

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/coordinator"
	"github.com/zkafka/zkafka/kafka"
)

// Coordinator is the transaction coordinator of one broker (Kafka's
// TransactionCoordinator with its TransactionStateManager): it owns the
// transactional ids whose __transaction_state partition this broker leads.
//
// mu guards the table of partitions and their ids; each id's metadata has
// its own lock, always taken after mu (doc.go gives the whole order).
type Coordinator struct {
	cfg     Config
	log     *zap.Logger
	clock   kafka.Clock
	store   coordinator.Log
	pids    ProducerIDGenerator
	markers *markerManager

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.RWMutex
	active     bool
	partitions map[int32]*txnPartition
	abortTimer kafka.Timer
	expiry     kafka.Timer
}

// txnPartition is a __transaction_state partition this broker leads:
// loading until its ids are read back, then serving them. Its coordinator
// epoch is the partition's leader epoch when this broker took it: markers
// carry it so partition leaders can fence an older coordinator.
type txnPartition struct {
	coordinatorEpoch int32
	loading          bool
	txns             map[string]*txnMetadata
}

// New returns a coordinator over the given log and collaborators; Start
// activates it.
func New(cfg Config, store coordinator.Log, pids ProducerIDGenerator, sender MarkerSender) *Coordinator {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Clock == nil {
		cfg.Clock = kafka.SystemClock{}
	}
	if cfg.TransactionTopicPartitions <= 0 {
		cfg.TransactionTopicPartitions = 50
	}
	if cfg.MarkerRetryBackoff <= 0 {
		cfg.MarkerRetryBackoff = DefaultConfig().MarkerRetryBackoff
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Coordinator{
		cfg: cfg, log: cfg.Logger, clock: cfg.Clock, store: store, pids: pids, ctx: ctx, cancel: cancel,
		partitions: map[int32]*txnPartition{},
	}
	c.markers = newMarkerManager(c, sender)
	return c
}

// Start begins serving: the marker channels and the periodic timeout abort
// and transactional id expiration.
func (c *Coordinator) Start() {
	c.markers.start()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active = true
	c.scheduleAbortLocked()
	c.scheduleExpiryLocked()
	c.log.Info("Started transaction coordinator")
}

// Shutdown stops serving, unloads every partition and waits for loads,
// appends and marker requests in flight.
func (c *Coordinator) Shutdown() {
	c.mu.Lock()
	c.active = false
	for _, t := range []kafka.Timer{c.abortTimer, c.expiry} {
		if t != nil {
			t.Stop()
		}
	}
	clear(c.partitions)
	c.mu.Unlock()
	c.cancel()
	c.markers.shutdown()
	c.wg.Wait()
	c.log.Info("Shut down transaction coordinator")
}

// PartitionFor returns the __transaction_state partition of a
// transactional id: Kafka's Utils.abs(transactionalId.hashCode) %
// transaction.state.log.num.partitions, the group coordinator's hash.
func (c *Coordinator) PartitionFor(transactionalID string) int32 {
	return coordinator.PartitionFor(transactionalID, c.cfg.TransactionTopicPartitions)
}

func (c *Coordinator) now() int64 { return c.clock.Now().UnixMilli() }

// getTransactionState is Kafka's getTransactionState: the coordinator epoch
// and metadata of an id (nil when unknown), or NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE. A partition
// whose leadership moved without a callback (StopReplica) is unloaded here.
func (c *Coordinator) getTransactionState(id string) (int32, *txnMetadata, error) {
	return c.getOrCreate(id, nil)
}

// putTransactionStateIfNotExists adds created unless the id is known, and
// returns the id's metadata either way.
func (c *Coordinator) putTransactionStateIfNotExists(created *txnMetadata) (int32, *txnMetadata, error) {
	return c.getOrCreate(created.id, created)
}

func (c *Coordinator) getOrCreate(id string, created *txnMetadata) (int32, *txnMetadata, error) {
	partition := c.PartitionFor(id)
	leader := c.store.IsLeader(partition)
	c.mu.RLock()
	epoch, md, err := c.lookupLocked(partition, id, leader)
	c.mu.RUnlock()
	if errors.Is(err, errLeadershipLost) {
		c.OnResign(partition)
		return 0, nil, kerr.NotCoordinator
	}
	if err != nil || md != nil || created == nil {
		return epoch, md, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch, md, err = c.lookupLocked(partition, id, leader); err != nil || md != nil {
		return epoch, md, err
	}
	c.partitions[partition].txns[id] = created
	return epoch, created, nil
}

// knownTransaction is getTransactionState for a request naming an id its
// producer initialized: an empty id is INVALID_REQUEST, an unknown one
// INVALID_PRODUCER_ID_MAPPING.
func (c *Coordinator) knownTransaction(id string) (int32, *txnMetadata, error) {
	if id == "" {
		return 0, nil, kerr.InvalidRequest
	}
	epoch, md, err := c.getTransactionState(id)
	if err == nil && md == nil {
		err = kerr.InvalidProducerIDMapping
	}
	return epoch, md, err
}

// errLeadershipLost: the partition is owned but the log says this broker
// no longer leads it.
var errLeadershipLost = errors.New("transaction log partition leadership lost")

// lookupLocked finds an id in the table; the caller holds mu, read or
// write.
func (c *Coordinator) lookupLocked(partition int32, id string, leader bool) (int32, *txnMetadata, error) {
	p, ok := c.partitions[partition]
	switch {
	case !c.active:
		return 0, nil, kerr.CoordinatorNotAvailable
	case !ok:
		return 0, nil, kerr.NotCoordinator
	case p.loading:
		return 0, nil, kerr.CoordinatorLoadInProgress
	case !leader:
		return 0, nil, errLeadershipLost
	}
	return p.coordinatorEpoch, p.txns[id], nil
}

// ProducerIDAndEpoch is the producer id and epoch an InitProducerId v3+
// names (KIP-360).
type ProducerIDAndEpoch struct {
	ProducerID int64
	Epoch      int16
}

// InitProducerID answers InitProducerId: a new producer id for an
// idempotent producer (no transactional id), or the transactional id's
// producer id with its epoch bumped, fencing the previous producer. An
// ongoing transaction is aborted first and the client told
// CONCURRENT_TRANSACTIONS, to retry once the abort is done.
func (c *Coordinator) InitProducerID(ctx context.Context, transactionalID *string, timeoutMs int32, expected *ProducerIDAndEpoch) (int64, int16, error) {
	if transactionalID == nil {
		id, err := c.pids.GenerateProducerID()
		if err != nil {
			c.log.Error("Cannot allocate a producer id", zap.Error(err))
			return noProducerID, noProducerEpoch, kerr.CoordinatorNotAvailable
		}
		return id, 0, nil
	}
	id := *transactionalID
	switch {
	case id == "":
		return noProducerID, noProducerEpoch, kerr.InvalidRequest
	case timeoutMs <= 0 || timeoutOf(timeoutMs) > c.cfg.TransactionMaxTimeout:
		return noProducerID, noProducerEpoch, kerr.InvalidTransactionTimeout
	}
	epoch, md, err := c.getTransactionState(id)
	if err == nil && md == nil {
		pid, gerr := c.pids.GenerateProducerID()
		if gerr != nil {
			c.log.Error("Cannot allocate a producer id", zap.Error(gerr))
			return noProducerID, noProducerEpoch, kerr.CoordinatorNotAvailable
		}
		epoch, md, err = c.putTransactionStateIfNotExists(newTxnMetadata(id, pid, timeoutMs, c.now()))
	}
	if err != nil {
		return noProducerID, noProducerEpoch, err
	}
	md.mu.Lock()
	t, err := c.prepareInitProducerIDTransit(md, timeoutMs, expected)
	md.mu.Unlock()
	if err != nil {
		return noProducerID, noProducerEpoch, c.apiError(err)
	}
	if t.state == PrepareEpochFence {
		// The ongoing transaction is aborted first; the bumped epoch is
		// never returned, and the client's retry bumps it again.
		if err := c.endTransaction(ctx, id, t.producerID, t.producerEpoch, false, false); err != nil {
			return noProducerID, noProducerEpoch, err
		}
		return noProducerID, noProducerEpoch, kerr.ConcurrentTransactions
	}
	if err := c.appendTransactionToLog(ctx, id, epoch, t, nil); err != nil {
		c.log.Info("Returning an error to InitProducerId", zap.String("transactional-id", id), zap.Error(err))
		return noProducerID, noProducerEpoch, err
	}
	c.log.Info("Initialized transactional id", zap.String("transactional-id", id), zap.Int64("producer-id", t.producerID),
		zap.Int16("producer-epoch", t.producerEpoch), zap.Int32("partition", c.PartitionFor(id)))
	return t.producerID, t.producerEpoch, nil
}

// prepareInitProducerIDTransit decides InitProducerId under the id's lock.
func (c *Coordinator) prepareInitProducerIDTransit(md *txnMetadata, timeoutMs int32, expected *ProducerIDAndEpoch) (transit, error) {
	// A stated producer id must be the current one, or the previous one
	// with an exhausted epoch (a retry of the rotation), unless the id was
	// just created (a producer recovering from UNKNOWN_PRODUCER_ID).
	validProducer := expected == nil || md.producerEpoch == noProducerEpoch || expected.ProducerID == md.producerID ||
		(expected.ProducerID == md.lastProducerID && epochExhausted(expected.Epoch))
	switch {
	case md.pendingTransition():
		return transit{}, kerr.ConcurrentTransactions
	case !validProducer:
		return transit{}, kerr.ProducerFenced
	}
	switch md.state {
	case PrepareAbort, PrepareCommit:
		return transit{}, kerr.ConcurrentTransactions
	case CompleteAbort, CompleteCommit, Empty:
		if epochExhausted(md.producerEpoch) && (expected == nil || expected.Epoch == md.producerEpoch) {
			pid, err := c.pids.GenerateProducerID()
			if err != nil {
				c.log.Error("Cannot allocate a producer id", zap.Error(err))
				return transit{}, kerr.CoordinatorNotAvailable
			}
			return md.prepareProducerIDRotation(pid, timeoutMs, c.now(), expected != nil)
		}
		var expectedEpoch *int16
		if expected != nil {
			expectedEpoch = &expected.Epoch
		}
		return md.prepareIncrementProducerEpoch(timeoutMs, expectedEpoch, c.now())
	case Ongoing:
		return md.prepareFenceProducerEpoch()
	}
	return transit{}, fmt.Errorf("%w: %s is in state %s", errIllegalState, md.id, md.state)
}

// AddPartitions answers AddPartitionsToTxn, and AddOffsetsToTxn with the
// group's __consumer_offsets partition: the partitions join the
// transaction, starting it if none is ongoing.
func (c *Coordinator) AddPartitions(ctx context.Context, id string, producerID int64, producerEpoch int16, partitions []kafka.TopicPartition) error {
	epoch, md, err := c.knownTransaction(id)
	if err != nil {
		return err
	}
	md.mu.Lock()
	var t transit
	switch {
	case md.producerID != producerID:
		err = kerr.InvalidProducerIDMapping
	case md.producerEpoch != producerEpoch:
		err = kerr.ProducerFenced
	case md.pendingTransition(), md.state == PrepareCommit, md.state == PrepareAbort:
		err = kerr.ConcurrentTransactions
	case md.state == Ongoing && md.containsAll(partitions):
		// Already part of the transaction: nothing to write.
		md.mu.Unlock()
		return nil
	default:
		t, err = md.prepareAddPartitions(partitions, c.now())
	}
	md.mu.Unlock()
	if err != nil {
		return c.apiError(err)
	}
	return c.appendTransactionToLog(ctx, id, epoch, t, nil)
}

// EndTxn answers EndTxn: the transaction moves to PrepareCommit or
// PrepareAbort in the log, the client is answered, and the markers are
// written to every partition of the transaction before it completes.
func (c *Coordinator) EndTxn(ctx context.Context, id string, producerID int64, producerEpoch int16, commit bool) error {
	return c.endTransaction(ctx, id, producerID, producerEpoch, commit, true)
}

// endTransaction ends a transaction for a client's EndTxn (fromClient) or
// for the coordinator itself (a fence by InitProducerId, a timeout), whose
// producer epoch is the bumped one.
func (c *Coordinator) endTransaction(ctx context.Context, id string, producerID int64, producerEpoch int16, commit, fromClient bool) error {
	epoch, md, err := c.knownTransaction(id)
	if err != nil {
		return err
	}
	md.mu.Lock()
	epochFence := false
	var t transit
	switch {
	case md.producerID != producerID:
		err = kerr.InvalidProducerIDMapping
	case (fromClient && producerEpoch != md.producerEpoch) || producerEpoch < md.producerEpoch:
		// Clients must name the current epoch; the coordinator's own
		// fence names the bumped one.
		err = kerr.ProducerFenced
	case md.pendingTransition() && md.pending != PrepareEpochFence:
		err = kerr.ConcurrentTransactions
	default:
		err = c.endTransitionLocked(md, commit)
		if err == nil {
			next := PrepareAbort
			if commit {
				next = PrepareCommit
			}
			if next == PrepareAbort && md.hasPending && md.pending == PrepareEpochFence {
				// The fence's bumped epoch goes into the abort record.
				epochFence = true
				md.hasPending = false
				md.producerEpoch, md.lastProducerEpoch = producerEpoch, noProducerEpoch
			}
			t, err = md.prepareAbortOrCommit(next, c.now())
		}
	}
	md.mu.Unlock()
	if errors.Is(err, errAlreadyEnded) {
		return nil
	}
	if err != nil {
		return c.apiError(err)
	}
	if err := c.appendTransactionToLog(ctx, id, epoch, t, nil); err != nil {
		c.log.Info("Aborting the sending of transaction markers", zap.String("transactional-id", id), zap.Stringer("state", t.state), zap.Error(err))
		if epochFence {
			if e, md, gerr := c.getTransactionState(id); gerr == nil && md != nil && e == epoch {
				md.mu.Lock()
				md.failedEpochFence = true
				md.mu.Unlock()
				c.log.Warn("Failed to write an epoch fence to the transaction log; the bumped epoch was not returned",
					zap.String("transactional-id", id), zap.Int16("producer-epoch", t.producerEpoch), zap.Error(err))
			}
		}
		return err
	}
	// Appended: the transaction is decided. Check that nothing moved
	// meanwhile, then write the markers.
	e, md, err := c.getTransactionState(id)
	switch {
	case err != nil:
		return err
	case md == nil || e != epoch:
		return kerr.NotCoordinator
	}
	md.mu.Lock()
	var done transit
	switch {
	case md.producerID != producerID:
		err = kerr.InvalidProducerIDMapping
	case md.producerEpoch != producerEpoch:
		err = kerr.ProducerFenced
	case md.pendingTransition():
		err = kerr.ConcurrentTransactions
	case md.state == PrepareCommit && commit, md.state == PrepareAbort && !commit:
		done, err = md.prepareComplete(c.now())
	default:
		err = kerr.InvalidTxnState
	}
	md.mu.Unlock()
	if err != nil {
		return c.apiError(err)
	}
	c.markers.addTxnMarkersToSend(epoch, commit, md, done)
	return nil
}

// errAlreadyEnded is an EndTxn repeating the outcome of the transaction
// that just completed: answered with no error and nothing written.
var errAlreadyEnded = errors.New("transaction already ended that way")

// endTransitionLocked checks an end of transaction against the id's state.
func (c *Coordinator) endTransitionLocked(md *txnMetadata, commit bool) error {
	switch md.state {
	case Ongoing:
		return nil
	case CompleteCommit, CompleteAbort:
		if (md.state == CompleteCommit) == commit {
			return errAlreadyEnded
		}
	case PrepareCommit, PrepareAbort:
		if (md.state == PrepareCommit) == commit {
			return kerr.ConcurrentTransactions
		}
	case Dead, PrepareEpochFence:
		return fmt.Errorf("%w: %s is in state %s", errIllegalState, md.id, md.state)
	}
	c.log.Debug("Invalid transaction marker for the state", zap.String("transactional-id", md.id), zap.Stringer("state", md.state), zap.Bool("commit", commit))
	return kerr.InvalidTxnState
}

// apiError turns an error that is not a Kafka error (a refused transition:
// a bug) into UNKNOWN_SERVER_ERROR, logging it.
func (c *Coordinator) apiError(err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	c.log.Error("Transaction coordinator error", zap.Error(err))
	return kerr.UnknownServerError
}

// appendTransactionToLog writes a transition and, once acks=all answered,
// completes it on the metadata, as Kafka's appendTransactionToLog: the
// coordinator epoch must be the same before the append and after it. On
// failure the pending state is cleared, unless retryOnError says the caller
// will retry with it. The returned error is a coordinator error code.
func (c *Coordinator) appendTransactionToLog(ctx context.Context, id string, coordinatorEpoch int32, t transit, retryOnError func(error) bool) error {
	now := c.now()
	batch := coordinator.EncodeBatch([]coordinator.Record{{Key: txnKey(id), Value: txnValue(t)}}, now)
	partition := c.PartitionFor(id)
	await, err := c.appendIfCoordinator(id, partition, coordinatorEpoch, batch)
	var appendErr *appendFailure
	switch {
	case errors.As(err, &appendErr):
		// The log refused the record: handled as a failed write below.
		err = appendErr.err
	case err != nil:
		return err
	default:
		err = c.awaitAppend(ctx, await, timeoutOf(t.timeoutMs))
	}
	epoch, md, gerr := c.getTransactionState(id)
	if err == nil {
		switch {
		case gerr != nil:
			c.log.Info("Transaction state is no longer accessible after its append", zap.String("transactional-id", id), zap.Error(gerr))
			return gerr
		case md == nil || epoch != coordinatorEpoch:
			c.log.Info("Coordinator epoch changed after the append; aborting the transition", zap.String("transactional-id", id),
				zap.Int32("coordinator-epoch", coordinatorEpoch))
			return kerr.NotCoordinator
		}
		md.mu.Lock()
		defer md.mu.Unlock()
		if cerr := md.completeTransitionTo(t); cerr != nil {
			return c.apiError(cerr)
		}
		return nil
	}
	if gerr == nil && md != nil && epoch == coordinatorEpoch {
		md.mu.Lock()
		if retryOnError == nil || !retryOnError(err) {
			md.hasPending = false
		}
		md.mu.Unlock()
	}
	c.log.Info("Appending to the transaction log failed", zap.String("transactional-id", id), zap.Stringer("state", t.state), zap.Error(err))
	return err
}

// appendIfCoordinator appends a batch while this broker still coordinates
// the id at the given epoch: the table stays read-locked until the append
// is in the log, so no unload and reload can slip in between the check and
// the append and let an old epoch's record through.
func (c *Coordinator) appendIfCoordinator(id string, partition, coordinatorEpoch int32, batch []byte) (func(context.Context) error, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.partitions[partition]
	switch {
	case !c.active:
		return nil, kerr.CoordinatorNotAvailable
	case !ok:
		return nil, kerr.NotCoordinator
	case p.loading:
		return nil, kerr.CoordinatorLoadInProgress
	case p.txns[id] == nil && id != "":
		return nil, kerr.NotCoordinator
	case p.coordinatorEpoch != coordinatorEpoch:
		return nil, kerr.NotCoordinator
	}
	_, await, err := c.store.Append(partition, batch)
	if err != nil {
		return nil, &appendFailure{appendError(err)}
	}
	return await, nil
}

// appendFailure is an append the log refused, as opposed to one never
// tried because this broker no longer coordinates the id.
type appendFailure struct{ err error }

func (f *appendFailure) Error() string { return f.err.Error() }
func (f *appendFailure) Unwrap() error { return f.err }

// awaitAppend waits for acks=all, at most timeout and never past shutdown.
func (c *Coordinator) awaitAppend(ctx context.Context, await func(context.Context) error, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	err := await(ctx)
	if err != nil && c.ctx.Err() != nil {
		return kerr.NotCoordinator
	}
	return appendError(err)
}

// appendError is Kafka's mapping of a transaction log append's error to
// the coordinator's.
func appendError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.NotEnoughReplicas),
		errors.Is(err, kerr.NotEnoughReplicasAfterAppend), errors.Is(err, kerr.RequestTimedOut),
		errors.Is(err, context.DeadlineExceeded):
		return kerr.CoordinatorNotAvailable
	case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.KafkaStorageError), errors.Is(err, context.Canceled):
		return kerr.NotCoordinator
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return kerr.UnknownServerError
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return kerr.UnknownServerError
}
