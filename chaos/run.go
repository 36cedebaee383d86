package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/pace"
	"github.com/zkafka/zkafka/internal/zkclient"
)

// ScenarioIsolatedLeader is the 2013 Jepsen case: a partition leader cut from ZooKeeper and from the
// other brokers while clients still reach it, again and again. With acks=1 the records it
// acknowledges after the cut are lost when it rejoins; with acks=all and min.insync.replicas=2 it can
// acknowledge nothing alone.
const ScenarioIsolatedLeader = "isolated-leader"

// Options are a run's settings.
type Options struct {
	// Cluster is the cluster to break: a *Local (cluster.sh) or a *Docker (compose).
	Cluster Cluster
	// Faults are the fault kinds (Kinds) the run takes in turn, in a random order each round (a kind
	// listed twice comes twice a round); Scenario, if set, replaces them.
	Faults   []string
	Scenario string
	// Acks selects the producers: "all" (idempotent acks=all only), "1" (the acks=1 producer only) or
	// "both".
	Acks string
	// Count is how many faults to inject, Duration how long to inject them for; the run stops at
	// whichever comes first (zero: no limit; one of them must be set).
	Count    int
	Duration time.Duration
	// Out is the run's directory: history.jsonl, run.json, the report.
	Out string

	Partitions int32
	Producers  int // idempotent acks=all producers
	Rate       int // records per second, per producer
	Members    int // members of the cooperative group
	WarmUp     time.Duration
	// DownMin and DownMax bound how long a killed process stays down.
	DownMin, DownMax time.Duration
	// HealTimeout bounds the wait for the cluster to be whole after a fault.
	HealTimeout         time.Duration
	GroupSessionTimeout time.Duration
	// DrainTimeout bounds the wait for the group to process everything once producing stopped, and
	// for the final read.
	DrainTimeout time.Duration
	// DiskSize is the size of the tmpfs a disk-full fault fills; DiskHold the longest a disk stays
	// full.
	DiskSize int64
	DiskHold time.Duration
	// ClockJump is how far a clock fault moves a broker's wall clock (zkafka.clock.skew.ms).
	ClockJump time.Duration
	// Latency is a slow/latency fault's delay each way; Loss a slow/loss fault's probability that a
	// chunk is lost (and retransmitted).
	Latency time.Duration
	Loss    float64
	Seed    uint64
	Command string // the command line, for the report

	Progress io.Writer   // the live progress line; nil for none
	Logger   *zap.Logger // nil for none
}

// DefaultOptions are a run's defaults.
func DefaultOptions() Options {
	return Options{
		Acks:                "both",
		Partitions:          6,
		Producers:           3,
		Rate:                50,
		Members:             2,
		WarmUp:              5 * time.Second,
		DownMin:             500 * time.Millisecond,
		DownMax:             4 * time.Second,
		HealTimeout:         2 * time.Minute,
		GroupSessionTimeout: 10 * time.Second,
		DrainTimeout:        2 * time.Minute,
		DiskSize:            256 << 20,
		DiskHold:            15 * time.Second,
		ClockJump:           time.Hour,
		Latency:             250 * time.Millisecond,
		Loss:                0.2,
	}
}

func (o *Options) validate() error {
	if o.Cluster == nil {
		return errors.New("no cluster")
	}
	if o.Scenario != "" && o.Scenario != ScenarioIsolatedLeader {
		return fmt.Errorf("unknown scenario %q (scenarios: %s)", o.Scenario, ScenarioIsolatedLeader)
	}
	if o.Scenario == "" && len(o.Faults) == 0 {
		return errors.New("no faults")
	}
	if o.Count <= 0 && o.Duration <= 0 {
		return errors.New("give a fault count or a duration")
	}
	if o.Acks != "all" && o.Acks != "1" && o.Acks != "both" {
		return fmt.Errorf("acks %q: give all, 1 or both", o.Acks)
	}
	if o.Partitions < 1 || o.Rate < 1 || o.Members < 1 || (o.Acks != "1" && o.Producers < 1) {
		return fmt.Errorf("partitions (%d), rate (%d), members (%d) and producers (%d) must be positive", o.Partitions, o.Rate, o.Members, o.Producers)
	}
	for _, k := range o.kinds() {
		if slices.Contains(ensembleKinds, k) && !ensemble(o.Cluster) {
			return fmt.Errorf("%s needs a ZooKeeper ensemble: ZKAFKA_ZK_SERVERS=3 ./scripts/cluster.sh up (data of its own: ZKAFKA_DATA), or the Docker cluster with docker-compose.ensemble.yml", k)
		}
		if _, local := o.Cluster.(*Local); k == KindDiskFull && !local {
			return fmt.Errorf("%s needs the local cluster (a tmpfs over a broker's log dir)", k)
		}
	}
	if o.Latency < 0 || o.Loss < 0 || o.Loss >= 1 {
		return fmt.Errorf("latency %v and loss %v: give a latency of 0 or more and a loss in [0, 1)", o.Latency, o.Loss)
	}
	if o.DownMin <= 0 || o.DownMax < o.DownMin {
		return fmt.Errorf("down time [%v, %v] is not a range", o.DownMin, o.DownMax)
	}
	return nil
}

