package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
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
	var lastErr error
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		changed := c.changed
		work := map[topicPartition]int64{}
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
				tps := map[topicPartition]bool{}
				for _, r := range records {
					tps[topicPartition{r.Topic, r.Partition}] = true
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
func (c *Consumer) fetchOnce(ctx context.Context, work map[topicPartition]int64) ([]Record, error) {
	var errs []error
	byLeader := map[int32][]topicPartition{}
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
			errs = append(errs, fmt.Errorf("%s-%d: %w", tp.topic, tp.partition, kerr.LeaderNotAvailable))
			continue
		}
		byLeader[id] = append(byLeader[id], tp)
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out []Record
	)
	for id, tps := range byLeader {
		wg.Go(func() {
			recs, err := c.fetchFrom(ctx, id, tps, work)
			mu.Lock()
			defer mu.Unlock()
			out = append(out, recs...)
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// resetOffset sets a partition's position per auto.offset.reset.
func (c *Consumer) resetOffset(ctx context.Context, tp topicPartition) (int64, error) {
	ts := int64(-1) // latest
	if c.cfg.AutoOffsetReset == resetEarliest {
		ts = -2
	}
	off, err := c.cluster.listOffset(ctx, tp, ts)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pos, ok := c.assigned[tp]; ok && pos < 0 {
		c.assigned[tp] = off
	}
	c.log.Info("reset offset", zap.String("topic", tp.topic), zap.Int32("partition", tp.partition),
		zap.String("policy", c.cfg.AutoOffsetReset), zap.Int64("offset", off))
	return off, nil
}

// fetchFrom fetches tps from broker id at the positions in work and applies
// the results to partitions still owned at those positions.
func (c *Consumer) fetchFrom(ctx context.Context, id int32, tps []topicPartition, work map[topicPartition]int64) ([]Record, error) {
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
	slices.SortFunc(tps, func(a, b topicPartition) int {
		if a.topic != b.topic {
			return strings.Compare(a.topic, b.topic)
		}
		return int(a.partition - b.partition)
	})
	for _, tp := range tps {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.topic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = tp.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = tp.partition
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
		out  []Record
		errs []error
	)
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			from, asked := work[tp]
			if !asked {
				continue
			}
			switch err := kerr.ErrorForCode(p.ErrorCode); {
			case err == nil:
			case errors.Is(err, kerr.OffsetOutOfRange):
				c.log.Info("offset out of range", zap.String("topic", tp.topic),
					zap.Int32("partition", tp.partition), zap.Int64("offset", from))
				c.setPosition(tp, from, -1)
				continue
			case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.UnknownTopicOrPartition),
				errors.Is(err, kerr.LeaderNotAvailable), errors.Is(err, kerr.FencedLeaderEpoch),
				errors.Is(err, kerr.UnknownLeaderEpoch), errors.Is(err, kerr.ReplicaNotAvailable):
				c.cluster.forgetLeader(tp)
				errs = append(errs, fmt.Errorf("%s-%d on broker %d: %w", tp.topic, tp.partition, id, err))
				continue
			default:
				errs = append(errs, fmt.Errorf("%s-%d on broker %d: %w", tp.topic, tp.partition, id, err))
				continue
			}
			recs, err := decodeBatches(tp.topic, tp.partition, p.RecordBatches, from)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s-%d: %w", tp.topic, tp.partition, err))
			}
			if len(recs) == 0 {
				continue
			}
			if c.setPosition(tp, from, recs[len(recs)-1].Offset+1) {
				out = append(out, recs...)
			}
		}
	}
	return out, errors.Join(errs...)
}

// setPosition moves tp from position from to to, if the partition is still
// owned at from and fetching is not paused: records fetched for a partition
// revoked meanwhile are dropped, never delivered.
func (c *Consumer) setPosition(tp topicPartition, from, to int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pos, ok := c.assigned[tp]; !ok || pos != from || c.paused || c.closed {
		return false
	}
	c.assigned[tp] = to
	return true
}
