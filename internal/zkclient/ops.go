package zkclient

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/zkpaths"
)

// openACL is Kafka's default: znodes anyone may read and write (zookeeper.set.acl=false).
var openACL = zk.WorldACL(zk.PermAll)

// DefaultACL is the ACL Kafka 2.8 gives a znode it creates (ZkData.defaultAcls), path being
// relative to the chroot: open to all unless secure; when secure, all rights to the creator's
// authenticated identity (ZooKeeper's "auth" scheme) and, except under the paths holding secrets
// (zkpaths.SensitiveRootPaths), read to everyone. /consumers itself
// stays open, as the old consumers write under it.
func DefaultACL(secure bool, path string) []zk.ACL {
	if !secure || path == zkpaths.Consumers {
		return openACL
	}
	acl := zk.AuthACL(zk.PermAll)
	if zkpaths.Sensitive(path) {
		return acl
	}
	return append(acl, zk.WorldACL(zk.PermRead)...)
}

// acl is the DefaultACL of a server path: inside the chroot it is judged by its relative path,
// as Kafka's client sees it; the chroot and its parents by their own.
func (c *Client) acl(serverPath string) []zk.ACL {
	rel := serverPath
	if c.chroot != "" {
		if r, ok := strings.CutPrefix(serverPath, c.chroot); ok && (r == "" || r[0] == '/') {
			rel = r
			if rel == "" {
				rel = "/"
			}
		}
	}
	return DefaultACL(c.secureACLs, rel)
}

// full maps a chroot-relative path to the server's path.
func (c *Client) full(path string) (string, error) {
	if c.chroot == "" {
		return path, nil // go-zookeeper validates it
	}
	if !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("%w: %q", zk.ErrInvalidPath, path)
	}
	if path == "/" {
		return c.chroot, nil
	}
	return c.chroot + path, nil
}

// relative maps a server path back into the chroot.
func (c *Client) relative(path string) string {
	switch {
	case c.chroot == "":
		return path
	case path == c.chroot:
		return "/"
	case strings.HasPrefix(path, c.chroot+"/"):
		return path[len(c.chroot):]
	}
	return path
}

// watch hands a watch channel to the caller, with the chroot stripped from the event's path.
func (c *Client) watch(ch <-chan zk.Event) <-chan zk.Event {
	if c.chroot == "" {
		return ch
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		// go-zookeeper is closing every watch with EventNotWatching; no path to rewrite matters.
		return ch
	}
	out := make(chan zk.Event, 1)
	c.watchers.Add(1)
	go func() {
		defer c.watchers.Done()
		defer close(out)
		// go-zookeeper sends at most one event, then closes ch.
		for ev := range ch {
			ev.Path = c.relative(ev.Path)
			out <- ev
		}
	}()
	return out
}

// Get returns a znode's data and stat.
func (c *Client) Get(path string) ([]byte, *zk.Stat, error) {
	p, err := c.full(path)
	if err != nil {
		return nil, nil, fmt.Errorf("zk get %s: %w", path, err)
	}
	var (
		data []byte
		stat *zk.Stat
	)
	err = c.retry(func() (err error) { data, stat, err = c.conn.Get(p); return err })
	if err != nil {
		return nil, nil, fmt.Errorf("zk get %s: %w", path, err)
	}
	return data, stat, nil
}

// Sync waits until the server this session is connected to has applied every
// write the ensemble's leader had committed when Sync was issued, so that a
// read after it is not behind a write another session already saw.
func (c *Client) Sync(path string) error {
	p, err := c.full(path)
	if err != nil {
		return fmt.Errorf("zk sync %s: %w", path, err)
	}
	if err := c.retry(func() error { _, err := c.conn.Sync(p); return err }); err != nil {
		return fmt.Errorf("zk sync %s: %w", path, err)
	}
	return nil
}

// GetW is Get plus a one-shot watch for the znode's data changing or the znode being deleted.
func (c *Client) GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	p, err := c.full(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("zk get %s: %w", path, err)
	}
	var (
		data []byte
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err = c.retry(func() (err error) { data, stat, ch, err = c.conn.GetW(p); return err })
	if err != nil {
		return nil, nil, nil, fmt.Errorf("zk get %s: %w", path, err)
	}
	return data, stat, c.watch(ch), nil
}

