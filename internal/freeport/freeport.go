package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lowest is the first port picked: below it lie the well-known ports and the usual defaults of
// servers a developer runs by hand (ZooKeeper's 2181, Kafka's 9092, the teaching cluster's).
const lowest = 10000

// Reserve returns the first of n consecutive ports that were free a moment ago on host
// ("127.0.0.1", or "" for every interface, as Docker publishes ports), outside the kernel's ephemeral
// range, for a cluster whose brokers listen on a base port and the ports after it.
//
// Each port is also held by a lock file, which every test binary on the machine honours, until
// release is called: two tests drawing the same port cannot both have it, even while the server it
// was meant for is down between restarts. A lock older than a day is left by a killed test and is
// taken over.
func Reserve(n int, host string) (base int, release func(), err error) {
	lo, hi := ephemeralRange()
	candidates := spans(lo, hi, n)
	dir := filepath.Join(os.TempDir(), "zkafka-test-ports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, nil, fmt.Errorf("freeport: %w", err)
	}
	for range 1000 {
		base := candidates.pick()
		if base < 0 {
			break
		}
		if release, ok := lock(dir, base, n); ok {
			if free(host, base, n) {
				return base, release, nil
			}
			release()
		}
	}
	return 0, nil, fmt.Errorf("freeport: no %d consecutive free ports outside the ephemeral range %d-%d", n, lo, hi)
}

// lock takes the lock files of ports base..base+n-1, all or none.
func lock(dir string, base, n int) (release func(), ok bool) {
	var held []string
	release = func() {
		for _, f := range held {
			os.Remove(f)
		}
	}
	for p := base; p < base+n; p++ {
		f := filepath.Join(dir, strconv.Itoa(p))
		if st, err := os.Stat(f); err == nil && time.Since(st.ModTime()) > 24*time.Hour {
			os.Remove(f)
		}
		lf, err := os.OpenFile(f, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			release()
			return nil, false
		}
		lf.Close()
		held = append(held, f)
	}
	return release, true
}

func free(host string, base, n int) bool {
	for p := base; p < base+n; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// span is a range of base ports [from, to].
type span struct{ from, to int }

type spanList []span

// spans are the base ports whose run of n stays in [lowest, 65535] and clear of [lo, hi].
func spans(lo, hi, n int) spanList {
	var s spanList
	if below := lo - n; below >= lowest {
		s = append(s, span{lowest, below})
	}
	if above := hi + 1; above+n-1 <= 65535 {
		s = append(s, span{above, 65535 - n + 1})
	}
	return s
}

// pick draws a base port uniformly from the spans, or -1 if there are none.
func (s spanList) pick() int {
	total := 0
	for _, r := range s {
		total += r.to - r.from + 1
	}
	if total <= 0 {
		return -1
	}
	i := rand.IntN(total)
	for _, r := range s {
		if w := r.to - r.from + 1; i < w {
			return r.from + i
		} else {
			i -= w
		}
	}
	return -1
}

// ephemeralRange is the kernel's range for local ports of outgoing connections; Linux's default when
// it cannot be read (another OS, a sandbox without /proc).
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l > h {
		return lo, hi
	}
	return l, h
}
