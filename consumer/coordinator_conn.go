package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

// coordinatorConn is what both group protocols keep of the group's
// coordinator: its address and two connections to it, one for membership
// (JoinGroup, SyncGroup, Heartbeat, LeaveGroup or ConsumerGroupHeartbeat)
// and one for offsets, so a commit never queues behind a JoinGroup that
// waits for the whole group.
type coordinatorConn struct {
	c   *Consumer
	log *zap.Logger

	connMu  sync.Mutex
	addr    string
	conn    *wire.Client
	offsets *wire.Client
}

func (g *coordinatorConn) request(ctx context.Context, cl *wire.Client, req kmsg.Request) (kmsg.Response, error) {
	return g.c.cluster.request(ctx, cl, req)
}

// groupRequestOnce sends a last membership request (a leave) on the
// membership connection, finding the coordinator first if there is no
// connection (a heartbeat loop was looking for it), and once more after a
// failure: a heartbeat that Close cut short may have taken the connection
// down.
func (g *coordinatorConn) groupRequestOnce(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	conn := g.groupConn()
	if conn == nil {
		if err := g.findCoordinator(ctx); err != nil {
			return nil, err
		}
		conn = g.groupConn()
	}
	resp, err := g.request(ctx, conn, req)
	if err == nil {
		return resp, nil
	}
	if ferr := g.findCoordinator(ctx); ferr != nil {
		return nil, fmt.Errorf("%w (then: %v)", err, ferr)
	}
	return g.request(ctx, g.groupConn(), req)
}

// instanceID is group.instance.id, nil for a dynamic member.
func (g *coordinatorConn) instanceID() *string {
	if g.c.cfg.GroupInstanceID == "" {
		return nil
	}
	return &g.c.cfg.GroupInstanceID
}