// Exists reports whether a znode exists, with its stat if it does.
func (c *Client) Exists(path string) (bool, *zk.Stat, error) {
	p, err := c.full(path)
	if err != nil {
		return false, nil, fmt.Errorf("zk exists %s: %w", path, err)
	}
	var (
		ok   bool
		stat *zk.Stat
	)
	err = c.retry(func() (err error) { ok, stat, err = c.conn.Exists(p); return err })
	if err != nil {
		return false, nil, fmt.Errorf("zk exists %s: %w", path, err)
	}
	return ok, stat, nil
}

// ExistsW is Exists plus a one-shot watch for the znode being created, changed or deleted.
func (c *Client) ExistsW(path string) (bool, *zk.Stat, <-chan zk.Event, error) {
	p, err := c.full(path)
	if err != nil {
		return false, nil, nil, fmt.Errorf("zk exists %s: %w", path, err)
	}
	var (
		ok   bool
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err = c.retry(func() (err error) { ok, stat, ch, err = c.conn.ExistsW(p); return err })
	if err != nil {
		return false, nil, nil, fmt.Errorf("zk exists %s: %w", path, err)
	}
	return ok, stat, c.watch(ch), nil
}

// Children returns the names (not paths) of a znode's children.
func (c *Client) Children(path string) ([]string, *zk.Stat, error) {
	p, err := c.full(path)
	if err != nil {
		return nil, nil, fmt.Errorf("zk children %s: %w", path, err)
	}
	var (
		children []string
		stat     *zk.Stat
	)
	err = c.retry(func() (err error) { children, stat, err = c.conn.Children(p); return err })
	if err != nil {
		return nil, nil, fmt.Errorf("zk children %s: %w", path, err)
	}
	return children, stat, nil
}

// ChildrenW is Children plus a one-shot watch for a child being added or removed, or the znode
// being deleted.
func (c *Client) ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	p, err := c.full(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("zk children %s: %w", path, err)
	}
	var (
		children []string
		stat     *zk.Stat
		ch       <-chan zk.Event
	)
	err = c.retry(func() (err error) { children, stat, ch, err = c.conn.ChildrenW(p); return err })
	if err != nil {
		return nil, nil, nil, fmt.Errorf("zk children %s: %w", path, err)
	}
	return children, stat, c.watch(ch), nil
}

// ACL returns a znode's ACL.
func (c *Client) ACL(path string) ([]zk.ACL, *zk.Stat, error) {
	p, err := c.full(path)
	if err != nil {
		return nil, nil, fmt.Errorf("zk getACL %s: %w", path, err)
	}
	var (
		acl  []zk.ACL
		stat *zk.Stat
	)
	err = c.retry(func() (err error) { acl, stat, err = c.conn.GetACL(p); return err })
	if err != nil {
		return nil, nil, fmt.Errorf("zk getACL %s: %w", path, err)
	}
	return acl, stat, nil
}

// SetDefaultACL gives a znode the ACL this client creates it with (DefaultACL), whatever its ACL
// version, as Kafka's zookeeper-security-migration does.
func (c *Client) SetDefaultACL(path string) error {
	p, err := c.full(path)
	if err != nil {
		return fmt.Errorf("zk setACL %s: %w", path, err)
	}
	if err := c.retry(func() error { _, err := c.conn.SetACL(p, c.acl(p), -1); return err }); err != nil {
		return fmt.Errorf("zk setACL %s: %w", path, err)
	}
	return nil
}

// Create creates a znode and returns its path, which for a sequential znode carries the sequence
// number. flags are zk.FlagEphemeral, zk.FlagSequence or both; a nil acl means DefaultACL.
func (c *Client) Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	p, err := c.full(path)
	if err != nil {
		return "", fmt.Errorf("zk create %s: %w", path, err)
	}
	if acl == nil {
		acl = c.acl(p)
	}
	var created string
	err = c.retry(func() (err error) { created, err = c.conn.Create(p, data, flags, acl); return err })
	if err != nil {
		return "", fmt.Errorf("zk create %s: %w", path, err)
	}
	return c.relative(created), nil
}

// CreateIfMissing creates a persistent znode with data, and any missing parents with empty data.
// An existing znode is left as it is.
func (c *Client) CreateIfMissing(path string, data []byte) error {
	p, err := c.full(path)
	if err != nil {
		return fmt.Errorf("zk create %s: %w", path, err)
	}
	if err := c.ensurePath(p, data); err != nil {
		return fmt.Errorf("zk create %s: %w", path, err)
	}
	return nil
}

