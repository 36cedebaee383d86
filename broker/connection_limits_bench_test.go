package broker_test

import (
	"bufio"
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// BenchmarkFrameFlood is 50 connections each announcing a 100 MiB request
// (socket.request.max.bytes) and sending the first 16 MiB of it, the memory
// attack queued.max.request.bytes exists for. It reports the process's peak
// RSS (VmHWM) above its RSS before the flood, so run one case per process:
//
//	go test ./broker -run '^$' -bench 'FrameFlood/unbounded' -benchtime 1x
//	go test ./broker -run '^$' -bench 'FrameFlood/queued' -benchtime 1x
//	go test ./broker -run '^$' -bench 'FrameFlood/over-max' -benchtime 1x
func BenchmarkFrameFlood(b *testing.B) {
	const (
		conns    = 50
		announce = 100 << 20
		send     = 16 << 20
	)
	cases := []struct {
		name  string
		props map[string]string
		size  uint32
	}{
		{"unbounded", nil, announce},
		{"queued", map[string]string{"queued.max.request.bytes": strconv.Itoa(announce)}, announce},
		{"over-max", nil, announce + 1},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := testcluster.Start(b, testcluster.Options{Properties: tc.props})
			before := procStatusKB(b, "VmRSS")
			for range b.N {
				var wg sync.WaitGroup
				for range conns {
					conn, err := net.Dial("tcp", c.Addr(1))
					if err != nil {
						b.Fatal(err)
					}
					defer conn.Close()
					wg.Go(func() {
						// A broker that does not read leaves the writer
						// blocked; the deadline ends the attempt.
						conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
						conn.Write(binary.BigEndian.AppendUint32(nil, tc.size))
						chunk := make([]byte, 1<<20)
						for sent := 0; sent < send; sent += len(chunk) {
							if _, err := conn.Write(chunk); err != nil {
								return
							}
						}
					})
				}
				wg.Wait()
			}
			peak := procStatusKB(b, "VmHWM")
			b.ReportMetric(float64(before)/1024, "RSS-before-MB")
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
		})
	}
}

// procStatusKB reads a kB field of /proc/self/status.
func procStatusKB(tb testing.TB, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("no %s in /proc/self/status", field)
	return 0
}
