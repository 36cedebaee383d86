package wait

import (
	"testing"
	"time"
)

// interval is how often For checks its condition: short, so tests add little
// latency, and long enough not to compete with the code under test for the CPU.
const interval = 10 * time.Millisecond

// For checks cond every 10 ms until it holds, and fails the test if timeout
// passes first. what names the awaited state in the failure. Like t.Fatal it
// must be called from the test's goroutine.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}
