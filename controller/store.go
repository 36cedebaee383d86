package controller

import (
	"context"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/zkclient"
)

// The controller's seams: everything it reads from ZooKeeper, and everything it sends to brokers,
// passes through the two small interfaces below, and time through a kafka.Clock, so its state
// machines can be driven by scenario tests in memory (testdata/scenarios) as well as by the real
// thing.

// znodeStore is the part of a ZooKeeper session the controller uses. Paths are absolute (a
// chroot, if any, is the implementation's business); errors are go-zookeeper's (zk.ErrNoNode,
// zk.ErrNodeExists, zk.ErrBadVersion, ...), possibly wrapped.
//
// A watch is one-shot, as in ZooKeeper: the watch function is called at most once, when the
// watch fires (or with zk.EventNotWatching when the session ends first), on any goroutine, and
// must not block. It is not called once ctx has ended. A watch is set only when the read
// succeeds (ExistsW also sets it on a missing znode, to see its creation).
type znodeStore interface {
	// SessionID is the current session's id (0 between an expiry and the next session).
	SessionID() int64
	Get(path string) ([]byte, *zk.Stat, error)
	Exists(path string) (bool, *zk.Stat, error)
	Children(path string) ([]string, *zk.Stat, error)
	GetW(ctx context.Context, path string, watch func(zk.Event)) ([]byte, *zk.Stat, error)
	ExistsW(ctx context.Context, path string, watch func(zk.Event)) (bool, *zk.Stat, error)
	ChildrenW(ctx context.Context, path string, watch func(zk.Event)) ([]string, *zk.Stat, error)
	Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	Delete(path string, version int32) error
	// Multi runs *zk.CreateRequest, *zk.SetDataRequest, *zk.DeleteRequest and
	// *zk.CheckVersionRequest ops atomically. When it fails for an op's sake, the responses say
	// which: that op's Error is set, as is every later op's.
	Multi(ops ...any) ([]zk.MultiResponse, error)
}

// brokerChannels is how the controller hands requests to brokers: the channel manager
// (channel.go), one queue and sender per live broker. Only the event loop calls it.
type brokerChannels interface {
	// addBroker starts sending to b (nothing if it is already known).
	addBroker(b liveBroker)
	// removeBroker stops sending to a broker and drops its queued requests.
	removeBroker(id int32)
	// send queues a request for a broker; without a sender for it, the request is dropped.
	send(id int32, r brokerRequest)
	// shutdown removes every broker.
	shutdown()
}

// sessionStore is the znodeStore of a zkclient session. It turns the session's watch channels
// into watch calls, on one goroutine per armed watch that ends when the watch fires, the session
// ends or ctx ends; the controller's Stop waits for them through wg.
type sessionStore struct {
	*zkclient.Client
	wg *sync.WaitGroup
}

func (s sessionStore) forward(ctx context.Context, ch <-chan zk.Event, watch func(zk.Event)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case ev, ok := <-ch:
			if !ok {
				ev = zk.Event{Type: zk.EventNotWatching}
			}
			if ctx.Err() == nil {
				watch(ev)
			}
		case <-ctx.Done():
		}
	}()
}

func (s sessionStore) GetW(ctx context.Context, path string, watch func(zk.Event)) ([]byte, *zk.Stat, error) {
	data, stat, ch, err := s.Client.GetW(path)
	if err != nil {
		return nil, nil, err
	}
	s.forward(ctx, ch, watch)
	return data, stat, nil
}

func (s sessionStore) ExistsW(ctx context.Context, path string, watch func(zk.Event)) (bool, *zk.Stat, error) {
	ok, stat, ch, err := s.Client.ExistsW(path)
	if err != nil {
		return false, nil, err
	}
	s.forward(ctx, ch, watch)
	return ok, stat, nil
}

func (s sessionStore) ChildrenW(ctx context.Context, path string, watch func(zk.Event)) ([]string, *zk.Stat, error) {
	children, stat, ch, err := s.Client.ChildrenW(path)
	if err != nil {
		return nil, nil, err
	}
	s.forward(ctx, ch, watch)
	return children, stat, nil
}