// kinds are the fault kinds the run injects, with a single variant for a scenario.
func (o *Options) kinds() []string {
	if o.Scenario == ScenarioIsolatedLeader {
		return []string{KindPartition}
	}
	return o.Faults
}

func (o *Options) variants(kind string) []string {
	if o.Scenario == ScenarioIsolatedLeader {
		return []string{"isolated-leader"}
	}
	return variantsOf(kind)
}

// runner is one run's state.
type runner struct {
	o     Options
	c     Cluster
	log   *zap.Logger
	h     *History
	info  RunInfo
	zk    *zkclient.Client
	admCl *kgo.Client
	adm   *kadm.Client
	obs   *observer
	in    *injector
	w     *workload

	mu     sync.Mutex
	faults int
	phase  string
}

// Run injects faults into the local cluster while producers and a consumer group work, then reads
// everything back, checks it and writes the report to o.Out. A run interrupted (ctx ended) or
// failed midway still restores the cluster (namespaces, tmpfs) and writes what it has; its report
// says it is partial.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	for _, n := range processes(o.Cluster) {
		if !o.Cluster.Running(n) {
			return nil, fmt.Errorf("%s is not running (./scripts/cluster.sh status; up starts it)", processName(n))
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	r := &runner{o: o, c: o.Cluster, log: o.Logger}
	if r.log == nil {
		r.log = zap.NewNop()
	}
	start := time.Now()
	h, err := NewHistory(start, filepath.Join(o.Out, HistoryFile))
	if err != nil {
		return nil, err
	}
	r.h = h
	stamp := start.Format("20060102-150405")
	r.info = RunInfo{
		Command: o.Command, Faults: o.kinds(), Scenario: o.Scenario, Acks: o.Acks, Count: o.Count,
		DurationSeconds: o.Duration.Seconds(), Topic: "chaos-" + stamp, Group: "chaos-" + stamp,
		Partitions: o.Partitions, Producers: o.Producers, Rate: o.Rate, Members: o.Members, Seed: o.Seed,
		Started: start, Partial: true, Reason: "running",
	}
	if o.Acks == "1" {
		r.info.Producers = 0
	}
	if err := r.saveInfo(); err != nil {
		h.Close()
		return nil, err
	}
	runErr := r.run(ctx)
	r.info.Ended = time.Now()
	r.info.Partial = runErr != nil
	r.info.Reason = ""
	if runErr != nil {
		r.info.Reason = runErr.Error()
	}
	if err := h.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("write the history: %w", err)
	}
	if err := r.saveInfo(); err != nil && runErr == nil {
		runErr = err
	}
	rep, err := Analyze(o.Out)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	if err := rep.Save(o.Out); err != nil {
		return rep, errors.Join(runErr, err)
	}
	return rep, runErr
}

func (r *runner) saveInfo() error { return writeJSON(filepath.Join(r.o.Out, InfoFile), r.info) }

func (r *runner) setPhase(p string) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
	r.h.Add(Op{Type: OpPhase, Note: p})
}

