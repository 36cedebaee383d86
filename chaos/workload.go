package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/pace"
)

// workload is what runs against the cluster while faults are injected: the producers, the group and
// the committed-offset poller, each recording what it does in the history. The final reader runs
// after it (readAll).
type workload struct {
	h          *History
	topic      string
	group      string
	partitions int32
	bootstrap  []string

	producers []*producer
	members   []*member

	acked       atomic.Int64 // acknowledged records, all producers
	lastAckNano atomic.Int64 // when the last acks=all (or, alone, acks=1) acknowledgement came

	mu        sync.Mutex
	processed map[int32]int64 // per partition, the offset after the highest record processed
	// ackedSent is, per partition, the latest send time (history seconds) of a record acknowledged
	// to a measured producer.
	ackedSent map[int32]float64

	stopProducing context.CancelFunc
	stopGroup     context.CancelFunc
	wg            sync.WaitGroup // producers
	groupWG       sync.WaitGroup // members and the poller
}

// producer writes Value(name, seq) for seq = 0, 1, 2, ... to partition seq % partitions, at rate
// records per second.
type producer struct {
	name     string
	acks     string // "all" (idempotent) or "1"
	cl       *kgo.Client
	rate     int
	inflight sync.WaitGroup
}

// member is one consumer of the group.
type member struct {
	name string
	cl   *kgo.Client
}

// workloadOptions shape a workload.
type workloadOptions struct {
	topic, group       string
	partitions         int32
	bootstrap          []string
	acksAll, acksOne   int // producers of each kind
	rate               int // records per second per producer
	members            int
	groupSessionTimout time.Duration
}

func newWorkload(h *History, o workloadOptions) (*workload, error) {
	w := &workload{h: h, topic: o.topic, group: o.group, partitions: o.partitions, bootstrap: o.bootstrap,
		processed: map[int32]int64{}, ackedSent: map[int32]float64{}}
	add := func(name, acks string) error {
		opts := []kgo.Opt{
			kgo.SeedBrokers(o.bootstrap...), kgo.DefaultProduceTopic(o.topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.MetadataMinAge(250 * time.Millisecond), kgo.MetadataMaxAge(10 * time.Second),
			kgo.MaxBufferedRecords(1 << 20), kgo.ClientID("zkafka-chaos-" + name),
			// A broker restarted while no controller runs answers UNKNOWN_TOPIC_OR_PARTITION until a
			// controller tells it its partitions (Kafka 2.8 does the same): retry it as Java's
			// producer does, not fail the records after kgo's default four tries.
			kgo.UnknownTopicRetries(-1),
		}
		if acks == "all" {
			opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
		} else {
			opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return fmt.Errorf("producer %s: %w", name, err)
		}
		w.producers = append(w.producers, &producer{name: name, acks: acks, cl: cl, rate: o.rate})
		return nil
	}
	for i := range o.acksAll {
		if err := add(fmt.Sprintf("w%d", i+1), "all"); err != nil {
			w.close()
			return nil, err
		}
	}
	for i := range o.acksOne {
		if err := add(fmt.Sprintf("a%d", i+1), "1"); err != nil {
			w.close()
			return nil, err
		}
	}
	for i := range o.members {
		name := fmt.Sprintf("m%d", i+1)
		cl, err := kgo.NewClient(kgo.SeedBrokers(o.bootstrap...), kgo.ConsumerGroup(o.group), kgo.ConsumeTopics(o.topic),
			kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.SessionTimeout(o.groupSessionTimout),
			kgo.MetadataMinAge(250*time.Millisecond), kgo.FetchMaxWait(500*time.Millisecond), kgo.ClientID("zkafka-chaos-"+name))
		if err != nil {
			w.close()
			return nil, fmt.Errorf("member %s: %w", name, err)
		}
		w.members = append(w.members, &member{name: name, cl: cl})
	}
	return w, nil
}

// measured reports whether p's acknowledgements are the ones availability is measured on.
func (w *workload) measured(p *producer) bool {
	return p.acks == "all" || w.producers[0].acks == "1"
}

// start runs the producers, the group and the poller of committed offsets, which checks answers
// against offsetsLeader: the leader of the group's __consumer_offsets partition.
func (w *workload) start(offsetsLeader func() (int32, error)) {
	pctx, stopP := context.WithCancel(context.Background())
	gctx, stopG := context.WithCancel(context.Background())
	w.stopProducing, w.stopGroup = stopP, stopG
	for _, p := range w.producers {
		w.wg.Go(func() { w.produce(pctx, p) })
	}
	for _, m := range w.members {
		w.groupWG.Go(func() { w.consume(gctx, m) })
	}
	w.groupWG.Go(func() { w.pollCommitted(gctx, offsetsLeader) })
}

func (w *workload) produce(ctx context.Context, p *producer) {
	tick := time.NewTicker(time.Second / time.Duration(p.rate))
	defer tick.Stop()
	measured := w.measured(p)
	for seq := int64(0); ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r := &kgo.Record{Partition: int32(seq % int64(w.partitions)), Value: Value(p.name, seq)}
		sent := w.h.Now()
		p.inflight.Add(1)
		p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
			defer p.inflight.Done()
			op := Op{Type: OpProduce, Acks: p.acks, Sent: sent, Rec: &Rec{Producer: p.name, Seq: seq, Partition: r.Partition, Offset: -1}}
			if err != nil {
				op.Err = err.Error()
			} else {
				op.Rec.Offset = r.Offset
				w.acked.Add(1)
				if measured {
					w.lastAckNano.Store(time.Now().UnixNano())
					w.mu.Lock()
					w.ackedSent[r.Partition] = max(w.ackedSent[r.Partition], sent)
					w.mu.Unlock()
				}
			}
			w.h.Add(op)
		})
	}
}

