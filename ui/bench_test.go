package ui

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

// BenchmarkDashboard measures, on a cluster of 1,000 partitions (20 topics
// of 50, replication factor 3, three broker processes), the ZooKeeper
// requests the dashboard sends with 1 and with 20 open pages, idle and
// during a broker failover (broker 3 killed with SIGKILL: its session
// expires, the controller moves its leaders and shrinks every ISR it was
// in), and the latency from a state znode's change to the page in Chromium
// showing it (p50, p99):
//
//	go test ./ui -run '^$' -bench BenchmarkDashboard -benchtime 1x -timeout 20m
func BenchmarkDashboard(b *testing.B) {
	connect := zktest.NewChroot(b)
	brokers := startBrokers(b, connect, 3)
	zkc := session(b, connect)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	wait.For(b, 60*time.Second, "three brokers", func() bool {
		ids, _, err := zkc.Children(zkpaths.BrokerIDs)
		return err == nil && len(ids) == 3
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers.addrs...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	var topics []string
	for i := range 20 {
		topics = append(topics, fmt.Sprintf("t%02d", i))
	}
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 50, 3, nil, topics...); err != nil {
		b.Fatal(err)
	}
	settled := func(what string, isr int) {
		wait.For(b, 2*time.Minute, what, func() bool {
			for _, t := range topics {
				for p := range int32(50) {
					data, _, err := zkc.Get(zkpaths.PartitionStatePath(t, p))
					if err != nil {
						return false
					}
					s, err := zkpaths.DecodeLeaderAndIsr(data)
					if err != nil || s.Leader < 0 || len(s.ISR) != isr {
						return false
					}
				}
			}
			return true
		})
	}
	settled("1,000 partitions with a full ISR", 3)

	m := NewModel(Options{ZooKeeper: connect, Bootstrap: brokers.addrs})
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); m.Run(mctx) }()
	defer func() { stop(); <-done }()
	start := time.Now()
	wait.For(b, time.Minute, "the model's first read", func() bool {
		m.mu.RLock()
		defer m.mu.RUnlock()
		return m.loaded
	})
	m.mu.RLock()
	znodes := len(m.nodes)
	m.mu.RUnlock()
	fmt.Printf("first read of the tree: %d znodes, %d requests, %v\n", znodes, m.Requests(), time.Since(start).Round(time.Millisecond))
	srv := httptest.NewServer(NewServer(m, nil).Handler())
	defer func() { srv.CloseClientConnections(); srv.Close() }()

	// quiet waits until the model has had nothing to read for two seconds.
	quiet := func() {
		last, since := m.Requests(), time.Now()
		wait.For(b, 2*time.Minute, "the model to be idle", func() bool {
			if n := m.Requests(); n != last {
				last, since = n, time.Now()
			}
			return time.Since(since) > 2*time.Second
		})
	}
	idle := func(pages int) {
		stopPages := openPages(b, ctx, srv.URL, pages)
		defer stopPages()
		quiet()
		rev, seq := m.Revision()
		before, t0 := m.Requests(), time.Now()
		time.Sleep(10 * time.Second) // the idle window measured
		rate := float64(m.Requests()-before) / time.Since(t0).Seconds()
		fmt.Printf("%2d pages: idle %.2f requests/s\n", pages, rate)
		// An idle cluster may still change (a late ISR change notification): say what.
		for _, e := range m.Events(seq) {
			fmt.Printf("   during the idle window: %s\n", e.Text)
		}
		m.mu.RLock()
		for _, tp := range m.touched {
			if tp.rev > rev {
				fmt.Printf("   changed during the idle window: %s\n", tp.path)
			}
		}
		m.mu.RUnlock()
		b.ReportMetric(rate, fmt.Sprintf("idle-req/s-%dpages", pages))
	}
	failover := func(pages int) {
		stopPages := openPages(b, ctx, srv.URL, pages)
		defer stopPages()
		quiet()
		rate := sampleRequests(m)
		brokers.procs[3].Kill()
		settled("leaders off broker 3 and ISRs without it", 2)
		quiet()
		total, active, peak := rate()
		fmt.Printf("%2d pages: failover: %d requests over %v (%.0f/s), busiest second %d\n",
			pages, total, active.Round(100*time.Millisecond), float64(total)/active.Seconds(), peak)
		b.ReportMetric(float64(total)/active.Seconds(), fmt.Sprintf("failover-req/s-%dpages", pages))
		b.ReportMetric(float64(peak), fmt.Sprintf("failover-peak-req/s-%dpages", pages))
		b.ReportMetric(float64(total), fmt.Sprintf("failover-requests-%dpages", pages))
		brokers.procs[3].Restart()
		settled("broker 3 back in every ISR", 3)
		quiet()
	}
	idle(1)
	idle(20)
	failover(1)
	failover(20)
	streamLatency(b, ctx, srv.URL, zkc, topics[0])
	latency(b, ctx, srv.URL, zkc, topics[0])
}

