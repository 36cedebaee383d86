package broker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// notificationExpiration is how long a change notification stays before a
// broker deletes it (Kafka's ZkNodeChangeNotificationListener's 15 minutes).
const notificationExpiration = 15 * time.Minute

// changeListener is Kafka's ZkNodeChangeNotificationListener, for config,
// ACL and delegation token changes: one goroutine lists the notifications
// under root (setting a child watch), hands the data of each it has not
// handled yet to handle, in sequence order — all of them after a start — and
// deletes those older than notificationExpiration; every broker purges, so
// losing a race to delete is fine. A child watch, a new session (wakeUp) or,
// after a ZooKeeper error, a second's wait wakes it.
type changeListener struct {
	zk   *zkclient.Client
	log  *zap.Logger
	root string
	// handle applies one notification; an error (ZooKeeper's) makes the
	// listener try it again, a malformed notification is for handle to log
	// and skip.
	handle func(data []byte) error
	now    func() time.Time // the purge's clock

	wake         chan struct{}
	lastExecuted int64 // sequence number; only run touches it
}

// startChangeListener runs a listener of root until the server stops; a new
// ZooKeeper session wakes it, since watches die with the old one.
func (s *Server) startChangeListener(ctx context.Context, log *zap.Logger, root string, now func() time.Time, handle func([]byte) error) {
	l := &changeListener{zk: s.zk, log: log, root: root, handle: handle, now: now, wake: make(chan struct{}, 1), lastExecuted: -1}
	s.zk.OnNewSession(l.wakeUp)
	s.wg.Go(func() { l.run(ctx) })
}

func (l *changeListener) wakeUp() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *changeListener) run(ctx context.Context) {
	for {
		watch, err := l.process()
		var retry <-chan time.Time
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			l.log.Warn("Cannot process change notifications; retrying", zap.String("path", l.root), zap.Error(err))
			retry = time.After(time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-watch:
		case <-l.wake:
		case <-retry:
		}
	}
}

// process handles the new notifications and purges the expired ones.
func (l *changeListener) process() (<-chan zk.Event, error) {
	children, _, watch, err := l.zk.ChildrenW(l.root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", l.root, err)
	}
	type change struct {
		name string
		seq  int64
	}
	changes := make([]change, 0, len(children))
	for _, c := range children {
		seq, err := zkpaths.SequenceNumber(c)
		if err != nil {
			l.log.Warn("Ignoring a child that is not a notification", zap.String("path", l.root), zap.String("child", c))
			continue
		}
		changes = append(changes, change{c, seq})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].seq < changes[j].seq })
	for _, c := range changes {
		if c.seq <= l.lastExecuted {
			continue
		}
		path := l.root + "/" + c.name
		data, _, err := l.zk.Get(path)
		switch {
		case errors.Is(err, zk.ErrNoNode): // purged by another broker meanwhile
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", path, err)
		default:
			if err := l.handle(data); err != nil {
				return nil, err
			}
		}
		l.lastExecuted = c.seq
	}
	now := l.now()
	for _, c := range children {
		path := l.root + "/" + c
		exists, stat, err := l.zk.Exists(path)
		if err != nil || !exists || now.Sub(time.UnixMilli(stat.Ctime)) <= notificationExpiration {
			continue
		}
		if err := l.zk.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			l.log.Warn("Cannot delete an expired change notification", zap.String("path", path), zap.Error(err))
			continue
		}
		l.log.Debug("Purged an expired change notification", zap.String("path", path))
	}
	return watch, nil
}
