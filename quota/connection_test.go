package quota

import (
	"net/netip"
	"testing"
	"time"
)

// TestConnectionRates: an address's own rate wins over the default; the
// eleventh connection within the 10 s minimum window is above a rate of 1
// and throttled at most one window; other addresses have their own count.
func TestConnectionRates(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	rates := NewConnectionRates(Config{Samples: 11, Window: time.Second, Now: c.now})
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	if _, ok := rates.Lookup(a); ok {
		t.Fatal("a quota applies with none set")
	}
	rates.SetDefault(100, true)
	rates.Set(a, 1, true)
	q, ok := rates.Lookup(netip.MustParseAddr("::ffff:10.0.0.1"))
	if !ok || q.bound != 1 {
		t.Fatalf("a's own rate does not apply to its IPv4-mapped form: %+v %v", q, ok)
	}
	for i := range 10 {
		if d := q.Record(1); d != 0 {
			t.Fatalf("connection %d of 10 in 10 s at 1/s: throttled %v", i+1, d)
		}
	}
	if d := q.Record(1); d != time.Second {
		t.Fatalf("the eleventh connection: throttled %v, want the one-window bound", d)
	}
	qb, _ := rates.Lookup(b)
	if d := qb.Record(1); d != 0 || qb.bound != 100 {
		t.Fatalf("b under the default: throttled %v, bound %v", d, qb.bound)
	}
	rates.Set(a, 0, false)
	rates.SetDefault(0, false)
	if _, ok := rates.Lookup(a); ok {
		t.Fatal("a quota applies after every one was removed")
	}
}
