package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/pace"
)

// Fault kinds, in the order of the priorities.
const (
	KindKill      = "kill"       // kill -9 of brokers, then a restart
	KindPause     = "pause"      // SIGSTOP of a broker past the ZooKeeper session timeout, then SIGCONT
	KindZKPause   = "zk-pause"   // SIGSTOP of ZooKeeper past the session timeout, then SIGCONT
	KindZKRestart = "zk-restart" // kill -9 of ZooKeeper, then a restart
	KindRolling   = "rolling"    // every broker restarted in turn with a controlled shutdown
	KindPartition = "partition"  // a broker's network cut (nftables in its namespace), then healed
	KindDiskFull  = "disk-full"  // a broker's log dir (a size-limited tmpfs) filled, then freed
	KindClock     = "clock"      // a broker's wall clock jumped (zkafka.clock.skew.ms), then set right
	KindZKLeader  = "zk-leader"  // the ZooKeeper ensemble's leader killed or paused, then back
	KindZKSplit   = "zk-split"   // one ZooKeeper server cut from the others' quorum traffic, then healed
	KindSlow      = "slow"       // a broker's links to the others and ZooKeeper delayed or lossy (a proxy), then direct again
)

// netnsKinds need the brokers in network namespaces.
var netnsKinds = []string{KindPartition, KindSlow}

// ensembleKinds need a ZooKeeper ensemble (ZKAFKA_ZK_SERVERS=3).
var ensembleKinds = []string{KindZKLeader, KindZKSplit}

// Kind is a kind of fault and its variants, which a run takes in turn.
type Kind struct {
	Name     string
	Variants []string
	Teaches  string
}

// Kinds lists every fault kind.
var Kinds = []Kind{
	{KindKill, []string{"broker", "controller", "coordinator", "two", "all"},
		"kill -9 of a random broker, the controller, the group's coordinator, two brokers or all three; restarted after a few seconds"},
	{KindPause, []string{"broker", "controller", "coordinator"},
		"SIGSTOP of a broker, the controller or the group's coordinator past zookeeper.session.timeout.ms (a zombie), then SIGCONT"},
	{KindZKPause, []string{"zookeeper"},
		"SIGSTOP of ZooKeeper past the session timeout: every session is due to expire, then SIGCONT"},
	{KindZKRestart, []string{"zookeeper"},
		"kill -9 of ZooKeeper, restarted a few seconds later from its snapshot and transaction log"},
	{KindRolling, []string{"all"},
		"every broker restarted in turn with a controlled shutdown, each once the ISRs are full again"},
	{KindPartition, []string{"isolated-leader", "from-followers", "from-zookeeper", "from-everything"},
		"a partition leader cut from ZooKeeper and the other brokers (clients still reach it), from the brokers only, from ZooKeeper only, or from everything"},
	{KindDiskFull, []string{"broker"},
		"the log dir (a size-limited tmpfs) of a partition leader filled: KAFKA_STORAGE_ERROR, the broker halts as Kafka's does, restarted once space returns"},
	{KindClock, []string{"forward", "back"},
		"a partition leader's wall clock jumped forward or back (--clock-jump, zkafka.clock.skew.ms), as an NTP step would, then set right: replica lag, retention and timeouts read it"},
	{KindSlow, []string{"latency", "loss"},
		"a partition leader's traffic to and from the other brokers and ZooKeeper through a proxy that delays every chunk (--latency) or loses it (--loss: it arrives a TCP retransmission timeout later), past the replica lag time"},
	{KindZKLeader, []string{"kill", "pause"},
		"with a ZooKeeper ensemble: its leader killed (-9, restarted a few seconds later) or paused past syncLimit × tickTime and the session timeout; the others elect a new leader and the brokers' sessions move"},
	{KindZKSplit, []string{"leader", "follower"},
		"with a ZooKeeper ensemble: the leader or a follower cut from the other servers (brokers still reach it): the minority server stops serving, the majority goes on"},
}

// ParseFaults reads a comma-separated list of fault kinds.
func ParseFaults(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.ContainsFunc(Kinds, func(k Kind) bool { return k.Name == f }) {
			return nil, fmt.Errorf("unknown fault %q (kinds: %s)", f, kindNames())
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fault kinds given (kinds: %s)", kindNames())
	}
	return out, nil
}

