package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Reference is an in-process cluster that `zkafka-bench` runs the same load
// against, to print zkafka's rates as ratios of its own. Run starts the
// cluster, points opts at it, calls RunAgainst and stops it.
type Reference struct {
	Name string
	Run  func(ctx context.Context, opts Options, log io.Writer) (Result, error)
}

// Result is what one run measured against one target. Rates count record
// values only (no keys, headers or framing); MB is 10^6 bytes.
type Result struct {
	Target  string // the bootstrap servers, or a Reference's name
	Records int    // records produced, and consumed back
	Bytes   int64  // value bytes produced

	ProduceDuration time.Duration // first enqueue to last acknowledgement
	ConsumeDuration time.Duration // consumer creation to last record

	ProduceRecordsPerSec, ProduceMBPerSec float64
	ConsumeRecordsPerSec, ConsumeMBPerSec float64

	P50, P99 time.Duration // produce latency: record enqueue to its promise

	// E2EP50, E2EP99, E2EP999 and E2EMax are an end-to-end run's latency
	// percentiles: a record's enqueue by the producer to its arrival at
	// the consumer.
	E2EP50, E2EP99, E2EP999, E2EMax time.Duration

	// Transactions is how many transactions a transactional run committed;
	// CommitP50 and CommitP99 are the latency of EndTransaction(commit).
	Transactions         int
	CommitP50, CommitP99 time.Duration
}

// Run produces opts.Records records to opts.Brokers, then consumes them all
// back with a fresh client. Progress is logged to log (nil discards it).
func Run(ctx context.Context, opts Options, log io.Writer) (Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	if len(opts.Brokers) == 0 {
		return Result{}, errors.New("bench: no bootstrap brokers")
	}
	return run(ctx, opts, newLogger(log), strings.Join(opts.Brokers, ","))
}

// RunAgainst runs the load against brokers already started, naming the result
// target; a Reference's Run calls it with its cluster's addresses.
func RunAgainst(ctx context.Context, opts Options, log io.Writer, target string, brokers []string) (Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	opts.Brokers = brokers
	return run(ctx, opts, newLogger(log), target)
}

func run(ctx context.Context, opts Options, logger *zap.Logger, target string) (Result, error) {
	logger = logger.With(zap.String("target", target), zap.String("topic", opts.Topic))
	res, err := measure(ctx, opts, logger)
	if err != nil {
		return Result{}, fmt.Errorf("bench %s: %w", target, err)
	}
	res.Target = target
	return res, nil
}

