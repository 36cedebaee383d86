package lab

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/consumer"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// startCluster starts one broker whose groups form without the initial
// delay and accept short sessions; a small __consumer_offsets is created
// at the first group's FindCoordinator in a moment. Consumer-protocol
// groups get shortOptions' session timeout and heartbeat interval from
// the broker.
func startCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	return testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"group.initial.rebalance.delay.ms":         "0",
		"group.min.session.timeout.ms":             "500",
		"offsets.topic.num.partitions":             "3",
		"group.coordinator.rebalance.protocols":    "classic,consumer",
		"group.consumer.min.session.timeout.ms":    "1000",
		"group.consumer.session.timeout.ms":        "2000",
		"group.consumer.min.heartbeat.interval.ms": "100",
		"group.consumer.heartbeat.interval.ms":     "100",
	}})
}

// TestScenarios runs the scenarios' integration tests on one cluster, as
// starting one takes seconds; each uses its own topic and groups. A
// scenario mostly waits (its steps are paced in time), so they run in
// parallel; broker-failure kills brokers and has a cluster of its own.
func TestScenarios(t *testing.T) {
	c := startCluster(t)
	for _, tc := range []struct {
		name string
		test func(*testing.T, *testcluster.Cluster)
	}{
		{"ScaleOut", testScaleOutCooperativeMembersNeverStop},
		{"ScaleIn", testScaleInEachLeaveIsOneRebalance},
		{"StaticRestart", testStaticRestartWithinSessionTimeoutDoesNotRebalance},
		{"SlowConsumer", testSlowConsumerIsFencedAndItsRecordsAreProcessedAgain},
		{"Herd", testHerdLegacyNotificationsGrowWithGroupSize},
		{"Crash", testCrashIsNoticedOnlyAtTheSessionTimeout},
		{"NetworkBlip", testNetworkBlipShorterThanTheSessionCostsNothing},
		{"ExistingTopicAndInterrupt", testExistingTopicAndInterruptedRun},
		{"ZKExpiry", testZKExpiryLosesAndRegistersAgain},
		{"Kgo", testKgoMembersGiveTheSameFigures},
		{"BrokerFailure", testBrokerFailureMovesTheCoordinator},
		{"ConsumerProtocolOff", testConsumerModesNeedTheProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, c)
		})
	}
}

// shortOptions shrink the teaching defaults so a scenario takes seconds.
func shortOptions(t *testing.T, c *testcluster.Cluster, scenario string, modes ...string) Options {
	t.Helper()
	o := DefaultOptions()
	o.Scenario = scenario
	var err error
	if o.Modes, err = ParseModes(joinNames(modes)); err != nil {
		t.Fatal(err)
	}
	o.Members, o.Partitions = 3, 6
	// Members have capacity to spare (200 records/s each), so a mode's
	// backlog drains in a moment.
	o.Rate, o.Processing, o.MaxPollRecords = 150, 5*time.Millisecond, 100
	o.SessionTimeout, o.HeartbeatInterval, o.MaxPollInterval = 2*time.Second, 100*time.Millisecond, 2*time.Second
	o.ZKSessionTimeout, o.AutoCommitInterval = 4*time.Second, time.Second
	o.Step, o.RestartDelay, o.DrainTimeout = time.Second, 300*time.Millisecond, 20*time.Second
	o.Topic = "lab-" + scenario
	o.Bootstrap, o.ZooKeeper = c.BootstrapAddrs(), c.ZK
	o.Logger = zaptest.NewLogger(t)
	return o
}

func joinNames(ms []string) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ","
		}
		s += m
	}
	return s
}

func run(t *testing.T, o Options) map[string]Figures {
	t.Helper()
	out := map[string]Figures{}
	for m, a := range analyze(t, o) {
		out[m] = a.Figures
	}
	return out
}

