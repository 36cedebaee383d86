package ui

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// zkReader is all the dashboard asks of ZooKeeper. It has no method that
// writes, so nothing a page does can change ZooKeeper; the actions go
// through cluster.sh and the Kafka protocol instead.
type zkReader interface {
	Get(path string) ([]byte, *zk.Stat, error)
	GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error)
	Children(path string) ([]string, *zk.Stat, error)
	ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error)
}

// countingReader counts the requests the dashboard sends to ZooKeeper.
type countingReader struct {
	zk zkReader
	n  *atomic.Int64
}

func (c countingReader) Get(p string) ([]byte, *zk.Stat, error) {
	c.n.Add(1)
	return c.zk.Get(p)
}

func (c countingReader) GetW(p string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	c.n.Add(1)
	return c.zk.GetW(p)
}

func (c countingReader) Children(p string) ([]string, *zk.Stat, error) {
	c.n.Add(1)
	return c.zk.Children(p)
}

func (c countingReader) ChildrenW(p string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	c.n.Add(1)
	return c.zk.ChildrenW(p)
}

// znode is the mirror's copy of one znode.
type znode struct {
	data     []byte
	stat     zk.Stat
	children []string // sorted names
}

// change is one znode created (old nil), deleted (new nil) or changed. A
// znode deleted and created again between two reads is a change whose
// czxid differs.
type change struct {
	path     string
	old, new *znode
}

type watchKind uint8

const (
	dataWatch watchKind = iota
	childWatch
)

type watchKey struct {
	path string
	kind watchKind
}

// fired is a watch that went off, as the loop receives it.
type fired struct {
	watchKey
	event zk.Event
}

// mirror is a copy of the whole ZooKeeper tree kept current by one data
// watch and one child watch per znode. Only the model's loop goroutine uses
// it. A fired watch becomes one fired value on the loop's queue (arm); the
// loop re-reads that znode, which arms the watch again, and diffs.
type mirror struct {
	zk    zkReader
	nodes map[string]*znode
	armed map[watchKey]bool
	// arm hands a watch channel to a goroutine that queues what it fires.
	arm func(watchKey, <-chan zk.Event)
}

func newMirror(r zkReader, arm func(watchKey, <-chan zk.Event)) *mirror {
	return &mirror{zk: r, nodes: map[string]*znode{}, armed: map[watchKey]bool{}, arm: arm}
}

// resync forgets every watch (a new session has none) and reads the whole
// tree again, reporting what differs from the copy.
func (m *mirror) resync() ([]change, error) {
	clear(m.armed)
	var out []change
	err := m.load("/", true, &out)
	return out, err
}

// handle re-reads the znode whose watch fired.
func (m *mirror) handle(f fired) ([]change, error) {
	// A watch fires once; forgetting it (rather than marking it unarmed)
	// keeps the set to the znodes that still exist.
	delete(m.armed, f.watchKey)
	if f.event.Type == zk.EventNotWatching {
		// The session is gone with its watches; resync follows the new one.
		return nil, nil
	}
	if _, ok := m.nodes[f.path]; !ok {
		// Already removed through its parent's children; if it comes back
		// the parent's child watch loads it again.
		return nil, nil
	}
	var out []change
	var err error
	if f.kind == dataWatch {
		err = m.readData(f.path, &out)
	} else {
		err = m.readChildren(f.path, &out)
	}
	return out, err
}

// load reads a znode and its children; with all, every child is read again
// (resync), else only children the copy lacks.
func (m *mirror) load(p string, all bool, out *[]change) error {
	data, stat, err := m.get(p)
	if err != nil {
		return m.readFailed(p, err, out)
	}
	children, cstat, err := m.children(p)
	if err != nil {
		return m.readFailed(p, err, out)
	}
	n := &znode{data: data, stat: *stat, children: children}
	childStat(&n.stat, cstat)
	old := m.nodes[p]
	m.put(p, old, n, out)
	return m.syncChildren(p, old, n, all, out)
}

