package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/wait"
)

// TestFakeZKMatchesZooKeeper runs one script of the operations the controller relies on against
// the real ZooKeeper (through sessionStore, as the controller uses it) and against fakeZK, and
// requires the same transcript: results, errors, multi responses and the watch events seen.
// It keeps the scenario tests' fake honest.
func TestFakeZKMatchesZooKeeper(t *testing.T) {
	c := newCluster(t)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	owner := c.session()
	onZK := storeScript(ctx, t, sessionStore{Client: c.admin, wg: &wg}, sessionStore{Client: owner, wg: &wg},
		func() { _ = owner.Close() })

	z := newFakeZK()
	fakeOwner := z.session()
	onFake := storeScript(ctx, t, z.session(), fakeOwner, func() { z.closeSession(fakeOwner.id) })

	if !slices.Equal(onZK, onFake) {
		t.Errorf("transcripts differ\n--- ZooKeeper\n%s\n--- fakeZK\n%s", strings.Join(onZK, "\n"), strings.Join(onFake, "\n"))
	}
}

// storeScript exercises s (and owner, a second session whose end is closeOwner) under /contract
// and returns what it observed.
func storeScript(ctx context.Context, t *testing.T, s, owner znodeStore, closeOwner func()) []string {
	t.Helper()
	var out []string
	var mu sync.Mutex
	var events []string
	watch := func(label string) func(zk.Event) {
		return func(ev zk.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("%s: %s %s", label, ev.Type, ev.Path))
		}
	}
	// expect waits until n watch events have been seen in all, and logs them in order.
	expect := func(n int) {
		t.Helper()
		wait.For(t, waitTimeout, fmt.Sprintf("%d watch events", n), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(events) >= n
		})
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(events) // one change fires several watches, in no promised order
		out = append(out, events...)
		events = nil
	}
	note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	errName := func(err error) string {
		for _, e := range []error{zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNotEmpty, zk.ErrNoChildrenForEphemerals} {
			if errors.Is(err, e) {
				return e.Error()
			}
		}
		if err == nil {
			return "ok"
		}
		return err.Error()
	}
	multi := func(label string, ops ...any) {
		res, err := s.Multi(ops...)
		var errs []string
		for _, r := range res {
			errs = append(errs, errName(r.Error))
		}
		note("%s: %s %v", label, errName(err), errs)
	}

	const root = "/contract"
	_, err := s.Create(root, nil, 0, nil)
	note("create root: %s", errName(err))

	ok, _, err := s.ExistsW(ctx, root+"/a", watch("exists a"))
	note("exists a: %v %s", ok, errName(err))
	_, err = s.Create(root+"/a", []byte("1"), 0, nil)
	note("create a: %s", errName(err))
	_, err = s.Create(root+"/a", nil, 0, nil)
	note("create a again: %s", errName(err))
	expect(1)

	data, stat, err := s.GetW(ctx, root+"/a", watch("data a"))
	note("get a: %q version %d %s", data, stat.Version, errName(err))
	_, _, err = s.ChildrenW(ctx, root+"/a", watch("children a"))
	note("children a: %s", errName(err))
	_, err = s.Create(root+"/a/b", nil, 0, nil)
	note("create a/b: %s", errName(err))
	multi("set a at version 0", &zk.SetDataRequest{Path: root + "/a", Data: []byte("2"), Version: 0})
	expect(2)
	multi("set a at stale version 0", &zk.SetDataRequest{Path: root + "/a", Data: []byte("3"), Version: 0})

	// A failed check fails the whole transaction; nothing is applied.
	multi("failed check", &zk.CheckVersionRequest{Path: root + "/a", Version: 7},
		&zk.CreateRequest{Path: root + "/a/c"}, &zk.DeleteRequest{Path: root + "/a/b", Version: -1})
	multi("failed middle op", &zk.CheckVersionRequest{Path: root + "/a", Version: 1},
		&zk.CreateRequest{Path: root + "/a/c"}, &zk.DeleteRequest{Path: root + "/a/missing", Version: -1},
		&zk.CreateRequest{Path: root + "/a/d"})
	ok, _, err = s.Exists(root + "/a/c")
	note("a/c after failed multis: %v %s", ok, errName(err))
	children, _, err := s.ChildrenW(ctx, root+"/a", watch("children a"))
	note("children a: %v %s", children, errName(err))
	_, _, err = s.GetW(ctx, root+"/a/b", watch("data a/b"))
	note("get a/b: %s", errName(err))
	multi("checked create and delete", &zk.CheckVersionRequest{Path: root + "/a", Version: 1},
		&zk.CreateRequest{Path: root + "/a/c"}, &zk.DeleteRequest{Path: root + "/a/b", Version: -1})
	expect(2)
	err = s.Delete(root+"/a", -1)
	note("delete non-empty a: %s", errName(err))

	// Ephemerals go with their session, firing the watches on them.
	_, err = owner.Create(root+"/e", nil, zk.FlagEphemeral, nil)
	note("create ephemeral e: %s", errName(err))
	_, err = s.Create(root+"/e/child", nil, 0, nil)
	note("create child of e: %s", errName(err))
	_, stat, err = s.ExistsW(ctx, root+"/e", watch("exists e"))
	note("e is ephemeral: %v %s", stat.EphemeralOwner == owner.SessionID(), errName(err))
	_, _, err = s.ChildrenW(ctx, root, watch("children root"))
	note("children root: %s", errName(err))
	closeOwner()
	expect(2)
	ok, _, err = s.Exists(root + "/e")
	note("e after its session: %v %s", ok, errName(err))

	// An exists watch on a znode that exists fires when its data changes; the czxid names one
	// creation of a path, kept by sets and new when the znode is created again.
	_, err = s.Create(root+"/r", []byte("1"), 0, nil)
	note("create r: %s", errName(err))
	_, first, err := s.ExistsW(ctx, root+"/r", watch("exists r"))
	note("exists r: %s", errName(err))
	multi("set r", &zk.SetDataRequest{Path: root + "/r", Data: []byte("2"), Version: -1})
	expect(1)
	_, stat, err = s.Exists(root + "/r")
	note("czxid of r kept by a set: %v %s", stat.Czxid == first.Czxid, errName(err))
	err = s.Delete(root+"/r", -1)
	note("delete r: %s", errName(err))
	_, err = s.Create(root+"/r", []byte("1"), 0, nil)
	note("create r again: %s", errName(err))
	_, stat, err = s.Exists(root + "/r")
	note("czxid of r new: %v %s", stat.Czxid != first.Czxid, errName(err))

	// Sequential names count the parent's child changes, deletions included.
	for range 2 {
		p, err := s.Create(root+"/a/seq_", nil, zk.FlagSequence, nil)
		note("sequential: %s %s", strings.TrimPrefix(p, root), errName(err))
	}
	return out
}
