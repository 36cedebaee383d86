package ui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/lab"
	"github.com/zkafka/zkafka/zkpaths"
)

// ErrNotLocalCluster means --allow-actions was given for a cluster that is
// not a running local cluster.sh cluster.
var ErrNotLocalCluster = errors.New("actions need a local ./scripts/cluster.sh cluster")

// ActionOptions say where the local cluster is.
type ActionOptions struct {
	Script    string   // scripts/cluster.sh
	ZooKeeper string   // the dashboard's zookeeper.connect
	Bootstrap []string // for produce and the lab
	Zkafka    string   // the zkafka binary that runs lab scenarios
}

// runner runs a command and returns its combined output; tests replace it.
type runner func(ctx context.Context, env []string, name string, args ...string) ([]byte, error)

func execRunner(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	return cmd.CombinedOutput()
}

// Actions change the local cluster on a page's request: kill, pause, resume
// or restart a broker or ZooKeeper through cluster.sh, produce sample
// records, start a lab scenario. They exist only with --allow-actions.
type Actions struct {
	opts  ActionOptions
	env   []string
	run   runner
	touch func()

	mu  sync.Mutex
	log []*actionEntry // newest first
	wg  sync.WaitGroup // running actions
}

type actionEntry struct {
	Time    time.Time
	Command string
	Running bool
	Err     string
	Output  string
}

// actionVerbs are cluster.sh's commands the page offers.
var actionVerbs = []string{"kill", "pause", "resume", "restart"}

var brokerTarget = regexp.MustCompile(`^[1-9][0-9]{0,3}$`)

// NewActions checks that opts name a local cluster.sh cluster whose
// ZooKeeper is the dashboard's, and returns the actions on it.
func NewActions(ctx context.Context, opts ActionOptions) (*Actions, error) {
	return newActions(ctx, opts, execRunner)
}

func newActions(ctx context.Context, opts ActionOptions, run runner) (*Actions, error) {
	port, err := localZooKeeperPort(opts.ZooKeeper)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(opts.Script); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("%w: %s is not an executable script", ErrNotLocalCluster, opts.Script)
	}
	a := &Actions{opts: opts, run: run, touch: func() {}, env: append(os.Environ(), "ZKAFKA_ZK_PORT="+port)}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := run(sctx, a.env, opts.Script, "status")
	if err != nil {
		return nil, fmt.Errorf("%w: %s status: %v", ErrNotLocalCluster, opts.Script, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 4 && f[0] == "zookeeper" && (f[1] == "running" || f[1] == "paused") && f[3] == port {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: %s status shows no ZooKeeper of its own running on port %s:\n%s", ErrNotLocalCluster, opts.Script, port, out)
}

// localZooKeeperPort returns the port of a connect string that names one
// ZooKeeper on this machine, as cluster.sh runs it.
func localZooKeeperPort(connect string) (string, error) {
	hosts, _, _ := strings.Cut(connect, "/")
	if strings.Contains(hosts, ",") {
		return "", fmt.Errorf("%w: %s is an ensemble", ErrNotLocalCluster, connect)
	}
	host, port, err := net.SplitHostPort(hosts)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrNotLocalCluster, connect, err)
	}
	if !IsLoopback(host) {
		return "", fmt.Errorf("%w: ZooKeeper %s is not on this machine", ErrNotLocalCluster, connect)
	}
	return port, nil
}