// analyze runs each of o's modes and returns its analysis. The modes run
// at the same time, each on a topic of its own, rather than one after the
// other as `lab run` runs them: a scenario mostly waits for its steps, and
// modes whose figures a test compares then run under the same load.
func analyze(t *testing.T, o Options) map[string]Analysis {
	t.Helper()
	out := map[string]Analysis{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range o.Modes {
		mo := o
		mo.Modes = []Mode{m}
		if len(o.Modes) > 1 {
			mo.Topic = o.Topic + "-" + m.Name
		}
		wg.Go(func() {
			_, as, err := runLog(t, mo)
			if err != nil {
				t.Errorf("run of %s: %v", m.Name, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			out[m.Name] = as[m.Name]
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// runEvents runs o's modes one after the other, as `lab run` does, and
// returns the log and each mode's analysis.
func runEvents(t *testing.T, o Options) ([]Event, map[string]Analysis) {
	t.Helper()
	events, as, err := runLog(t, o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return events, as
}

// runLog runs o and returns its events and each mode's analysis, logging
// the events with an error and the figures.
func runLog(t *testing.T, o Options) ([]Event, map[string]Analysis, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range res.Events {
		if e.Err != "" {
			t.Logf("event with error: %+v", e)
		}
	}
	as := map[string]Analysis{}
	for _, m := range o.Modes {
		as[m.Name] = Analyze(m.Name, ModeEvents(res.Events, m.Name))
		t.Logf("%+v", as[m.Name].Figures)
	}
	return res.Events, as, nil
}

// testScaleOutCooperativeMembersNeverStop: on scale-out, eager members stop
// fetching at every join while cooperative ones keep fetching what they
// own; so eager interrupts the fetching of every partition at every
// rebalance, cooperative only of the partitions that move. The test counts
// interruptions, not the seconds they last: how long partitions go
// unfetched depends on the machine's load (a member rejoins only from
// Poll), and is the lab's figure to report, not a test's to compare.
func testScaleOutCooperativeMembersNeverStop(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "scale-out", "eager-range", "cooperative", "consumer")
	o.Members, o.Partitions, o.Rate = 6, 12, 300
	o.Processing, o.MaxPollRecords = 20*time.Millisecond, 25
	as := analyze(t, o)
	figs := map[string]Figures{}
	for m, a := range as {
		figs[m] = a.Figures
	}
	eager, coop, kip848 := figs["eager-range"], figs["cooperative"], figs["consumer"]
	if eager.PausedMemberSeconds <= 0 || coop.PausedMemberSeconds != 0 || kip848.PausedMemberSeconds != 0 {
		t.Errorf("eager members paused %.2f member-seconds, cooperative %.2f, consumer protocol %.2f: want eager above 0, the others 0",
			eager.PausedMemberSeconds, coop.PausedMemberSeconds, kip848.PausedMemberSeconds)
	}
	eagerStops, coopStops, kip848Stops := fetchInterruptions(as["eager-range"]), fetchInterruptions(as["cooperative"]), fetchInterruptions(as["consumer"])
	t.Logf("fetching interrupted: eager %d times, cooperative %d, consumer protocol %d", eagerStops, coopStops, kip848Stops)
	if eagerStops < o.Partitions || coopStops >= eagerStops || kip848Stops >= eagerStops {
		t.Errorf("fetching of a partition interrupted %d times under eager, %d under cooperative, %d under the consumer protocol: want every partition's under eager, the others fewer",
			eagerStops, coopStops, kip848Stops)
	}
	if kip848.JoinGroups != 0 || kip848.SyncGroups != 0 || kip848.Heartbeats == 0 {
		t.Errorf("consumer protocol: %d JoinGroups, %d SyncGroups, %d heartbeats: want none, none, some", kip848.JoinGroups, kip848.SyncGroups, kip848.Heartbeats)
	}
	if coop.Rounds <= eager.Rounds {
		t.Errorf("cooperative formed %d generations, eager %d: want more (two rounds when partitions move)", coop.Rounds, eager.Rounds)
	}
	for _, f := range figs {
		if f.Never != 0 || f.Partial || f.Rebalances < 2 {
			t.Errorf("%s: never processed %d, partial %v, rebalances %d: want 0, false, ≥ 2", f.Mode, f.Never, f.Partial, f.Rebalances)
		}
	}
}

// fetchInterruptions counts the times a member stopped fetching a partition
// within the window: the segments that end before it does.
func fetchInterruptions(a Analysis) int {
	n := 0
	for _, s := range a.Segments {
		if s.End < a.End {
			n++
		}
	}
	return n
}

// testStaticRestartWithinSessionTimeoutDoesNotRebalance: static members
// restarted within session.timeout.ms get their partitions back with no
// new generation, eager or cooperative.
func testStaticRestartWithinSessionTimeoutDoesNotRebalance(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "rolling-restart", "static-eager", "static-cooperative", "static-consumer")
	o.Members, o.SessionTimeout = 2, 4*time.Second
	for _, f := range run(t, o) {
		if f.Rebalances != 0 || f.Triggers != 2 {
			t.Errorf("%s: static members restarted %d times caused %d rebalances: want 2 restarts and 0", f.Mode, f.Triggers, f.Rebalances)
		}
		if f.Never != 0 {
			t.Errorf("%s: %d records never processed", f.Mode, f.Never)
		}
	}
}

// testScaleInEachLeaveIsOneRebalance: a member that leaves gracefully
// sends LeaveGroup, and the coordinator rebalances at once, one generation
// per leave (cooperative too: the leaver's partitions are orphans,
// assigned in the first round, and nothing else moves); legacy members see
// its ids znode go and rebalance themselves. No record is lost.
func testScaleInEachLeaveIsOneRebalance(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "scale-in", "legacy-roundrobin", "eager-roundrobin", "eager-sticky", "cooperative", "consumer")
	// Short batches: each leave's rebalance (which waits for every member's
	// batch in hand) is over well before the next leave.
	o.MaxPollRecords = 20
	leaves := o.Members - 1
	for _, f := range run(t, o) {
		if f.Triggers != leaves || f.Never != 0 || f.Partial {
			t.Errorf("%s: %d leaves, %d records never processed, partial %v: want %d, 0, false", f.Mode, f.Triggers, f.Never, f.Partial, leaves)
		}
		if f.Legacy {
			if f.Rebalances < leaves {
				t.Errorf("%s: %d rebalances for %d leaves: want at least one each", f.Mode, f.Rebalances, leaves)
			}
			continue
		}
		if f.Rebalances != leaves || f.Rounds != leaves {
			t.Errorf("%s: %d rebalances and %d generations for %d leaves: want one each", f.Mode, f.Rebalances, f.Rounds, leaves)
		}
	}
}

// testSlowConsumerIsFencedAndItsRecordsAreProcessedAgain is seed 004: a
// member that processes for longer than max.poll.interval.ms is removed, its
// commit is refused, another member processes its records again, and no
// record is lost.
func testSlowConsumerIsFencedAndItsRecordsAreProcessedAgain(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "slow-consumer", "eager-range", "consumer")
	o.Members = 2
	for _, f := range run(t, o) {
		if f.FencedCommits == 0 || f.Duplicates == 0 || f.Never != 0 {
			t.Errorf("%s: fenced commits %d, duplicates %d, never processed %d: want > 0, > 0, 0", f.Mode, f.FencedCommits, f.Duplicates, f.Never)
		}
	}
}

// testHerdLegacyNotificationsGrowWithGroupSize is seed 000's herd effect:
// every legacy member is notified of every join and rebalances, so a join
// costs more notifications and ZooKeeper reads the larger the group.
func testHerdLegacyNotificationsGrowWithGroupSize(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "herd", "legacy-range")
	o.Members, o.Rate = 5, 100
	a := analyze(t, o)["legacy-range"]
	t.Logf("herd: %+v", a.Herd)
	if len(a.Herd) != o.Members-1 {
		t.Fatalf("%d joins measured, want %d", len(a.Herd), o.Members-1)
	}
	first, last := a.Herd[0], a.Herd[len(a.Herd)-1]
	if last.ZKWatchNotifications <= first.ZKWatchNotifications || last.ZKReads <= first.ZKReads {
		t.Errorf("a join into %d members cost %d notifications and %d reads, into %d members %d and %d: want more for the larger group",
			first.Size, first.ZKWatchNotifications, first.ZKReads, last.Size, last.ZKWatchNotifications, last.ZKReads)
	}
	if a.Figures.Never != 0 {
		t.Errorf("%d records never processed", a.Figures.Never)
	}
}

// testCrashIsNoticedOnlyAtTheSessionTimeout: a killed member says nothing;
// its partitions stay unfetched until the coordinator expires its session,
// then go to the survivor, and no record is lost.
func testCrashIsNoticedOnlyAtTheSessionTimeout(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "crash", "eager-range", "consumer") // the broker gives consumer-protocol members the same timeouts
	o.Members = 2
	for _, f := range run(t, o) {
		// The coordinator's session clock starts at the member's last
		// heartbeat, which may come up to one heartbeat interval before the
		// kill.
		least := (o.SessionTimeout - o.HeartbeatInterval).Seconds()
		if f.UnfetchedMaxPartition < least || f.Rebalances < 1 || f.Never != 0 {
			t.Errorf("%s: a partition of the killed member went unfetched for %.2f s at most (session.timeout.ms %v, heartbeat.interval.ms %v), %d rebalances, %d records never processed: want at least %.2f s, ≥ 1, 0",
				f.Mode, f.UnfetchedMaxPartition, o.SessionTimeout, o.HeartbeatInterval, f.Rebalances, f.Never, least)
		}
	}
}

// testNetworkBlipShorterThanTheSessionCostsNothing: a member cut off for
// less than session.timeout.ms resumes its heartbeats and nothing happens;
// cut off for longer, it is removed, loses its partitions and joins again,
// and no record is lost.
func testNetworkBlipShorterThanTheSessionCostsNothing(t *testing.T, c *testcluster.Cluster) {
	for _, mode := range []string{"eager-range", "consumer"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o := shortOptions(t, c, "network-blip", mode)
			o.Topic += "-" + mode
			o.Members = 2
			testNetworkBlip(t, o, mode)
		})
	}
}

