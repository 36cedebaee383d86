package ui

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

func request(t *testing.T, method, u string, form url.Values, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestReadOnlyWithoutActions: without --allow-actions every action request
// is answered 403, whatever its method or header; nothing else accepts
// anything but GET.
func TestReadOnlyWithoutActions(t *testing.T) {
	m := NewModel(Options{ZooKeeper: "127.0.0.1:1"})
	srv := httptest.NewServer(NewServer(m, nil).Handler())
	defer srv.Close()
	action := map[string]string{"X-Zkafka-Action": "1"}
	for _, path := range []string{"/actions/kill", "/actions/pause", "/actions/resume", "/actions/restart", "/actions/produce", "/actions/lab", "/actions/other"} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			if code, _ := request(t, method, srv.URL+path, url.Values{"target": {"1"}}, action); code != http.StatusForbidden {
				t.Errorf("%s %s: %d, want 403", method, path, code)
			}
		}
	}
	for _, path := range []string{"/", "/events", "/znode?path=/", "/static/app.js"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			if code, _ := request(t, method, srv.URL+path, nil, action); code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", method, path, code)
			}
		}
	}
	code, body := request(t, http.MethodGet, srv.URL+"/", nil, nil)
	if code != http.StatusOK || !strings.Contains(body, "Actions are off") {
		t.Errorf("GET /: %d, the Actions view does not say they are off:\n%s", code, body)
	}
}

// TestZnodeDataIsEscaped: znode data and names reach the page as text, in
// the explorer and in the timeline, and the page admits only its own script.
func TestZnodeDataIsEscaped(t *testing.T) {
	const script = `<script>alert(1)</script>`
	const name = `<img src=x onerror=alert(2)>`
	connect := zktest.NewChroot(t)
	w := session(t, connect)
	mustCreate(t, w, "/xss", script)
	mustCreate(t, w, "/xss/"+name, "")
	m := startModel(t, Options{ZooKeeper: connect})
	waitLoaded(t, m)
	// A legacy owner's data is a thread id the timeline prints.
	mustCreate(t, w, zkpaths.ConsumerOwnerPath("g", "orders", 0), script)
	waitEvent(t, m, "orders-0 claimed by "+script)

	srv := httptest.NewServer(NewServer(m, nil).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/znode?path=/xss")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy %q does not restrict scripts to the page's own", csp)
	}
	for _, page := range []string{string(body), get(t, srv.URL+"/")} {
		if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
			t.Errorf("raw znode data or name in the page:\n%s", page)
		}
	}
	if !strings.Contains(string(body), "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(string(body), "&lt;img src=x onerror=alert(2)&gt;") {
		t.Errorf("the explorer does not show the data and the child's name as text:\n%s", body)
	}
}

func get(t *testing.T, u string) string {
	t.Helper()
	_, body := request(t, http.MethodGet, u, nil, nil)
	return body
}

// fakeRunner records the commands the actions run and answers cluster.sh's
// status with a ZooKeeper on port zkPort.
type fakeRunner struct {
	zkPort string
	mu     sync.Mutex
	calls  [][]string
	env    []string
}

func (f *fakeRunner) run(_ context.Context, env []string, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, append([]string{filepath.Base(name)}, args...))
	f.env = env
	if len(args) == 1 && args[0] == "status" {
		return []byte("PROCESS    STATE    PID      PORT\nzookeeper  running  1234     " + f.zkPort + " (standalone)\nbroker-1   running  1235     9092\n"), nil
	}
	return []byte("done"), nil
}

func (f *fakeRunner) last() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[len(f.calls)-1]
}

