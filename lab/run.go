package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/consumer"
	"github.com/zkafka/zkafka/internal/pace"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// Options are a run's settings. The report states them.
type Options struct {
	Scenario   string
	Modes      []Mode
	Members    int
	Partitions int
	// Rate is the load in records per second; Processing the mean time a
	// record takes a member to process (uniform between none and twice
	// that); MaxPollRecords (max.poll.records)
	// the most records one Poll returns, so a batch takes at most
	// MaxPollRecords × Processing.
	Rate           int
	Processing     time.Duration
	MaxPollRecords int

	SessionTimeout     time.Duration // session.timeout.ms
	HeartbeatInterval  time.Duration // heartbeat.interval.ms
	MaxPollInterval    time.Duration // max.poll.interval.ms
	ZKSessionTimeout   time.Duration // zookeeper.session.timeout.ms (legacy)
	AutoCommitInterval time.Duration // auto.commit.interval.ms, both kinds
	// Step is the time between the scenario's actions (and before the first).
	Step time.Duration
	// RestartDelay is how long a restarting member stays down.
	RestartDelay time.Duration
	// DrainTimeout bounds the wait for every produced record to be
	// processed once producing stopped.
	DrainTimeout time.Duration

	Topic     string // created with Partitions; an existing topic must have as many
	Bootstrap []string
	ZooKeeper string

	// Client runs the members: ClientZkafka (the default when empty) or,
	// for coordinator modes only, ClientKgo.
	Client string
	// Brokers kills and restarts brokers, for scenarios that do.
	Brokers BrokerControl

	Progress io.Writer   // the live progress line; nil for none
	Logger   *zap.Logger // nil for none
}

// DefaultOptions are the teaching defaults. A member rejoins only from
// Poll, so what a rebalance costs depends on how long a batch takes: the
// load is what the full group can process (800 records/s, 8 members of
// 100 records/s each), so members are busy and a batch of
// max.poll.records takes half a second; the heartbeat is short. With
// members to spare, batches are short and an eager stop is cheap, while a
// cooperative move still waits for its second round: cooperative would
// look slower than it is where it matters.
func DefaultOptions() Options {
	return Options{
		Scenario:           "scale-out",
		Members:            8,
		Partitions:         24,
		Rate:               800,
		Processing:         10 * time.Millisecond,
		MaxPollRecords:     50,
		SessionTimeout:     6 * time.Second,
		HeartbeatInterval:  200 * time.Millisecond,
		MaxPollInterval:    8 * time.Second,
		ZKSessionTimeout:   6 * time.Second,
		AutoCommitInterval: 2 * time.Second,
		Step:               3 * time.Second,
		RestartDelay:       time.Second,
		DrainTimeout:       30 * time.Second,
		Bootstrap:          []string{"127.0.0.1:9092"},
		ZooKeeper:          "127.0.0.1:2181",
		Client:             ClientZkafka,
	}
}

// Result is a run's log and whether it finished.
type Result struct {
	Options Options
	Started time.Time
	Events  []Event
	// Partial is set when the run was interrupted; Reason says how.
	Partial bool
	Reason  string
	// ConsumerSessionTimeout and ConsumerHeartbeatInterval are the brokers'
	// group.consumer.session.timeout.ms and
	// group.consumer.heartbeat.interval.ms, which the consumer-protocol
	// modes follow instead of the members' settings; zero without such a
	// mode.
	ConsumerSessionTimeout, ConsumerHeartbeatInterval time.Duration
}

// runner owns a run's log and live state.
type runner struct {
	o     Options
	sc    Scenario
	start time.Time
	log   *zap.Logger
	adm   *kadm.Client
	kcl   *kgo.Client
	zk    *zkclient.Client // nil without legacy modes
	// consumerSession and consumerHeartbeat are the brokers' settings for
	// consumer-protocol groups, read when such a mode runs.
	consumerSession, consumerHeartbeat time.Duration
	mu                                 sync.Mutex
	events                             []Event
	live                               *live
}