func measure(ctx context.Context, opts Options, logger *zap.Logger) (Result, error) {
	popts, err := opts.producerOpts()
	if err != nil {
		return Result{}, err
	}
	producer, err := kgo.NewClient(popts...)
	if err != nil {
		return Result{}, fmt.Errorf("new producer client: %w", err)
	}
	defer producer.Close()

	adm := kadm.NewClient(producer)
	from, created, err := prepareTopic(ctx, adm, opts, logger)
	if created && opts.DeleteTopic {
		defer deleteTopic(ctx, adm, opts.Topic, logger)
	}
	if err != nil {
		return Result{}, err
	}

	if opts.Mode == ModeE2E {
		logger.Info("end to end", zap.Int("records", opts.Records), zap.Int("rate", opts.Rate), zap.Int("record-size", opts.RecordSize),
			zap.String("acks", opts.Acks), zap.String("compression", opts.Compression), zap.Bool("idempotent", opts.Idempotent))
		e, err := endToEnd(ctx, producer, opts, from)
		if err != nil {
			return Result{}, err
		}
		logger.Info("consumed", zap.Duration("duration", e.duration), zap.Duration("p50", e.p50), zap.Duration("p99", e.p99), zap.Duration("max", e.maxed))
		return Result{
			Records: opts.Records, Bytes: int64(opts.Records) * int64(opts.RecordSize),
			ProduceDuration: e.duration, ProduceRecordsPerSec: perSecond(float64(opts.Records), e.duration),
			E2EP50: e.p50, E2EP99: e.p99, E2EP999: e.p999, E2EMax: e.maxed,
		}, nil
	}

	logger.Info("producing", zap.Int("records", opts.Records), zap.Int("record-size", opts.RecordSize),
		zap.String("acks", opts.Acks), zap.String("compression", opts.Compression), zap.Bool("idempotent", opts.Idempotent))
	p, err := produce(ctx, producer, opts)
	if err != nil {
		return Result{}, err
	}
	logger.Info("produced", zap.Duration("duration", p.duration), zap.Duration("p50", p.p50), zap.Duration("p99", p.p99),
		zap.Int("transactions", p.transactions), zap.Duration("commit-p50", p.commitP50), zap.Duration("commit-p99", p.commitP99))

	bytes := int64(opts.Records) * int64(opts.RecordSize)
	res := Result{Records: opts.Records, Bytes: bytes}
	if opts.Mode != ModeConsume {
		res.ProduceDuration = p.duration
		res.ProduceRecordsPerSec = perSecond(float64(opts.Records), p.duration)
		res.ProduceMBPerSec = perSecond(float64(bytes)/1e6, p.duration)
		res.P50, res.P99 = p.p50, p.p99
		res.Transactions, res.CommitP50, res.CommitP99 = p.transactions, p.commitP50, p.commitP99
	}
	if opts.Mode == ModeProduce {
		return res, nil
	}

	c, err := consume(ctx, opts, from)
	if err != nil {
		return Result{}, err
	}
	if c.records > opts.Records {
		// Without idempotence a retried produce may be written twice; a
		// reused topic may also have another writer.
		logger.Warn("consumed more records than produced", zap.Int("consumed", c.records), zap.Int("produced", opts.Records))
	}
	logger.Info("consumed", zap.Int("records", c.records), zap.Duration("duration", c.duration))
	res.ConsumeDuration = c.duration
	res.ConsumeRecordsPerSec = perSecond(float64(opts.Records), c.duration)
	res.ConsumeMBPerSec = perSecond(float64(bytes)/1e6, c.duration)
	return res, nil
}

// prepareTopic creates the topic, or accepts one that already exists, and
// waits until every partition has a leader. For a new topic (created) it
// returns no offsets: the consumer reads from the start. For an existing one
// it returns the current end offsets, so that only this run's records are
// read and counted.
func prepareTopic(ctx context.Context, adm *kadm.Client, opts Options, logger *zap.Logger) (from map[int32]kgo.Offset, created bool, err error) {
	_, err = adm.CreateTopic(ctx, opts.Partitions, opts.Replication, nil, opts.Topic)
	existed := errors.Is(err, kerr.TopicAlreadyExists)
	// REQUEST_TIMED_OUT: the controller took the topic, but its leaders
	// were not elected within the request's timeout (Kafka's CreateTopics);
	// the topic is this run's, and awaitLeaders waits for it.
	timedOut := errors.Is(err, kerr.RequestTimedOut)
	if err != nil && !existed && !timedOut {
		return nil, false, fmt.Errorf("create topic %s (partitions %d, replication factor %d): %w",
			opts.Topic, opts.Partitions, opts.Replication, err)
	}
	want := opts.Partitions
	if existed {
		want = 0 // any partition count is acceptable for a topic made by someone else
	}
	if err := awaitLeaders(ctx, adm, opts.Topic, want); err != nil {
		return nil, !existed, err
	}
	if !existed {
		logger.Info("created topic", zap.Int32("partitions", opts.Partitions), zap.Int16("replication-factor", opts.Replication))
		return nil, true, nil
	}
	ends, err := adm.ListEndOffsets(ctx, opts.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, false, fmt.Errorf("list end offsets of existing topic %s: %w", opts.Topic, err)
	}
	logger.Info("reusing existing topic; consuming from its current end offsets")
	return ends.KOffsets()[opts.Topic], false, nil
}

