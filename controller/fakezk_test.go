package controller

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// fakeZK is an in-memory ZooKeeper for the scenario tests: a znode tree with the semantics the
// controller relies on (stat versions and zxids, ephemeral owners, one-shot watches, atomic
// multi with version checks, sequential names), shared by any number of sessions. It is not a
// substitute for ZooKeeper in tests of ZooKeeper behaviour; those run against the real server.
type fakeZK struct {
	mu          sync.Mutex
	zxid        int64
	nextSession int64
	nodes       map[string]*fakeNode
	sessions    map[int64]bool // open sessions
	watches     []*fakeWatch
	// onWrite, if set, is called (without the lock) after each committed write, in order;
	// onReject after each failed multi.
	onWrite  func(w fakeWrite)
	onReject func(session int64, ops []any, err error)
}

type fakeNode struct {
	data     []byte
	stat     zk.Stat
	children map[string]bool
	// created counts the children ever created: ZooKeeper names a sequential child by it
	// (deletions change Cversion but not the sequence).
	created int32
}

// fakeWrite is one committed create, set or delete, for the scenario output.
type fakeWrite struct {
	session int64
	op      string // "create", "set" or "delete"
	path    string
	data    []byte
}

type fakeWatchKind int8

const (
	fakeDataWatch  fakeWatchKind = iota // GetW, or ExistsW on a znode that exists
	fakeExistWatch                      // ExistsW on a missing znode
	fakeChildWatch                      // ChildrenW
)

type fakeWatch struct {
	session int64
	kind    fakeWatchKind
	path    string
	ctx     context.Context
	fn      func(zk.Event)
}

// firing is a watch triggered by a committed change, called once the lock is released.
type firing struct {
	w  *fakeWatch
	ev zk.Event
}

func newFakeZK() *fakeZK {
	return &fakeZK{
		nextSession: 0x100,
		nodes:       map[string]*fakeNode{"/": {children: map[string]bool{}}},
		sessions:    map[int64]bool{},
	}
}

// session opens a session.
func (z *fakeZK) session() *fakeSession {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.nextSession++
	z.sessions[z.nextSession] = true
	return &fakeSession{z: z, id: z.nextSession}
}

// reopen gives a closed session's client a new session, as zkclient does after an expiry.
func (z *fakeZK) reopen(s *fakeSession) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.nextSession++
	z.sessions[z.nextSession] = true
	s.id = z.nextSession
}

// closeSession ends a session: its ephemeral znodes are deleted (firing watches) and its
// watches dropped without firing.
func (z *fakeZK) closeSession(id int64) {
	z.mu.Lock()
	delete(z.sessions, id)
	z.watches = slices.DeleteFunc(z.watches, func(w *fakeWatch) bool { return w.session == id })
	var ephemerals []string
	for p, n := range z.nodes {
		if n.stat.EphemeralOwner == id {
			ephemerals = append(ephemerals, p)
		}
	}
	slices.Sort(ephemerals)
	var fired []firing
	var writes []fakeWrite
	for _, p := range ephemerals {
		z.zxid++
		fired = append(fired, z.remove(p)...)
		writes = append(writes, fakeWrite{session: id, op: "delete", path: p})
	}
	z.mu.Unlock()
	z.deliver(fired, writes)
}

// deliver reports writes and calls fired watches; the lock must not be held.
func (z *fakeZK) deliver(fired []firing, writes []fakeWrite) {
	if z.onWrite != nil {
		for _, w := range writes {
			z.onWrite(w)
		}
	}
	for _, f := range fired {
		if f.w.ctx.Err() == nil {
			f.w.fn(f.ev)
		}
	}
}

// trigger removes and returns the watches on p of the given kinds.
func (z *fakeZK) trigger(p string, typ zk.EventType, kinds ...fakeWatchKind) []firing {
	var fired []firing
	z.watches = slices.DeleteFunc(z.watches, func(w *fakeWatch) bool {
		if w.path != p || !slices.Contains(kinds, w.kind) {
			return false
		}
		fired = append(fired, firing{w, zk.Event{Type: typ, State: zk.StateHasSession, Path: p}})
		return true
	})
	return fired
}

func parentOf(p string) string { return path.Dir(p) }

// remove deletes an existing childless znode and returns the watches it fires.
func (z *fakeZK) remove(p string) []firing {
	delete(z.nodes, p)
	parent := z.nodes[parentOf(p)]
	delete(parent.children, path.Base(p))
	parent.stat.Cversion++
	parent.stat.NumChildren = int32(len(parent.children))
	parent.stat.Pzxid = z.zxid
	fired := z.trigger(p, zk.EventNodeDeleted, fakeDataWatch, fakeChildWatch)
	return append(fired, z.trigger(parentOf(p), zk.EventNodeChildrenChanged, fakeChildWatch)...)
}