func kindNames() string {
	var names []string
	for _, k := range Kinds {
		names = append(names, k.Name)
	}
	return strings.Join(names, ",")
}

func variantsOf(kind string) []string {
	for _, k := range Kinds {
		if k.Name == kind {
			return k.Variants
		}
	}
	return nil
}

// injector injects one fault at a time and heals it.
type injector struct {
	c          Cluster
	obs        *observer
	h          *History
	adm        *kadm.Client
	rng        *rand.Rand
	o          *Options
	session    time.Duration // zookeeper.session.timeout.ms
	replicaLag time.Duration // replica.lag.time.max.ms
	zkSync     time.Duration // the ensemble's syncLimit × tickTime, read once (0 without an ensemble)
	topic      string
	group      string
	net        *network     // nil without partition faults
	disk       *diskFull    // nil without disk-full faults
	quorum     quorumCutter // nil without zk-split faults

	mu      sync.Mutex
	current string // the fault in progress, for the progress line
	since   time.Time
	started float64 // when the last fault started, in history seconds
}

// fault is one fault to inject.
type fault struct {
	seq     int
	kind    string
	variant string
}

func (f fault) name() string { return f.kind + "/" + f.variant }

func (in *injector) setCurrent(s string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.current, in.since = s, time.Now()
}

// Current is the fault in progress and how long it has been.
func (in *injector) Current() (string, time.Duration) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.current == "" {
		return "", 0
	}
	return in.current, time.Since(in.since)
}

// start records the fault's start.
func (in *injector) start(f fault, target string) {
	in.setCurrent(f.name() + " " + target)
	t := in.h.Now()
	in.mu.Lock()
	in.started = t
	in.mu.Unlock()
	in.h.Add(Op{T: t, Type: OpFault, Seq: f.seq, Fault: f.name(), Target: target})
}

// startedAt is when the last fault started, in history seconds.
func (in *injector) startedAt() float64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.started
}

func (in *injector) healed(f fault) { in.h.Add(Op{Type: OpHeal, Seq: f.seq, Fault: f.name()}) }

// between is a random duration in [lo, hi].
func (in *injector) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(in.rng.Int64N(int64(hi-lo)+1))
}

func (in *injector) randomBroker(except ...int32) int32 {
	var c []int32
	for _, b := range in.c.Brokers() {
		if !slices.Contains(except, b) {
			c = append(c, b)
		}
	}
	return c[in.rng.IntN(len(c))]
}

// coordinator finds the group's coordinator.
func (in *injector) coordinator(ctx context.Context) (int32, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	coordinator, err := int32(-1), error(nil)
	// A retriable answer (COORDINATOR_NOT_AVAILABLE while __consumer_offsets
	// elects a leader after the last fault) is asked again, as a client would.
	_ = pace.Until(cctx, 10*time.Second, func() bool {
		coordinator, err = -1, fmt.Errorf("no coordinator for %s", in.group)
		for _, r := range in.adm.FindGroupCoordinators(cctx, in.group) {
			coordinator, err = r.NodeID, r.Err
		}
		return err == nil || !kerr.IsRetriable(err)
	})
	if err != nil {
		return -1, err // the last answer says more than the deadline
	}
	return coordinator, nil
}

// leaderOf finds the leader of one of the run's partitions, chosen at random.
func (in *injector) leaderOf(ctx context.Context) (int32, int32, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	md, err := in.adm.Metadata(cctx, in.topic)
	if err != nil {
		return -1, -1, err
	}
	t, ok := md.Topics[in.topic]
	if !ok || len(t.Partitions) == 0 {
		return -1, -1, fmt.Errorf("no metadata for %s", in.topic)
	}
	p := int32(in.rng.IntN(len(t.Partitions)))
	return t.Partitions[p].Leader, p, nil
}

func brokersString(bs []int32) string {
	var s []string
	for _, b := range bs {
		s = append(s, strconv.Itoa(int(b)))
	}
	if len(bs) == 1 {
		return "broker " + s[0]
	}
	return "brokers " + strings.Join(s, ",")
}