func (r *runner) run(ctx context.Context) (err error) {
	r.setPhase(PhasePrepare)
	stopProgress := r.progress()
	defer stopProgress()
	if err := r.connect(ctx); err != nil {
		return err
	}
	defer r.close()
	r.in = &injector{c: r.c, obs: r.obs, h: r.h, rng: rand.New(rand.NewPCG(r.o.Seed, 13)), o: &r.o,
		session: r.info.sessionTimeout(), replicaLag: time.Duration(r.info.ReplicaLagMs) * time.Millisecond,
		topic: r.info.Topic, group: r.info.Group}
	if ensemble(r.c) {
		r.in.zkSync = r.c.zkSyncTimeout()
	}
	obsCtx, stopObserver := context.WithCancel(context.Background())
	var obsWG sync.WaitGroup
	obsWG.Go(func() { r.obs.run(obsCtx) })
	defer func() {
		stopObserver()
		obsWG.Wait()
	}()

	// Namespaces and tmpfs change where the brokers listen and keep their logs: they come first, and
	// are undone whatever happens after.
	kinds := r.o.kinds()
	defer func() {
		r.setPhase(PhaseRestore)
		if rerr := r.restore(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	if slices.ContainsFunc(kinds, func(k string) bool { return slices.Contains(netnsKinds, k) }) {
		t, err := r.c.network(r.h)
		if err != nil {
			return err
		}
		r.in.net = newNetwork(r.c.Brokers(), t, r.h)
		if err := r.in.net.enter(ctx, r.awaitWhole); err != nil {
			return fmt.Errorf("move the brokers into network namespaces: %w", err)
		}
	}
	if slices.Contains(kinds, KindZKSplit) {
		q, err := r.c.quorum(r.h)
		if err != nil {
			return err
		}
		r.in.quorum = q
		if err := q.enter(ctx); err != nil {
			return fmt.Errorf("restart the ZooKeeper servers into cgroups: %w", err)
		}
	}
	if slices.Contains(kinds, KindDiskFull) {
		bs := r.c.Brokers()
		r.in.disk = newDiskFull(r.c.(*Local), r.h, r.o.DiskSize)
		if err := r.in.disk.enter(ctx, bs[len(bs)-1]); err != nil {
			return fmt.Errorf("mount a tmpfs for the disk-full faults: %w", err)
		}
		if err := r.awaitWhole(ctx); err != nil {
			return err
		}
	}
	if err := r.openAdmin(); err != nil {
		return err
	}
	if err := r.createTopic(ctx); err != nil {
		return err
	}
	w, err := newWorkload(r.h, workloadOptions{
		topic: r.info.Topic, group: r.info.Group, partitions: r.o.Partitions, bootstrap: r.bootstrap(),
		acksAll: r.info.Producers, acksOne: acksOne(r.o.Acks), rate: r.o.Rate, members: r.o.Members,
		groupSessionTimout: r.o.GroupSessionTimeout,
	})
	if err != nil {
		return err
	}
	r.w = w
	w.start(func() (int32, error) { return r.obs.offsetsLeader(r.info.Group) })
	stopped := false
	defer func() {
		if !stopped {
			w.stopProducers(time.Second)
			w.stopConsuming()
		}
	}()
	r.setPhase(PhaseWarmUp)
	if err := pace.Sleep(ctx, r.o.WarmUp); err != nil {
		return err
	}
	r.setPhase(PhaseFaults)
	faultErr := r.faultLoop(ctx)
	if faultErr != nil && ctx.Err() != nil {
		return faultErr
	}
	stopped = true
	if err := r.finish(ctx); err != nil {
		return errors.Join(faultErr, err)
	}
	return faultErr
}

func acksOne(acks string) int {
	if acks == "all" {
		return 0
	}
	return 1
}

func (r *runner) connect(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	zkc, err := zkclient.Connect(cctx, zkclient.Config{Connect: r.c.ZooKeeper(), SessionTimeout: 6 * time.Second, Logger: r.log})
	if err != nil {
		return fmt.Errorf("ZooKeeper not reachable at %s (start the cluster with ./scripts/cluster.sh up): %w", r.c.ZooKeeper(), err)
	}
	r.zk = zkc
	r.obs = newObserver(zkc, r.h)
	if err := r.openAdmin(); err != nil {
		zkc.Close()
		return err
	}
	defer func() {
		// The brokers may move into namespaces next: openAdmin again once they did.
		r.admCl.Close()
		r.admCl = nil
	}()
	r.info.SessionTimeoutMs = r.brokerConfig(cctx, "zookeeper.session.timeout.ms", zkclient.DefaultSessionTimeout).Milliseconds()
	r.info.ReplicaLagMs = r.brokerConfig(cctx, "replica.lag.time.max.ms", 30*time.Second).Milliseconds()
	return nil
}

// openAdmin connects the admin client to the brokers where they are now.
func (r *runner) openAdmin() error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.bootstrap()...), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		return err
	}
	r.admCl, r.adm = cl, kadm.NewClient(cl)
	if r.in != nil {
		r.in.adm = r.adm
	}
	return nil
}

