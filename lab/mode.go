package lab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/consumer"
	"github.com/zkafka/zkafka/internal/pace"
)

// live is a mode's state as its events arrive: for the waits and the
// progress line. The runner's mutex guards it.
type live struct {
	mode        string
	phase       string
	step, steps int
	owners      map[int32]map[string]bool
	paused      map[string]bool
	rebalancing map[string]bool
	members     map[string]bool
	stalled     map[string]bool
	rounds      int
	maxGen      int32
	processed   map[int32]map[int64]bool
	ends        map[int32]int64 // set when producing stopped
	starts      map[int32]int64
}

func newLive(mode string, starts map[int32]int64) *live {
	return &live{
		mode: mode, owners: map[int32]map[string]bool{}, paused: map[string]bool{}, rebalancing: map[string]bool{},
		members: map[string]bool{}, stalled: map[string]bool{}, maxGen: -1, processed: map[int32]map[int64]bool{}, starts: starts,
	}
}

func (l *live) apply(e Event) {
	switch e.Type {
	case consumer.EventPartitionsAssigned.String():
		for _, p := range e.Partitions {
			if l.owners[p] == nil {
				l.owners[p] = map[string]bool{}
			}
			l.owners[p][e.Member] = true
		}
	case consumer.EventPartitionsRevoked.String(), consumer.EventPartitionsLost.String():
		for _, p := range e.Partitions {
			delete(l.owners[p], e.Member)
		}
	case consumer.EventFetchingPaused.String():
		l.paused[e.Member] = true
	case consumer.EventFetchingResumed.String():
		l.paused[e.Member] = false
	case consumer.EventRebalanceStarted.String():
		l.rebalancing[e.Member] = true
		if l.phase == PhaseScenario && l.isLegacy() {
			l.rounds++
		}
	case consumer.EventRebalanceDone.String(), consumer.EventRebalanceFailed.String():
		l.rebalancing[e.Member] = false
	case consumer.EventJoined.String():
		if e.Generation > l.maxGen {
			l.maxGen = e.Generation
			if l.phase == PhaseScenario {
				l.rounds++
			}
		}
	case TypeProcessed:
		p := e.Partitions[0]
		if l.processed[p] == nil {
			l.processed[p] = map[int64]bool{}
		}
		l.processed[p][e.Offset] = true
	case TypePhase:
		l.phase = e.Note
	case TypeMarker:
		switch e.Note {
		case MarkJoin:
			l.members[e.Member] = true
		case MarkStall:
			l.stalled[e.Member] = true
		case MarkReturn:
			delete(l.stalled, e.Member)
		case MarkLeave, MarkKill:
			delete(l.members, e.Member)
			l.rebalancing[e.Member] = false
			for _, ms := range l.owners {
				delete(ms, e.Member)
			}
		case MarkRestart:
			l.paused[e.Member] = false
			l.rebalancing[e.Member] = false
			for _, ms := range l.owners {
				delete(ms, e.Member)
			}
		}
	}
}

func (l *live) isLegacy() bool { return l.maxGen < 0 }

// stable reports whether every partition is fetched by a live member, no
// member is rebalancing and none is stalled, and, when there are
// partitions enough for all, every member has a share: a consumer-protocol
// member hears of its share heartbeats after it joined, once the owners
// let the partitions go, and owns nothing meanwhile.
func (l *live) stable(partitions int) bool {
	if len(l.stalled) > 0 {
		return false
	}
	for _, on := range l.rebalancing {
		if on {
			return false
		}
	}
	if partitions >= len(l.members) {
		share := map[string]bool{}
		for _, ms := range l.owners {
			for m := range ms {
				share[m] = true
			}
		}
		for m := range l.members {
			if !share[m] {
				return false
			}
		}
	}
	for p := range int32(partitions) {
		ok := false
		for m := range l.owners[p] {
			ok = ok || (l.members[m] && !l.paused[m])
		}
		if !ok {
			return false
		}
	}
	return true
}

