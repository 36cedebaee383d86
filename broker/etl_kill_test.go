package broker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/wait"
)

// etlMemberEnv makes the test binary an ETL member process (etlMember)
// instead of running tests: TestETLUnderKills kill -9s such processes.
const etlMemberEnv = "ZKAFKA_ETL_MEMBER"

// etlMember is one member of an ETL group, run as a process of its own: it
// reads etl-in as a member of the group, writes each record to its out
// topic as "<partition>:<offset>:<value>" (acks=all), commits what it wrote
// after each batch, and prints its ownership changes on stdout as
// "assigned|revoked|lost <partition> <unix nanoseconds>". SIGTERM closes
// it: it commits, leaves the group and exits 0.
//
// Its settings come from the environment: ZKAFKA_ETL_SEEDS, _GROUP, _OUT and
// _PROTOCOL ("consumer" for KIP-848's protocol with the coordinator's
// assignor, "classic" for cooperative-sticky).
func etlMember() int {
	seeds := strings.Split(os.Getenv("ZKAFKA_ETL_SEEDS"), ",")
	var out sync.Mutex
	report := func(what string, ps map[string][]int32) {
		out.Lock()
		defer out.Unlock()
		for _, p := range ps["etl-in"] {
			fmt.Printf("%s %d %d\n", what, p, time.Now().UnixNano())
		}
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(os.Getenv("ZKAFKA_ETL_GROUP")), kgo.ConsumeTopics("etl-in"),
		kgo.DefaultProduceTopic(os.Getenv("ZKAFKA_ETL_OUT")), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { report("assigned", ps) }),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "commit before revoking:", err)
			}
			report("revoked", ps)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { report("lost", ps) }),
	}
	if os.Getenv("ZKAFKA_ETL_PROTOCOL") == "consumer" {
		opts = append(opts, kgo.ServerSideBalancer())
	} else {
		opts = append(opts, kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.SessionTimeout(10*time.Second),
			kgo.HeartbeatInterval(500*time.Millisecond))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	for ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, 100)
		var batch []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			batch = append(batch, &kgo.Record{Key: r.Key, Value: fmt.Appendf(nil, "%d:%d:%s", r.Partition, r.Offset, r.Value)})
		})
		// The write is acknowledged before the commit: a crash between
		// them writes the batch again, never loses it.
		if err := cl.ProduceSync(context.Background(), batch...).FirstErr(); err != nil {
			fmt.Fprintln(os.Stderr, "produce:", err)
			return 1
		}
		if err := cl.CommitUncommittedOffsets(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "commit:", err)
		}
		cl.AllowRebalance()
	}
	cl.Close() // commits nothing more (all is committed) and leaves the group
	return 0
}

// etlProc is a running member process and what it printed.
type etlProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}

	mu     sync.Mutex
	events []ownershipEvent
	killed time.Time
}

type ownershipEvent struct {
	what      string
	partition int32
	at        time.Time
}

func startETLMember(t *testing.T, name, protocol, group, out string, seeds []string) *etlProc {
	t.Helper()
	p := &etlProc{name: name, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), etlMemberEnv+"=1", "ZKAFKA_ETL_SEEDS="+strings.Join(seeds, ","),
		"ZKAFKA_ETL_GROUP="+group, "ZKAFKA_ETL_OUT="+out, "ZKAFKA_ETL_PROTOCOL="+protocol)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	p.cmd.Stderr = &stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev ownershipEvent
			var nanos int64
			if _, err := fmt.Sscanf(sc.Text(), "%s %d %d", &ev.what, &ev.partition, &nanos); err != nil {
				continue
			}
			ev.at = time.Unix(0, nanos)
			p.mu.Lock()
			p.events = append(p.events, ev)
			p.mu.Unlock()
		}
		p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("member %s wrote:\n%s", name, stderr.String())
		}
	})
	return p
}

// owned is what the member owns by its own account.
func (p *etlProc) owned() []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int32
	for _, ev := range p.events {
		if ev.what == "assigned" {
			out = append(out, ev.partition)
		} else {
			out = slices.DeleteFunc(out, func(q int32) bool { return q == ev.partition })
		}
	}
	return out
}

func (p *etlProc) kill() {
	p.mu.Lock()
	p.killed = time.Now()
	p.mu.Unlock()
	p.cmd.Process.Kill()
	<-p.done
}

func (p *etlProc) terminate(t *testing.T) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Errorf("member %s did not exit on SIGTERM", p.name)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("member %s exited with %d", p.name, code)
	}
}

// interval is one member's ownership of one partition; lost marks one the
// coordinator took away (the member was fenced), during which another
// member may already own the partition.
type interval struct {
	member   string
	from, to time.Time
	lost     bool
}