// apply validates and applies one op for session at the current zxid; it returns the op's
// response, the watches it fires and the write it makes.
func (z *fakeZK) apply(session int64, op any) (zk.MultiResponse, []firing, *fakeWrite, error) {
	switch o := op.(type) {
	case *zk.CreateRequest:
		p := o.Path
		parent, ok := z.nodes[parentOf(p)]
		if !ok {
			return zk.MultiResponse{}, nil, nil, zk.ErrNoNode
		}
		if parent.stat.EphemeralOwner != 0 {
			return zk.MultiResponse{}, nil, nil, zk.ErrNoChildrenForEphemerals
		}
		if o.Flags&zk.FlagSequence != 0 {
			p = fmt.Sprintf("%s%010d", p, parent.created)
		}
		if _, ok := z.nodes[p]; ok {
			return zk.MultiResponse{}, nil, nil, zk.ErrNodeExists
		}
		n := &fakeNode{data: slices.Clone(o.Data), children: map[string]bool{}}
		n.stat = zk.Stat{Czxid: z.zxid, Mzxid: z.zxid, Pzxid: z.zxid, DataLength: int32(len(o.Data))}
		if o.Flags&zk.FlagEphemeral != 0 {
			n.stat.EphemeralOwner = session
		}
		z.nodes[p] = n
		parent.children[path.Base(p)] = true
		parent.created++
		parent.stat.Cversion++
		parent.stat.NumChildren = int32(len(parent.children))
		parent.stat.Pzxid = z.zxid
		fired := z.trigger(p, zk.EventNodeCreated, fakeDataWatch, fakeExistWatch)
		fired = append(fired, z.trigger(parentOf(p), zk.EventNodeChildrenChanged, fakeChildWatch)...)
		return zk.MultiResponse{String: p}, fired, &fakeWrite{session: session, op: "create", path: p, data: n.data}, nil
	case *zk.SetDataRequest:
		n, ok := z.nodes[o.Path]
		if !ok {
			return zk.MultiResponse{}, nil, nil, zk.ErrNoNode
		}
		if o.Version != -1 && o.Version != n.stat.Version {
			return zk.MultiResponse{}, nil, nil, zk.ErrBadVersion
		}
		n.data = slices.Clone(o.Data)
		n.stat.Version++
		n.stat.Mzxid = z.zxid
		n.stat.DataLength = int32(len(o.Data))
		stat := n.stat
		fired := z.trigger(o.Path, zk.EventNodeDataChanged, fakeDataWatch)
		return zk.MultiResponse{Stat: &stat}, fired, &fakeWrite{session: session, op: "set", path: o.Path, data: n.data}, nil
	case *zk.DeleteRequest:
		n, ok := z.nodes[o.Path]
		if !ok {
			return zk.MultiResponse{}, nil, nil, zk.ErrNoNode
		}
		if o.Version != -1 && o.Version != n.stat.Version {
			return zk.MultiResponse{}, nil, nil, zk.ErrBadVersion
		}
		if len(n.children) > 0 {
			return zk.MultiResponse{}, nil, nil, zk.ErrNotEmpty
		}
		return zk.MultiResponse{}, z.remove(o.Path), &fakeWrite{session: session, op: "delete", path: o.Path}, nil
	case *zk.CheckVersionRequest:
		n, ok := z.nodes[o.Path]
		if !ok {
			return zk.MultiResponse{}, nil, nil, zk.ErrNoNode
		}
		if o.Version != -1 && o.Version != n.stat.Version {
			return zk.MultiResponse{}, nil, nil, zk.ErrBadVersion
		}
		return zk.MultiResponse{}, nil, nil, nil
	}
	return zk.MultiResponse{}, nil, nil, fmt.Errorf("fake zk: unsupported op %T", op)
}

// snapshot copies the tree and watch list, for a multi to roll back to.
func (z *fakeZK) snapshot() (map[string]*fakeNode, []*fakeWatch) {
	nodes := make(map[string]*fakeNode, len(z.nodes))
	for p, n := range z.nodes {
		cp := *n
		cp.data = slices.Clone(n.data)
		cp.children = make(map[string]bool, len(n.children))
		for c := range n.children {
			cp.children[c] = true
		}
		nodes[p] = &cp
	}
	return nodes, slices.Clone(z.watches)
}

