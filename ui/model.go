package ui

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// Options configure the model of the cluster.
type Options struct {
	ZooKeeper      string        // zookeeper.connect, with an optional chroot
	Bootstrap      []string      // brokers to ask for the others' addresses
	PollInterval   time.Duration // how often the brokers are asked; zero means 2 s
	SessionTimeout time.Duration // the dashboard's own ZooKeeper session; zero means Kafka's 18 s
	TimelineLimit  int           // events kept; zero means 5,000
	Logger         *zap.Logger
}

// ZooKeeper connection states the page shows.
const (
	zkConnecting   = "connecting"
	zkConnected    = "connected"
	zkDisconnected = "disconnected"
	zkExpired      = "session expired"
	zkUnreachable  = "unreachable"
)

// Model is the one watch-driven model of the cluster that every open page
// shares: a mirror of ZooKeeper's tree, the brokers' answers to polling,
// and the timeline of changes. Its ZooKeeper load does not depend on how
// many pages are open: pages read the model, never ZooKeeper.
type Model struct {
	opts     Options
	log      *zap.Logger
	requests atomic.Int64 // ZooKeeper requests sent

	queueMu sync.Mutex
	queue   []any // fired, sessionExpired, newSession, resyncNow
	wake    chan struct{}

	mu       sync.RWMutex
	client   *zkclient.Client  // the session being followed, nil between clients
	nodes    map[string]*znode // the mirror as last published; znodes are never modified
	zkState  string
	zkErr    string
	zkSince  time.Time
	session  int64
	loaded   bool // the first full read is done
	poll     *pollResult
	timeline timeline
	rev      uint64            // bumped at every publication
	sections map[string]uint64 // section id → rev of its last change
	removed  map[string]uint64 // section id → rev it went away at
	touched  []touchedPath     // znodes changed, for the explorer, oldest first
	subs     map[chan struct{}]bool
}

// touchedPath is a znode that changed at a revision.
type touchedPath struct {
	rev  uint64
	path string
}

const touchedLimit = 10000

type (
	sessionExpired struct{}
	newSession     struct{}
	resyncNow      struct{}
)

// NewModel returns a model that starts following the cluster when Run is
// called.
func NewModel(opts Options) *Model {
	if opts.PollInterval == 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = zkclient.DefaultSessionTimeout
	}
	if opts.TimelineLimit == 0 {
		opts.TimelineLimit = 5000
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Model{
		opts:     opts,
		log:      opts.Logger.Named("ui"),
		wake:     make(chan struct{}, 1),
		nodes:    map[string]*znode{},
		zkState:  zkConnecting,
		zkSince:  time.Now(),
		timeline: timeline{limit: opts.TimelineLimit},
		sections: map[string]uint64{},
		removed:  map[string]uint64{},
		subs:     map[chan struct{}]bool{},
	}
}

// Requests is the number of requests the model has sent to ZooKeeper.
func (m *Model) Requests() int64 { return m.requests.Load() }

// Run follows the cluster until ctx ends: it connects to ZooKeeper (again
// and again while it is unreachable), mirrors its tree, and polls the
// brokers.
func (m *Model) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.pollLoop(ctx)
	}()
	defer wg.Wait()
	for ctx.Err() == nil {
		c, err := m.connect(ctx)
		if err != nil {
			m.setZK(zkUnreachable, 0, err.Error())
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			continue
		}
		m.follow(ctx, c)
		c.Close()
	}
}

func (m *Model) connect(ctx context.Context) (*zkclient.Client, error) {
	// Waiting for a session as long as a session lasts.
	cctx, cancel := context.WithTimeout(ctx, m.opts.SessionTimeout)
	defer cancel()
	// Logged in as Kafka's tools are, so --allow-actions may write to a secured cluster's znodes.
	login, err := zkclient.SystemLogin()
	if err != nil {
		return nil, err
	}
	c, err := zkclient.Connect(cctx, zkclient.Config{Connect: m.opts.ZooKeeper, SessionTimeout: m.opts.SessionTimeout, Logger: m.opts.Logger,
		SASL: login, SecureACLs: login != nil})
	if err != nil {
		return nil, err
	}
	c.OnSessionExpired(func() { m.enqueue(sessionExpired{}) })
	c.OnNewSession(func() { m.enqueue(newSession{}) })
	return c, nil
}