// topicDeleteTimeout bounds the deletion of a run's topic, which happens
// even when the run's own context has ended.
const topicDeleteTimeout = 30 * time.Second

// deleteTopic deletes the run's topic; a failure is logged, not returned:
// the measurement stands, and the topic can be deleted by hand.
func deleteTopic(ctx context.Context, adm *kadm.Client, topic string, logger *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), topicDeleteTimeout)
	defer cancel()
	resp, err := adm.DeleteTopic(ctx, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		logger.Warn("could not delete the run's topic", zap.Error(err))
		return
	}
	logger.Info("deleted topic")
}

// leaderPollInterval is how often awaitLeaders asks for metadata again.
const leaderPollInterval = 50 * time.Millisecond

// awaitLeaders polls metadata until topic has partitions (exactly want of
// them, if want > 0) that all have a leader. A broker may answer CreateTopics
// before its metadata shows the topic; without this wait that delay would
// be billed to the producer, or exhaust kgo's unknown-topic retries.
func awaitLeaders(ctx context.Context, adm *kadm.Client, topic string, want int32) error {
	tick := time.NewTicker(leaderPollInterval)
	defer tick.Stop()
	for {
		notReady := leadersMissing(ctx, adm, topic, want)
		if notReady == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for leaders of topic %s: %w (last: %w)", topic, context.Cause(ctx), notReady)
		case <-tick.C:
		}
	}
}

// leadersMissing says why topic is not ready, or returns nil if it is.
func leadersMissing(ctx context.Context, adm *kadm.Client, topic string, want int32) error {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return fmt.Errorf("metadata request: %w", err)
	}
	td, ok := md.Topics[topic]
	switch {
	case !ok:
		return errors.New("topic absent from metadata")
	case td.Err != nil:
		return td.Err
	case len(td.Partitions) == 0 || (want > 0 && int32(len(td.Partitions)) != want):
		return fmt.Errorf("metadata lists %d partitions", len(td.Partitions))
	}
	for _, pd := range td.Partitions {
		if pd.Err != nil {
			return fmt.Errorf("partition %d: %w", pd.Partition, pd.Err)
		}
		if pd.Leader < 0 {
			return fmt.Errorf("partition %d has no leader", pd.Partition)
		}
	}
	return nil
}

type produceStats struct {
	duration             time.Duration
	p50, p99             time.Duration
	transactions         int
	commitP50, commitP99 time.Duration
}

// produce enqueues every record and waits for every promise. The first
// failed promise cancels the rest: a benchmark of a lossy broker is not a
// benchmark.
func produce(ctx context.Context, cl *kgo.Client, opts Options) (produceStats, error) {
	if opts.TransactionSize > 0 {
		return produceTransactions(ctx, cl, opts)
	}
	values := newPayloads(opts.Records, opts.RecordSize, opts.Compressible)
	latencies := make([]time.Duration, opts.Records)
	prodCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)

	var (
		wg    sync.WaitGroup
		acked atomic.Int64
	)
	bar := startProgress(opts.Progress, "produce", opts.Records)
	defer bar.finish()
	begin := time.Now()
	pace := newPacer(begin, opts.Rate)
	defer pace.stop()
	for i := 0; i < opts.Records && prodCtx.Err() == nil; i++ {
		if !pace.wait(prodCtx, i) {
			break
		}
		wg.Add(1)
		enqueued := time.Now()
		cl.Produce(prodCtx, &kgo.Record{Topic: opts.Topic, Value: values.value(i)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				abort(fmt.Errorf("record to %s[%d]: %w", r.Topic, r.Partition, err))
				return
			}
			latencies[i] = time.Since(enqueued)
			acked.Add(1)
			bar.add(1)
		})
	}
	if err := cl.Flush(prodCtx); err != nil {
		// Closing fails every record still buffered, so every promise runs.
		cl.Close()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	if err := context.Cause(prodCtx); err != nil {
		return produceStats{}, fmt.Errorf("produce aborted after %d of %d records were acknowledged: %w",
			acked.Load(), opts.Records, err)
	}

	slices.Sort(latencies)
	return produceStats{
		duration: elapsed,
		p50:      percentile(latencies, 0.50),
		p99:      percentile(latencies, 0.99),
	}, nil
}

