package tutorial

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestDashboardActions runs `zkafka ui --allow-actions` as cluster.sh up
// prints it, against a sandbox's cluster.sh cluster: it refuses to start
// before that cluster runs, and once it runs, a restart of broker 3 asked
// from the page runs cluster.sh and the page shows the broker leave and
// register again; a dashboard without the flag answers 403.
func TestDashboardActions(t *testing.T) {
	s := newSandbox(t)
	zk := "localhost:" + strconv.Itoa(s.zkPort)
	bootstrap := "localhost:" + strconv.Itoa(s.basePort)
	if out, err := s.run(time.Minute, "./bin/zkafka ui --allow-actions --zookeeper "+zk); err == nil || !strings.Contains(out, "actions need a local ./scripts/cluster.sh cluster") {
		t.Fatalf("ui --allow-actions without a running cluster: %v\n%s", err, out)
	}
	up := s.mustRun(3*time.Minute, "./scripts/cluster.sh up")
	if !strings.Contains(up, "./bin/zkafka ui --zookeeper "+zk+" --bootstrap-server "+bootstrap) {
		t.Errorf("cluster.sh up does not print the dashboard's command:\n%s", up)
	}

	withActions := startUI(t, s, "--zookeeper", zk, "--bootstrap-server", bootstrap, "--allow-actions")
	readOnly := startUI(t, s, "--zookeeper", zk, "--bootstrap-server", bootstrap)
	page := func(base string) string {
		resp, err := http.Get(base + "/")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	wait.For(t, 30*time.Second, "the dashboard to show three brokers", func() bool {
		return strings.Count(page(withActions), `data-broker="`) == 3
	})

	post := func(base, verb, target string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/actions/"+verb, strings.NewReader(url.Values{"target": {target}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Zkafka-Action", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(readOnly, "restart", "3"); code != http.StatusForbidden {
		t.Errorf("restart on the dashboard without --allow-actions: %d, want 403", code)
	}
	if code := post(withActions, "restart", "3"); code != http.StatusAccepted {
		t.Fatalf("restart 3: %d, want 202", code)
	}
	wait.For(t, 90*time.Second, "the timeline to show broker 3 leave and register again, and the action to finish", func() bool {
		p := page(withActions)
		left := strings.Index(p, "broker 3 left")
		again := strings.Index(p, "broker 3 joined")
		// Newest first: the registration comes above the departure.
		return left > 0 && again > 0 && again < left && strings.Contains(p, "<code>scripts/cluster.sh restart 3</code> ok")
	})
}

// startUI runs bin/zkafka ui in the sandbox until the test ends and returns
// its address.
func startUI(t *testing.T, s *sandbox, args ...string) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(testcluster.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(s.root, "bin", "zkafka"), append([]string{"ui", "--listen", addr}, args...)...)
	cmd.Dir, cmd.Env = s.root, s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("zkafka ui %v:\n%s", args, out.String())
		}
	})
	base := "http://" + addr
	wait.For(t, 30*time.Second, "zkafka ui to serve "+base, func() bool {
		resp, err := http.Get(base + "/static/app.css")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}