// consume processes what the member polls (records it in the history), commits it, and only then
// lets a rebalance proceed, so a partition moves only with its processed records committed.
func (w *workload) consume(ctx context.Context, m *member) {
	for ctx.Err() == nil {
		fs := m.cl.PollRecords(ctx, 500)
		recs := fs.Records()
		for _, r := range recs {
			name, seq, ok := parseValue(r.Value)
			if !ok {
				name, seq = string(r.Value), -1
			}
			w.h.Add(Op{Type: OpProcess, Member: m.name, Rec: &Rec{Producer: name, Seq: seq, Partition: r.Partition, Offset: r.Offset}})
			w.mu.Lock()
			w.processed[r.Partition] = max(w.processed[r.Partition], r.Offset+1)
			w.mu.Unlock()
		}
		if len(recs) > 0 {
			cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			err := m.cl.CommitRecords(cctx, recs...)
			cancel()
			last := map[int32]int64{}
			for _, r := range recs {
				last[r.Partition] = r.Offset + 1
			}
			for p, off := range last {
				op := Op{Type: OpCommit, Member: m.name, Partition: p, Offset: off}
				if err != nil {
					op.Err = err.Error()
				}
				w.h.Add(op)
			}
		}
		m.cl.AllowRebalance()
	}
}

// pollCommitted records the group's committed offsets whenever one changes, as the group's
// coordinator answers OffsetFetch. An answer counts only if ZooKeeper names the answering broker as
// leader of the group's __consumer_offsets partition before and after it: a paused broker that
// resumes still serves its old offsets until it learns it was replaced (Kafka 2.8 does too), and
// such an answer is recorded as stale (Note), not as the group's committed offset.
func (w *workload) pollCommitted(ctx context.Context, offsetsLeader func() (int32, error)) {
	cl := w.members[0].cl
	adm := kadm.NewClient(cl)
	seen := map[int32]int64{}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		offsets, broker, stale, err := w.fetchCommitted(cctx, adm, cl, offsetsLeader)
		cancel()
		if err != nil {
			continue
		}
		for p, off := range offsets {
			if stale != "" {
				if off < seen[p] {
					w.h.Add(Op{Type: OpCommitted, Partition: p, Offset: off, Broker: broker, Note: stale})
				}
				continue
			}
			if prev, ok := seen[p]; !ok || prev != off {
				seen[p] = off
				w.h.Add(Op{Type: OpCommitted, Partition: p, Offset: off, Broker: broker})
			}
		}
	}
}