// Run checks the cluster, creates the topic and runs the scenario under
// each mode in turn. When ctx ends mid-run (Ctrl-C), the members are
// closed and the Result so far is returned, Partial, with ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	sc, err := FindScenario(o.Scenario)
	if err != nil {
		return nil, err
	}
	if len(o.Modes) == 0 {
		return nil, errors.New("no modes to run")
	}
	if i := slices.IndexFunc(o.Modes, func(m Mode) bool { return !m.Legacy }); sc.LegacyOnly && i >= 0 {
		return nil, fmt.Errorf("scenario %s applies to legacy modes only, not %s", sc.Name, o.Modes[i].Name)
	}
	legacy := slices.IndexFunc(o.Modes, func(m Mode) bool { return m.Legacy }) // the first legacy mode, or -1
	if sc.CoordinatorOnly && legacy >= 0 {
		return nil, fmt.Errorf("scenario %s applies to coordinator modes only, not %s", sc.Name, o.Modes[legacy].Name)
	}
	switch o.Client {
	case "", ClientZkafka:
	case ClientKgo:
		if legacy >= 0 {
			return nil, fmt.Errorf("client kgo runs coordinator modes only: %s is the 0.8 ZooKeeper consumer, which only zkafka's client implements", o.Modes[legacy].Name)
		}
		if i := slices.IndexFunc(o.Modes, func(m Mode) bool { return m.Consumer }); i >= 0 {
			return nil, fmt.Errorf("client kgo runs the classic coordinator modes only, not %s: the lab maps kgo's classic rebalance callbacks to its events", o.Modes[i].Name)
		}
	default:
		return nil, fmt.Errorf("unknown client %q (clients: %s, %s)", o.Client, ClientZkafka, ClientKgo)
	}
	if sc.KillsBrokers && o.Brokers == nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, errNoBrokerControl)
	}
	if o.Members < 1 || o.Partitions < 1 || o.Rate < 1 {
		return nil, fmt.Errorf("members (%d), partitions (%d) and rate (%d) must be positive", o.Members, o.Partitions, o.Rate)
	}
	if o.Topic == "" {
		return nil, errors.New("no topic")
	}
	r := &runner{o: o, sc: sc, log: o.Logger}
	if r.log == nil {
		r.log = zap.NewNop()
	}
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	defer r.close()
	if err := r.ensureTopic(ctx); err != nil {
		return nil, err
	}
	r.start = time.Now()
	res := &Result{Options: o, Started: r.start, ConsumerSessionTimeout: r.consumerSession, ConsumerHeartbeatInterval: r.consumerHeartbeat}
	for _, m := range o.Modes {
		err := r.runMode(ctx, m)
		if err != nil {
			res.Events, res.Partial = r.snapshot(), true
			res.Reason = fmt.Sprintf("interrupted during mode %s: %v", m.Name, err)
			return res, err
		}
	}
	res.Events = r.snapshot()
	return res, nil
}

func (r *runner) connect(ctx context.Context) error {
	// A short metadata min age: the topic's leaders are seen as soon as
	// they are elected, not 5 s (kgo's default) after the topic is created.
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.o.Bootstrap...), kgo.DefaultProduceTopic(r.o.Topic),
		kgo.ProducerLinger(5*time.Millisecond), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	r.kcl, r.adm = cl, kadm.NewClient(cl)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := r.adm.BrokerMetadata(cctx); err != nil {
		cl.Close()
		return fmt.Errorf("cluster not reachable at %v (start it with ./scripts/cluster.sh up, or give --bootstrap-server): %w", r.o.Bootstrap, err)
	}
	if slices.ContainsFunc(r.o.Modes, func(m Mode) bool { return m.Legacy }) {
		zk, err := zkclient.Connect(cctx, zkclient.Config{Connect: r.o.ZooKeeper, Logger: r.log})
		if err != nil {
			cl.Close()
			return fmt.Errorf("ZooKeeper not reachable at %s (the legacy modes need it; give --zookeeper): %w", r.o.ZooKeeper, err)
		}
		r.zk = zk
	}
	if slices.ContainsFunc(r.o.Modes, func(m Mode) bool { return m.Consumer }) {
		if err := r.readConsumerProtocolConfigs(cctx); err != nil {
			r.close()
			return err
		}
	}
	return nil
}

