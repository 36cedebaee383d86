package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// warmUpKey marks the record an end-to-end run sends before it starts the
// clock: until the consumer has read one record, its connections, offsets
// and fetch sessions are still being set up, and that would be billed to
// the first timed records.
const warmUpKey = "zkafka-bench-warm-up"

type e2eStats struct {
	duration              time.Duration // first timed enqueue to the last record consumed
	p50, p99, p999, maxed time.Duration
}

// endToEnd is ModeE2E, as Kafka's EndToEndLatency tool measures it but with
// records in flight together: a consumer reads opts.Topic while the producer
// writes opts.Records records at opts.Rate, each value beginning with its
// enqueue time (nanoseconds since the run began, on the monotonic clock);
// the consumer takes its latency when the record reaches it.
func endToEnd(ctx context.Context, producer *kgo.Client, opts Options, from map[int32]kgo.Offset) (e2eStats, error) {
	consumer, err := newConsumer(opts, from)
	if err != nil {
		return e2eStats{}, err
	}
	defer consumer.Close()

	runCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	base := time.Now()
	warm := make(chan struct{})
	latencies := make([]time.Duration, 0, opts.Records)
	consumed := make(chan error, 1)
	bar := startProgress(opts.Progress, "end to end", opts.Records)
	defer bar.finish()
	go func() {
		consumed <- readStamped(runCtx, consumer, opts.Records, base, warm, &latencies, bar)
	}()

	warmUp := &kgo.Record{Topic: opts.Topic, Key: []byte(warmUpKey), Value: make([]byte, opts.RecordSize)}
	if err := producer.ProduceSync(runCtx, warmUp).FirstErr(); err != nil {
		abort(err)
		<-consumed
		return e2eStats{}, fmt.Errorf("warm-up record: %w", err)
	}
	select {
	case <-warm:
	case err := <-consumed:
		return e2eStats{}, fmt.Errorf("waiting for the warm-up record: %w", err)
	}

	values := newPayloads(opts.Records, opts.RecordSize, opts.Compressible)
	begin := time.Now()
	pace := newPacer(begin, opts.Rate)
	defer pace.stop()
	for i := 0; i < opts.Records && pace.wait(runCtx, i); i++ {
		v := make([]byte, opts.RecordSize)
		copy(v, values.value(i))
		binary.BigEndian.PutUint64(v, uint64(time.Since(base)))
		producer.Produce(runCtx, &kgo.Record{Topic: opts.Topic, Value: v}, func(r *kgo.Record, err error) {
			if err != nil {
				abort(fmt.Errorf("record to %s[%d]: %w", r.Topic, r.Partition, err))
			}
		})
	}
	// The consumer ends when it has every record, or when a failed produce
	// or ctx ends the run.
	if err := <-consumed; err != nil {
		return e2eStats{}, err
	}
	elapsed := time.Since(begin)
	if err := producer.Flush(runCtx); err != nil {
		return e2eStats{}, fmt.Errorf("flush: %w", err)
	}
	slices.Sort(latencies)
	return e2eStats{
		duration: elapsed,
		p50:      percentile(latencies, 0.50),
		p99:      percentile(latencies, 0.99),
		p999:     percentile(latencies, 0.999),
		maxed:    latencies[len(latencies)-1],
	}, nil
}

// readStamped polls until it has read want stamped records, appending each
// one's latency, and closes warm when the warm-up record arrives.
func readStamped(ctx context.Context, cl *kgo.Client, want int, base time.Time, warm chan struct{}, latencies *[]time.Duration, bar *progress) error {
	warmed := false
	for len(*latencies) < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("consumed %d of %d records: %w", len(*latencies), want, context.Cause(ctx))
		}
		if err := fetches.Err(); err != nil {
			return fmt.Errorf("fetch after %d of %d records: %w", len(*latencies), want, err)
		}
		now := time.Since(base)
		var bad error
		fetches.EachRecord(func(r *kgo.Record) {
			switch {
			case string(r.Key) == warmUpKey:
				if !warmed {
					warmed = true
					close(warm)
				}
			case len(r.Value) < e2eStampSize:
				bad = fmt.Errorf("record %s[%d]@%d holds %d bytes, too few for a send time", r.Topic, r.Partition, r.Offset, len(r.Value))
			default:
				*latencies = append(*latencies, now-time.Duration(binary.BigEndian.Uint64(r.Value)))
				bar.add(1)
			}
		})
		if bad != nil {
			return bad
		}
	}
	return nil
}
