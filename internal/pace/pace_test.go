package pace

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on an ended context: %v, want context.Canceled", err)
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(0) on an ended context: %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep: %v", err)
	}
}

func TestUntil(t *testing.T) {
	var calls atomic.Int32
	if err := Until(context.Background(), time.Minute, func() bool { return calls.Add(1) == 3 }); err != nil || calls.Load() != 3 {
		t.Fatalf("Until: %v after %d checks, want nil after 3", err, calls.Load())
	}
	err := Until(context.Background(), 60*time.Millisecond, func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "not reached within 60ms") {
		t.Fatalf("Until past its timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Until(ctx, time.Minute, func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Until on an ended context: %v, want context.Canceled", err)
	}
}

// writes records each Write.
type writes struct{ got []string }

func (w *writes) Write(p []byte) (int, error) {
	w.got = append(w.got, string(p))
	return len(p), nil
}

func TestProgress(t *testing.T) {
	w := &writes{}
	stop := Progress(w, time.Hour, func() string { return "phase 1/2" })
	stop()
	if len(w.got) != 1 || w.got[0] != "\rphase 1/2\n" {
		t.Fatalf("writes %q, want the line redrawn once and ended", w.got)
	}
	Progress(nil, time.Millisecond, func() string { return "x" })()
}
