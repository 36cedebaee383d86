package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Fetch sizes and waits, as the Java consumer's defaults (fetch.max.wait.ms
// is shortened so a rebalance never waits long for a fetch to return).
const (
	fetchMaxWait      = 250 * time.Millisecond
	fetchMaxBytes     = 50 << 20
	partitionMaxBytes = 1 << 20
	fetchRetryBackoff = 100 * time.Millisecond
)

// Poll returns the next records of the owned partitions, waiting until some
// arrive or ctx is done (then it returns ctx's error, with the last fetch
// error if fetching failed). Leaders that moved are found again through
// Metadata; a position out of range is reset per auto.offset.reset.
func (c *Consumer) Poll(ctx context.Context) ([]Record, error) {
	c.pollStarted()
	defer c.pollDone()
	var lastErr error
	for {
		if err := c.group.poll(ctx); err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		changed := c.changed
		work := map[kafka.TopicPartition]int64{}
		if !c.paused {
			for tp, pos := range c.assigned {
				work[tp] = pos
			}
		}
		c.mu.Unlock()
		if len(work) == 0 {
			select {
			case <-ctx.Done():
				return nil, pollErr(ctx, lastErr)
			case <-changed:
				continue
			}
		}
		records, err := c.fetchOnce(ctx, work)
		if len(records) > 0 {
			c.stats.records.Add(int64(len(records)))
			if c.events.active() {
				tps := map[kafka.TopicPartition]bool{}
				for _, r := range records {
					tps[kafka.TopicPartition{Topic: r.Topic, Partition: r.Partition}] = true
				}
				c.emit(Event{Type: EventRecordsDelivered, Count: len(records), Partitions: byTopic(slices.Collect(maps.Keys(tps)))})
			}
			return records, nil
		}
		if err != nil {
			lastErr = err
			c.log.Debug("fetch failed", zap.Error(err))
			select {
			case <-ctx.Done():
			case <-changed:
			case <-time.After(fetchRetryBackoff):
			}
		}
		if ctx.Err() != nil {
			return nil, pollErr(ctx, lastErr)
		}
	}
}

func pollErr(ctx context.Context, last error) error {
	if last != nil {
		return fmt.Errorf("%w (last fetch error: %v)", ctx.Err(), last)
	}
	return ctx.Err()
}

