package controller

import (
	"context"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/wait"
)

// TestWatchRearmedAfterFiring: between a watch firing and its event being processed, a read
// must arm a new watch, or a later change (here: a delete) would be missed.
func TestWatchRearmedAfterFiring(t *testing.T) {
	c := newCluster(t)
	ctl := New(Config{BrokerID: 1, Logger: c.logger}, c.session())
	// The test goroutine plays the event loop: nothing else runs the controller.
	ctx, cancel := context.WithCancel(context.Background())
	ctl.loopCtx = ctx
	defer func() {
		cancel()
		ctl.watchers.Wait()
	}()
	toEvent := func(ev zk.Event) event {
		if ev.Type == zk.EventNodeDeleted {
			return reelectEvent{}
		}
		return controllerChangeEvent{}
	}
	const path = "/watched"
	if _, _, err := ctl.existsW(path, sessionScope, toEvent); err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.Create(path, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the creation to be queued", func() bool { return ctl.events.len() == 1 })

	// The event is queued, not processed; this read must arm a new watch.
	if _, _, err := ctl.existsW(path, sessionScope, toEvent); err != nil {
		t.Fatal(err)
	}
	if err := c.admin.Delete(path, -1); err != nil {
		t.Fatal(err)
	}
	wait.For(t, waitTimeout, "the deletion to be queued", func() bool { return ctl.events.len() == 2 })

	first, _ := ctl.events.pop(ctx)
	second, _ := ctl.events.pop(ctx)
	if w := first.ev.(watchFired); w.inner != (controllerChangeEvent{}) {
		t.Errorf("first event %v, want ControllerChange", w.inner)
	}
	// Processing the first firing must not forget the newer watch.
	ctl.disarm(first.ev.(watchFired))
	if _, ok := ctl.watches[watchKey{existsWatch, path}]; !ok {
		t.Error("the newer watch was forgotten when the older one's event was processed")
	}
	if w := second.ev.(watchFired); w.inner != (reelectEvent{}) {
		t.Errorf("second event %v, want Reelect", w.inner)
	}
}