// inject runs one fault from start to heal. It does not wait for the cluster to be whole again.
func (in *injector) inject(ctx context.Context, f fault) error {
	switch f.kind {
	case KindKill:
		return in.kill(ctx, f)
	case KindPause:
		return in.pause(ctx, f)
	case KindZKPause:
		return in.zkPause(ctx, f)
	case KindZKRestart:
		return in.zkRestart(ctx, f)
	case KindRolling:
		return in.rolling(ctx, f)
	case KindPartition:
		return in.partition(ctx, f)
	case KindDiskFull:
		return in.diskFull(ctx, f)
	case KindClock:
		return in.clock(ctx, f)
	case KindSlow:
		return in.slow(ctx, f)
	case KindZKLeader:
		return in.zkLeader(ctx, f)
	case KindZKSplit:
		return in.zkSplit(ctx, f)
	}
	return fmt.Errorf("unknown fault kind %q", f.kind)
}

func (in *injector) kill(ctx context.Context, f fault) error {
	var victims []int32
	switch f.variant {
	case "broker":
		victims = []int32{in.randomBroker()}
	case "controller":
		c := in.obs.Controller()
		if c < 0 {
			c = in.randomBroker()
		}
		victims = []int32{c}
	case "coordinator":
		c, err := in.coordinator(ctx)
		if err != nil {
			return fmt.Errorf("find the coordinator: %w", err)
		}
		victims = []int32{c}
	case "two":
		a := in.randomBroker()
		victims = []int32{a, in.randomBroker(a)}
	case "all":
		victims = slices.Clone(in.c.Brokers())
	}
	slices.Sort(victims)
	in.start(f, brokersString(victims))
	for _, v := range victims {
		in.obs.silence(v, "killed")
	}
	if err := forEach(victims, func(v int32) error { return in.c.Kill(ctx, v) }); err != nil {
		return err
	}
	if err := pace.Sleep(ctx, in.between(in.o.DownMin, in.o.DownMax)); err != nil {
		return err
	}
	if err := forEach(victims, func(v int32) error { return in.c.Start(ctx, v) }); err != nil {
		return err
	}
	in.healed(f)
	return nil
}