// ensurePath creates a persistent znode (a server path) and its missing parents. It tries the
// znode first, since its parents usually exist.
func (c *Client) ensurePath(p string, data []byte) error {
	err := c.retry(func() error { _, err := c.conn.Create(p, data, 0, c.acl(p)); return err })
	if err == nil || errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	if !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	for i := 1; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		if err := c.retry(func() error { _, err := c.conn.Create(p[:i], nil, 0, c.acl(p[:i])); return err }); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	if err := c.retry(func() error { _, err := c.conn.Create(p, data, 0, c.acl(p)); return err }); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// Set replaces a znode's data if its version matches (-1 matches any).
func (c *Client) Set(path string, data []byte, version int32) (*zk.Stat, error) {
	p, err := c.full(path)
	if err != nil {
		return nil, fmt.Errorf("zk set %s: %w", path, err)
	}
	var stat *zk.Stat
	err = c.retry(func() (err error) { stat, err = c.conn.Set(p, data, version); return err })
	if err != nil {
		return nil, fmt.Errorf("zk set %s: %w", path, err)
	}
	return stat, nil
}

// Delete deletes a znode if its version matches (-1 matches any).
func (c *Client) Delete(path string, version int32) error {
	p, err := c.full(path)
	if err != nil {
		return fmt.Errorf("zk delete %s: %w", path, err)
	}
	if err := c.retry(func() error { return c.conn.Delete(p, version) }); err != nil {
		return fmt.Errorf("zk delete %s: %w", path, err)
	}
	return nil
}

// Multi runs ops atomically: all succeed or none is applied. Each op is a *zk.CreateRequest (a nil
// Acl means DefaultACL), *zk.SetDataRequest, *zk.DeleteRequest or *zk.CheckVersionRequest, with
// chroot-relative paths; the caller's ops are not modified. On failure the error is the first
// failing op's (zk.ErrBadVersion for a failed check), and the responses, when the server sent
// them, say which op failed.
func (c *Client) Multi(ops ...any) ([]zk.MultiResponse, error) {
	mapped := make([]any, len(ops))
	for i, op := range ops {
		var (
			m   any
			err error
		)
		switch o := op.(type) {
		case *zk.CreateRequest:
			cp := *o
			cp.Path, err = c.full(o.Path)
			if cp.Acl == nil {
				cp.Acl = c.acl(cp.Path)
			}
			m = &cp
		case *zk.SetDataRequest:
			cp := *o
			cp.Path, err = c.full(o.Path)
			m = &cp
		case *zk.DeleteRequest:
			cp := *o
			cp.Path, err = c.full(o.Path)
			m = &cp
		case *zk.CheckVersionRequest:
			cp := *o
			cp.Path, err = c.full(o.Path)
			m = &cp
		default:
			return nil, fmt.Errorf("zk multi: op %d: unsupported type %T", i, op)
		}
		if err != nil {
			return nil, fmt.Errorf("zk multi: op %d: %w", i, err)
		}
		mapped[i] = m
	}
	var res []zk.MultiResponse
	err := c.retry(func() (err error) { res, err = c.conn.Multi(mapped...); return err })
	for i := range res {
		if res[i].String != "" {
			res[i].String = c.relative(res[i].String)
		}
	}
	if err != nil {
		return res, fmt.Errorf("zk multi: %w", err)
	}
	return res, nil
}

// retry runs op again while it fails only because the connection to ZooKeeper dropped (the request
// may have reached the server) or none of the servers could be reached (go-zookeeper flushes the
// requests it could not send each time it has tried the whole server list), once the same session
// is back, as Kafka's ZooKeeper client retries requests until connected. A write that
// reached the server before the drop may therefore answer NODEEXISTS, NONODE or BADVERSION on the
// retry; callers treat those as they would a concurrent change. If the session expired meanwhile,
// or the session timeout passes without a connection, the error is returned.
func (c *Client) retry(op func() error) error {
	session := c.conn.SessionID()
	deadline := time.Now().Add(c.sessionTimeout)
	for {
		err := op()
		if !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrNoServer) {
			return err
		}
		for c.conn.State() != zk.StateHasSession {
			if c.isClosed() || time.Now().After(deadline) {
				return err
			}
			time.Sleep(reconnectPoll)
		}
		if c.conn.SessionID() != session {
			return fmt.Errorf("%w (the request was lost with the old session)", zk.ErrSessionExpired)
		}
	}
}

// reconnectPoll is how often retry looks for the session to be back.
const reconnectPoll = 20 * time.Millisecond

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
