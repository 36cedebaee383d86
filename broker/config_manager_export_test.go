package broker

import (
	"time"

	"github.com/zkafka/zkafka/storage"
)

// SetConfigChangeClock replaces the clock by which the broker's config
// manager ages /config/changes notifications, so a test can expire them
// without waiting 15 minutes.
func SetConfigChangeClock(s *Server, now func() time.Time) { s.configs.clock.Store(&now) }

// LocalLog returns the broker's log of a partition, if it has one.
func LocalLog(s *Server, topic string, partition int32) (*storage.Log, bool) {
	return s.logs.Get(topic, partition)
}

// ClockSkew is how far the broker's wall clock is from the machine's.
func ClockSkew(s *Server) time.Duration { return s.clock.Skew() }