// readConsumerProtocolConfigs checks that the brokers serve the consumer
// group protocol and reads the session timeout and heartbeat interval they
// give its members.
func (r *runner) readConsumerProtocolConfigs(ctx context.Context) error {
	brokers, err := r.adm.ListBrokers(ctx)
	if err != nil || len(brokers) == 0 {
		return fmt.Errorf("list brokers: %w", err)
	}
	configs, err := r.adm.DescribeBrokerConfigs(ctx, brokers[0].NodeID)
	if err == nil && len(configs) == 0 {
		err = errors.New("no answer")
	}
	if err == nil {
		err = configs[0].Err
	}
	if err != nil {
		return fmt.Errorf("describe the brokers' configs: %w", err)
	}
	values := map[string]string{}
	for _, c := range configs[0].Configs {
		values[c.Key] = c.MaybeValue()
	}
	if !slices.Contains(strings.Split(values["group.coordinator.rebalance.protocols"], ","), "consumer") {
		return fmt.Errorf("the consumer-protocol modes need brokers whose group.coordinator.rebalance.protocols includes consumer (it is %q)",
			values["group.coordinator.rebalance.protocols"])
	}
	for key, dst := range map[string]*time.Duration{
		"group.consumer.session.timeout.ms": &r.consumerSession, "group.consumer.heartbeat.interval.ms": &r.consumerHeartbeat,
	} {
		ms, err := strconv.ParseInt(values[key], 10, 64)
		if err != nil {
			return fmt.Errorf("the brokers' %s: %q is not a number of milliseconds", key, values[key])
		}
		*dst = time.Duration(ms) * time.Millisecond
	}
	return nil
}

func (r *runner) close() {
	if r.zk != nil {
		r.zk.Close()
	}
	r.kcl.Close()
}

// ensureTopic creates the topic, or accepts an existing one with the
// partition count asked for.
func (r *runner) ensureTopic(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	details, err := r.adm.ListTopics(cctx, r.o.Topic)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	if d, ok := details[r.o.Topic]; ok && d.Err == nil {
		if n := len(d.Partitions); n != r.o.Partitions {
			return fmt.Errorf("topic %s exists with %d partitions, the run needs %d: give another --topic or --partitions %d", r.o.Topic, n, r.o.Partitions, n)
		}
	} else {
		brokers, err := r.adm.ListBrokers(cctx)
		if err != nil {
			return fmt.Errorf("list brokers: %w", err)
		}
		rf := int16(min(3, len(brokers)))
		resp, err := r.adm.CreateTopic(cctx, int32(r.o.Partitions), rf, nil, r.o.Topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", r.o.Topic, err)
		}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		details, err := r.adm.ListTopics(cctx, r.o.Topic)
		if err == nil {
			d := details[r.o.Topic]
			ready := d.Err == nil && len(d.Partitions) == r.o.Partitions
			for _, p := range d.Partitions {
				ready = ready && p.Leader >= 0 && p.Err == nil
			}
			if ready {
				return nil
			}
			r.log.Debug("waiting for the topic's leaders", zap.Any("detail", d))
		}
		select {
		case <-cctx.Done():
			return fmt.Errorf("topic %s has no leader for every partition: %w", r.o.Topic, cctx.Err())
		case <-tick.C:
		}
	}
}

func (r *runner) now() float64 { return time.Since(r.start).Seconds() }

