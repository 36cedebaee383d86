package kafka

import (
	"testing"
	"time"
)

func TestSkewedClockMovesTheWallClockNotTheTimers(t *testing.T) {
	var c SkewedClock
	if c.Skew() != 0 {
		t.Fatalf("a new clock is skewed by %v", c.Skew())
	}
	if !c.SetSkew(2*time.Hour) || c.SetSkew(2*time.Hour) {
		t.Fatal("SetSkew must report a change once, not a repeat")
	}
	before := time.Now()
	now := c.Now()
	if d := now.Sub(before); d < 2*time.Hour || d > 2*time.Hour+time.Minute {
		t.Fatalf("Now is %v from the system clock, want two hours", d)
	}
	c.SetSkew(-time.Hour)
	if d := time.Until(c.Now()); d > -time.Hour+time.Minute || d < -time.Hour-time.Minute {
		t.Fatalf("Now is %v from the system clock, want an hour behind", d)
	}
	fired := make(chan time.Time, 1)
	start := time.Now()
	c.AfterFunc(10*time.Millisecond, func() { fired <- time.Now() })
	if at := <-fired; at.Sub(start) > time.Minute {
		t.Fatalf("a 10ms timer fired after %v: timers must run on the real clock", at.Sub(start))
	}
}
