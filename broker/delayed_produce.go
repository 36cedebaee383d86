package broker

// Kafka's DelayedProduce for acks=all, without a purgatory: the request's
// own goroutine waits on the partitions' change channels (closed when the
// high watermark, the ISR or the leadership changes) until every appended
// partition is complete or the request's timeout passes.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pendingProduce is one partition of an acks=all produce waiting for the high
// watermark to pass requiredOffset.
type pendingProduce struct {
	topic          string
	partition      int32
	p              *Partition
	requiredOffset int64
	leaderEpoch    int32
	done           bool
	err            error
}

// awaitReplication waits for the pending partitions and writes their
// outcome into resp: no error, NOT_ENOUGH_REPLICAS_AFTER_APPEND (the ISR
// shrank below min.insync.replicas meanwhile; the records are in the log),
// NOT_LEADER_OR_FOLLOWER (leadership moved), or REQUEST_TIMED_OUT.
func (s *Server) awaitReplication(ctx context.Context, resp *kmsg.ProduceResponse, pending []*pendingProduce, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	w := newPartitionWaiter()
	defer w.stop()
	for _, pp := range pending {
		// Before the first check, so no change is missed.
		w.watch(pp.p, false)
	}
	for {
		waiting := false
		for _, pp := range pending {
			if !pp.done {
				pp.done, pp.err = pp.p.produceStatus(pp.requiredOffset, pp.leaderEpoch)
				waiting = waiting || !pp.done
			}
		}
		remaining := time.Until(deadline)
		if !waiting || remaining <= 0 || !w.wait(ctx, remaining) {
			break
		}
	}
	for _, pp := range pending {
		err := pp.err
		if !pp.done {
			err = kerr.RequestTimedOut
		}
		if err == nil {
			continue
		}
		for ti := range resp.Topics {
			if resp.Topics[ti].Topic != pp.topic {
				continue
			}
			for pi := range resp.Topics[ti].Partitions {
				if rp := &resp.Topics[ti].Partitions[pi]; rp.Partition == pp.partition {
					rp.ErrorCode = errorCode(err)
				}
			}
		}
	}
}