// startRetrying finds the coordinator and joins the group with join,
// retrying retriable errors until ctx is done (retryBackingOff).
func (g *coordinatorConn) startRetrying(ctx context.Context, join func(context.Context) error) error {
	err := retryBackingOff(ctx, time.Time{}, func() error {
		if err := g.findCoordinator(ctx); err != nil {
			return err
		}
		return join(ctx)
	}, func(backoff time.Duration, err error) {
		g.log.Warn("joining failed, retrying", zap.Duration("backoff", backoff), zap.Error(err))
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("join group %s: %w (last error: %v)", g.c.cfg.GroupID, ctx.Err(), err)
	default:
		return fmt.Errorf("join group %s: %w", g.c.cfg.GroupID, err)
	}
}

// retryBackingOff runs op until it succeeds, fails with an error retriable
// refuses, ctx ends, or the next wait would pass deadline (zero: none), and
// returns op's last error. Consecutive failures wait longer each time, from
// retryBackoff up to reconnectBackoffMax; retrying is told of each wait.
func retryBackingOff(ctx context.Context, deadline time.Time, op func() error, retrying func(backoff time.Duration, err error)) error {
	for backoff := retryBackoff; ; backoff = min(2*backoff, reconnectBackoffMax) {
		err := op()
		if err == nil || ctx.Err() != nil || !retriable(err) || !deadline.IsZero() && time.Now().Add(backoff).After(deadline) {
			return err
		}
		retrying(backoff, err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
	}
}

// findCoordinator asks any broker for the group's coordinator and connects
// to it for membership (the offsets connection is dialed when first used).
func (g *coordinatorConn) findCoordinator(ctx context.Context) error {
	g.closeConns()
	cl, id, err := g.c.cluster.any(ctx)
	if err != nil {
		return err
	}
	if id == -1 {
		defer cl.Close()
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = g.c.cfg.GroupID
	resp, err := g.request(ctx, cl, req)
	if err != nil {
		if id != -1 {
			g.c.cluster.drop(id, cl)
		}
		return fmt.Errorf("find coordinator: %w", err)
	}
	fc := resp.(*kmsg.FindCoordinatorResponse)
	code, host, port := fc.ErrorCode, fc.Host, fc.Port
	if len(fc.Coordinators) > 0 {
		code, host, port = fc.Coordinators[0].ErrorCode, fc.Coordinators[0].Host, fc.Coordinators[0].Port
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return fmt.Errorf("find coordinator: %w", err)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	conn, err := g.c.cluster.dial(ctx, addr)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	g.connMu.Lock()
	g.conn, g.addr = conn, addr
	g.connMu.Unlock()
	g.log.Info("found coordinator", zap.String("addr", addr))
	return nil
}

func (g *coordinatorConn) closeConns() {
	g.connMu.Lock()
	defer g.connMu.Unlock()
	for _, cl := range []*wire.Client{g.conn, g.offsets} {
		if cl != nil {
			cl.Close()
		}
	}
	g.conn, g.offsets, g.addr = nil, nil, ""
}

func (g *coordinatorConn) groupConn() *wire.Client {
	g.connMu.Lock()
	defer g.connMu.Unlock()
	return g.conn
}

// offsetConn returns the offsets connection, dialing the coordinator if it
// is closed.
func (g *coordinatorConn) offsetConn(ctx context.Context) (*wire.Client, error) {
	g.connMu.Lock()
	cl, addr := g.offsets, g.addr
	g.connMu.Unlock()
	if cl != nil {
		return cl, nil
	}
	if addr == "" {
		return nil, fmt.Errorf("coordinator unknown: %w", kerr.CoordinatorNotAvailable)
	}
	cl, err := g.c.cluster.dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	g.connMu.Lock()
	defer g.connMu.Unlock()
	if g.offsets != nil || g.addr != addr {
		cl.Close()
		return nil, fmt.Errorf("coordinator changed: %w", kerr.NotCoordinator)
	}
	g.offsets = cl
	return cl, nil
}

// offsetRequest sends req on the offsets connection, dropping the
// connection when it fails (wire closes it).
func (g *coordinatorConn) offsetRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return g.offsetRequestVersion(ctx, req, -1)
}

// offsetRequestVersion is offsetRequest at version v (negative: the
// negotiated one).
func (g *coordinatorConn) offsetRequestVersion(ctx context.Context, req kmsg.Request, v int16) (kmsg.Response, error) {
	cl, err := g.offsetConn(ctx)
	if err != nil {
		return nil, err
	}
	if max, ok := cl.BrokerMaxVersion(req.Key()); v >= 0 && (!ok || max < v) {
		return nil, fmt.Errorf("%s v%d: the coordinator serves up to v%d: %w", kmsg.NameForKey(req.Key()), v, max, kerr.UnsupportedVersion)
	}
	resp, err := g.c.cluster.requestVersion(ctx, cl, req, v)
	if err != nil {
		g.connMu.Lock()
		if g.offsets == cl {
			g.offsets = nil
		}
		g.connMu.Unlock()
	}
	return resp, err
}

// fetchOffsets fills offsets with the group's committed offsets (-1 where
// there is none). A read_committed consumer asks for stable offsets only
// (KIP-447) and, while a transaction's commit of a partition awaits its
// marker (UNSTABLE_OFFSET_COMMIT), asks again after unstableOffsetBackoff,
// as Kafka's consumer retries.
func (g *coordinatorConn) fetchOffsets(ctx context.Context, offsets map[kafka.TopicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = g.c.cfg.GroupID
	req.RequireStable = g.c.cfg.readCommitted()
	for t, ps := range byTopic(slices.Collect(maps.Keys(offsets))) {
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = t, ps
		req.Topics = append(req.Topics, rt)
	}
	for {
		resp, err := g.offsetRequest(ctx, req)
		if err != nil {
			return fmt.Errorf("offset fetch: %w", err)
		}
		or := resp.(*kmsg.OffsetFetchResponse)
		if err := kerr.ErrorForCode(or.ErrorCode); err != nil {
			return fmt.Errorf("offset fetch: %w", err)
		}
		unstable := false
		for _, t := range or.Topics {
			for _, p := range t.Partitions {
				err := kerr.ErrorForCode(p.ErrorCode)
				switch {
				case errors.Is(err, kerr.UnstableOffsetCommit):
					unstable = true
					continue
				case err != nil:
					return fmt.Errorf("offset fetch %s-%d: %w", t.Topic, p.Partition, err)
				}
				tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				if _, ok := offsets[tp]; ok {
					offsets[tp] = p.Offset
				}
			}
		}
		if !unstable {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("offset fetch: %w", ctx.Err())
		case <-time.After(unstableOffsetBackoff):
		}
	}
}

// unstableOffsetBackoff is how long a read_committed consumer waits before
// asking again for offsets a transaction is committing (Kafka's
// retry.backoff.ms).
const unstableOffsetBackoff = 100 * time.Millisecond

// commitOffsets sends OffsetCommit as member in generation, the classic
// protocol's generation or, at version, the consumer protocol's member
// epoch: a member the coordinator fenced gets UNKNOWN_MEMBER_ID,
// ILLEGAL_GENERATION or STALE_MEMBER_EPOCH back. A negative version is the
// negotiated one.
func (g *coordinatorConn) commitOffsets(ctx context.Context, member string, generation int32, instanceID *string,
	offsets map[kafka.TopicPartition]int64, version int16) error {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = g.c.cfg.GroupID, generation, member, instanceID
	req.RetentionTimeMillis = -1
	for t, ps := range byTopic(slices.Collect(maps.Keys(offsets))) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = t
		for _, p := range ps {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, offsets[kafka.TopicPartition{Topic: t, Partition: p}], -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := g.offsetRequestVersion(ctx, req, version)
	if err != nil {
		return fmt.Errorf("offset commit: %w", err)
	}
	for _, t := range resp.(*kmsg.OffsetCommitResponse).Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("offset commit %s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}