// fetchOnce resets unknown positions, then sends one Fetch to each leader of
// the work partitions and delivers what comes back.
func (c *Consumer) fetchOnce(ctx context.Context, work map[kafka.TopicPartition]int64) ([]Record, error) {
	var errs []error
	byLeader := map[int32][]kafka.TopicPartition{}
	refreshed := false
	for tp, pos := range work {
		if pos < 0 {
			off, err := c.resetOffset(ctx, tp)
			if err != nil {
				errs = append(errs, err)
				delete(work, tp)
				continue
			}
			work[tp] = off
		}
		id, ok := c.cluster.leader(tp)
		if !ok && !refreshed {
			refreshed = true
			if err := c.cluster.refresh(ctx, c.cfg.Topics); err != nil {
				errs = append(errs, err)
			}
			id, ok = c.cluster.leader(tp)
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%s-%d: %w", tp.Topic, tp.Partition, kerr.LeaderNotAvailable))
			continue
		}
		byLeader[id] = append(byLeader[id], tp)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		fetched []fetchedPartition
	)
	for id, tps := range byLeader {
		wg.Go(func() {
			fps, err := c.fetchFrom(ctx, id, tps, work)
			mu.Lock()
			defer mu.Unlock()
			fetched = append(fetched, fps...)
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return c.deliver(fetched), errors.Join(errs...)
}

// fetchedPartition is what one Fetch returned for a partition asked for at
// position from: its records, and the position after the last batch.
type fetchedPartition struct {
	tp      kafka.TopicPartition
	from    int64
	records []Record
	next    int64
}

// deliver hands out at most max.poll.records of the fetched records, the
// partitions taken in random order so none starves behind a backlog, and
// moves the positions past what it hands out. Records left over are fetched
// again by the next Poll: they were never delivered, so positions and
// commits never cover them.
//
// A partition handed out whole moves past its last batch, so markers and
// skipped transactions at its end are not fetched again.
func (c *Consumer) deliver(fetched []fetchedPartition) []Record {
	rand.Shuffle(len(fetched), func(i, j int) { fetched[i], fetched[j] = fetched[j], fetched[i] })
	var out []Record
	for _, fp := range fetched {
		recs := fp.records[:min(len(fp.records), c.cfg.MaxPollRecords-len(out))]
		to := fp.next
		switch {
		case len(recs) == 0 && len(fp.records) > 0:
			continue // no room left in this Poll
		case len(recs) < len(fp.records):
			to = recs[len(recs)-1].Offset + 1
		}
		if to > fp.from && c.setPosition(fp.tp, fp.from, to) {
			out = append(out, recs...)
		}
	}
	return out
}

// resetOffset sets a partition's position per auto.offset.reset.
func (c *Consumer) resetOffset(ctx context.Context, tp kafka.TopicPartition) (int64, error) {
	ts := int64(-1) // latest
	if c.cfg.AutoOffsetReset == resetEarliest {
		ts = -2
	}
	off, err := c.cluster.listOffset(ctx, tp, ts, c.cfg.readCommitted())
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pos, ok := c.assigned[tp]; ok && pos < 0 {
		c.assigned[tp] = off
	}
	c.log.Info("reset offset", zap.String("topic", tp.Topic), zap.Int32("partition", tp.Partition),
		zap.String("policy", c.cfg.AutoOffsetReset), zap.Int64("offset", off))
	return off, nil
}

// fetchFrom fetches tps from broker id at the positions in work.
func (c *Consumer) fetchFrom(ctx context.Context, id int32, tps []kafka.TopicPartition, work map[kafka.TopicPartition]int64) ([]fetchedPartition, error) {
	cl, err := c.cluster.broker(ctx, id)
	if err != nil {
		for _, tp := range tps {
			c.cluster.forgetLeader(tp)
		}
		return nil, err
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(fetchMaxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = fetchMaxBytes
	req.SessionEpoch = -1 // no fetch session (KIP-227): every fetch is full
	if c.cfg.readCommitted() {
		req.IsolationLevel = 1
	}
	slices.SortFunc(tps, kafka.Compare)
	for _, tp := range tps {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = tp.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = tp.Partition
		rp.FetchOffset = work[tp]
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		rp.PartitionMaxBytes = partitionMaxBytes
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	}
	resp, err := c.cluster.request(ctx, cl, req)
	if err != nil {
		c.cluster.drop(id, cl) // a failed request, even a cancelled one, closes the connection
		if ctx.Err() == nil {
			for _, tp := range tps {
				c.cluster.forgetLeader(tp)
			}
		}
		return nil, fmt.Errorf("fetch from broker %d: %w", id, err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(fr.ErrorCode); err != nil {
		return nil, fmt.Errorf("fetch from broker %d: %w", id, err)
	}
	var (
		out  []fetchedPartition
		errs []error
	)
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			from, asked := work[tp]
			if !asked {
				continue
			}
			switch err := kerr.ErrorForCode(p.ErrorCode); {
			case err == nil:
			case errors.Is(err, kerr.OffsetOutOfRange):
				c.log.Info("offset out of range", zap.String("topic", tp.Topic),
					zap.Int32("partition", tp.Partition), zap.Int64("offset", from))
				c.setPosition(tp, from, -1)
				continue
			case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.UnknownTopicOrPartition),
				errors.Is(err, kerr.LeaderNotAvailable), errors.Is(err, kerr.FencedLeaderEpoch),
				errors.Is(err, kerr.UnknownLeaderEpoch), errors.Is(err, kerr.ReplicaNotAvailable):
				c.cluster.forgetLeader(tp)
				errs = append(errs, fmt.Errorf("%s-%d on broker %d: %w", tp.Topic, tp.Partition, id, err))
				continue
			default:
				errs = append(errs, fmt.Errorf("%s-%d on broker %d: %w", tp.Topic, tp.Partition, id, err))
				continue
			}
			var aborted []abortedTxn
			if c.cfg.readCommitted() {
				aborted = []abortedTxn{}
				for _, a := range p.AbortedTransactions {
					aborted = append(aborted, abortedTxn{a.ProducerID, a.FirstOffset})
				}
			}
			recs, next, err := decodeBatches(tp.Topic, tp.Partition, p.RecordBatches, from, aborted)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s-%d: %w", tp.Topic, tp.Partition, err))
			}
			if next > from {
				out = append(out, fetchedPartition{tp: tp, from: from, records: recs, next: next})
			}
		}
	}
	return out, errors.Join(errs...)
}

// setPosition moves tp from position from to to, if the partition is still
// owned at from and fetching is not paused: records fetched for a partition
// revoked meanwhile are dropped, never delivered.
func (c *Consumer) setPosition(tp kafka.TopicPartition, from, to int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pos, ok := c.assigned[tp]; !ok || pos != from || c.paused || c.closed {
		return false
	}
	c.assigned[tp] = to
	return true
}