// readData re-reads a znode's data after its data watch fired.
func (m *mirror) readData(p string, out *[]change) error {
	data, stat, err := m.get(p)
	if err != nil {
		return m.readFailed(p, err, out)
	}
	old := m.nodes[p]
	n := &znode{data: data, stat: *stat, children: old.children}
	if stat.Czxid != old.stat.Czxid {
		// Deleted and created again: its children are new too.
		return m.load(p, true, out)
	}
	childStat(&n.stat, &old.stat)
	if stat.Mzxid >= old.stat.Mzxid {
		m.put(p, old, n, out)
	}
	return nil
}

// readChildren re-reads a znode's children after its child watch fired.
func (m *mirror) readChildren(p string, out *[]change) error {
	children, cstat, err := m.children(p)
	if err != nil {
		return m.readFailed(p, err, out)
	}
	old := m.nodes[p]
	if cstat.Czxid != old.stat.Czxid {
		return m.load(p, true, out)
	}
	n := &znode{data: old.data, stat: old.stat, children: children}
	childStat(&n.stat, cstat)
	m.put(p, old, n, out)
	return m.syncChildren(p, old, n, false, out)
}

// readFailed ends a read that failed: a znode that is gone leaves the copy,
// any other error is returned.
func (m *mirror) readFailed(p string, err error, out *[]change) error {
	if errors.Is(err, zk.ErrNoNode) {
		m.remove(p, out)
		return nil
	}
	return err
}

// childStat copies the fields a child change moves from a stat read with
// the children into a stat read with the data.
func childStat(dst, src *zk.Stat) {
	dst.Cversion, dst.NumChildren, dst.Pzxid = src.Cversion, src.NumChildren, src.Pzxid
}

func (m *mirror) syncChildren(p string, old, n *znode, all bool, out *[]change) error {
	var before []string
	if old != nil {
		before = old.children
	}
	for _, name := range before {
		if _, ok := slices.BinarySearch(n.children, name); !ok {
			m.remove(join(p, name), out)
		}
	}
	for _, name := range n.children {
		c := join(p, name)
		if _, known := m.nodes[c]; known && !all {
			continue
		}
		if err := m.load(c, all, out); err != nil {
			return err
		}
	}
	return nil
}

// get reads data, arming the data watch unless it is armed already (a
// second watch on one znode would fire twice).
func (m *mirror) get(p string) ([]byte, *zk.Stat, error) {
	k := watchKey{p, dataWatch}
	if m.armed[k] {
		return m.zk.Get(p)
	}
	data, stat, ch, err := m.zk.GetW(p)
	if err == nil {
		m.armed[k] = true
		m.arm(k, ch)
	}
	return data, stat, err
}

func (m *mirror) children(p string) ([]string, *zk.Stat, error) {
	k := watchKey{p, childWatch}
	var (
		children []string
		stat     *zk.Stat
		err      error
	)
	if m.armed[k] {
		children, stat, err = m.zk.Children(p)
	} else {
		var ch <-chan zk.Event
		children, stat, ch, err = m.zk.ChildrenW(p)
		if err == nil {
			m.armed[k] = true
			m.arm(k, ch)
		}
	}
	slices.Sort(children)
	return children, stat, err
}

// put stores n and reports a change when it differs from old.
func (m *mirror) put(p string, old, n *znode, out *[]change) {
	m.nodes[p] = n
	if old != nil && old.stat == n.stat && bytes.Equal(old.data, n.data) && slices.Equal(old.children, n.children) {
		return
	}
	*out = append(*out, change{path: p, old: old, new: n})
}

// remove drops a znode and everything under it, deepest first.
func (m *mirror) remove(p string, out *[]change) {
	n, ok := m.nodes[p]
	if !ok {
		return
	}
	for _, name := range n.children {
		m.remove(join(p, name), out)
	}
	delete(m.nodes, p)
	*out = append(*out, change{path: p, old: n})
}

func join(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// under reports whether p is prefix or below it.
func under(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}
