package storage

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind (background flushes, Manager.Run).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