// streamLatency is latency without the browser: the time from a state
// znode's change to its topic's new fragment arriving on an event stream.
func streamLatency(b *testing.B, ctx context.Context, url string, zkc *zkclient.Client, topic string) {
	lines := make(chan string, 1024)
	stop := openStream(b, ctx, url, lines)
	defer stop()
	path := zkpaths.PartitionStatePath(topic, 0)
	var ms []float64
	for i := range 200 {
		data, _, err := zkc.Get(path)
		if err != nil {
			b.Fatal(err)
		}
		state, err := zkpaths.DecodeLeaderAndIsr(data)
		if err != nil {
			b.Fatal(err)
		}
		state.LeaderEpoch += 1000 + int32(i)
		// The fragment as JSON: <td class="leader-epoch">N</td> with < and > escaped.
		want := `leader-epoch\"\u003e` + strconv.Itoa(int(state.LeaderEpoch)) + `\u003c`
		t0 := time.Now()
		if _, err := zkc.Set(path, state.Encode(), -1); err != nil {
			b.Fatal(err)
		}
		timeout := time.After(10 * time.Second)
		for seen := false; !seen; {
			select {
			case l := <-lines:
				seen = strings.Contains(l, want)
			case <-timeout:
				b.Fatalf("no fragment with leader epoch %d", state.LeaderEpoch)
			}
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
	}
	reportLatency(b, "event stream", "stream-latency", ms)
}

// reportLatency prints and reports the p50 and p99 of latencies in
// milliseconds from a state znode's change to where it shows.
func reportLatency(b *testing.B, where, metric string, ms []float64) {
	slices.Sort(ms)
	p50, p99 := ms[len(ms)/2], ms[len(ms)*99/100]
	fmt.Printf("state znode change → %s, %d changes: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", where, len(ms), p50, p99, ms[len(ms)-1])
	b.ReportMetric(p50, metric+"-p50-ms")
	b.ReportMetric(p99, metric+"-p99-ms")
}

// sampleRequests follows the model's request count every 10 ms until the
// returned function is called, which returns the requests sent, the time
// from the first to the last of them, and the most sent in one second.
func sampleRequests(m *Model) func() (total int64, active time.Duration, peak int64) {
	type sample struct {
		at time.Time
		n  int64
	}
	stop := make(chan struct{})
	out := make(chan []sample)
	go func() {
		var s []sample
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			s = append(s, sample{time.Now(), m.Requests()})
			select {
			case <-stop:
				out <- s
				return
			case <-t.C:
			}
		}
	}()
	return func() (int64, time.Duration, int64) {
		close(stop)
		s := <-out
		first, last := -1, -1
		for i := 1; i < len(s); i++ {
			if s[i].n != s[i-1].n {
				if first < 0 {
					first = i - 1
				}
				last = i
			}
		}
		if first < 0 {
			return 0, 0, 0
		}
		var peak int64
		j := first
		for i := first; i <= last; i++ {
			for s[i].at.Sub(s[j].at) > time.Second {
				j++
			}
			peak = max(peak, s[i].n-s[j].n)
		}
		return s[last].n - s[first].n, s[last].at.Sub(s[first].at), peak
	}
}