func testNetworkBlip(t *testing.T, o Options, mode string) {
	events, as := runEvents(t, o)
	var cuts []float64
	gens := map[int32]float64{} // generation → when it formed
	lost := 0.0
	for _, e := range ModeEvents(events, mode) {
		switch {
		case e.Type == TypeMarker && e.Note == MarkCut:
			cuts = append(cuts, e.T)
		case e.Type == consumer.EventJoined.String():
			if _, ok := gens[e.Generation]; !ok {
				gens[e.Generation] = e.T
			}
		case e.Type == consumer.EventPartitionsLost.String() && e.Member == "m2" && lost == 0:
			lost = e.T
		}
	}
	if len(cuts) != 2 {
		t.Fatalf("%d cuts, want 2", len(cuts))
	}
	var between, after int
	for _, at := range gens {
		switch {
		case at > cuts[0] && at < cuts[1]:
			between++
		case at > cuts[1]:
			after++
		}
	}
	f := as[mode].Figures
	if between != 0 || after == 0 || lost < cuts[1] || f.Never != 0 {
		t.Errorf("generations formed after the short cut %d, after the long one %d; m2 lost its partitions at %.2f (long cut at %.2f); %d records never processed: want 0, > 0, after the long cut, 0",
			between, after, lost, cuts[1], f.Never)
	}
}

