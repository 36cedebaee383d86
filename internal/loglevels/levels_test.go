package loglevels

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestLevels: an entry is logged by its logger's own level, else its nearest dotted ancestor's,
// else the root's; changes apply at once; the loggers that logged are listed with their levels.
func TestLevels(t *testing.T) {
	l, err := New("INFO")
	if err != nil {
		t.Fatal(err)
	}
	inner, logs := observer.New(zapcore.DebugLevel)
	root := zap.New(l.Wrap(inner)).Named("broker-1")
	rm := root.Named("replica-manager")
	fetcher := rm.Named("replica-fetcher")

	fetcher.Debug("hidden at INFO")
	fetcher.Info("shown at INFO")
	l.Set("broker-1.replica-manager", "DEBUG")
	fetcher.Debug("shown: the parent is at DEBUG")
	root.Debug("hidden: broker-1 inherits the root's INFO")
	l.Set("broker-1.replica-manager.replica-fetcher", "ERROR")
	fetcher.Warn("hidden: its own level is ERROR")
	rm.Debug("shown: still DEBUG")
	l.Unset("broker-1.replica-manager.replica-fetcher")
	fetcher.Debug("shown again: inherits DEBUG")

	var got []string
	for _, e := range logs.All() {
		got = append(got, e.Message)
	}
	want := []string{"shown at INFO", "shown: the parent is at DEBUG", "shown: still DEBUG", "shown again: inherits DEBUG"}
	if len(got) != len(want) {
		t.Fatalf("logged %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("logged %q, want %q", got, want)
		}
	}
	loggers := l.Loggers()
	if loggers[Root] != "INFO" || loggers["broker-1"] != "INFO" || loggers["broker-1.replica-manager"] != "DEBUG" ||
		loggers["broker-1.replica-manager.replica-fetcher"] != "DEBUG" {
		t.Errorf("loggers %v", loggers)
	}
	if !l.Exists("broker-1.replica-manager") || l.Exists("no-such-logger") || !l.Exists(Root) {
		t.Error("Exists does not know which loggers have logged")
	}
	l.Unset(Root)
	if l.Loggers()[Root] != "INFO" {
		t.Error("the root lost its level")
	}
	if _, err := New("LOUD"); err == nil {
		t.Error("New accepted LOUD")
	}
}