// IsLoopback reports whether a host name or address (an IPv6 one with or
// without its brackets) is this machine's loopback: localhost or a loopback
// IP.
func IsLoopback(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// ServeHTTP handles POST /actions/<verb>. The request must carry the header
// the page's script sets: a form on another site cannot, and a script on
// another site cannot without a CORS preflight, which is never granted.
func (a *Actions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "actions are POST requests", http.StatusMethodNotAllowed)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "actions are only taken from the dashboard's own page", http.StatusForbidden)
		return
	}
	verb := strings.TrimPrefix(r.URL.Path, "/actions/")
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var err error
	switch {
	case slices.Contains(actionVerbs, verb):
		err = a.cluster(verb, r.PostForm.Get("target"))
	case verb == "produce":
		err = a.produce(r.PostForm.Get("topic"), r.PostForm.Get("count"))
	case verb == "lab":
		err = a.lab(r.PostForm.Get("scenario"))
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// sameOrigin reports whether a request comes from the dashboard's page: it
// has the page's header, it was sent to a loopback name (a page of another
// site whose name was re-pointed at 127.0.0.1, DNS rebinding, sends its own
// name), and its Origin, when the browser sends one, is this host.
func sameOrigin(r *http.Request) bool {
	if r.Header.Get("X-Zkafka-Action") != "1" {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		host = h
	}
	if !IsLoopback(host) {
		return false
	}
	origin := r.Header.Get("Origin")
	return origin == "" || origin == "http://"+r.Host
}

func (a *Actions) cluster(verb, target string) error {
	if !brokerTarget.MatchString(target) && target != "zk" {
		return fmt.Errorf("target %q is neither a broker id nor zk", target)
	}
	a.start(a.opts.Script+" "+verb+" "+target, 2*time.Minute, func(ctx context.Context) (string, error) {
		out, err := a.run(ctx, a.env, a.opts.Script, verb, target)
		return string(out), err
	})
	return nil
}

func (a *Actions) produce(topic, countText string) error {
	if err := zkpaths.ValidateTopicName(topic); err != nil {
		return err
	}
	count, err := strconv.Atoi(countText)
	if err != nil || count < 1 || count > 10000 {
		return fmt.Errorf("count %q is not between 1 and 10000", countText)
	}
	a.start(fmt.Sprintf("produce %d records to %s", count, topic), time.Minute, func(ctx context.Context) (string, error) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(a.opts.Bootstrap...), kgo.ClientID("zkafka-ui"), kgo.AllowAutoTopicCreation())
		if err != nil {
			return "", err
		}
		defer cl.Close()
		recs := make([]*kgo.Record, count)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: topic, Key: []byte("k" + strconv.Itoa(i)), Value: fmt.Appendf(nil, "sample record %d from the dashboard at %s", i, time.Now().Format(time.TimeOnly))}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d records produced", count), nil
	})
	return nil
}

func (a *Actions) lab(scenario string) error {
	if _, err := lab.FindScenario(scenario); err != nil {
		return err
	}
	args := []string{"lab", "run", "--scenario", scenario, "--quiet",
		"--bootstrap-server", strings.Join(a.opts.Bootstrap, ","), "--zookeeper", a.opts.ZooKeeper}
	a.start(a.opts.Zkafka+" "+strings.Join(args, " "), 30*time.Minute, func(ctx context.Context) (string, error) {
		out, err := a.run(ctx, a.env, a.opts.Zkafka, args...)
		return string(out), err
	})
	return nil
}

const actionLogLimit = 20

// start runs an action in the background, keeping its entry in the log.
func (a *Actions) start(command string, timeout time.Duration, fn func(context.Context) (string, error)) {
	e := &actionEntry{Time: time.Now(), Command: command, Running: true}
	a.mu.Lock()
	a.log = append([]*actionEntry{e}, a.log...)
	if len(a.log) > actionLogLimit {
		a.log = a.log[:actionLogLimit]
	}
	a.wg.Add(1)
	a.mu.Unlock()
	a.touch()
	go func() {
		defer a.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := fn(ctx)
		a.mu.Lock()
		e.Running, e.Output = false, tail(out, 4000)
		if err != nil {
			e.Err = err.Error()
		}
		a.mu.Unlock()
		a.touch()
	}()
}

// Wait waits for the running actions to finish.
func (a *Actions) Wait() { a.wg.Wait() }

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// actionsView is what the Actions view shows.
type actionsView struct {
	Allowed   bool
	Script    string
	Targets   []string
	Verbs     []string
	Scenarios []string
	Log       []actionEntry
}

func (a *Actions) view(brokers []int32) actionsView {
	if a == nil {
		return actionsView{}
	}
	v := actionsView{Allowed: true, Script: a.opts.Script, Verbs: actionVerbs}
	for _, id := range brokers {
		v.Targets = append(v.Targets, strconv.Itoa(int(id)))
	}
	v.Targets = append(v.Targets, "zk")
	for _, s := range lab.AllScenarios {
		v.Scenarios = append(v.Scenarios, s.Name)
	}
	a.mu.Lock()
	for _, e := range a.log {
		v.Log = append(v.Log, *e)
	}
	a.mu.Unlock()
	return v
}
