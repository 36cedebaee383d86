package controller

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

// DefaultInterBrokerListener is the listener the controller connects to brokers on when
// Config.InterBrokerListener is empty (Kafka's inter.broker.listener.name default).
const DefaultInterBrokerListener = "PLAINTEXT"

// Config configures a broker's controller component.
type Config struct {
	// BrokerID is this broker's broker.id.
	BrokerID int32
	// InterBrokerListener names the listener, as registered in /brokers/ids/<id>, that the
	// controller connects to. Empty means DefaultInterBrokerListener.
	InterBrokerListener string
	// Logger is the parent of the "controller" and "state-change" loggers. Nil means no logs.
	Logger *zap.Logger
	// Dial connects to a broker's address (host:port). Nil means
	// wire.DialSecure with Security.
	Dial func(ctx context.Context, addr string) (BrokerClient, error)
	// Security is how the default Dial meets the inter-broker listener's
	// security protocol (TLS, SASL).
	Security wire.Security
	// UncleanLeaderElection is the broker's unclean.leader.election.enable; a topic overrides it
	// in /config/topics/<t>.
	UncleanLeaderElection bool
	// DeleteTopicEnable is delete.topic.enable: without it, deletion requests are removed
	// unprocessed.
	DeleteTopicEnable bool
	// AutoLeaderRebalance is auto.leader.rebalance.enable, with leader.imbalance.per.broker.percentage
	// and leader.imbalance.check.interval.seconds (the first check runs 5 s after a failover).
	AutoLeaderRebalance                bool
	LeaderImbalancePerBrokerPercentage int
	LeaderImbalanceCheckInterval       time.Duration
	// FeatureVersioning is inter.broker.protocol.version >= 2.7 (KIP-584): /feature is written
	// enabled, else disabled.
	FeatureVersioning bool
	// AlterIsr is inter.broker.protocol.version >= 2.7-IV2 (KIP-497): leaders change ISRs
	// through the controller's AlterIsr, so no watch is kept on reassigning partitions' state
	// znodes.
	AlterIsr bool
}

// BrokerClient is the controller's connection to one broker.
type BrokerClient interface {
	// Request sends req at the version it carries (req.GetVersion()) and returns the response.
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	Close() error
}

// Controller is a broker's controller component: it runs for election through /controller and,
// while elected, manages partition leadership (see the package documentation).
type Controller struct {
	cfg           Config
	store         znodeStore
	clock         kafka.Clock // event queue times, the /controller timestamp, the auto-rebalance timer
	newChannels   func(ctx context.Context, log *zap.Logger) brokerChannels
	pipelineDepth int // bounds the ZooKeeper requests in flight (pipeline.go)
	// openReadSessions opens the sessions an active controller reads partition states through
	// (read_sessions.go) at its first bulk read; nil for none. bulkReadMin is the smallest read that uses them.
	openReadSessions func(log *zap.Logger) []readSession
	bulkReadMin      int
	baseLog          *zap.Logger
	baseStateLog     *zap.Logger
	events           *fifo[queuedEvent]

	// Read by any goroutine.
	active   atomic.Bool
	epoch    atomic.Int32
	activeID atomic.Int32
	stopped  atomic.Bool

	startOnce  sync.Once
	stopOnce   sync.Once
	started    bool
	loopCtx    context.Context
	cancelLoop context.CancelFunc
	loopDone   chan struct{}
	watchers   sync.WaitGroup // the store's watch goroutines

	// Owned by the event loop.
	log          *zap.Logger // "controller", with controller-epoch while active
	stateLog     *zap.Logger // "state-change", likewise
	cc           *controllerContext
	session      int64 // the ZooKeeper session that won the election
	channels     brokerChannels
	watches      map[watchKey]armedWatch
	nextWatchID  uint64
	activeCtx    context.Context // ends at resignation; active-scope watch goroutines follow it
	cancelActive context.CancelFunc
	// While active: the read sessions, and whether this term has opened them.
	readSessions       []readSession
	readSessionsOpened bool

	uncleanDefault bool        // the broker's unclean.leader.election.enable, as last told
	term           uint64      // counts terms as active controller, to ignore a past term's timers
	rebalanceTimer kafka.Timer // the next auto-rebalance check, while active
}