// drained reports whether every record up to the end offsets was processed.
func (l *live) drained() bool {
	if l.ends == nil {
		return false
	}
	for p, end := range l.ends {
		if int64(len(l.processed[p])) < end-l.starts[p] {
			return false
		}
	}
	return true
}

func (l *live) count() int {
	n := 0
	for _, ps := range l.processed {
		n += len(ps)
	}
	return n
}

// member is one consumer of the group and the loop that processes its records.
type member struct {
	name   string
	c      memberClient
	cancel context.CancelFunc
	done   chan struct{}
	stall  atomic.Int64 // nanoseconds to stall before the next record
	quit   atomic.Bool  // stop after the current batch
	poll   context.CancelFunc
}

// modeRun is one mode's run.
type modeRun struct {
	r       *runner
	mode    Mode
	group   string
	members map[int]*member
	// coordinator follows the group's coordinator in scenarios that kill
	// brokers (coordinator modes); killed is the broker down, if any.
	coordinator *coordinatorWatch
	killed      *int32
}

func (r *runner) runMode(ctx context.Context, m Mode) (err error) {
	mr := &modeRun{r: r, mode: m, group: fmt.Sprintf("%s-%s", r.o.Topic, m.Name), members: map[int]*member{}}
	starts, err := r.commitStart(ctx, m, mr.group)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.live = newLive(m.Name, starts)
	r.mu.Unlock()
	for p, off := range starts {
		r.add(Event{Mode: m.Name, Type: TypeStartOffset, Partitions: []int32{p}, Offset: off})
	}
	mr.phase(PhaseWarmUp)
	if r.sc.KillsBrokers && !m.Legacy {
		mr.coordinator = mr.watchCoordinator(ctx)
		defer mr.coordinator.close()
	}
	pctx, stopProducing := context.WithCancel(ctx)
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		r.produce(pctx)
	}()
	stopProgress := r.progress(m.Name)
	defer func() {
		stopProducing()
		<-produced
		if err != nil {
			mr.phase(PhaseAborted)
		}
		mr.closeAll()
		mr.restartKilled()
		stopProgress()
	}()

	steps := r.sc.Steps(r.o)
	r.mu.Lock()
	r.live.steps = len(steps)
	r.mu.Unlock()
	for i := 1; i <= r.sc.Initial(r.o); i++ {
		if err := mr.startMember(ctx, i); err != nil {
			return err
		}
	}
	if err := mr.waitStable(ctx, 0, time.Minute); err != nil {
		return fmt.Errorf("the group did not settle before the scenario: %w", err)
	}
	mr.stats("baseline")
	mr.phase(PhaseScenario)
	for i, s := range steps {
		if err := pace.Sleep(ctx, r.o.Step); err != nil {
			return err
		}
		r.mu.Lock()
		r.live.step = i + 1
		r.mu.Unlock()
		// What the previous step cost shows in the counters by now.
		mr.stats(stepNote(i + 1))
		if err := mr.do(ctx, s); err != nil {
			return err
		}
	}
	// Let the last action play out: at least a step, at most until a crash
	// is noticed and a stalled member has been removed and rejoined.
	limit := r.o.Step + max(r.o.SessionTimeout, r.consumerSession) + r.o.ZKSessionTimeout + r.o.MaxPollInterval
	if err := mr.waitStable(ctx, r.o.Step, limit); err != nil && ctx.Err() != nil {
		return err
	}
	stopProducing()
	<-produced
	ends, err := r.endOffsets(ctx)
	if err != nil {
		return err
	}
	for p, off := range ends {
		r.add(Event{Mode: m.Name, Type: TypeEndOffset, Partitions: []int32{p}, Offset: off})
	}
	mr.phase(PhaseDrain)
	r.mu.Lock()
	r.live.ends = ends
	r.mu.Unlock()
	if err := mr.wait(ctx, 0, r.o.DrainTimeout, func(l *live) bool { return l.drained() }); err != nil && ctx.Err() != nil {
		return err
	}
	mr.stats(stepNote(len(steps) + 1))
	mr.stats("final")
	mr.phase(PhaseDone)
	return nil
}