// forEach runs fn for every broker at once.
func forEach(bs []int32, fn func(int32) error) error {
	errs := make([]error, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Go(func() { errs[i] = fn(b) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// overSession is how long a pause or a cut lasts: past the session timeout, so the session expires.
func (in *injector) overSession() time.Duration { return in.session + in.session/4 + time.Second }

func (in *injector) pause(ctx context.Context, f fault) error {
	c := in.obs.Controller()
	victim := c
	switch {
	case f.variant == "coordinator":
		var err error
		if victim, err = in.coordinator(ctx); err != nil {
			return fmt.Errorf("find the coordinator: %w", err)
		}
	case f.variant == "broker" || c < 0:
		victim = in.randomBroker(c)
	}
	in.start(f, brokersString([]int32{victim}))
	session := in.obs.silence(victim, "paused")
	if err := in.c.Pause(ctx, victim); err != nil {
		return err
	}
	if err := pace.Sleep(ctx, in.overSession()); err != nil {
		_ = in.c.Resume(context.Background(), victim)
		return err
	}
	if err := in.c.Resume(ctx, victim); err != nil {
		return err
	}
	in.obs.unsilence(session)
	in.healed(f)
	return nil
}

func (in *injector) zkPause(ctx context.Context, f fault) error {
	in.start(f, "zookeeper")
	in.obs.setZKDown("paused")
	if err := in.c.Pause(ctx, 0); err != nil {
		return err
	}
	if err := pace.Sleep(ctx, in.overSession()); err != nil {
		_ = in.c.Resume(context.Background(), 0)
		return err
	}
	if err := in.c.Resume(ctx, 0); err != nil {
		return err
	}
	in.obs.setZKDown("")
	in.healed(f)
	return nil
}

func (in *injector) zkRestart(ctx context.Context, f fault) error {
	in.start(f, "zookeeper")
	in.obs.setZKDown("killed")
	if err := in.c.Kill(ctx, 0); err != nil {
		return err
	}
	if err := pace.Sleep(ctx, in.between(in.o.DownMin, in.o.DownMax)); err != nil {
		_ = in.c.Start(context.Background(), 0)
		return err
	}
	if err := in.c.Start(ctx, 0); err != nil {
		return err
	}
	in.obs.setZKDown("")
	in.healed(f)
	return nil
}

// rolling restarts every broker in turn, each with a controlled shutdown (SIGTERM), waiting for the
// cluster to be whole before the next, as an operator upgrading the cluster does.
func (in *injector) rolling(ctx context.Context, f fault) error {
	in.start(f, brokersString(in.c.Brokers()))
	for i, b := range in.c.Brokers() {
		if i > 0 {
			if err := in.awaitWhole(ctx); err != nil {
				return err
			}
		}
		note := fmt.Sprintf("rolling restart: broker %d", b)
		if b == in.obs.Controller() {
			note += " (the controller)"
		}
		in.h.Add(Op{Type: OpNote, Seq: f.seq, Note: note})
		in.setCurrent(f.name() + " " + note)
		if err := in.c.Restart(ctx, b); err != nil {
			return err
		}
	}
	in.healed(f)
	return nil
}

// awaitWhole waits until the cluster is whole, up to the heal timeout: with an ensemble, every
// ZooKeeper server serves too.
func (in *injector) awaitWhole(ctx context.Context) error {
	var why string
	err := pace.Until(ctx, in.o.HealTimeout, func() bool {
		if why = ensembleWhole(in.c); why != "" {
			return false
		}
		var ok bool
		ok, why = in.obs.whole(in.c.Brokers(), in.topic, "__consumer_offsets")
		return ok
	})
	if err != nil {
		return fmt.Errorf("the cluster is not whole (%s): %w", why, err)
	}
	return nil
}

// partition cuts a partition leader's network (a cut of the variant's name, see network.rules) for
// longer than the session timeout and the replica lag time, then heals it.
func (in *injector) partition(ctx context.Context, f fault) error {
	leader, p, err := in.leaderOf(ctx)
	if err != nil {
		return fmt.Errorf("find a leader: %w", err)
	}
	in.start(f, fmt.Sprintf("broker %d (leader of %s-%d)", leader, in.topic, p))
	var session int64
	if f.variant != "from-followers" {
		session = in.obs.silence(leader, "cut off from ZooKeeper")
	}
	if err := in.net.cut(leader, f.variant); err != nil {
		return err
	}
	if err := pace.Sleep(ctx, max(in.overSession(), in.replicaLag+in.replicaLag/4)); err != nil {
		_ = in.net.heal(leader)
		return err
	}
	if err := in.net.heal(leader); err != nil {
		return err
	}
	if session != 0 {
		in.obs.unsilence(session)
	}
	in.healed(f)
	return nil
}

// slow puts a partition leader's links through the impairing proxy past the replica lag time, then
// takes them out again.
func (in *injector) slow(ctx context.Context, f fault) error {
	leader, p, err := in.leaderOf(ctx)
	if err != nil {
		return fmt.Errorf("find a leader: %w", err)
	}
	imp := impairment{Latency: in.o.Latency}
	what := fmt.Sprintf("%v each way", in.o.Latency)
	if f.variant == "loss" {
		imp = impairment{Loss: in.o.Loss}
		what = fmt.Sprintf("%.0f%% loss", in.o.Loss*100)
	}
	in.start(f, fmt.Sprintf("broker %d (leader of %s-%d), %s", leader, in.topic, p, what))
	if err := in.net.slow(leader, imp, in.rng.Uint64()); err != nil {
		_ = in.net.unslow()
		return err
	}
	if err := pace.Sleep(ctx, in.replicaLag+in.replicaLag/4); err != nil {
		_ = in.net.unslow()
		return err
	}
	if err := in.net.unslow(); err != nil {
		return err
	}
	in.healed(f)
	return nil
}

// diskFull fills the log dir of the broker with the tmpfs and holds it full until the broker halts (as
// Kafka's does once every log dir failed) or the hold passes, then frees the space and starts the
// broker again.
func (in *injector) diskFull(ctx context.Context, f fault) error {
	b := in.disk.broker
	in.start(f, brokersString([]int32{b}))
	if err := in.disk.fill(); err != nil {
		return err
	}
	t0 := time.Now()
	exited := pace.Until(ctx, in.o.DiskHold, func() bool { return !in.c.Running(b) }) == nil
	if ctx.Err() != nil {
		_ = in.disk.free()
		return ctx.Err()
	}
	if exited {
		in.obs.silence(b, "halted")
		in.h.Add(Op{Type: OpNote, Seq: f.seq, Broker: b, Note: fmt.Sprintf("broker %d halted %.1fs after its disk filled", b, time.Since(t0).Seconds())})
	} else {
		in.h.Add(Op{Type: OpNote, Seq: f.seq, Fault: f.name(), Broker: b, Err: fmt.Sprintf("broker %d still runs %v after its disk filled; restarting it", b, in.o.DiskHold)})
	}
	if err := in.disk.free(); err != nil {
		return err
	}
	var err error
	if exited {
		err = in.c.Start(ctx, b)
	} else {
		err = in.c.Restart(ctx, b)
	}
	if err != nil {
		return err
	}
	in.healed(f)
	return nil
}

// clock jumps a partition leader's wall clock by ClockJump, forward or back, through the dynamic
// broker config zkafka.clock.skew.ms, holds it past the replica lag time (a forward jump makes every
// follower look an hour behind at the next ISR check), then sets it right: a second jump, the other
// way.
func (in *injector) clock(ctx context.Context, f fault) error {
	leader, p, err := in.leaderOf(ctx)
	if err != nil {
		return fmt.Errorf("find a leader: %w", err)
	}
	jump := in.o.ClockJump
	if f.variant == "back" {
		jump = -jump
	}
	in.start(f, fmt.Sprintf("broker %d (leader of %s-%d) by %v", leader, in.topic, p, jump))
	if err := in.setSkew(ctx, leader, jump); err != nil {
		return err
	}
	if err := pace.Sleep(ctx, in.replicaLag+in.replicaLag/4); err != nil {
		_ = in.setSkew(context.Background(), leader, 0)
		return err
	}
	if err := in.setSkew(ctx, leader, 0); err != nil {
		return err
	}
	in.healed(f)
	return nil
}

// setSkew sets broker b's zkafka.clock.skew.ms (0 deletes it).
func (in *injector) setSkew(ctx context.Context, b int32, skew time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ac := kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "zkafka.clock.skew.ms"}
	if skew != 0 {
		ac = kadm.AlterConfig{Op: kadm.SetConfig, Name: ac.Name, Value: kadm.StringPtr(strconv.FormatInt(skew.Milliseconds(), 10))}
	}
	rs, err := in.adm.AlterBrokerConfigs(cctx, []kadm.AlterConfig{ac}, b)
	if err == nil {
		err = rs[0].Err
	}
	if err != nil {
		return fmt.Errorf("set broker %d's zkafka.clock.skew.ms to %d: %w", b, skew.Milliseconds(), err)
	}
	// The broker applies it when the config change notification reaches it; its DescribeConfigs
	// answer shows when it has.
	want := strconv.FormatInt(skew.Milliseconds(), 10)
	err = pace.Until(ctx, 30*time.Second, func() bool {
		rcs, err := in.adm.DescribeBrokerConfigs(cctx, b)
		if err != nil {
			return false
		}
		rc, err := rcs.On(strconv.Itoa(int(b)), nil)
		if err != nil || rc.Err != nil {
			return false
		}
		for _, c := range rc.Configs {
			if c.Key == "zkafka.clock.skew.ms" {
				return c.MaybeValue() == want && (skew != 0) == (c.Source == kmsg.ConfigSourceDynamicBrokerConfig)
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("broker %d did not apply zkafka.clock.skew.ms=%s: %w", b, want, err)
	}
	in.h.Add(Op{Type: OpNote, Broker: b, Note: fmt.Sprintf("broker %d's wall clock is %v from the machine's", b, skew)})
	return nil
}

// zkLeader kills or pauses the ensemble's leader. A pause lasts past the session timeout and past
// syncLimit × tickTime, when the followers give the silent leader up and elect another.
func (in *injector) zkLeader(ctx context.Context, f fault) error {
	k, err := zkLeader(in.c)
	if err != nil {
		return err
	}
	in.start(f, fmt.Sprintf("zookeeper %d (the leader)", k))
	n := ZKServer(k)
	if f.variant == "kill" {
		if err := in.c.Kill(ctx, n); err != nil {
			return err
		}
		// Back only once the others have elected a leader among themselves: a server that returned
		// to an election still going on could win it again.
		if err := in.awaitOtherLeader(ctx, k); err != nil {
			_ = in.c.Start(context.Background(), n)
			return err
		}
		if err := pace.Sleep(ctx, in.between(in.o.DownMin, in.o.DownMax)); err != nil {
			_ = in.c.Start(context.Background(), n)
			return err
		}
		if err := in.c.Start(ctx, n); err != nil {
			return err
		}
		in.healed(f)
		return in.noteZKLeader(ctx, f, k)
	}
	if err := in.c.Pause(ctx, n); err != nil {
		return err
	}
	hold := time.Now().Add(max(in.overSession(), in.zkSync+time.Second))
	if err := in.awaitOtherLeader(ctx, k); err != nil {
		_ = in.c.Resume(context.Background(), n)
		return err
	}
	if err := pace.Sleep(ctx, time.Until(hold)); err != nil {
		_ = in.c.Resume(context.Background(), n)
		return err
	}
	if err := in.c.Resume(ctx, n); err != nil {
		return err
	}
	in.healed(f)
	return in.noteZKLeader(ctx, f, k)
}

// awaitOtherLeader waits until a server other than k leads, and notes which.
func (in *injector) awaitOtherLeader(ctx context.Context, k int) error {
	leader := 0
	err := pace.Until(ctx, in.o.HealTimeout, func() bool {
		for _, i := range in.c.ZKServerIDs() {
			if mode, _ := in.c.ZKMode(i); i != k && mode == "leader" {
				leader = i
				return true
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("no ZooKeeper server but %d leads: %w", k, err)
	}
	in.h.Add(Op{Type: OpNote, Note: fmt.Sprintf("zookeeper %d was elected leader without %d", leader, k)})
	return nil
}

// ZKLeaderNote is the note a zk-leader or zk-split fault leaves once the ensemble is whole again:
// which server leads now, and which led when the fault began.
const ZKLeaderNote = "zookeeper leader: %d (was %d)"

func (in *injector) noteZKLeader(ctx context.Context, f fault, was int) error {
	if err := awaitEnsemble(ctx, in.c, in.o.HealTimeout); err != nil {
		return err
	}
	now, err := zkLeader(in.c)
	if err != nil {
		return err
	}
	in.h.Add(Op{Type: OpNote, Seq: f.seq, Fault: f.name(), Note: fmt.Sprintf(ZKLeaderNote, now, was)})
	return nil
}

// zkSplit cuts the ensemble's leader, or a follower, from the other servers for longer than
// syncLimit × tickTime (so the cut is noticed on both sides) and the session timeout, then heals it.
func (in *injector) zkSplit(ctx context.Context, f fault) error {
	leader, err := zkLeader(in.c)
	if err != nil {
		return err
	}
	k := leader
	if f.variant == "follower" {
		var followers []int
		for _, i := range in.c.ZKServerIDs() {
			if i != leader {
				followers = append(followers, i)
			}
		}
		k = followers[in.rng.IntN(len(followers))]
	}
	role := "the leader"
	if k != leader {
		role = "a follower"
	}
	in.start(f, fmt.Sprintf("zookeeper %d (%s)", k, role))
	if err := in.quorum.split(k); err != nil {
		return err
	}
	hold := time.Now().Add(max(in.overSession(), in.zkSync+in.zkSync/2))
	if k == leader {
		if err := in.awaitOtherLeader(ctx, k); err != nil {
			_ = in.quorum.heal()
			return err
		}
	}
	if err := pace.Sleep(ctx, time.Until(hold)); err != nil {
		_ = in.quorum.heal()
		return err
	}
	if err := in.quorum.heal(); err != nil {
		return err
	}
	in.healed(f)
	return in.noteZKLeader(ctx, f, leader)
}
