package reqclock

import (
	"context"
	"sync/atomic"
	"time"
)

// Clock is one request's handler time.
type Clock struct {
	start  time.Time
	waited atomic.Int64 // nanoseconds; waits may report from several goroutines
}

type key struct{}

// Start starts a clock for a request and returns ctx carrying it.
func Start(ctx context.Context) (context.Context, *Clock) {
	c := &Clock{start: time.Now()}
	return context.WithValue(ctx, key{}, c), c
}

// Waited adds the time since since to the clock ctx carries, if any: a
// handler calls it (deferred) around each wait.
func Waited(ctx context.Context, since time.Time) {
	if c, ok := ctx.Value(key{}).(*Clock); ok {
		c.waited.Add(int64(time.Since(since)))
	}
}

// Busy is the handler's time so far, without its waits.
func (c *Clock) Busy() time.Duration {
	return max(time.Since(c.start)-time.Duration(c.waited.Load()), 0)
}