// produceTransactions produces the records in transactions of
// opts.TransactionSize: begin, enqueue them all, flush, commit, and the
// next. Record latency runs from enqueue to its promise; commit latency
// is EndTransaction's.
func produceTransactions(ctx context.Context, cl *kgo.Client, opts Options) (produceStats, error) {
	values := newPayloads(opts.Records, opts.RecordSize, opts.Compressible)
	latencies := make([]time.Duration, 0, opts.Records)
	var commits []time.Duration
	var mu sync.Mutex
	bar := startProgress(opts.Progress, "produce", opts.Records)
	defer bar.finish()
	begin := time.Now()
	for first := 0; first < opts.Records; first += opts.TransactionSize {
		if err := cl.BeginTransaction(); err != nil {
			return produceStats{}, fmt.Errorf("begin transaction %d: %w", len(commits)+1, err)
		}
		var failed error
		for i := first; i < min(first+opts.TransactionSize, opts.Records); i++ {
			enqueued := time.Now()
			cl.Produce(ctx, &kgo.Record{Topic: opts.Topic, Value: values.value(i)}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil && failed == nil {
					failed = fmt.Errorf("record to %s[%d]: %w", r.Topic, r.Partition, err)
				}
				latencies = append(latencies, time.Since(enqueued))
				bar.add(1)
			})
		}
		if err := cl.Flush(ctx); err != nil {
			return produceStats{}, fmt.Errorf("flush transaction %d: %w", len(commits)+1, err)
		}
		mu.Lock()
		err := failed
		mu.Unlock()
		if err != nil {
			return produceStats{}, err
		}
		start := time.Now()
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return produceStats{}, fmt.Errorf("commit transaction %d: %w", len(commits)+1, err)
		}
		commits = append(commits, time.Since(start))
	}
	elapsed := time.Since(begin)
	slices.Sort(latencies)
	slices.Sort(commits)
	return produceStats{
		duration: elapsed, p50: percentile(latencies, 0.50), p99: percentile(latencies, 0.99),
		transactions: len(commits), commitP50: percentile(commits, 0.50), commitP99: percentile(commits, 0.99),
	}, nil
}

type consumeStats struct {
	records  int
	duration time.Duration
}

// consume reads the topic with a new, groupless client until it has seen
// opts.Records records, from the start (from == nil) or from the given
// offsets of a reused topic.
func consume(ctx context.Context, opts Options, from map[int32]kgo.Offset) (consumeStats, error) {
	bar := startProgress(opts.Progress, "consume", opts.Records)
	defer bar.finish()
	begin := time.Now()
	cl, err := newConsumer(opts, from)
	if err != nil {
		return consumeStats{}, err
	}
	defer cl.Close()

	var (
		records int
		bytes   int64
	)
	for records < opts.Records {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return consumeStats{}, fmt.Errorf("consumed %d of %d records: %w", records, opts.Records, context.Cause(ctx))
		}
		if err := fetches.Err(); err != nil {
			return consumeStats{}, fmt.Errorf("fetch after %d of %d records: %w", records, opts.Records, err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			records++
			bytes += int64(len(r.Value))
		})
		bar.add(fetches.NumRecords())
	}
	elapsed := time.Since(begin)
	if want := int64(opts.Records) * int64(opts.RecordSize); records == opts.Records && bytes != want {
		return consumeStats{}, fmt.Errorf("consumed %d records holding %d value bytes, produced %d", records, bytes, want)
	}
	return consumeStats{records: records, duration: elapsed}, nil
}

