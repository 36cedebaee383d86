package pace

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// Sleep waits d or until ctx ends, and returns ctx's error if it ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// interval is how often Until checks its condition.
const interval = 50 * time.Millisecond

// Until checks cond every 50 ms until it holds. It returns ctx's error if ctx ends first, and an
// error naming timeout if timeout passes first.
func Until(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(interval)
	defer t.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not reached within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Progress redraws line at the start of w's current line every period until stop is called; stop
// draws it a last time and ends the line. Each drawing is one Write. With a nil w it draws nothing.
func Progress(w io.Writer, period time.Duration, line func() string) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprintln(w, "\r"+line())
				return
			case <-t.C:
				fmt.Fprint(w, "\r"+line())
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