func (r *runner) close() {
	if r.admCl != nil {
		r.admCl.Close()
	}
	r.zk.Close()
}

// brokerConfig asks the first broker for a setting in milliseconds.
func (r *runner) brokerConfig(ctx context.Context, key string, def time.Duration) time.Duration {
	rcs, err := r.adm.DescribeBrokerConfigs(ctx, r.c.Brokers()[0])
	if err == nil {
		for _, rc := range rcs {
			for _, c := range rc.Configs {
				if c.Key == key && c.Value != nil {
					if ms, err := strconv.Atoi(*c.Value); err == nil {
						return time.Duration(ms) * time.Millisecond
					}
				}
			}
		}
	}
	r.log.Warn("Cannot read a broker setting; assuming Kafka's default", zap.String("key", key), zap.Duration("default", def), zap.Error(err))
	return def
}

// bootstrap is every broker's address as clients on this machine reach it.
func (r *runner) bootstrap() []string {
	var out []string
	for _, b := range r.c.Brokers() {
		out = append(out, r.c.Addr(b))
	}
	return out
}

// createTopic creates the run's topic: replication factor 3, min.insync.replicas 2, no unclean
// election.
func (r *runner) createTopic(ctx context.Context) error {
	cfg := map[string]*string{"min.insync.replicas": kadm.StringPtr("2"), "unclean.leader.election.enable": kadm.StringPtr("false")}
	err := pace.Until(ctx, 30*time.Second, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		resp, err := r.adm.CreateTopic(cctx, r.o.Partitions, 3, cfg, r.info.Topic)
		if err == nil {
			err = resp.Err
		}
		return err == nil || errors.Is(err, kerr.TopicAlreadyExists)
	})
	if err != nil {
		return fmt.Errorf("create topic %s: %w", r.info.Topic, err)
	}
	return r.awaitWhole(ctx)
}

func (r *runner) awaitWhole(ctx context.Context) error { return r.in.awaitWhole(ctx) }

// faultLoop injects faults until the count or the duration is reached.
func (r *runner) faultLoop(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(r.o.Seed, 7))
	kinds := r.o.kinds()
	next := map[string]int{}
	var round []string
	deadline := time.Now().Add(r.o.Duration)
	for seq := 1; r.o.Count <= 0 || seq <= r.o.Count; seq++ {
		if r.o.Duration > 0 && time.Now().After(deadline) {
			break
		}
		if len(round) == 0 {
			round = slices.Clone(kinds)
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		kind := round[0]
		round = round[1:]
		vs := r.o.variants(kind)
		f := fault{seq: seq, kind: kind, variant: vs[next[kind]%len(vs)]}
		next[kind]++
		r.mu.Lock()
		r.faults = seq
		r.mu.Unlock()
		err := r.in.inject(ctx, f)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			r.h.Add(Op{Type: OpNote, Seq: seq, Fault: f.name(), Err: err.Error(), Note: "the fault failed; repairing"})
			if err := r.repair(ctx, seq); err != nil {
				return err
			}
		}
		if err := r.awaitWhole(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.h.Add(Op{Type: OpNote, Seq: seq, Fault: f.name(), Err: err.Error(), Note: "not whole after the fault; repairing"})
			if err := r.repair(ctx, seq); err != nil {
				return err
			}
			if err := r.awaitWhole(ctx); err != nil {
				return fmt.Errorf("after fault %d (%s): %w", seq, f.name(), err)
			}
		}
		r.h.Add(Op{Type: OpHealthy, Seq: seq, Fault: f.name()})
		// The next fault waits for the producers to be acknowledged on every partition again, so
		// each fault's unavailability is its own.
		started := r.in.startedAt()
		if err := pace.Until(ctx, r.o.HealTimeout, func() bool { return r.w.producingSince(started) }); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.h.Add(Op{Type: OpNote, Seq: seq, Fault: f.name(), Err: fmt.Sprintf("some partition acknowledged nothing sent since the fault for %v after the cluster was whole", r.o.HealTimeout)})
		}
		r.in.setCurrent("")
	}
	return nil
}

