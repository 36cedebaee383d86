package ui

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/consumer"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

// screenshotsEnv names a directory to save a picture of each view into
// (docs/dashboard for docs/DASHBOARD.md); unset, no picture is written.
const screenshotsEnv = "ZKAFKA_UI_SCREENSHOTS"

// chromium is Debian's headless browser, which scripts/test.sh installs.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed; ./scripts/test.sh installs it (apt-get install chromium)")
	return ""
}

// procBrokers are brokers running as zkafka processes, so that one can be
// killed with SIGKILL.
type procBrokers struct {
	procs map[int32]*testcluster.Process
	addrs []string
}

func startBrokers(t testing.TB, connect string, n int32) *procBrokers {
	t.Helper()
	b := &procBrokers{procs: map[int32]*testcluster.Process{}}
	for id := int32(1); id <= n; id++ {
		port := testcluster.FreePort(t)
		b.addrs = append(b.addrs, "127.0.0.1:"+strconv.Itoa(port))
		b.procs[id] = testcluster.StartProcess(t, map[string]string{
			"broker.id":                            strconv.Itoa(int(id)),
			"listeners":                            fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
			"log.dirs":                             t.TempDir(),
			"zookeeper.connect":                    connect,
			"zookeeper.session.timeout.ms":         "4000",
			"offsets.topic.num.partitions":         "3",
			"offsets.topic.replication.factor":     "3",
			"group.initial.rebalance.delay.ms":     "0",
			"auto.leader.rebalance.enable":         "false",
			"controlled.shutdown.retry.backoff.ms": "100",
		})
	}
	return b
}

