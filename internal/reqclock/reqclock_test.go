package reqclock

import (
	"context"
	"testing"
	"time"
)

// TestBusyLeavesOutWaits: a reported wait is not busy time; a context
// without a clock takes reports without effect.
func TestBusyLeavesOutWaits(t *testing.T) {
	ctx, c := Start(context.Background())
	before := time.Now()
	wait := time.NewTimer(50 * time.Millisecond)
	<-wait.C
	Waited(ctx, before)
	busy := c.Busy()
	if busy >= 50*time.Millisecond {
		t.Errorf("busy %v after a reported 50 ms wait and no work", busy)
	}
	Waited(context.Background(), before) // no clock: nothing to do, no panic
	if total := time.Since(c.start); total < 50*time.Millisecond {
		t.Fatalf("the clock started %v ago", total)
	}
}