func (mr *modeRun) phase(p string) {
	mr.r.add(Event{Mode: mr.mode.Name, Type: TypePhase, Note: p})
}

func (mr *modeRun) marker(note string, idx int) {
	mr.r.add(Event{Mode: mr.mode.Name, Type: TypeMarker, Note: note, Member: memberName(idx)})
}

func memberName(idx int) string { return "m" + strconv.Itoa(idx) }

// stepNote names the counters taken just before step n (1-based; one past
// the last step: after the scenario).
func stepNote(n int) string { return "step-" + strconv.Itoa(n) }

// stats logs every live member's counters.
func (mr *modeRun) stats(note string) {
	for idx, m := range mr.members {
		s := m.c.Stats()
		mr.r.add(Event{Mode: mr.mode.Name, Type: TypeStats, Member: memberName(idx), Note: note, Stats: &s})
	}
}

// waitStable waits at least minimum and then until the group is stable,
// up to limit.
func (mr *modeRun) waitStable(ctx context.Context, minimum, limit time.Duration) error {
	return mr.wait(ctx, minimum, limit, func(l *live) bool { return l.stable(mr.r.o.Partitions) })
}

// wait waits at least minimum and then until cond holds of the live state,
// up to limit in all.
func (mr *modeRun) wait(ctx context.Context, minimum, limit time.Duration, cond func(*live) bool) error {
	if err := pace.Sleep(ctx, minimum); err != nil {
		return err
	}
	return pace.Until(ctx, limit-minimum, func() bool {
		mr.r.mu.Lock()
		defer mr.r.mu.Unlock()
		return cond(mr.r.live)
	})
}

// do performs one scenario step.
func (mr *modeRun) do(ctx context.Context, s Step) error {
	switch s.Action {
	case MarkJoin:
		return mr.startMember(ctx, s.Member)
	case MarkLeave:
		mr.marker(MarkLeave, s.Member)
		mr.stop(s.Member, false)
	case MarkKill:
		mr.marker(MarkKill, s.Member)
		mr.stop(s.Member, true)
	case MarkRestart:
		mr.marker(MarkRestart, s.Member)
		mr.stop(s.Member, false)
		if err := pace.Sleep(ctx, mr.r.o.RestartDelay); err != nil {
			return err
		}
		return mr.startConsumer(ctx, s.Member)
	case MarkExpire:
		m := mr.members[s.Member]
		if m == nil {
			return fmt.Errorf("expire: no member %d", s.Member)
		}
		zc, ok := m.c.(*consumer.Consumer)
		if !ok {
			return fmt.Errorf("expire: member %s has no ZooKeeper session", m.name)
		}
		mr.marker(MarkExpire, s.Member)
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := zc.ExpireSession(ectx); err != nil {
			return fmt.Errorf("expire the session of member %s: %w", m.name, err)
		}
	case MarkCut:
		m := mr.members[s.Member]
		if m == nil {
			return fmt.Errorf("cut: no member %d", s.Member)
		}
		mr.r.add(Event{Mode: mr.mode.Name, Type: TypeMarker, Note: MarkCut, Member: m.name, Count: int(s.Stall.Milliseconds())})
		m.c.CutNetwork(s.Stall)
		// The next action waits for this cut to end.
		return pace.Sleep(ctx, s.Stall)
	case MarkStall:
		m := mr.members[s.Member]
		if m == nil {
			return fmt.Errorf("stall: no member %d", s.Member)
		}
		mr.r.add(Event{Mode: mr.mode.Name, Type: TypeMarker, Note: MarkStall, Member: m.name, Count: int(s.Stall.Milliseconds())})
		m.stall.Store(int64(s.Stall))
	case MarkKillBroker:
		// The next action waits for the cluster to notice.
		return mr.killBroker(ctx)
	case MarkRestartBroker:
		return mr.restartBroker(ctx)
	}
	return nil
}