// TestBadInput: an unknown scenario or mode, and a cluster nobody listens
// on, are refused with what to do instead.
func TestBadInput(t *testing.T) {
	if _, err := FindScenario("stampede"); err == nil || !strings.Contains(err.Error(), "scale-out") {
		t.Errorf("unknown scenario: %v, want the list of scenarios", err)
	}
	if _, err := ParseModes("eager-range,lazy"); err == nil || !strings.Contains(err.Error(), `unknown mode "lazy"`) {
		t.Errorf("unknown mode: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	o := DefaultOptions()
	o.Modes, o.Topic, o.Bootstrap = AllModes[2:3], "lab-unreachable", []string{addr}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if res, err := Run(ctx, o); res != nil || err == nil || !strings.Contains(err.Error(), "cluster not reachable") {
		t.Errorf("unreachable cluster: result %v, error %v", res, err)
	}

	refusals := []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"kgo runs no legacy member", func(o *Options) { o.Client, o.Modes = ClientKgo, AllModes[:3] },
			"client kgo runs coordinator modes only: legacy-range is the 0.8 ZooKeeper consumer"},
		{"unknown client", func(o *Options) { o.Client = "sarama" }, `unknown client "sarama"`},
		{"kgo runs no consumer-protocol member", func(o *Options) { o.Client, o.Modes = ClientKgo, []Mode{mustMode(t, "consumer")} },
			"client kgo runs the classic coordinator modes only, not consumer"},
		{"broker-failure needs a way to kill brokers", func(o *Options) { o.Scenario = "broker-failure" },
			"give --kill-command and --restart-command"},
	}
	for _, r := range refusals {
		o := DefaultOptions()
		o.Modes, o.Topic, o.Bootstrap = AllModes[2:3], "lab-refused", []string{addr}
		r.change(&o)
		if res, err := Run(ctx, o); res != nil || err == nil || !strings.Contains(err.Error(), r.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: result %v, error %v, want one line with %q", r.name, res, err, r.want)
		}
	}
}