// add appends an event stamped now.
func (r *runner) add(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.T = r.now()
	r.events = append(r.events, e)
	if r.live != nil && r.live.mode == e.Mode {
		r.live.apply(e)
	}
}

func (r *runner) snapshot() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// consumerEvent turns a consumer's event into the log's.
func (r *runner) consumerEvent(mode, member string, ev consumer.Event) {
	if ev.Type == consumer.EventRecordsDelivered {
		return // the member's processed records say more
	}
	e := Event{Mode: mode, Member: member, Type: ev.Type.String(), Generation: ev.Generation, Partitions: ev.Partitions[r.o.Topic]}
	if ev.Err != nil {
		e.Err = ev.Err.Error()
		e.Fenced = ev.Type == consumer.EventOffsetsCommitted &&
			(errors.Is(ev.Err, kerr.UnknownMemberID) || errors.Is(ev.Err, kerr.IllegalGeneration) || errors.Is(ev.Err, kerr.FencedInstanceID) ||
				errors.Is(ev.Err, kerr.StaleMemberEpoch) || errors.Is(ev.Err, kerr.FencedMemberEpoch))
		e.Conflict = errors.Is(ev.Err, consumer.ErrOwnerConflict)
	}
	r.add(e)
}

// commitStart stores the topic's end offsets as the new group's committed
// offsets, so a mode consumes only the records produced while it runs.
func (r *runner) commitStart(ctx context.Context, m Mode, group string) (map[int32]int64, error) {
	ends, err := r.listEndOffsets(ctx)
	if err != nil {
		return nil, err
	}
	starts := map[int32]int64{}
	offsets := kadm.Offsets{}
	for _, lo := range ends[r.o.Topic] {
		if lo.Err != nil {
			return nil, fmt.Errorf("end offset of %s-%d: %w", r.o.Topic, lo.Partition, lo.Err)
		}
		starts[lo.Partition] = lo.Offset
		offsets.Add(kadm.Offset{Topic: r.o.Topic, Partition: lo.Partition, At: lo.Offset, LeaderEpoch: -1})
		if m.Legacy {
			path := zkpaths.ConsumerOffsetPath(group, r.o.Topic, lo.Partition)
			if err := r.zk.CreateIfMissing(path, zkpaths.EncodeConsumerOffset(lo.Offset)); err != nil {
				return nil, fmt.Errorf("commit start offset: %w", err)
			}
		}
	}
	if !m.Legacy {
		resp, err := r.adm.CommitOffsets(ctx, group, offsets)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("commit start offsets for %s: %w", group, err)
		}
	}
	return starts, nil
}

// endOffsets reads the topic's end offsets once producing stopped.
func (r *runner) endOffsets(ctx context.Context) (map[int32]int64, error) {
	ends, err := r.listEndOffsets(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, lo := range ends[r.o.Topic] {
		if lo.Err != nil {
			return nil, fmt.Errorf("end offset of %s-%d: %w", r.o.Topic, lo.Partition, lo.Err)
		}
		out[lo.Partition] = lo.Offset
	}
	return out, nil
}

// listEndOffsets lists the topic's end offsets, asking again for up to 10 s
// while a partition's answer is retriable, as a client would: a leader
// that has not yet heard of a new topic, or one that just lost it to a
// broker failure, answers UNKNOWN_TOPIC_OR_PARTITION or
// NOT_LEADER_OR_FOLLOWER for a moment. The callers report a partition's
// error that outlasts it.
func (r *runner) listEndOffsets(ctx context.Context) (kadm.ListedOffsets, error) {
	var ends kadm.ListedOffsets
	var err error
	_ = pace.Until(ctx, 10*time.Second, func() bool {
		if ends, err = r.adm.ListEndOffsets(ctx, r.o.Topic); err != nil {
			return true
		}
		settled := true
		ends.Each(func(lo kadm.ListedOffset) {
			settled = settled && (lo.Err == nil || !kerr.IsRetriable(lo.Err))
		})
		return settled
	})
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	return ends, nil
}