// startMember marks a join and starts the member's consumer.
func (mr *modeRun) startMember(ctx context.Context, idx int) error {
	mr.marker(MarkJoin, idx)
	return mr.startConsumer(ctx, idx)
}

func (mr *modeRun) startConsumer(ctx context.Context, idx int) error {
	r, name := mr.r, memberName(idx)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var c memberClient
	var err error
	if r.o.Client == ClientKgo {
		c, err = newKgoMember(sctx, mr, name)
	} else {
		c, err = mr.newConsumer(sctx, name)
	}
	if err != nil {
		return fmt.Errorf("start member %s: %w", name, err)
	}
	lctx, stop := context.WithCancel(context.Background())
	pctx, stopPoll := context.WithCancel(lctx)
	m := &member{name: name, c: c, cancel: stop, poll: stopPoll, done: make(chan struct{})}
	mr.members[idx] = m
	go func() {
		defer close(m.done)
		mr.process(lctx, pctx, m)
	}()
	return nil
}

// newConsumer starts a member with zkafka's consumer.
func (mr *modeRun) newConsumer(ctx context.Context, name string) (*consumer.Consumer, error) {
	r := mr.r
	var self atomic.Pointer[consumer.Consumer]
	cfg := consumer.Config{
		// The application commits what it processed, after each batch and
		// before giving partitions up, as Kafka Streams does: a member
		// removed mid-batch then sees its commit refused.
		DisableAutoCommit: true,
		OnRevoked: func(map[string][]int32) {
			if c := self.Load(); c != nil {
				ctx, cancel := context.WithTimeout(context.Background(), r.commitTimeout())
				defer cancel()
				_ = c.Commit(ctx)
			}
		},
		GroupID:            mr.group,
		Topics:             []string{r.o.Topic},
		ClientID:           name,
		AutoOffsetReset:    "earliest",
		MaxPollRecords:     r.o.MaxPollRecords,
		AutoCommitInterval: r.o.AutoCommitInterval,
		OnEvent:            func(ev consumer.Event) { r.consumerEvent(mr.mode.Name, name, ev) },
		Logger:             r.log.With(zap.String("mode", mr.mode.Name), zap.String("member", name)),
	}
	switch {
	case mr.mode.Legacy:
		cfg.ZooKeeperConnect = r.o.ZooKeeper
		cfg.ZooKeeperSessionTimeout = r.o.ZKSessionTimeout
		cfg.PartitionAssignmentStrategy = []string{mr.mode.Strategy}
	case mr.mode.Consumer:
		// The brokers' group.consumer.* configs set the session timeout
		// and the heartbeat interval.
		cfg.BootstrapServers = r.o.Bootstrap
		cfg.GroupProtocol, cfg.GroupRemoteAssignor = "consumer", mr.mode.Strategy
		cfg.RebalanceTimeout = r.o.MaxPollInterval
		if mr.mode.Static {
			cfg.GroupInstanceID = name
		}
	default:
		cfg.PartitionAssignmentStrategy = []string{mr.mode.Strategy}
		cfg.BootstrapServers = r.o.Bootstrap
		cfg.SessionTimeout = r.o.SessionTimeout
		cfg.HeartbeatInterval = r.o.HeartbeatInterval
		cfg.RebalanceTimeout = r.o.MaxPollInterval
		if mr.mode.Static {
			cfg.GroupInstanceID = name
		}
	}
	c, err := consumer.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	self.Store(c)
	return c, nil
}