var bootRE = regexp.MustCompile(`data-boot="([^"]+)" data-rev="([0-9]+)" data-seq="([0-9]+)"`)

// openPages opens n pages the way the browser does: the page, then its event
// stream, read until stop.
func openPages(b *testing.B, ctx context.Context, url string, n int) (stop func()) {
	b.Helper()
	var stops []func()
	for range n {
		stops = append(stops, openStream(b, ctx, url, nil))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// openStream loads the page and follows its event stream, handing each
// line to lines (if not nil) until stop.
func openStream(b *testing.B, ctx context.Context, url string, lines chan<- string) (stop func()) {
	b.Helper()
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 1)
	{
		resp, err := http.Get(url + "/")
		if err != nil {
			b.Fatal(err)
		}
		var page []byte
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			page = append(page, sc.Bytes()...)
		}
		resp.Body.Close()
		mm := bootRE.FindSubmatch(page)
		if mm == nil {
			b.Fatal("no data-boot in the page")
		}
		req, _ := http.NewRequestWithContext(pctx, http.MethodGet, fmt.Sprintf("%s/events?boot=%s&rev=%s&seq=%s", url, mm[1], mm[2], mm[3]), nil)
		events, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer func() { done <- struct{}{} }()
			defer events.Body.Close()
			sc := bufio.NewScanner(events.Body)
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				if lines != nil {
					select {
					case lines <- sc.Text():
					case <-pctx.Done():
						return
					}
				}
			}
		}()
	}
	return func() {
		cancel()
		<-done
	}
}

// latency writes a new leader epoch to a state znode, one at a time, and
// takes the time until the page in Chromium shows it.
func latency(b *testing.B, ctx context.Context, url string, zkc *zkclient.Client, topic string) {
	exe := chromium(b)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1000), chromedp.Flag("disable-dev-shm-usage", true))
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser, chromedp.Navigate(url+"/#topics")); err != nil {
		b.Fatal(err)
	}
	cell := fmt.Sprintf(`document.querySelector('table[data-topic="%s"] tr[data-partition="0"] td.leader-epoch')`, topic)
	awaitPage(b, browser, "the topic on the page", cell+` !== null && document.getElementById("live").textContent === "live"`)
	// The page notes when it first shows each leader epoch, on the same clock as time.Now.
	if err := chromedp.Do(browser, chromedp.Evaluate[chromedp.Void](`window.seen = {};
		new MutationObserver(() => { const td = `+cell+`; if (td && !(td.textContent in seen)) seen[td.textContent] = performance.timeOrigin + performance.now(); })
			.observe(document.getElementById("topic-sections"), {subtree: true, childList: true, characterData: true});`)); err != nil {
		b.Fatal(err)
	}
	path := zkpaths.PartitionStatePath(topic, 0)
	data, _, err := zkc.Get(path)
	if err != nil {
		b.Fatal(err)
	}
	state, err := zkpaths.DecodeLeaderAndIsr(data)
	if err != nil {
		b.Fatal(err)
	}
	var ms []float64
	for i := range 200 {
		state.LeaderEpoch += 1000 + int32(i)
		t0 := float64(time.Now().UnixNano()) / 1e6
		if _, err := zkc.Set(path, state.Encode(), -1); err != nil {
			b.Fatal(err)
		}
		key := strconv.Itoa(int(state.LeaderEpoch))
		var seen float64
		c := func() bool {
			v, err := chromedp.Run(browser, chromedp.Evaluate[float64](`seen["`+key+`"] || 0`))
			seen = v
			return err == nil && v > 0
		}
		// The page took the time itself; polling often does not change it.
		wait.For(b, 10*time.Second, "the page to show leader epoch "+key, c)
		ms = append(ms, seen-t0)
	}
	reportLatency(b, "page in Chromium", "latency", ms)
}