// multi applies ops atomically, as one transaction with one zxid. When op i fails nothing is
// applied; as go-zookeeper reports it, ops before i have no error, op i its error, later ops
// errRolledBack, and the error returned is op i's.
func (z *fakeZK) multi(session int64, ops []any) ([]zk.MultiResponse, error) {
	z.mu.Lock()
	if !z.sessions[session] {
		z.mu.Unlock()
		return nil, zk.ErrSessionExpired
	}
	nodes, watches := z.snapshot()
	zxid := z.zxid
	z.zxid++
	res := make([]zk.MultiResponse, len(ops))
	var fired []firing
	var writes []fakeWrite
	for i, op := range ops {
		r, f, w, err := z.apply(session, op)
		if err != nil {
			z.nodes, z.watches, z.zxid = nodes, watches, zxid
			z.mu.Unlock()
			res = make([]zk.MultiResponse, len(ops))
			res[i].Error = err
			for j := i + 1; j < len(ops); j++ {
				res[j].Error = errRolledBack
			}
			if z.onReject != nil {
				z.onReject(session, ops, err)
			}
			return res, err
		}
		res[i] = r
		fired = append(fired, f...)
		if w != nil {
			writes = append(writes, *w)
		}
	}
	z.mu.Unlock()
	z.deliver(fired, writes)
	return res, nil
}

// errRolledBack is what go-zookeeper reports for the ops after a multi's failing one (it has no
// name for ZooKeeper's RUNTIMEINCONSISTENCY).
var errRolledBack = errors.New("unknown error: -2")

// fakeSession is one session on a fakeZK: the controller's znodeStore.
type fakeSession struct {
	z  *fakeZK
	id int64
}

var _ znodeStore = (*fakeSession)(nil)

func (s *fakeSession) SessionID() int64 {
	s.z.mu.Lock()
	defer s.z.mu.Unlock()
	if !s.z.sessions[s.id] {
		return 0
	}
	return s.id
}

// read runs fn under the lock in an open session, then, if it succeeded and watch is set,
// registers the watch of the kind fn chose.
func (s *fakeSession) read(ctx context.Context, p string, watch func(zk.Event), fn func() (fakeWatchKind, error)) error {
	z := s.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if !z.sessions[s.id] {
		return zk.ErrSessionExpired
	}
	kind, err := fn()
	if err != nil || watch == nil {
		return err
	}
	z.watches = append(z.watches, &fakeWatch{session: s.id, kind: kind, path: p, ctx: ctx, fn: watch})
	return nil
}

func (s *fakeSession) GetW(ctx context.Context, p string, watch func(zk.Event)) (data []byte, stat *zk.Stat, err error) {
	err = s.read(ctx, p, watch, func() (fakeWatchKind, error) {
		n, ok := s.z.nodes[p]
		if !ok {
			return 0, zk.ErrNoNode
		}
		st := n.stat
		data, stat = slices.Clone(n.data), &st
		return fakeDataWatch, nil
	})
	return data, stat, err
}

func (s *fakeSession) ExistsW(ctx context.Context, p string, watch func(zk.Event)) (ok bool, stat *zk.Stat, err error) {
	err = s.read(ctx, p, watch, func() (fakeWatchKind, error) {
		n, found := s.z.nodes[p]
		if !found {
			return fakeExistWatch, nil
		}
		st := n.stat
		ok, stat = true, &st
		return fakeDataWatch, nil
	})
	return ok, stat, err
}

func (s *fakeSession) ChildrenW(ctx context.Context, p string, watch func(zk.Event)) (children []string, stat *zk.Stat, err error) {
	err = s.read(ctx, p, watch, func() (fakeWatchKind, error) {
		n, ok := s.z.nodes[p]
		if !ok {
			return 0, zk.ErrNoNode
		}
		for c := range n.children {
			children = append(children, c)
		}
		slices.Sort(children)
		st := n.stat
		stat = &st
		return fakeChildWatch, nil
	})
	return children, stat, err
}

func (s *fakeSession) Get(p string) ([]byte, *zk.Stat, error) {
	return s.GetW(context.Background(), p, nil)
}

func (s *fakeSession) Exists(p string) (bool, *zk.Stat, error) {
	return s.ExistsW(context.Background(), p, nil)
}

func (s *fakeSession) Children(p string) ([]string, *zk.Stat, error) {
	return s.ChildrenW(context.Background(), p, nil)
}

func (s *fakeSession) Create(p string, data []byte, flags int32, _ []zk.ACL) (string, error) {
	res, err := s.z.multi(s.id, []any{&zk.CreateRequest{Path: p, Data: data, Flags: flags}})
	if err != nil {
		return "", err
	}
	return res[0].String, nil
}

func (s *fakeSession) Delete(p string, version int32) error {
	_, err := s.z.multi(s.id, []any{&zk.DeleteRequest{Path: p, Version: version}})
	return err
}

func (s *fakeSession) Set(p string, data []byte, version int32) (*zk.Stat, error) {
	res, err := s.z.multi(s.id, []any{&zk.SetDataRequest{Path: p, Data: data, Version: version}})
	if err != nil {
		return nil, err
	}
	return res[0].Stat, nil
}

func (s *fakeSession) Multi(ops ...any) ([]zk.MultiResponse, error) { return s.z.multi(s.id, ops) }

// createAll creates p and any missing parents, as persistent znodes without data.
func (s *fakeSession) createAll(p string) error {
	var prefix string
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		prefix += "/" + part
		if _, err := s.Create(prefix, nil, 0, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}