// overlaps returns the partitions two members owned at once, leaving out
// ownership that ended lost: a partition handed over by revocation is
// owned by one member at a time, and a killed member's ends at its kill.
func overlaps(members []*etlProc, end time.Time) []string {
	byPartition := map[int32][]interval{}
	for _, m := range members {
		m.mu.Lock()
		open := map[int32]time.Time{}
		for _, ev := range m.events {
			switch ev.what {
			case "assigned":
				open[ev.partition] = ev.at
			default:
				if from, ok := open[ev.partition]; ok {
					byPartition[ev.partition] = append(byPartition[ev.partition], interval{m.name, from, ev.at, ev.what == "lost"})
					delete(open, ev.partition)
				}
			}
		}
		stop := end
		if !m.killed.IsZero() {
			stop = m.killed
		}
		for p, from := range open {
			byPartition[p] = append(byPartition[p], interval{m.name, from, stop, false})
		}
		m.mu.Unlock()
	}
	var out []string
	for p, ivs := range byPartition {
		for i, a := range ivs {
			for _, b := range ivs[i+1:] {
				if a.member != b.member && !a.lost && !b.lost && a.from.Before(b.to) && b.from.Before(a.to) {
					out = append(out, fmt.Sprintf("partition %d: %s %v–%v and %s %v–%v", p, a.member, a.from.Format(time.StampMicro),
						a.to.Format(time.StampMicro), b.member, b.from.Format(time.StampMicro), b.to.Format(time.StampMicro)))
				}
			}
		}
	}
	return out
}

// TestETLUnderKills runs one consume-transform-produce workload with each
// group protocol on the same three broker processes: three member
// processes per group read etl-in and write to their out topic. One member
// of each group is killed with SIGKILL, then the broker of the groups'
// coordinator. Under both protocols alike: every acknowledged input record
// reaches the out topic, no partition is owned by two members at once, and
// the committed offsets read back as the input's end.
func TestETLUnderKills(t *testing.T) {
	pc := startProcClusterWith(t, 3, map[string]string{
		"group.initial.rebalance.delay.ms":      "0",
		"offsets.topic.num.partitions":          "1", // one coordinator for both groups
		"offsets.topic.replication.factor":      "3",
		"replica.lag.time.max.ms":               "5000",
		"group.coordinator.rebalance.protocols": "classic,consumer",
		// franz-go's KIP-848 member finds a moved coordinator only after
		// some seconds of dial retries: the session outlasts them.
		"group.consumer.session.timeout.ms":        "20000",
		"group.consumer.min.session.timeout.ms":    "10000",
		"group.consumer.heartbeat.interval.ms":     "500",
		"group.consumer.min.heartbeat.interval.ms": "500",
	})
	procs, addrs, seeds := pc.procs, pc.addrs, pc.seeds()
	const partitions = 6
	protocols := []string{"classic", "consumer"}
	assignment := make([][]int32, partitions)
	for p := range assignment {
		first := int32(p % 3)
		assignment[p] = []int32{first + 1, (first+1)%3 + 1, (first+2)%3 + 1}
	}
	for _, topic := range []string{"etl-in", "etl-out-classic", "etl-out-consumer"} {
		pc.createTopic(topic, assignment)
	}

	// The input: a steady keyed load, each value unique, acknowledged ones
	// kept.
	var mu sync.Mutex
	acked := map[string]bool{}
	producer, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("etl-in"), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	pctx, stopProducing := context.WithCancel(context.Background())
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for seq := 0; pctx.Err() == nil; {
			select {
			case <-pctx.Done():
			case <-tick.C:
				for range 3 {
					v := strconv.Itoa(seq)
					seq++
					producer.Produce(context.Background(), &kgo.Record{Key: []byte("k" + strconv.Itoa(seq%100)), Value: []byte(v)},
						func(_ *kgo.Record, err error) {
							if err == nil {
								mu.Lock()
								acked[v] = true
								mu.Unlock()
							}
						})
				}
			}
		}
		producer.Flush(context.Background())
	}()
	defer func() { stopProducing(); <-produced }()

	// The outputs, read as they grow: input values seen per protocol.
	seen := map[string]map[string]bool{}
	reader, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("etl-out-classic", "etl-out-consumer"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	rctx, stopReading := context.WithCancel(context.Background())
	read := make(chan struct{})
	go func() {
		defer close(read)
		for rctx.Err() == nil {
			reader.PollFetches(rctx).EachRecord(func(r *kgo.Record) {
				parts := strings.SplitN(string(r.Value), ":", 3)
				if len(parts) != 3 {
					return
				}
				protocol := strings.TrimPrefix(r.Topic, "etl-out-")
				mu.Lock()
				if seen[protocol] == nil {
					seen[protocol] = map[string]bool{}
				}
				seen[protocol][parts[2]] = true
				mu.Unlock()
			})
		}
	}()
	defer func() { stopReading(); <-read; reader.Close() }()
	progress := func(protocol string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen[protocol])
	}
	// waitProgress waits until each group wrote n more records than now.
	waitProgress := func(what string, n int) {
		t.Helper()
		base := map[string]int{}
		for _, p := range protocols {
			base[p] = progress(p)
		}
		wait.For(t, 90*time.Second, what, func() bool {
			for _, p := range protocols {
				if progress(p) < base[p]+n {
					return false
				}
			}
			return true
		})
	}

	members := map[string][]*etlProc{}
	for _, protocol := range protocols {
		for i := 1; i <= 3; i++ {
			name := fmt.Sprintf("%s-%d", protocol, i)
			members[protocol] = append(members[protocol], startETLMember(t, name, protocol, "etl-"+protocol, "etl-out-"+protocol, seeds))
		}
	}
	allOwned := func(ms []*etlProc) bool {
		n := 0
		for _, m := range ms {
			n += len(m.owned())
		}
		return n == partitions
	}
	for _, protocol := range protocols {
		wait.For(t, 60*time.Second, protocol+" members to own every partition", func() bool { return allOwned(members[protocol]) })
	}
	waitProgress("output from both groups", 300)

	for _, protocol := range protocols {
		members[protocol][1].kill()
	}
	t.Log("killed a member of each group")
	for _, protocol := range protocols {
		live := []*etlProc{members[protocol][0], members[protocol][2]}
		wait.For(t, 60*time.Second, protocol+" survivors to take the killed member's partitions", func() bool { return allOwned(live) })
	}
	waitProgress("output after the member kills", 300)

	coord := int32(-1)
	wait.For(t, 30*time.Second, "the coordinator", func() bool {
		coord = findCoordinator(t, addrs[1], "etl-consumer")
		return coord > 0
	})
	procs[coord].Kill()
	t.Logf("killed broker %d, the groups' coordinator", coord)
	waitProgress("output after the coordinator's broker was killed", 600)

	stopProducing()
	<-produced
	mu.Lock()
	want := len(acked)
	mu.Unlock()
	for _, protocol := range protocols {
		wait.For(t, 90*time.Second, fmt.Sprintf("every acknowledged input record written by the %s group", protocol), func() bool {
			mu.Lock()
			defer mu.Unlock()
			for v := range acked {
				if !seen[protocol][v] {
					return false
				}
			}
			return true
		})
	}
	end := time.Now()
	for _, protocol := range protocols {
		if o := overlaps(members[protocol], end); len(o) > 0 {
			t.Errorf("%s: partitions owned by two members at once:\n%s", protocol, strings.Join(o, "\n"))
		}
		for _, m := range members[protocol] {
			if m.killed.IsZero() {
				m.terminate(t)
			}
		}
	}

	var live []string
	for id, addr := range addrs {
		if id != coord {
			live = append(live, addr)
		}
	}
	fresh, err := kgo.NewClient(kgo.SeedBrokers(live...))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	fadm := kadm.NewClient(fresh)
	ends, err := fadm.ListEndOffsets(ctxT(t, 10*time.Second), "etl-in")
	if err != nil {
		t.Fatal(err)
	}
	for _, protocol := range protocols {
		offsets, err := fadm.FetchOffsets(ctxT(t, 10*time.Second), "etl-"+protocol)
		if err != nil {
			t.Fatal(err)
		}
		ends.Each(func(e kadm.ListedOffset) {
			if o, _ := offsets.Lookup("etl-in", e.Partition); o.At != e.Offset {
				t.Errorf("%s: committed offset of etl-in-%d is %d, want the end %d", protocol, e.Partition, o.At, e.Offset)
			}
		})
		t.Logf("%s: %d acknowledged input records, %d distinct written", protocol, want, progress(protocol))
	}
}