// newConsumer is a groupless client that reads opts.Topic from the start
// (from == nil) or from the given offsets of a reused topic.
func newConsumer(opts Options, from map[int32]kgo.Offset) (*kgo.Client, error) {
	copts := []kgo.Opt{kgo.SeedBrokers(opts.Brokers...), kgo.ClientID("zkafka-bench-consumer")}
	if opts.TransactionSize > 0 {
		copts = append(copts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	if from == nil {
		copts = append(copts, kgo.ConsumeTopics(opts.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	} else {
		copts = append(copts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{opts.Topic: from}))
	}
	cl, err := kgo.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("new consumer client: %w", err)
	}
	return cl, nil
}

// maxPoolBytes bounds the random bytes that values are cut from. kgo
// compresses each batch on its own and a batch holds at most a megabyte by
// default, so values drawn from a pool this size do not repeat within a
// batch and stay incompressible, without holding Records×RecordSize bytes.
const maxPoolBytes = 32 << 20

type payloads struct {
	pool []byte
	size int
	span int // number of distinct start offsets in pool
}

// newPayloads makes the values of a load: random bytes, or with
// compressible text of words and numbers, as log lines and JSON events are
// (deflate takes it to about a quarter, snappy to a half).
func newPayloads(records, size int, compressible bool) payloads {
	n := max(size, int(min(int64(records)*int64(size), maxPoolBytes)))
	pool := make([]byte, n)
	if compressible {
		fillText(pool)
	} else {
		rand.Read(pool)
	}
	return payloads{pool: pool, size: size, span: n - size + 1}
}

// textWords are what fillText writes, with numbers between them.
var textWords = []string{"order", "customer", "status", "shipped", "pending", "amount", "currency", "EUR",
	"region", "eu-west-1", "timestamp", "item", "quantity", "price", "user", "session", "warehouse", "true", "false"}

// fillText fills b with `"word":number,` runs chosen at random.
func fillText(b []byte) {
	rng := mrand.New(mrand.NewPCG(uint64(len(b)), 17))
	text := b[:0]
	for len(text) < len(b) {
		text = append(text, '"')
		text = append(text, textWords[rng.IntN(len(textWords))]...)
		text = append(text, '"', ':')
		text = strconv.AppendInt(text, int64(rng.IntN(100000)), 10)
		text = append(text, ',')
	}
	// The last run may have outgrown b; append copied it into a new array then.
	copy(b, text)
}

// value is record i's value. Values alias the pool, which kgo only reads.
func (p payloads) value(i int) []byte {
	off := (i * p.size) % p.span
	return p.pool[off : off+p.size : off+p.size]
}

// percentile is the nearest-rank percentile of sorted, or 0 if it is empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func perSecond(amount float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return amount / d.Seconds()
}

// newLogger writes human-readable log lines to w, or discards them if w is nil.
func newLogger(w io.Writer) *zap.Logger {
	if w == nil {
		return zap.NewNop()
	}
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), zapcore.InfoLevel)).Named("bench")
}

// pacer holds a producer to a rate: record i is due i/rate seconds after the
// start. It sleeps only when at least a millisecond ahead, so a fast rate
// costs no timer per record.
type pacer struct {
	begin time.Time
	rate  int
	timer *time.Timer
}

func newPacer(begin time.Time, rate int) *pacer { return &pacer{begin: begin, rate: rate} }

// wait returns when record i is due (true) or ctx ends first (false).
func (p *pacer) wait(ctx context.Context, i int) bool {
	if p.rate <= 0 {
		return true
	}
	due := p.begin.Add(time.Duration(float64(i) / float64(p.rate) * float64(time.Second)))
	ahead := time.Until(due)
	if ahead < time.Millisecond {
		return true
	}
	if p.timer == nil {
		p.timer = time.NewTimer(ahead)
	} else {
		p.timer.Reset(ahead)
	}
	select {
	case <-p.timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *pacer) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}