// interruptOnScenario is a progress writer that cancels the run, as Ctrl-C
// would, once the first mode's scenario has started.
type interruptOnScenario struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (w *interruptOnScenario) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(PhaseScenario)) {
		w.once.Do(w.cancel)
	}
	return len(p), nil
}

// testExistingTopicAndInterruptedRun: a topic that exists with another
// partition count is refused; a run interrupted mid-scenario returns what
// it recorded, marked partial, and its report says so.
func testExistingTopicAndInterruptedRun(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "scale-out", "eager-range", "cooperative")
	o.Topic = "lab-existing"
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(context.Background(), 2, 1, nil, o.Topic); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "exists with 2 partitions") {
		t.Errorf("existing topic with 2 partitions, run wants %d: %v", o.Partitions, err)
	}

	o.Topic = "lab-interrupted"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o.Progress = &interruptOnScenario{cancel: cancel}
	res, err := Run(ctx, o)
	if !errors.Is(err, context.Canceled) || res == nil || !res.Partial || !strings.Contains(res.Reason, "interrupted during mode eager-range") {
		t.Fatalf("interrupted run: error %v, result %+v", err, res)
	}
	dir := t.TempDir()
	as, err := Save(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || !as[0].Figures.Partial {
		t.Errorf("analyses of the interrupted run: %+v", as)
	}
	table, err := os.ReadFile(filepath.Join(dir, "table.txt"))
	if err != nil || !bytes.Contains(table, []byte("PARTIAL RUN: interrupted")) {
		t.Errorf("table of the interrupted run: %q %v", table, err)
	}
}

// testZKExpiryLosesAndRegistersAgain: a legacy member whose ZooKeeper
// session expires loses its partitions, registers again and the group
// rebalances with it, losing no record.
func testZKExpiryLosesAndRegistersAgain(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "zk-expiry", "legacy-range")
	o.Members = 2
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var expired, lost, registered bool
	for _, e := range res.Events {
		switch {
		case e.Type == TypeMarker && e.Note == MarkExpire:
			expired = true
		case expired && e.Member == "m2" && e.Type == consumer.EventPartitionsLost.String():
			lost = true
		case lost && e.Member == "m2" && e.Type == consumer.EventRegistered.String():
			registered = true
		}
	}
	f := Analyze("legacy-range", ModeEvents(res.Events, "legacy-range")).Figures
	if !expired || !lost || !registered || f.Rebalances < 1 || f.Never != 0 {
		t.Errorf("expired %v, then m2 lost its partitions %v and registered again %v; %d rebalances, %d records never processed",
			expired, lost, registered, f.Rebalances, f.Never)
	}
	if _, err := Run(ctx, shortOptions(t, c, "zk-expiry", "eager-range")); err == nil || !strings.Contains(err.Error(), "legacy modes only") {
		t.Errorf("zk-expiry in eager-range: %v, want a refusal", err)
	}
}

func mustMode(t *testing.T, name string) Mode {
	t.Helper()
	m, err := FindMode(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// testConsumerModesNeedTheProtocol: on brokers that serve only the classic
// protocol (a strict 2.8 broker), the consumer-protocol modes are refused
// before anything runs, with what to change.
func testConsumerModesNeedTheProtocol(t *testing.T, _ *testcluster.Cluster) {
	c := testcluster.Start(t, testcluster.Options{})
	o := shortOptions(t, c, "scale-out", "eager-range", "consumer")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, o)
	want := "group.coordinator.rebalance.protocols includes consumer"
	if res != nil || err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("consumer mode on a classic-only cluster: result %v, error %v, want one line with %q", res, err, want)
	}
}