func script(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cluster.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestActionRules: actions only against a local cluster.sh cluster whose
// ZooKeeper is the dashboard's, only as POSTs from the dashboard's page,
// only with targets cluster.sh knows.
func TestActionRules(t *testing.T) {
	ctx := context.Background()
	f := &fakeRunner{zkPort: "2181"}
	for _, tc := range []struct {
		name string
		opts ActionOptions
	}{
		{"remote ZooKeeper", ActionOptions{Script: script(t), ZooKeeper: "zk.example.com:2181"}},
		{"ensemble", ActionOptions{Script: script(t), ZooKeeper: "127.0.0.1:2181,127.0.0.1:2182"}},
		{"another cluster's ZooKeeper", ActionOptions{Script: script(t), ZooKeeper: "127.0.0.1:2999"}},
		{"no script", ActionOptions{Script: filepath.Join(t.TempDir(), "cluster.sh"), ZooKeeper: "127.0.0.1:2181"}},
	} {
		if _, err := newActions(ctx, tc.opts, f.run); !errors.Is(err, ErrNotLocalCluster) {
			t.Errorf("%s: %v, want ErrNotLocalCluster", tc.name, err)
		}
	}

	a, err := newActions(ctx, ActionOptions{Script: script(t), ZooKeeper: "localhost:2181/kafka", Bootstrap: []string{"localhost:9092"}, Zkafka: "zkafka"}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.env, "ZKAFKA_ZK_PORT=2181") {
		t.Errorf("cluster.sh runs without ZKAFKA_ZK_PORT=2181: %v", f.env)
	}
	ran := len(f.calls)
	m := NewModel(Options{ZooKeeper: "localhost:2181/kafka"})
	srv := httptest.NewServer(NewServer(m, a).Handler())
	defer srv.Close()
	page := map[string]string{"X-Zkafka-Action": "1"}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		form   url.Values
		header map[string]string
		code   int
	}{
		{"a form from anywhere", http.MethodPost, "/actions/kill", url.Values{"target": {"2"}}, nil, http.StatusForbidden},
		{"a script on another site", http.MethodPost, "/actions/kill", url.Values{"target": {"2"}}, map[string]string{"X-Zkafka-Action": "1", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"a page of another site re-pointed at 127.0.0.1", http.MethodPost, "/actions/kill", url.Values{"target": {"2"}}, map[string]string{"X-Zkafka-Action": "1", "Host": "evil.example:8080", "Origin": "http://evil.example:8080"}, http.StatusForbidden},
		{"GET", http.MethodGet, "/actions/kill?target=2", nil, page, http.StatusMethodNotAllowed},
		{"a target that is not a broker", http.MethodPost, "/actions/kill", url.Values{"target": {"2; rm -rf /"}}, page, http.StatusBadRequest},
		{"an unknown scenario", http.MethodPost, "/actions/lab", url.Values{"scenario": {"nope"}}, page, http.StatusBadRequest},
		{"a bad topic", http.MethodPost, "/actions/produce", url.Values{"topic": {"../x"}, "count": {"5"}}, page, http.StatusBadRequest},
		{"an unknown action", http.MethodPost, "/actions/format-disk", nil, page, http.StatusNotFound},
	} {
		if code, body := request(t, tc.method, srv.URL+tc.path, tc.form, tc.header); code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.code)
		}
	}
	if len(f.calls) != ran {
		t.Fatalf("refused actions ran commands: %v", f.calls[ran:])
	}

	for _, tc := range []struct {
		verb, target string
		want         []string
	}{
		{"kill", "2", []string{"cluster.sh", "kill", "2"}},
		{"pause", "zk", []string{"cluster.sh", "pause", "zk"}},
		{"resume", "zk", []string{"cluster.sh", "resume", "zk"}},
		{"restart", "3", []string{"cluster.sh", "restart", "3"}},
		{"kill", "zk", []string{"cluster.sh", "kill", "zk"}},
		{"restart", "zk", []string{"cluster.sh", "restart", "zk"}},
	} {
		code, body := request(t, http.MethodPost, srv.URL+"/actions/"+tc.verb, url.Values{"target": {tc.target}}, map[string]string{"X-Zkafka-Action": "1", "Origin": srv.URL})
		if code != http.StatusAccepted {
			t.Fatalf("%s %s: %d %s", tc.verb, tc.target, code, body)
		}
		a.Wait()
		if got := f.last(); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s ran %v, want %v", tc.verb, tc.target, got, tc.want)
		}
	}
	code, _ := request(t, http.MethodPost, srv.URL+"/actions/lab", url.Values{"scenario": {"scale-out"}}, page)
	a.Wait()
	if got := f.last(); code != http.StatusAccepted || !slices.Equal(got[:5], []string{"zkafka", "lab", "run", "--scenario", "scale-out"}) {
		t.Errorf("lab: %d, ran %v", code, got)
	}
	wait.For(t, 5*time.Second, "the Actions view to show the log", func() bool {
		html, _, _ := NewServer(m, a).render(sectionActions)
		return strings.Contains(string(html), "cluster.sh restart 3")
	})
}