// follow mirrors ZooKeeper through one client until ctx ends.
func (m *Model) follow(ctx context.Context, c *zkclient.Client) {
	var watchers sync.WaitGroup
	defer watchers.Wait()
	mir := newMirror(countingReader{zk: c, n: &m.requests}, func(k watchKey, ch <-chan zk.Event) {
		watchers.Add(1)
		go func() {
			defer watchers.Done()
			// go-zookeeper sends one event, or closes the channel when the
			// session ends or the client closes.
			ev, ok := <-ch
			if !ok {
				ev = zk.Event{Type: zk.EventNotWatching}
			}
			m.enqueue(fired{watchKey: k, event: ev})
		}()
	})
	stopStatus := m.watchConnection(c)
	defer stopStatus()

	resync := func(quiet bool) {
		changes, err := mir.resync()
		m.publish(changes, quiet)
		if err != nil {
			m.log.Warn("reading the ZooKeeper tree failed; retrying", zap.Error(err))
			m.enqueueAfter(ctx, time.Second, resyncNow{})
		}
	}
	m.mu.Lock()
	m.client = c
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.client = nil
		m.mu.Unlock()
	}()
	m.setZK(zkConnected, c.SessionID(), "")
	m.addEvents(Event{Kind: KindZooKeeper, Text: fmt.Sprintf("dashboard connected to ZooKeeper %s (session 0x%x)", m.opts.ZooKeeper, c.SessionID())})
	m.mu.RLock()
	first := !m.loaded
	m.mu.RUnlock()
	resync(first)
	m.mu.Lock()
	m.loaded = true
	m.mu.Unlock()

	// A fresh loop per client would lose queued items; the queue is drained
	// here until ctx ends, then Close ends the watches.
	go func() {
		<-ctx.Done()
		c.Close()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		m.queueMu.Lock()
		batch := m.queue
		m.queue = nil
		m.queueMu.Unlock()
		var changes []change
		for _, item := range batch {
			switch it := item.(type) {
			case fired:
				cs, err := mir.handle(it)
				changes = append(changes, cs...)
				if err != nil && ctx.Err() == nil {
					m.log.Warn("re-reading a znode failed; reading the tree again", zap.String("path", it.path), zap.Error(err))
					m.enqueueAfter(ctx, time.Second, resyncNow{})
				}
			case sessionExpired:
				m.setZK(zkExpired, 0, "")
				m.addEvents(Event{Kind: KindZooKeeper, Text: "dashboard's ZooKeeper session expired: watches lost, showing the last state read"})
			case newSession:
				m.setZK(zkConnected, c.SessionID(), "")
				m.addEvents(Event{Kind: KindZooKeeper, Text: fmt.Sprintf("dashboard has a new ZooKeeper session 0x%x: reading the whole tree again", c.SessionID())})
				m.publish(changes, false)
				changes = nil
				resync(false)
			case resyncNow:
				m.publish(changes, false)
				changes = nil
				resync(false)
			}
		}
		m.publish(changes, false)
	}
}

// watchConnection shows the connection's state as it moves, without asking
// ZooKeeper anything.
func (m *Model) watchConnection(c *zkclient.Client) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			m.mu.RLock()
			state := m.zkState
			m.mu.RUnlock()
			switch connected := c.Connected(); {
			case !connected && state == zkConnected:
				m.setZK(zkDisconnected, c.SessionID(), "")
				m.addEvents(Event{Kind: KindZooKeeper, Text: "dashboard lost its connection to ZooKeeper; the session lives until its timeout"})
			case connected && state == zkDisconnected:
				m.setZK(zkConnected, c.SessionID(), "")
				m.addEvents(Event{Kind: KindZooKeeper, Text: "dashboard reconnected to ZooKeeper with the same session"})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (m *Model) enqueue(item any) {
	m.queueMu.Lock()
	m.queue = append(m.queue, item)
	m.queueMu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *Model) enqueueAfter(ctx context.Context, d time.Duration, item any) {
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(d):
			m.enqueue(item)
		}
	}()
}

func (m *Model) setZK(state string, session int64, errText string) {
	m.mu.Lock()
	if m.zkState != state || m.zkErr != errText {
		m.zkSince = time.Now()
	}
	m.zkState, m.session, m.zkErr = state, session, errText
	m.rev++
	m.touchLocked(sectionStatus)
	m.touchLocked(sectionCluster)
	m.mu.Unlock()
	m.notify()
}

func (m *Model) addEvents(evs ...Event) {
	m.mu.Lock()
	m.timeline.add(time.Now(), evs...)
	m.rev++
	m.mu.Unlock()
	m.notify()
}

// publish applies the mirror's changes to the shared copy, marks the
// sections they touch and adds their timeline events (none when quiet: the
// first read of the tree is not news).
func (m *Model) publish(changes []change, quiet bool) {
	if len(changes) == 0 {
		return
	}
	m.mu.Lock()
	m.rev++
	for _, c := range changes {
		if c.new == nil {
			delete(m.nodes, c.path)
		} else {
			m.nodes[c.path] = c.new
		}
		m.touched = append(m.touched, touchedPath{m.rev, c.path})
		for _, s := range sectionsOf(c, m.nodes) {
			m.touchLocked(s)
		}
		if topic, ok := topicOf(c.path); ok && c.path == zkpaths.TopicPath(topic) {
			if c.new == nil {
				delete(m.sections, topicSection(topic))
				m.removed[topicSection(topic)] = m.rev
			} else {
				delete(m.removed, topicSection(topic))
			}
		}
	}
	if over := len(m.touched) - touchedLimit; over > 0 {
		m.touched = m.touched[over:]
	}
	if !quiet {
		m.timeline.add(time.Now(), describe(changes)...)
	}
	m.mu.Unlock()
	m.notify()
}