// pageValue evaluates a JavaScript expression in the page.
func pageValue[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// awaitPage waits until a JavaScript expression is true in the page.
func awaitPage(t testing.TB, ctx context.Context, what, expr string) {
	t.Helper()
	wait.For(t, 30*time.Second, what, func() bool {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		return err == nil && ok
	})
}

func screenshot(t *testing.T, ctx context.Context, view string) {
	t.Helper()
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, view+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardInBrowser drives the dashboard in headless Chromium against
// three broker processes: the page shows the brokers and the controller,
// both kinds of group with their owners, hostile znode data as text, and,
// when the controller is killed, the new controller, the epoch one higher
// and the leaders that moved, within the session timeout and a few seconds.
func TestDashboardInBrowser(t *testing.T) {
	exe := chromium(t)
	connect := zktest.NewChroot(t)
	brokers := startBrokers(t, connect, 3)
	w := session(t, connect)
	wait.For(t, 30*time.Second, "three brokers and a controller", func() bool {
		ids, _, err := w.Children(zkpaths.BrokerIDs)
		ok, _, _ := w.Exists(zkpaths.Controller)
		return err == nil && len(ids) == 3 && ok
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers.addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 3, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 30 {
		recs = append(recs, &kgo.Record{Topic: "orders", Key: []byte(strconv.Itoa(i)), Value: []byte("order " + strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	startConsumer(t, ctx, consumer.Config{GroupID: "legacy-g", Topics: []string{"orders"}, ZooKeeperConnect: connect, AutoOffsetReset: "smallest", AutoCommitInterval: 500 * time.Millisecond, ZooKeeperSessionTimeout: 4 * time.Second})
	startConsumer(t, ctx, consumer.Config{GroupID: "coordinator-g", Topics: []string{"orders"}, BootstrapServers: brokers.addrs, GroupInstanceID: "static-1", AutoOffsetReset: "earliest", AutoCommitInterval: 500 * time.Millisecond})

	m := startModel(t, Options{ZooKeeper: connect, Bootstrap: brokers.addrs, PollInterval: 300 * time.Millisecond})
	srv := httptest.NewServer(NewServer(m, nil).Handler())
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1000), chromedp.Flag("disable-dev-shm-usage", true))
	defer cancelAlloc()
	var dialogs atomic.Int32
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithListener(func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}))
	defer cancelBrowser()
	if err := chromedp.Do(browser, chromedp.Navigate(srv.URL+"/#cluster")); err != nil {
		t.Fatal(err)
	}

	controller, epoch := controllerOf(t, w)
	awaitPage(t, browser, "the page to show 3 brokers and the controller", fmt.Sprintf(
		`document.querySelectorAll("#brokers tr[data-broker]").length === 3 && document.getElementById("controller").textContent === "broker %d" && document.getElementById("live").textContent === "live"`, controller))

	t.Run("groups", func(t *testing.T) {
		if err := chromedp.Do(browser, chromedp.Navigate(srv.URL+"/#groups")); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the legacy group with its owners", `document.querySelectorAll('.legacy[data-group="legacy-g"] td.owner code').length === 3`)
		awaitPage(t, browser, "the coordinator group with its member's assignment and its generation", `(() => {
			const g = document.querySelector('.coordinator[data-group="coordinator-g"]');
			return g !== null && g.querySelectorAll("td.owner code").length === 3 && g.textContent.includes("static-1") && /^[0-9]+$/.test(g.querySelector(".generation").textContent);
		})()`)
		screenshot(t, browser, "groups")
	})

	t.Run("znode data is text", func(t *testing.T) {
		const script = `<script>alert(1)</script>`
		mustCreate(t, w, "/xss", script)
		if err := chromedp.Do(browser, chromedp.Navigate(srv.URL+"/#zookeeper:/xss")); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the explorer to show /xss", `document.getElementById("znode-data")?.textContent === "<script>alert(1)</script>"`)
		if n := pageValue[int](t, browser, `document.querySelectorAll("#znode script").length`); n != 0 {
			t.Errorf("%d script elements in the explorer", n)
		}
		if n := dialogs.Load(); n != 0 {
			t.Errorf("%d JavaScript dialogs opened", n)
		}
		if os.Getenv(screenshotsEnv) != "" {
			if err := chromedp.Do(browser, chromedp.Navigate(srv.URL+"/#zookeeper:"+zkpaths.PartitionStatePath("orders", 0))); err != nil {
				t.Fatal(err)
			}
			awaitPage(t, browser, "the explorer to show a partition's state", `document.getElementById("znode-data")?.textContent.includes("leader_epoch")`)
			screenshot(t, browser, "zookeeper")
		}
	})

	t.Run("produce from the page", func(t *testing.T) {
		// cluster.sh's commands go to a fake runner; produce writes to the real brokers.
		a, err := newActions(ctx, ActionOptions{Script: "../scripts/cluster.sh", ZooKeeper: "localhost:2181", Bootstrap: brokers.addrs}, (&fakeRunner{zkPort: "2181"}).run)
		if err != nil {
			t.Fatal(err)
		}
		withActions := httptest.NewServer(NewServer(m, a).Handler())
		defer func() {
			withActions.CloseClientConnections()
			withActions.Close()
		}()
		if err := chromedp.Do(browser, chromedp.Navigate(withActions.URL+"/#actions")); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the produce form", `document.querySelector('form[data-action="produce"] input[name="topic"]') !== null`)
		if err := chromedp.Do(browser,
			chromedp.SetValue(chromedp.CSS(`form[data-action="produce"] input[name="topic"]`), "ui-demo"),
			chromedp.SetValue(chromedp.CSS(`form[data-action="produce"] input[name="count"]`), "7"),
			chromedp.Click(chromedp.CSS(`form[data-action="produce"] button`))); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the log to show the produce done", `[...document.querySelectorAll(".action-log li")].some(li => li.textContent.includes("produce 7 records to ui-demo") && li.textContent.includes("7 records produced"))`)
		a.Wait()
		ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "ui-demo")
		if err != nil || ends.Error() != nil {
			t.Fatalf("ui-demo's end offsets: %v %v", err, ends.Error())
		}
		var total int64
		ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
		if total != 7 {
			t.Fatalf("ui-demo holds %d records, want the 7 the page produced", total)
		}
		awaitPage(t, browser, "the topic in the Topics view", `document.body.textContent.includes("ui-demo")`)
	})

	t.Run("controller killed", func(t *testing.T) {
		led := map[int32]int32{} // partition → leader before
		for p := range int32(3) {
			data, _, err := w.Get(zkpaths.PartitionStatePath("orders", p))
			if err != nil {
				t.Fatal(err)
			}
			s, err := zkpaths.DecodeLeaderAndIsr(data)
			if err != nil {
				t.Fatal(err)
			}
			led[p] = s.Leader
		}
		if err := chromedp.Do(browser, chromedp.Navigate(srv.URL+"/#topics")); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the topics view", `document.querySelectorAll('table[data-topic="orders"] tr[data-partition]').length === 3`)
		start := time.Now()
		brokers.procs[controller].Kill()
		var moved []string
		for p, l := range led {
			if l == controller {
				moved = append(moved, strconv.Itoa(int(p)))
			}
		}
		awaitPage(t, browser, "the new controller and the epoch one higher", fmt.Sprintf(`(() => {
			const c = document.getElementById("status-controller").textContent, e = document.getElementById("status-epoch").textContent;
			return /^broker [0-9]+$/.test(c) && c !== "broker %d" && e === "%d";
		})()`, controller, epoch+1))
		awaitPage(t, browser, "new leaders for partitions "+strings.Join(moved, ","), fmt.Sprintf(`[%s].every(p => {
			const td = document.querySelector('table[data-topic="orders"] tr[data-partition="' + p + '"] td.leader');
			return td !== null && /^[0-9]+/.test(td.textContent) && parseInt(td.textContent) !== %d;
		})`, strings.Join(moved, ","), controller))
		t.Logf("the page showed the failover %v after the kill (session timeout 4s)", time.Since(start).Round(100*time.Millisecond))
		if err := chromedp.Do(browser, chromedp.Navigate(srv.URL+"/#timeline")); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the timeline to show the controller's failover", fmt.Sprintf(
			`[...document.querySelectorAll("#timeline li")].some(li => li.textContent.includes("controller epoch %d → %d"))`, epoch, epoch+1))

		// The restarted broker comes back on the same page, without a reload,
		// once it registers and the poller reaches it again.
		brokers.procs[controller].Restart()
		awaitPage(t, browser, "the restarted broker registered and answering", fmt.Sprintf(`(() => {
			const row = document.querySelector('#brokers tr[data-broker="%d"]');
			return row !== null && !row.classList.contains("down") && row.textContent.includes("answers");
		})()`, controller))
		// The timeline is the server's: a reload shows it again.
		if err := chromedp.Do(browser, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the timeline after a reload", fmt.Sprintf(
			`[...document.querySelectorAll("#timeline li")].some(li => li.textContent.includes("controller epoch %d → %d"))`, epoch, epoch+1))
		if os.Getenv(screenshotsEnv) != "" {
			awaitPage(t, browser, "the killed broker's registration to be gone", `document.querySelectorAll("#timeline li[data-kind=broker]").length > 0 && [...document.querySelectorAll("#timeline li")].some(li => li.textContent.includes(" left: "))`)
			screenshot(t, browser, "timeline")
			for _, view := range []string{"cluster", "topics"} {
				if err := chromedp.Do(browser, chromedp.Navigate(srv.URL+"/#"+view)); err != nil {
					t.Fatal(err)
				}
				screenshot(t, browser, view)
			}
		}
	})

	if os.Getenv(screenshotsEnv) != "" {
		// The Actions view as --allow-actions shows it; the picture runs nothing.
		a, err := newActions(ctx, ActionOptions{Script: "../scripts/cluster.sh", ZooKeeper: "localhost:2181", Bootstrap: brokers.addrs}, (&fakeRunner{zkPort: "2181"}).run)
		if err != nil {
			t.Fatal(err)
		}
		withActions := httptest.NewServer(NewServer(m, a).Handler())
		defer func() {
			withActions.CloseClientConnections() // the page's event stream
			withActions.Close()
		}()
		if err := chromedp.Do(browser, chromedp.Navigate(withActions.URL+"/#actions")); err != nil {
			t.Fatal(err)
		}
		awaitPage(t, browser, "the actions view", `document.querySelectorAll("button[data-action]").length > 0`)
		screenshot(t, browser, "actions")
	}
}

func controllerOf(t *testing.T, w *zkclient.Client) (id, epoch int32) {
	t.Helper()
	data, _, err := w.Get(zkpaths.Controller)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := zkpaths.DecodeControllerRegistration(data)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err = w.Get(zkpaths.ControllerEpoch)
	if err != nil {
		t.Fatal(err)
	}
	epoch, err = zkpaths.DecodeControllerEpoch(data)
	if err != nil {
		t.Fatal(err)
	}
	return reg.BrokerID, epoch
}

// startConsumer runs a consumer that polls until the test ends.
func startConsumer(t *testing.T, ctx context.Context, cfg consumer.Config) {
	t.Helper()
	c, err := consumer.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pctx.Err() == nil {
			_, _ = c.Poll(pctx)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = c.Close(cctx)
	})
}