// repair brings back every process that should run and undoes every cut: what a fault left behind
// when it failed midway. Processes that died on their own are incidents.
func (r *runner) repair(ctx context.Context, seq int) error {
	if r.in.net != nil {
		if err := r.in.net.healAll(); err != nil {
			return err
		}
	}
	if r.in.disk != nil {
		if err := r.in.disk.free(); err != nil {
			return err
		}
	}
	if r.in.quorum != nil {
		if err := r.in.quorum.heal(); err != nil {
			return err
		}
	}
	zkDown := false
	for _, n := range processes(r.c) {
		if r.c.Running(n) {
			if err := r.c.Resume(ctx, n); err != nil {
				return err
			}
			continue
		}
		r.h.Add(Op{Type: OpNote, Seq: seq, Broker: n, Err: fmt.Sprintf("%s was not running; starting it", processName(n)), Note: "incident"})
		if n <= 0 {
			// Every missing server at once (cluster.sh start zk): one alone has no quorum to serve in.
			zkDown = true
			continue
		}
		if zkDown {
			if err := r.c.Start(ctx, 0); err != nil {
				return err
			}
			zkDown = false
		}
		if err := r.c.Start(ctx, n); err != nil {
			return err
		}
	}
	if zkDown {
		if err := r.c.Start(ctx, 0); err != nil {
			return err
		}
	}
	r.obs.setZKDown("")
	return nil
}

// finish stops producing, lets the group catch up, and reads everything.
func (r *runner) finish(ctx context.Context) error {
	r.setPhase(PhaseDrain)
	r.w.stopProducers(r.o.DrainTimeout)
	ends, err := endOffsets(ctx, r.adm, r.info.Topic, r.o.Partitions)
	if err != nil {
		r.w.stopConsuming()
		return err
	}
	drainErr := r.w.drain(ends, r.o.DrainTimeout)
	r.w.stopConsuming()
	if drainErr != nil {
		r.h.Add(Op{Type: OpNote, Err: fmt.Sprintf("the group did not process everything: processed up to %v of %v", r.w.processedUpTo(), ends), Note: "drain"})
	}
	r.setPhase(PhaseRead)
	if err := readAll(ctx, r.h, r.bootstrap(), r.info.Topic, ends, r.o.DrainTimeout); err != nil {
		return err
	}
	r.setPhase(PhaseDone)
	return nil
}

// restore undoes the namespaces and the tmpfs, with a context of its own: it must run after an
// interruption too.
func (r *runner) restore() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var errs []error
	if r.in != nil && r.in.disk != nil {
		errs = append(errs, r.in.disk.leave(ctx))
	}
	if r.in != nil && r.in.net != nil {
		errs = append(errs, r.in.net.leave(ctx, r.awaitWhole))
	}
	if r.in != nil && r.in.quorum != nil {
		errs = append(errs, r.in.quorum.leave())
	}
	return errors.Join(errs...)
}

// progress prints the live progress line every second until stopped.
func (r *runner) progress() (stop func()) {
	return pace.Progress(r.o.Progress, time.Second, func() string {
		r.mu.Lock()
		faults, phase := r.faults, r.phase
		r.mu.Unlock()
		total := "∞"
		if r.o.Count > 0 {
			total = strconv.Itoa(r.o.Count)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-8s fault %d/%s", phase, faults, total)
		if r.in != nil {
			if cur, d := r.in.Current(); cur != "" {
				fmt.Fprintf(&b, "  %s (%.0fs)", cur, d.Seconds())
			}
		}
		if r.w != nil {
			fmt.Fprintf(&b, "  acked %d", r.w.acked.Load())
			if last := r.w.lastAckNano.Load(); last > 0 {
				fmt.Fprintf(&b, "  last ack %.1fs ago", time.Since(time.Unix(0, last)).Seconds())
			}
		}
		return b.String() + "\033[K"
	})
}
