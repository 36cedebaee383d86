package kafka

import (
	"sync/atomic"
	"time"
)

// Clock is a broker's time source, as Kafka's org.apache.kafka.common.utils.Time is: Now is the wall
// clock the broker stamps and compares (retention, offset expiry, transaction timeouts, replica lag)
// and AfterFunc schedules timers (session and rebalance timeouts), so tests can drive both.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a scheduled callback.
type Timer interface{ Stop() bool }

// SystemClock is the real Clock (time.Now, time.AfterFunc).
type SystemClock struct{}

func (SystemClock) Now() time.Time                            { return time.Now() }
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// SkewedClock is the system clock with its reading moved by a skew that can change while the broker
// runs (zkafka.clock.skew.ms), so a fault can jump one broker's wall clock forward or back the way
// an NTP step or a wrong hardware clock would. Timers stay on the real clock: Kafka schedules its
// delayed operations on System.nanoTime, which a wall-clock step does not move. A change of skew
// is seen by everything that compares two readings across it (the time from a replica's last
// caught-up fetch, say), as Kafka's System.currentTimeMillis differences would see the step.
type SkewedClock struct {
	skew atomic.Int64 // nanoseconds
}

// Now is the system time plus the skew.
func (c *SkewedClock) Now() time.Time { return time.Now().Add(c.Skew()) }

// AfterFunc runs f after d of real time.
func (c *SkewedClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Skew is the current skew.
func (c *SkewedClock) Skew() time.Duration { return time.Duration(c.skew.Load()) }

// SetSkew moves the clock to the system time plus d, reporting whether it changed.
func (c *SkewedClock) SetSkew(d time.Duration) bool { return c.skew.Swap(int64(d)) != int64(d) }