// New returns a controller for the broker cfg.BrokerID on the session zk. It registers the
// controller's session callbacks, so the broker must register its own callbacks (re-registering
// /brokers/ids/<id> on a new session) before calling New: callbacks run in registration order
// and the controller's re-election must follow the re-registration. The persistent paths
// (zkpaths.PersistentPaths) must exist before Start, as the broker creates them at start-up.
func New(cfg Config, zk *zkclient.Client) *Controller {
	if cfg.InterBrokerListener == "" {
		cfg.InterBrokerListener = DefaultInterBrokerListener
	}
	if cfg.Dial == nil {
		clientID := strconv.Itoa(int(cfg.BrokerID))
		cfg.Dial = func(ctx context.Context, addr string) (BrokerClient, error) {
			c, err := wire.DialSecure(ctx, addr, clientID, cfg.Security)
			if err != nil {
				return nil, err
			}
			return wireClient{c}, nil
		}
	}
	c := newController(cfg, kafka.SystemClock{}, zkPipelineDepth)
	c.store = sessionStore{Client: zk, wg: &c.watchers}
	c.openReadSessions = func(log *zap.Logger) []readSession { return openReadSessions(zk, log) }
	c.newChannels = func(ctx context.Context, log *zap.Logger) brokerChannels {
		return newChannelManager(ctx, cfg.Dial, cfg.InterBrokerListener, log)
	}
	zk.OnSessionExpired(c.onSessionExpired)
	zk.OnNewSession(func() { c.enqueue(registerBrokerAndReelectEvent{}) })
	return c
}

// newController returns a controller without its store and channels, which the caller sets
// before Start: New the real ones, the scenario tests in-memory ones.
func newController(cfg Config, clock kafka.Clock, pipelineDepth int) *Controller {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	id := zap.Int32("broker-id", cfg.BrokerID)
	c := &Controller{
		cfg:           cfg,
		clock:         clock,
		pipelineDepth: pipelineDepth,
		bulkReadMin:   bulkReadMin,
		baseLog:       cfg.Logger.Named("controller").With(id),
		baseStateLog:  cfg.Logger.Named("state-change").With(id),
		events:        newFIFO[queuedEvent](),
		loopDone:      make(chan struct{}),
		watches:       map[watchKey]armedWatch{},
	}
	c.log, c.stateLog = c.baseLog, c.baseStateLog
	c.uncleanDefault = cfg.UncleanLeaderElection
	c.activeID.Store(-1)
	return c
}

// Start starts the event loop and queues the Startup event, which runs for election; it returns
// at once. The controller runs until Stop is called or ctx ends; call Stop in either case.
func (c *Controller) Start(ctx context.Context) {
	c.startOnce.Do(func() {
		if c.stopped.Load() {
			return
		}
		c.started = true
		c.loopCtx, c.cancelLoop = context.WithCancel(ctx)
		c.enqueue(startupEvent{})
		go c.run()
	})
}

// Stop stops the event loop, resigns if this broker is the active controller (stopping every
// request sender) and waits for every goroutine of the controller. It leaves ZooKeeper alone:
// /controller goes away when the broker closes its session, as in Kafka. Calling it again does
// nothing.
func (c *Controller) Stop() {
	c.stopOnce.Do(func() {
		c.stopped.Store(true)
		c.startOnce.Do(func() {}) // a later Start does nothing
		if !c.started {
			return
		}
		c.cancelLoop()
		<-c.loopDone
		// The loop has returned, so this goroutine now owns the controller's state.
		c.resign()
		c.watchers.Wait()
		abandon(c.events.clear())
		c.activeID.Store(-1)
	})
}

// IsActive reports whether this broker is the active controller.
func (c *Controller) IsActive() bool { return c.active.Load() }

// Epoch returns the controller epoch of this broker's current or most recent term as the active
// controller, 0 if it has never been elected.
func (c *Controller) Epoch() int32 { return c.epoch.Load() }

// ActiveControllerID returns the broker id in /controller as last read, or -1 if unknown.
func (c *Controller) ActiveControllerID() int32 { return c.activeID.Load() }