// fetchCommitted asks the group's coordinator for its committed offsets of the run's topic. stale
// says why the answer is not the group's (empty when it is).
func (w *workload) fetchCommitted(ctx context.Context, adm *kadm.Client, cl *kgo.Client, offsetsLeader func() (int32, error)) (map[int32]int64, int32, string, error) {
	before, err := offsetsLeader()
	if err != nil {
		return nil, -1, "", err
	}
	var coordinator int32 = -1
	for _, r := range adm.FindGroupCoordinators(ctx, w.group) {
		if r.Err != nil {
			return nil, -1, "", r.Err
		}
		coordinator = r.NodeID
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = w.group
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic = w.topic
	for p := range w.partitions {
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Broker(int(coordinator)).Request(ctx, req)
	if err != nil {
		return nil, -1, "", err
	}
	resp := kresp.(*kmsg.OffsetFetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, -1, "", err
	}
	after, err := offsetsLeader()
	if err != nil {
		return nil, -1, "", err
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Offset >= 0 {
				out[p.Partition] = p.Offset
			}
		}
	}
	stale := ""
	if before != coordinator || after != coordinator {
		stale = fmt.Sprintf("stale: broker %d answered while ZooKeeper named broker %d, then %d, leader of the group's __consumer_offsets partition", coordinator, before, after)
	}
	return out, coordinator, stale, nil
}

// stopProducers stops sending and waits up to timeout for every record in flight to complete; what
// is still in flight then fails with the client's closing.
func (w *workload) stopProducers(timeout time.Duration) {
	w.stopProducing()
	w.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, p := range w.producers {
		_ = p.cl.Flush(ctx) // what did not complete fails below
	}
	for _, p := range w.producers {
		p.cl.Close()
		p.inflight.Wait()
	}
}

// drain waits until the group processed every partition to ends, or timeout passes.
func (w *workload) drain(ends map[int32]int64, timeout time.Duration) error {
	return pace.Until(context.Background(), timeout, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for p, end := range ends {
			if w.processed[p] < end {
				return false
			}
		}
		return true
	})
}

// producingSince reports whether every partition has acknowledged a record sent at or after t (history
// seconds) to a measured producer.
func (w *workload) producingSince(t float64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.partitions {
		if w.ackedSent[p] < t {
			return false
		}
	}
	return true
}

// stopConsuming stops the group and the poller.
func (w *workload) stopConsuming() {
	w.stopGroup()
	w.groupWG.Wait()
	for _, m := range w.members {
		m.cl.Close()
	}
}

func (w *workload) close() {
	for _, p := range w.producers {
		p.cl.Close()
	}
	for _, m := range w.members {
		m.cl.Close()
	}
}

// processedUpTo is, per partition, the offset after the highest record the group processed.
func (w *workload) processedUpTo() map[int32]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.processed)
}

// errNoEnds is returned when the end offsets cannot be listed.
var errNoEnds = errors.New("cannot list the end offsets")

// endOffsets lists the topic's high watermarks.
func endOffsets(ctx context.Context, adm *kadm.Client, topic string, partitions int32) (map[int32]int64, error) {
	var out map[int32]int64
	err := pace.Until(ctx, 60*time.Second, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ends, err := adm.ListEndOffsets(cctx, topic)
		if err != nil || ends.Error() != nil || len(ends[topic]) != int(partitions) {
			return false
		}
		out = map[int32]int64{}
		for _, lo := range ends[topic] {
			out[lo.Partition] = lo.Offset
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%w of %s: %v", errNoEnds, topic, err)
	}
	return out, nil
}

// readAll reads every partition of topic from its start to ends, recording each record and, per
// partition, where the read ended.
func readAll(ctx context.Context, h *History, bootstrap []string, topic string, ends map[int32]int64, timeout time.Duration) error {
	parts := map[int32]kgo.Offset{}
	for p := range ends {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.ClientID("zkafka-chaos-reader"))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	next := map[int32]int64{}
	remaining := 0
	for p, end := range ends {
		if end > 0 {
			remaining++
		} else {
			h.Add(Op{Type: OpReadEnd, Partition: p, Offset: end})
		}
	}
	for remaining > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			end := ends[r.Partition]
			if r.Offset >= end || next[r.Partition] >= end {
				return
			}
			name, seq, ok := parseValue(r.Value)
			if !ok {
				name, seq = string(r.Value), -1
			}
			h.Add(Op{Type: OpRead, Rec: &Rec{Producer: name, Seq: seq, Partition: r.Partition, Offset: r.Offset}})
			next[r.Partition] = r.Offset + 1
			if next[r.Partition] >= end {
				remaining--
				h.Add(Op{Type: OpReadEnd, Partition: r.Partition, Offset: end})
			}
		})
	}
	if remaining == 0 {
		return nil
	}
	for p, end := range ends {
		if end > 0 && next[p] < end {
			h.Add(Op{Type: OpReadEnd, Partition: p, Offset: next[p], Err: fmt.Sprintf("read to %d of %d: %v", next[p], end, ctx.Err())})
		}
	}
	return fmt.Errorf("final read incomplete: %w", ctx.Err())
}
