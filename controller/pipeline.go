package controller

import (
	"errors"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/workers"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// ZooKeeper pipelining. One ZooKeeper session carries any number of outstanding requests and
// answers them in order, so reading or writing thousands of partition states one round trip at
// a time wastes the session: the controller issues them from a bounded set of goroutines instead
// (Kafka 1.1's async KafkaZkClient, KAFKA-5642). The event loop still waits for the whole set,
// so the controller's state is only touched by the loop, and the results are used in input
// order.

// zkPipelineDepth bounds the requests in flight. Kafka's zookeeper.max.in.flight.requests
// defaults to 10 against a remote ensemble; this controller talks to ZooKeeper over a low-latency
// link where the server, not the round trip, is the limit well before 64.
const zkPipelineDepth = 64

// forEachParallel calls fn(i) for i in [0, n) from at most c.pipelineDepth goroutines (one, in
// order, against the in-memory store of the scenario tests) and waits for all of them.
func (c *Controller) forEachParallel(n int, fn func(i int)) { workers.ForEach(c.pipelineDepth, n, fn) }

// stateRead is the outcome of reading one partition state znode.
type stateRead struct {
	state leaderISRAndEpoch
	ok    bool // the znode exists
	err   error
}

// readPartitionStates reads the state znodes of partitions, pipelined on the controller's
// session and, for a bulk read, on its read sessions too (read_sessions.go); the results are in
// the order of partitions. A read a read session fails is done again on the controller's own.
func (c *Controller) readPartitionStates(partitions []kafka.TopicPartition) []stateRead {
	out := make([]stateRead, len(partitions))
	readers := c.syncedReadSessions(len(partitions))
	sessions := len(readers) + 1
	workers.ForEach(c.pipelineDepth*sessions, len(partitions), func(i int) {
		tp := partitions[i]
		if k := i % sessions; k > 0 {
			s, ok, err := readPartitionState(readers[k-1], tp)
			if err == nil || errors.Is(err, zkpaths.ErrMalformed) {
				out[i] = stateRead{state: s, ok: ok, err: err}
				return
			}
		}
		s, ok, err := readPartitionState(c.store, tp)
		out[i] = stateRead{state: s, ok: ok, err: err}
	})
	return out
}

// currentStates returns the partitions' leaderships to decide from. The first attempt of a
// decision (fresh false) takes them from the controller's cache, reading only partitions it
// has none for: every write is conditional on the cached zkVersion, so a stale entry (a leader
// changed its ISR meanwhile) costs one failed write, after which the decision is retried from
// ZooKeeper (fresh true). A decision the cache says needs no write (or finds no leader for) is
// also made again from ZooKeeper, since the cache may lag the leader's own ISR changes. Kafka
// reads every state first; trusting the conditional write halves the ZooKeeper operations of a
// controlled shutdown or a broker failure.
func (c *Controller) currentStates(partitions []kafka.TopicPartition, fresh bool) []stateRead {
	if fresh {
		return c.readPartitionStates(partitions)
	}
	out := make([]stateRead, len(partitions))
	var missing []kafka.TopicPartition
	var at []int
	for i, tp := range partitions {
		if l, ok := c.cc.leadership[tp]; ok {
			out[i] = stateRead{state: l, ok: true}
			continue
		}
		missing = append(missing, tp)
		at = append(at, i)
	}
	for j, r := range c.readPartitionStates(missing) {
		out[at[j]] = r
	}
	return out
}

// stateWrite is the outcome of one conditional write of a partition state znode.
type stateWrite struct {
	zkVersion int32
	err       error
}

// statesPerMulti is how many partition state writes share one fenced ZooKeeper transaction.
// ZooKeeper logs (and syncs) a transaction as one entry, so batching cuts a controlled shutdown
// of tens of thousands of partitions from one log write per partition to one per batch.
const statesPerMulti = 50

// updatePartitionStates writes new leaderships, each conditional on the zkVersion it carries
// and fenced, in transactions of statesPerMulti writes issued pipelined; the results are in
// input order. A transaction fails as a whole when one of its writes does (a lost race with a
// leader's ISR update), so its writes are then redone one by one to find which. A write that
// ErrControllerMoved rejected fails every later one the same way, so the caller resigns once.
func (c *Controller) updatePartitionStates(partitions []kafka.TopicPartition, states []leaderISRAndEpoch) []stateWrite {
	out := make([]stateWrite, len(partitions))
	var moved atomic.Bool
	batches := (len(partitions) + statesPerMulti - 1) / statesPerMulti
	c.forEachParallel(batches, func(bi int) {
		lo, hi := bi*statesPerMulti, min((bi+1)*statesPerMulti, len(partitions))
		if moved.Load() {
			for i := lo; i < hi; i++ {
				out[i].err = ErrControllerMoved
			}
			return
		}
		if hi-lo > 1 {
			ops := make([]any, 0, hi-lo)
			for i := lo; i < hi; i++ {
				tp := partitions[i]
				ops = append(ops, &zk.SetDataRequest{Path: zkpaths.PartitionStatePath(tp.Topic, tp.Partition),
					Data: states[i].znode().Encode(), Version: states[i].zkVersion})
			}
			res, err := c.fencedMulti(ops...)
			if err == nil {
				for i := lo; i < hi; i++ {
					out[i].zkVersion = res[i-lo].Stat.Version
				}
				return
			}
			if errors.Is(err, ErrControllerMoved) {
				moved.Store(true)
				for i := lo; i < hi; i++ {
					out[i].err = err
				}
				return
			}
		}
		for i := lo; i < hi; i++ {
			v, err := c.updatePartitionState(partitions[i], states[i])
			if errors.Is(err, ErrControllerMoved) {
				moved.Store(true)
			}
			out[i] = stateWrite{zkVersion: v, err: err}
		}
	})
	return out
}

// createPartitionStates creates the state znodes of new partitions (and their parents),
// pipelined across partitions; the errors are in input order.
func (c *Controller) createPartitionStates(partitions []kafka.TopicPartition, states []leaderISRAndEpoch) []error {
	out := make([]error, len(partitions))
	var moved atomic.Bool
	c.forEachParallel(len(partitions), func(i int) {
		if moved.Load() {
			out[i] = ErrControllerMoved
			return
		}
		err := c.createPartitionState(partitions[i], states[i])
		if errors.Is(err, ErrControllerMoved) {
			moved.Store(true)
		}
		out[i] = err
	})
	return out
}

// topicRead is the outcome of reading one topic's assignment with a data watch.
type topicRead struct {
	topic string
	t     *topicInfo
	stat  *zk.Stat
	watch armedWatch // set when the read succeeded
	err   error      // zk.ErrNoNode when the topic is gone
}

// readTopicsW reads the assignments of topics, pipelined, each with a data watch that the caller
// records (on the event loop) with armTopicWatch.
func (c *Controller) readTopicsW(topics []string) []topicRead {
	out := make([]topicRead, len(topics))
	fires := make([]func(zk.Event), len(topics))
	for i, topic := range topics {
		fires[i], out[i].watch = c.newWatch(watchKey{dataWatch, zkpaths.TopicPath(topic)}, activeScope, topicWatchEvent(topic))
	}
	ctx := c.watchContext(activeScope)
	c.forEachParallel(len(topics), func(i int) {
		topic := topics[i]
		r := topicRead{topic: topic, watch: out[i].watch}
		data, stat, err := c.store.GetW(ctx, zkpaths.TopicPath(topic), fires[i])
		if err != nil {
			r.err = err
			out[i] = r
			return
		}
		r.stat = stat
		r.t, r.err = decodeTopic(topic, data)
		out[i] = r
	})
	return out
}