func (c *Controller) enqueue(ev event) {
	c.events.push(queuedEvent{ev: ev, enqueued: c.clock.Now()})
}

// onSessionExpired runs on zkclient's goroutine. Queued events belong to the dead session, so
// they are dropped, and Expire goes first (Kafka clears the queue the same way). Until the loop
// processes Expire, fencedMulti refuses to write because the session id has changed.
func (c *Controller) onSessionExpired() {
	if c.stopped.Load() {
		return
	}
	dropped := c.events.clear()
	abandon(dropped)
	c.baseLog.Info("ZooKeeper session expired; dropping queued controller events", zap.Int("dropped", len(dropped)))
	c.enqueue(expireEvent{})
}

// abandon answers the API calls among dropped events with NOT_CONTROLLER.
func abandon(dropped []queuedEvent) {
	for _, qe := range dropped {
		if call, ok := qe.ev.(callEvent); ok {
			call.abandon()
		}
	}
}

// run is the event loop (Kafka's ControllerEventThread).
func (c *Controller) run() {
	defer close(c.loopDone)
	for {
		qe, ok := c.events.pop(c.loopCtx)
		if !ok {
			return
		}
		c.process(qe)
	}
}

func (c *Controller) process(qe queuedEvent) {
	ev := qe.ev
	if w, ok := ev.(watchFired); ok {
		c.disarm(w)
		if w.inner == nil {
			return
		}
		ev = w.inner
	}
	fields := []zap.Field{zap.String("event", ev.name()), zap.Duration("queue-time", c.clock.Now().Sub(qe.enqueued))}
	switch ev.(type) {
	case leaderAndISRResponseEvent, updateMetadataResponseEvent, stopReplicaResponseEvent:
		c.log.Debug("Processing event", fields...)
	default:
		c.log.Info("Processing event", fields...)
	}
	err := c.handle(ev)
	switch {
	case errors.Is(err, ErrControllerMoved):
		c.controllerMoved(err)
	case err != nil:
		c.log.Error("Error processing event", append(fields, zap.Error(err))...)
	}
}

func (c *Controller) handle(ev event) error {
	switch ev := ev.(type) {
	case startupEvent:
		c.elect()
	case controllerChangeEvent:
		c.maybeResign()
	case reelectEvent, registerBrokerAndReelectEvent:
		c.maybeResign()
		c.elect()
	case expireEvent:
		c.processExpire()
	case brokerChangeEvent:
		return c.processBrokerChange()
	case topicChangeEvent:
		return c.processTopicChange()
	case partitionModificationsEvent:
		return c.processPartitionModifications(ev.topic)
	case leaderAndISRResponseEvent:
		c.processLeaderAndISRResponse(ev.broker, ev.resp)
	case updateMetadataResponseEvent:
		c.processUpdateMetadataResponse(ev.broker, ev.resp)
	case stopReplicaResponseEvent:
		return c.processStopReplicaResponse(ev.broker, ev.req, ev.resp)
	case brokerModificationsEvent:
		return c.processBrokerModifications(ev.broker)
	case isrChangeNotificationEvent:
		return c.processIsrChangeNotification()
	case partitionStateChangeEvent:
		return c.processPartitionReassignmentIsrChange(ev.tp)
	case topicDeletionEvent:
		return c.processTopicDeletion()
	case preferredReplicaElectionEvent:
		return c.processPreferredReplicaElectionZnode()
	case zkPartitionReassignmentEvent:
		return c.processZkPartitionReassignment()
	case autoRebalanceEvent:
		return c.processAutoRebalance(ev.term)
	case uncleanLeaderElectionEnabledEvent:
		return c.processUncleanLeaderElectionEnabled(ev.topic, ev.brokerDefault)
	case callEvent:
		return ev.run()
	}
	return nil
}

// wireClient adapts wire.Client to BrokerClient: the controller pins request versions, as
// Kafka's controller does by inter.broker.protocol.version, instead of negotiating them.
type wireClient struct{ c *wire.Client }

func (w wireClient) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return w.c.RequestVersion(ctx, req, req.GetVersion())
}

func (w wireClient) Close() error { return w.c.Close() }
