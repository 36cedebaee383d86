package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// alterIsrRetryBackoff is how long the manager waits before sending again
// after a failed AlterIsr, or one that left some partitions unanswered.
const alterIsrRetryBackoff = 100 * time.Millisecond

// alterIsrVersion is the AlterIsr version a 2.8 broker sends.
const alterIsrVersion = 0

// errAlterIsrInFlight refuses a proposal for a partition whose previous one
// is still unanswered.
var errAlterIsrInFlight = errors.New("an ISR change of this partition is already in flight")

// alterIsrManager is the leader's side of AlterIsr (Kafka's AlterIsrManager):
// proposals are queued and answered asynchronously, and one goroutine sends
// every queued proposal in a single AlterIsr to the active controller, one
// request in flight at a time. A broker rejoining the ISRs of thousands of
// partitions so costs a few requests, and a follower's fetch, which expands
// the ISR as it is served, never waits for the controller. A proposal stays
// queued until the controller answers it (a failed request is resent, with
// whatever was queued meanwhile), and a partition has at most one queued.
type alterIsrManager struct {
	// send is one AlterIsr round trip with the controller: an answer per
	// partition it answered, or the request's failure.
	send func(ctx context.Context, items []*alterIsrItem) (map[kafka.TopicPartition]alterIsrAnswer, error)
	log  *zap.Logger

	mu    sync.Mutex
	items map[kafka.TopicPartition]*alterIsrItem // queued or in flight, not yet answered
	wake  chan struct{}
}

type alterIsrItem struct {
	tp        kafka.TopicPartition
	state     zkpaths.LeaderAndIsr
	zkVersion int32
	done      func(int32, error)
}

type alterIsrAnswer struct {
	zkVersion int32
	err       error
}

func newAlterIsrManager(send func(context.Context, []*alterIsrItem) (map[kafka.TopicPartition]alterIsrAnswer, error), log *zap.Logger) *alterIsrManager {
	return &alterIsrManager{send: send, log: log, items: map[kafka.TopicPartition]*alterIsrItem{}, wake: make(chan struct{}, 1)}
}

// writePartitionState queues the proposal; done runs on the manager's
// goroutine when the controller answers, or at once if the partition already
// has one queued.
func (m *alterIsrManager) writePartitionState(topic string, partition int32, state zkpaths.LeaderAndIsr, zkVersion int32, done func(int32, error)) {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	_, queued := m.items[tp]
	if !queued {
		m.items[tp] = &alterIsrItem{tp: tp, state: state, zkVersion: zkVersion, done: done}
	}
	m.mu.Unlock()
	if queued {
		done(0, errAlterIsrInFlight)
		return
	}
	select {
	case m.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// run sends the queued proposals until ctx ends, then fails those left.
func (m *alterIsrManager) run(ctx context.Context) {
	defer func() { m.failAll(ctx.Err()) }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		for m.sendQueued(ctx) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(alterIsrRetryBackoff):
			}
		}
	}
}

// sendQueued sends every queued proposal in one AlterIsr, completes those
// answered, and returns how many of them stay unanswered.
func (m *alterIsrManager) sendQueued(ctx context.Context) int {
	m.mu.Lock()
	batch := slices.Collect(maps.Values(m.items))
	m.mu.Unlock()
	if len(batch) == 0 {
		return 0
	}
	answers, err := m.send(ctx, batch)
	if err != nil {
		m.log.Info("AlterIsr failed, will retry", zap.Int("partitions", len(batch)), zap.Error(err))
	}
	return m.complete(batch, answers)
}

// complete dequeues the items answered and calls their done (outside the
// lock: done takes the partition's), and returns how many stay unanswered.
func (m *alterIsrManager) complete(batch []*alterIsrItem, answers map[kafka.TopicPartition]alterIsrAnswer) int {
	var answered []*alterIsrItem
	m.mu.Lock()
	for _, it := range batch {
		if _, ok := answers[it.tp]; ok {
			delete(m.items, it.tp)
			answered = append(answered, it)
		}
	}
	m.mu.Unlock()
	for _, it := range answered {
		a := answers[it.tp]
		it.done(a.zkVersion, a.err)
	}
	return len(batch) - len(answered)
}

func (m *alterIsrManager) failAll(err error) {
	m.mu.Lock()
	items := m.items
	m.items = map[kafka.TopicPartition]*alterIsrItem{}
	m.mu.Unlock()
	for _, it := range items {
		it.done(0, err)
	}
}

// sendAlterIsr is the manager's round trip on a running broker: one AlterIsr
// with every item to the controller ZooKeeper names. An answer that is not
// the state proposed means another change won, and fails that item.
func (s *Server) sendAlterIsr(ctx context.Context, items []*alterIsrItem) (map[kafka.TopicPartition]alterIsrAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ControllerSocketTimeout)
	defer cancel()
	cl, addr, err := s.dialController(ctx)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	slices.SortFunc(items, func(a, b *alterIsrItem) int { return kafka.Compare(a.tp, b.tp) })
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID, req.BrokerEpoch = s.brokerID, s.brokerEpoch.Load()
	proposed := make(map[kafka.TopicPartition]*alterIsrItem, len(items))
	for _, it := range items {
		proposed[it.tp] = it
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != it.tp.Topic {
			req.Topics = append(req.Topics, kmsg.AlterPartitionRequestTopic{Topic: it.tp.Topic})
		}
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, kmsg.AlterPartitionRequestTopicPartition{
			Partition: it.tp.Partition, LeaderEpoch: it.state.LeaderEpoch, NewISR: it.state.ISR, PartitionEpoch: it.zkVersion,
		})
	}
	raw, err := cl.RequestVersion(ctx, req, alterIsrVersion)
	if err != nil {
		return nil, fmt.Errorf("AlterIsr to %s: %w", addr, err)
	}
	resp := raw.(*kmsg.AlterPartitionResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("AlterIsr to %s: %w", addr, err)
	}
	answers := make(map[kafka.TopicPartition]alterIsrAnswer, len(items))
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			it, ok := proposed[tp]
			if !ok {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				answers[tp] = alterIsrAnswer{err: fmt.Errorf("AlterIsr to %s: %w", addr, err)}
				continue
			}
			if p.LeaderEpoch != it.state.LeaderEpoch || !slices.Equal(p.ISR, it.state.ISR) || p.PartitionEpoch < it.zkVersion {
				s.log.Info("Ignoring an AlterIsr answer for another state", zap.String("topic", tp.Topic), zap.Int32("partition", tp.Partition),
					zap.Int32("leader-epoch", p.LeaderEpoch), zap.Int32s("isr", p.ISR), zap.Int32("zk-version", p.PartitionEpoch))
				answers[tp] = alterIsrAnswer{err: errors.New("the controller stored another ISR")}
				continue
			}
			answers[tp] = alterIsrAnswer{zkVersion: p.PartitionEpoch}
		}
	}
	return answers, nil
}
