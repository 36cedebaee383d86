package freeport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestReserveIsOutsideTheEphemeralRangeFreeAndHeld(t *testing.T) {
	lo, hi := ephemeralRange()
	for range 50 {
		base, release, err := Reserve(9, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if last := base + 8; base < lowest || last > 65535 || (last >= lo && base <= hi) {
			t.Fatalf("ports %d-%d overlap the ephemeral range %d-%d or leave [%d, 65535]", base, last, lo, hi, lowest)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+8)))
		if err != nil {
			t.Fatalf("picked port %d is not free: %v", base+8, err)
		}
		l.Close()
		dir := filepath.Join(os.TempDir(), "zkafka-test-ports")
		if _, ok := lock(dir, base+4, 1); ok {
			t.Fatalf("port %d reserved twice", base+4)
		}
		release()
		again, ok := lock(dir, base+4, 1)
		if !ok {
			t.Fatalf("port %d still held after its release", base+4)
		}
		again()
	}
}

func TestSpansStayClearOfTheRange(t *testing.T) {
	for _, c := range []struct {
		lo, hi, n int
		want      spanList
	}{
		{32768, 60999, 3, spanList{{10000, 32765}, {61000, 65533}}},
		{10001, 65535, 1, spanList{{10000, 10000}}},
		{10000, 65535, 1, nil},
		{1024, 65535, 1, nil},
		{10000, 60000, 9, spanList{{60001, 65527}}},
	} {
		got := spans(c.lo, c.hi, c.n)
		if len(got) != len(c.want) {
			t.Fatalf("spans(%d, %d, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("spans(%d, %d, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
			}
		}
		for range 100 {
			b := got.pick()
			in := false
			for _, r := range got {
				in = in || (b >= r.from && b <= r.to)
			}
			if len(got) == 0 && b != -1 || len(got) > 0 && !in {
				t.Fatalf("pick from %v gave %d", got, b)
			}
		}
	}
}
