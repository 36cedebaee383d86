package controller

import (
	"context"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper watches are one-shot. A fired watch only enqueues an event; the handler re-reads
// the znode, which arms the watch again. The event loop keeps the set of armed watches so that
// each path has at most one watch armed. A watch counts as armed only until it fires, not
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
	fired *atomic.Bool // set when the watch fires, on the znodeStore's goroutine
}

// watchFired is what a fired watch enqueues: which watch fired, and the event the firing
// means (nil when the watch ended without firing, e.g. on session expiry).
type watchFired struct {
	key   watchKey
	id    uint64
	inner event
}

func (watchFired) name() string { return "WatchFired" }

// newWatch prepares a watch on key: the function to give the znodeStore, which turns the
// watch's firing into an event (toEvent maps the ZooKeeper event; nil means nothing to do), and
// the record that arm keeps once the read has set the watch.
func (c *Controller) newWatch(key watchKey, scope watchScope, toEvent func(zk.Event) event) (func(zk.Event), armedWatch) {
	c.nextWatchID++
	id := c.nextWatchID
	fired := new(atomic.Bool)
	fire := func(ev zk.Event) {
		fired.Store(true)
		var inner event
		if ev.Type != zk.EventNotWatching {
			inner = toEvent(ev)
		}
		c.enqueue(watchFired{key: key, id: id, inner: inner})
	}
	return fire, armedWatch{id: id, scope: scope, fired: fired}
}

// arm records a watch set by a successful read.
func (c *Controller) arm(key watchKey, w armedWatch) {
	c.watches[key] = w
}

// watchContext is the context a watch of scope lives in.
func (c *Controller) watchContext(scope watchScope) context.Context {
	if scope == activeScope {
		return c.activeCtx
	}
	return c.loopCtx
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
		return c.store.Exists(path)
	}
	fire, w := c.newWatch(key, scope, toEvent)
	ok, stat, err := c.store.ExistsW(c.watchContext(scope), path, fire)
	if err != nil {
		return false, nil, err
	}
	c.arm(key, w)
	return ok, stat, nil
}

// getW reads path's data, arming a data watch on it unless one is armed.
func (c *Controller) getW(path string, scope watchScope, toEvent func(zk.Event) event) ([]byte, *zk.Stat, error) {
	key := watchKey{dataWatch, path}
	if c.armed(key) {
		return c.store.Get(path)
	}
	fire, w := c.newWatch(key, scope, toEvent)
	data, stat, err := c.store.GetW(c.watchContext(scope), path, fire)
	if err != nil {
		return nil, nil, err
	}
	c.arm(key, w)
	return data, stat, nil
}

// childrenW lists path's children, arming a child watch on it unless one is armed.
func (c *Controller) childrenW(path string, scope watchScope, toEvent func(zk.Event) event) ([]string, error) {
	key := watchKey{childrenWatch, path}
	if c.armed(key) {
		children, _, err := c.store.Children(path)
		return children, err
	}
	fire, w := c.newWatch(key, scope, toEvent)
	children, _, err := c.store.ChildrenW(c.watchContext(scope), path, fire)
	if err != nil {
		return nil, err
	}
	c.arm(key, w)
	return children, nil
}

// newActiveContext starts the context of a term's active-scope watch goroutines.
func (c *Controller) newActiveContext() {
	c.activeCtx, c.cancelActive = context.WithCancel(c.loopCtx)
}
