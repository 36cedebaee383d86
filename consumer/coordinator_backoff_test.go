package consumer

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestJoinRetriesBackOff: a consumer whose bootstrap server refuses connections retries with a
// wait that doubles up to reconnect.backoff.max.ms, as the Java client reconnects, instead of
// every retry.backoff.ms: in 2.5 s it tries at most 7 times (100 ms retries would be 25), and
// gives up with the last error when its context ends.
func TestJoinRetriesBackOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	core, logs := observer.New(zapcore.InfoLevel)
	cfg, err := ConfigFromProperties(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.GroupID, cfg.Topics, cfg.BootstrapServers, cfg.Logger = "g", []string{"t"}, []string{addr}, zap.New(core)
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	if _, err := New(ctx, cfg); err == nil {
		t.Fatal("joined a group through a closed port")
	}
	n := logs.FilterMessage("joining failed, retrying").Len()
	if n < 2 || n > 7 {
		t.Errorf("%d retries in 2.5 s, want between 2 and 7", n)
	}
}
