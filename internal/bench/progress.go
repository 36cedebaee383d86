package bench

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressInterval is how often a phase's bar is redrawn.
const progressInterval = 200 * time.Millisecond

// progress draws one phase's bar (records done of a total) on a terminal.
// Callers count with add, which is one atomic add per record: the bar is
// redrawn from the count by its own goroutine, so that a producer's promises
// never wait on the bar's lock or the terminal.
type progress struct {
	n    atomic.Int64
	bar  *progressbar.ProgressBar
	stop chan struct{}
	wg   sync.WaitGroup
}

// startProgress starts a bar titled desc on w, or a counter that draws nothing
// if w is nil.
func startProgress(w io.Writer, desc string, total int) *progress {
	p := &progress{}
	if w == nil {
		return p
	}
	p.bar = progressbar.NewOptions64(int64(total),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetItsString("rec"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetWidth(30),
		// The finished bar stays, with the phase's count and rate.
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	p.stop = make(chan struct{})
	p.wg.Go(func() {
		tick := time.NewTicker(progressInterval)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				_ = p.bar.Set64(p.n.Load()) // a terminal write error only loses the drawing
			}
		}
	})
	return p
}

func (p *progress) add(n int) { p.n.Add(int64(n)) }

// finish stops the redraws and draws the bar's last state on its own line.
func (p *progress) finish() {
	if p.bar == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	// A run that failed stops short of the total: the bar shows how far it got.
	_ = p.bar.Set64(p.n.Load())
	if !p.bar.IsFinished() {
		_ = p.bar.Exit()
	}
}

// terminal reports whether w is a terminal, where a progress bar belongs; a
// file or pipe would only collect its redraws.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