// process is the member's application: poll, process each record for
// Options.Processing, log it, commit. ctx ends it at once (a kill); a
// graceful stop sets quit and ends pollCtx, so the batch in hand is
// finished and committed first.
func (mr *modeRun) process(ctx, pollCtx context.Context, m *member) {
	for !m.quit.Load() {
		recs, err := m.c.Poll(pollCtx)
		if err != nil {
			return
		}
		for _, rec := range recs {
			if d := time.Duration(m.stall.Swap(0)); d > 0 {
				if pace.Sleep(ctx, d) != nil {
					return
				}
				mr.r.add(Event{Mode: mr.mode.Name, Type: TypeMarker, Note: MarkReturn, Member: m.name})
			}
			if pace.Sleep(ctx, processingTime(mr.r.o.Processing)) != nil {
				return
			}
			mr.r.add(Event{Mode: mr.mode.Name, Member: m.name, Type: TypeProcessed, Partitions: []int32{rec.Partition},
				Offset: rec.Offset, Key: string(rec.Key)})
		}
		cctx, cancel := context.WithTimeout(ctx, mr.r.commitTimeout())
		_ = m.c.Commit(cctx) // a refusal is in the event log
		cancel()
	}
}

// commitTimeout bounds a member's Commit, which waits while the coordinator
// moves: at most half of max.poll.interval.ms, so that a member waiting on a
// failover still polls in time and keeps its place, and 5 s.
func (r *runner) commitTimeout() time.Duration {
	return min(5*time.Second, r.o.MaxPollInterval/2)
}

// processingTime is one record's processing: uniform between nothing and
// twice the mean, as real processing varies. With a fixed time, every
// eager rebalance would restart all members' batches at once and keep them
// in step, so the next rebalance would find them all finishing together.
func processingTime(mean time.Duration) time.Duration {
	if mean <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(2*int64(mean) + 1))
}

// stop ends a member: killed (no commit, no goodbye) or closed.
func (mr *modeRun) stop(idx int, kill bool) {
	m := mr.members[idx]
	if m == nil {
		return
	}
	delete(mr.members, idx)
	if kill {
		m.cancel()
	} else {
		m.quit.Store(true)
		m.poll()
	}
	<-m.done
	m.cancel()
	s := m.c.Stats()
	mr.r.add(Event{Mode: mr.mode.Name, Type: TypeStats, Member: m.name, Note: "final", Stats: &s})
	if kill {
		m.c.Kill()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.c.Close(ctx); err != nil {
		mr.r.log.Info("member close", zap.String("member", m.name), zap.Error(err))
	}
}

// closeAll closes the remaining members at once.
func (mr *modeRun) closeAll() {
	var wg sync.WaitGroup
	for idx, m := range mr.members {
		delete(mr.members, idx)
		wg.Go(func() {
			m.quit.Store(true)
			m.poll()
			<-m.done
			m.cancel()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = m.c.Close(ctx)
		})
	}
	wg.Wait()
}

// produce writes keyed records at Options.Rate until ctx ends, then
// flushes.
func (r *runner) produce(ctx context.Context) {
	const tick = 20 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	var seq int64
	debt := 0.0
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := r.kcl.Flush(fctx); err != nil {
				r.log.Warn("flush of the load failed", zap.Error(err))
			}
			return
		case <-t.C:
		}
		debt += float64(r.o.Rate) * tick.Seconds()
		for ; debt >= 1; debt-- {
			seq++
			rec := &kgo.Record{Key: fmt.Appendf(nil, "key-%d", seq%1000), Value: fmt.Appendf(nil, "%d", seq)}
			r.kcl.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
				if err != nil {
					r.log.Warn("produce failed", zap.Error(err))
				}
			})
		}
	}
}

// progress prints the mode's live progress line until stopped.
func (r *runner) progress(mode string) (stop func()) {
	return pace.Progress(r.o.Progress, 250*time.Millisecond, func() string {
		r.mu.Lock()
		defer r.mu.Unlock()
		l := r.live
		return fmt.Sprintf("%-20s %-9s step %d/%d  members %d  rebalances %d  processed %d   ",
			mode, l.phase, l.step, l.steps, len(l.members), l.rounds, l.count())
	})
}
