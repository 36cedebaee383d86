package controller

import (
	"context"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper watches are one-shot. A fired watch only enqueues an event; the handler re-reads
// the znode, which arms the watch again. The event loop keeps the set of armed watches so that
// each path has at most one watch goroutine. A watch counts as armed only until it fires, not
// until its event is processed: a read in between must arm a new one, or a change made after
// that read (even by the controller itself) would go unnoticed.

type watchKind int8

const (
	existsWatch watchKind = iota
	dataWatch
	childrenWatch
)

type watchKey struct {
	kind watchKind
	path string
}

// watchScope says when a watch stops mattering: the /controller watch lasts the whole session;
// the others only while this broker is the active controller.
type watchScope int8

const (
	sessionScope watchScope = iota
	activeScope
)

type armedWatch struct {
	id    uint64
	scope watchScope
	fired *atomic.Bool // set by the watch goroutine
}

// watchFired is what a watch goroutine enqueues: which watch fired, and the event the firing
// means (nil when the watch ended without firing, e.g. on session expiry).
type watchFired struct {
	key   watchKey
	id    uint64
	inner event
}

func (watchFired) name() string { return "WatchFired" }

// arm records a new watch on key and starts a goroutine that turns its firing into an event.
// toEvent maps the ZooKeeper event to a controller event (nil: nothing to do).
func (c *Controller) arm(key watchKey, scope watchScope, ch <-chan zk.Event, toEvent func(zk.Event) event) {
	c.nextWatchID++
	id := c.nextWatchID
	fired := new(atomic.Bool)
	c.watches[key] = armedWatch{id: id, scope: scope, fired: fired}
	ctx := c.loopCtx
	if scope == activeScope {
		ctx = c.activeCtx
	}
	c.watchers.Add(1)
	go func() {
		defer c.watchers.Done()
		select {
		case ev, ok := <-ch:
			fired.Store(true)
			var inner event
			if ok && ev.Type != zk.EventNotWatching {
				inner = toEvent(ev)
			}
			c.enqueue(watchFired{key: key, id: id, inner: inner})
		case <-ctx.Done():
		}
	}()
}

// armed reports whether key has a watch that has not fired yet.
func (c *Controller) armed(key watchKey) bool {
	a, ok := c.watches[key]
	return ok && !a.fired.Load()
}

// disarm forgets the watch that fired, unless it has been replaced since.
func (c *Controller) disarm(w watchFired) {
	if a, ok := c.watches[w.key]; ok && a.id == w.id {
		delete(c.watches, w.key)
	}
}

// forgetWatches drops the record of every watch in scope (all of them for a nil scope), so the
// next read arms a new one.
func (c *Controller) forgetWatches(scope *watchScope) {
	for k, a := range c.watches {
		if scope == nil || a.scope == *scope {
			delete(c.watches, k)
		}
	}
}

// existsW reads whether path exists, arming an exists watch on it unless one is armed.
func (c *Controller) existsW(path string, scope watchScope, toEvent func(zk.Event) event) (bool, *zk.Stat, error) {
	key := watchKey{existsWatch, path}
	if c.armed(key) {
		return c.zk.Exists(path)
	}
	ok, stat, ch, err := c.zk.ExistsW(path)
	if err != nil {
		return false, nil, err
	}
	c.arm(key, scope, ch, toEvent)
	return ok, stat, nil
}

// getW reads path's data, arming a data watch on it unless one is armed.
func (c *Controller) getW(path string, scope watchScope, toEvent func(zk.Event) event) ([]byte, *zk.Stat, error) {
	key := watchKey{dataWatch, path}
	if c.armed(key) {
		return c.zk.Get(path)
	}
	data, stat, ch, err := c.zk.GetW(path)
	if err != nil {
		return nil, nil, err
	}
	c.arm(key, scope, ch, toEvent)
	return data, stat, nil
}

// childrenW lists path's children, arming a child watch on it unless one is armed.
func (c *Controller) childrenW(path string, scope watchScope, toEvent func(zk.Event) event) ([]string, error) {
	key := watchKey{childrenWatch, path}
	if c.armed(key) {
		children, _, err := c.zk.Children(path)
		return children, err
	}
	children, _, ch, err := c.zk.ChildrenW(path)
	if err != nil {
		return nil, err
	}
	c.arm(key, scope, ch, toEvent)
	return children, nil
}

// newActiveContext starts the context of a term's active-scope watch goroutines.
func (c *Controller) newActiveContext() {
	c.activeCtx, c.cancelActive = context.WithCancel(c.loopCtx)
}
