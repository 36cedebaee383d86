package wait

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestForReturnsOnceCondHolds(t *testing.T) {
	var calls atomic.Int32
	For(t, 5*time.Second, "the third check", func() bool { return calls.Add(1) == 3 })
	if n := calls.Load(); n != 3 {
		t.Fatalf("cond called %d times, want 3: For must stop at the first true", n)
	}
}

// fatalTB records Fatalf and ends its goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestForFailsAfterTimeout(t *testing.T) {
	tb := &fatalTB{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		For(tb, 50*time.Millisecond, "a condition that never holds", func() bool { return false })
	}()
	<-done
	if !strings.Contains(tb.msg, "timed out after 50ms waiting for a condition that never holds") {
		t.Fatalf("failure %q does not name the timeout and the awaited state", tb.msg)
	}
	if elapsed := time.Since(start); elapsed < 50*time.Millisecond {
		t.Fatalf("failed after %v, before the 50ms timeout", elapsed)
	}
}
