package transaction

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind (loads,
// marker channels, completion appends).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