// Section ids: each is one fragment of the page, rendered and sent again
// when something it shows changes.
const (
	sectionStatus  = "status"
	sectionCluster = "cluster"
	sectionTopics  = "topics" // the list of topics; each topic is a section of its own
	sectionLegacy  = "legacy"
	sectionGroups  = "groups"
	sectionActions = "actions"
)

func topicSection(topic string) string { return "topic:" + topic }

// topicOf names the topic a path under /brokers/topics, /config/topics or
// /admin/delete_topics belongs to.
func topicOf(p string) (string, bool) {
	for _, prefix := range []string{zkpaths.BrokerTopics + "/", zkpaths.ConfigTopics + "/", zkpaths.DeleteTopics + "/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			topic, _, _ := strings.Cut(rest, "/")
			return topic, true
		}
	}
	return "", false
}

// sectionsOf lists the sections a znode change shows in.
func sectionsOf(c change, nodes map[string]*znode) []string {
	p := c.path
	switch {
	case under(p, zkpaths.BrokerIDs):
		// A broker's liveness colours every partition it hosts.
		out := []string{sectionCluster, sectionTopics, sectionStatus}
		if n := nodes[zkpaths.BrokerTopics]; n != nil {
			for _, t := range n.children {
				out = append(out, topicSection(t))
			}
		}
		return out
	case p == zkpaths.Controller || p == zkpaths.ControllerEpoch || p == zkpaths.ClusterID || under(p, zkpaths.Admin):
		return []string{sectionCluster, sectionStatus}
	case under(p, zkpaths.Consumers):
		return []string{sectionLegacy}
	}
	if topic, ok := topicOf(p); ok {
		if strings.HasSuffix(p, "/state") {
			if sameCounts(c) {
				return []string{topicSection(topic)}
			}
			// Leader counts per broker, under-replicated and offline counts.
			return []string{topicSection(topic), sectionTopics, sectionCluster}
		}
		return []string{topicSection(topic), sectionTopics}
	}
	if p == zkpaths.BrokerTopics {
		return []string{sectionTopics, sectionCluster}
	}
	return nil
}

// sameCounts reports whether a partition state change keeps its leader and
// ISR size, so that only its topic's section shows it.
func sameCounts(c change) bool {
	if c.old == nil || c.new == nil {
		return false
	}
	before, err1 := zkpaths.DecodeLeaderAndIsr(c.old.data)
	now, err2 := zkpaths.DecodeLeaderAndIsr(c.new.data)
	return err1 == nil && err2 == nil && before.Leader == now.Leader && len(before.ISR) == len(now.ISR)
}

// touchLocked marks a section changed at the current revision; mu is held.
func (m *Model) touchLocked(id string) {
	m.sections[id] = m.rev
}

// Subscribe returns a channel that receives a value (at most one pending)
// whenever the model changes, and a function to stop.
func (m *Model) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	m.mu.Lock()
	m.subs[ch] = true
	m.mu.Unlock()
	return ch, func() {
		m.mu.Lock()
		delete(m.subs, ch)
		m.mu.Unlock()
	}
}

// Subscribers is the number of pages following the model.
func (m *Model) Subscribers() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.subs)
}

func (m *Model) notify() {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for ch := range m.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// update is what changed after a revision, for one page.
type update struct {
	rev      uint64
	sections []string // changed, in a stable order
	removed  []string
	events   []Event
	// touched are the znodes that changed; all means the page missed some
	// and should reload whatever it shows.
	touched []string
	all     bool
}

// since collects what changed after rev and seq.
func (m *Model) since(rev, seq uint64) update {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u := update{rev: m.rev, events: m.timeline.since(seq)}
	for id, r := range m.sections {
		if r > rev {
			u.sections = append(u.sections, id)
		}
	}
	for id, r := range m.removed {
		if r > rev {
			u.removed = append(u.removed, id)
		}
	}
	sort.Strings(u.sections)
	sort.Strings(u.removed)
	if len(m.touched) > 0 && m.touched[0].rev > rev+1 && rev > 0 {
		u.all = true
	}
	seen := map[string]bool{}
	for i := len(m.touched) - 1; i >= 0 && m.touched[i].rev > rev && !u.all; i-- {
		p := m.touched[i].path
		if !seen[p] {
			seen[p] = true
			u.touched = append(u.touched, p)
		}
	}
	return u
}

// Revision is the model's current revision and the last event's sequence
// number, which a page rendered now has seen.
func (m *Model) Revision() (rev, seq uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.rev, m.timeline.seq
}

// Events returns the timeline's events after seq.
func (m *Model) Events(seq uint64) []Event {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.timeline.since(seq)
}