// TestOverlaps: the ownership check finds two members owning a partition at
// once, and leaves out a handover by revocation, ownership that ended lost
// and a killed member's ownership after its kill.
func TestOverlaps(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	member := func(name string, killed int, evs ...ownershipEvent) *etlProc {
		p := &etlProc{name: name, events: evs}
		if killed > 0 {
			p.killed = at(killed)
		}
		return p
	}
	ev := func(what string, p int32, s int) ownershipEvent { return ownershipEvent{what, p, at(s)} }
	for _, tc := range []struct {
		name    string
		members []*etlProc
		want    int
	}{
		{"handover", []*etlProc{member("a", 0, ev("assigned", 0, 1), ev("revoked", 0, 5)), member("b", 0, ev("assigned", 0, 5))}, 0},
		{"owned twice", []*etlProc{member("a", 0, ev("assigned", 0, 1), ev("revoked", 0, 6)), member("b", 0, ev("assigned", 0, 5))}, 1},
		{"still owned", []*etlProc{member("a", 0, ev("assigned", 0, 1)), member("b", 0, ev("assigned", 0, 5))}, 1},
		{"lost", []*etlProc{member("a", 0, ev("assigned", 0, 1), ev("lost", 0, 9)), member("b", 0, ev("assigned", 0, 5))}, 0},
		{"killed", []*etlProc{member("a", 4, ev("assigned", 0, 1)), member("b", 0, ev("assigned", 0, 5))}, 0},
		{"other partitions", []*etlProc{member("a", 0, ev("assigned", 0, 1)), member("b", 0, ev("assigned", 1, 1))}, 0},
	} {
		if got := overlaps(tc.members, at(20)); len(got) != tc.want {
			t.Errorf("%s: %v, want %d overlaps", tc.name, got, tc.want)
		}
	}
}
