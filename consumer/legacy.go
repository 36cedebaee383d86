package consumer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// zkGroup is the legacy mode: Kafka 0.8.2's ZookeeperConsumerConnector.
// Watches only raise a flag (trigger, capacity one, so a burst coalesces into
// one more rebalance); one goroutine, run, does every rebalance.
type zkGroup struct {
	c   *Consumer
	log *zap.Logger
	zk  *zkclient.Client
	id  string // consumer id

	trigger chan struct{} // a watch fired
	expired chan struct{} // the session expired: owner znodes are gone
	renewed chan struct{} // a new session: re-register and rebalance

	topicsChanged chan struct{} // /brokers/topics changed (a filter's subscription)

	mu    sync.Mutex
	owned map[kafka.TopicPartition]string // owner znodes held → thread id
}

func newZKGroup(c *Consumer) *zkGroup {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	id := zkpaths.NewConsumerID(c.cfg.GroupID, host, time.Now())
	return &zkGroup{
		c: c, id: id, log: c.log.With(zap.String("consumer-id", id)),
		trigger: make(chan struct{}, 1), expired: make(chan struct{}, 1), renewed: make(chan struct{}, 1),
		topicsChanged: make(chan struct{}, 1),
		owned:         map[kafka.TopicPartition]string{},
	}
}

func (g *zkGroup) memberID() string { return g.id }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// zkRead and zkWrite count one ZooKeeper request.
func (g *zkGroup) zkRead()  { g.c.stats.zkReads.Add(1) }
func (g *zkGroup) zkWrite() { g.c.stats.zkWrites.Add(1) }

func (g *zkGroup) start(ctx context.Context) error {
	cfg := &g.c.cfg
	// The old consumer logged in to ZooKeeper, and secured its znodes, when its JVM had a JAAS
	// Client context (ZkUtils with JaasUtils.isZkSecurityEnabled).
	login, err := zkclient.SystemLogin()
	if err != nil {
		return err
	}
	zkc, err := zkclient.Connect(ctx, zkclient.Config{
		Connect: cfg.ZooKeeperConnect, SessionTimeout: cfg.ZooKeeperSessionTimeout, Logger: g.log.Named("zk"),
		SASL: login, SecureACLs: login != nil,
	})
	if err != nil {
		return fmt.Errorf("connect to ZooKeeper %s: %w", cfg.ZooKeeperConnect, err)
	}
	g.zk = zkc
	zkc.OnSessionExpired(func() { signal(g.expired) })
	zkc.OnNewSession(func() { signal(g.renewed) })
	if err := g.register(ctx); err != nil {
		zkc.Close()
		return err
	}
	return nil
}

// register creates the ephemeral ids znode. A NODEEXISTS is taken, as Kafka
// does (ZOOKEEPER-1740), for our own znode of an expired session: wait for
// it to go and retry.
func (g *zkGroup) register(ctx context.Context) error {
	cfg := &g.c.cfg
	reg := zkpaths.ConsumerRegistration{Subscription: map[string]int32{}, Pattern: zkpaths.PatternStatic, Timestamp: time.Now().UnixMilli()}
	for _, t := range cfg.Topics {
		reg.Subscription[t] = int32(cfg.Streams)
	}
	if cfg.filter != nil {
		// A wildcard registration holds the expression, not the topics:
		// each member works out the topics from /brokers/topics.
		reg.Subscription[cfg.filter.regex] = int32(cfg.Streams)
		reg.Pattern = cfg.filter.pattern()
	}
	g.zkWrite()
	if err := g.zk.CreateIfMissing(zkpaths.ConsumerIDsPath(cfg.GroupID), nil); err != nil {
		return fmt.Errorf("create %s: %w", zkpaths.ConsumerIDsPath(cfg.GroupID), err)
	}
	path := zkpaths.ConsumerIDPath(cfg.GroupID, g.id)
	for {
		g.zkWrite()
		_, err := g.zk.Create(path, reg.Encode(), zk.FlagEphemeral, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("register %s: %w", path, err)
		}
		g.log.Info("registration znode exists, waiting for the old session's to expire")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cfg.ZooKeeperSessionTimeout):
		}
	}
	g.log.Info("registered consumer", zap.String("path", path))
	g.c.emit(Event{Type: EventRegistered})
	return nil
}

// brokerAddrs reads the brokers' addresses from /brokers/ids, as the 0.8
// consumer found its brokers: every advertised endpoint, in the order the
// broker lists them. A client reaches only some of a broker's listeners (on a
// Docker host, EXTERNAL://localhost:9092 but not INTERNAL://kafka1:19092), the
// bootstrap dials them in turn, and Metadata then answers with the addresses
// of the listener that answered.
func (g *zkGroup) brokerAddrs(context.Context) ([]string, error) {
	g.zkRead()
	ids, _, err := g.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", zkpaths.BrokerIDs, err)
	}
	var addrs []string
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			continue
		}
		g.zkRead()
		data, _, err := g.zk.Get(zkpaths.BrokerPath(int32(id)))
		if err != nil {
			continue // the broker went away
		}
		reg, err := zkpaths.DecodeBrokerRegistration(int32(id), data)
		if err != nil {
			return nil, err
		}
		if len(reg.Endpoints) == 0 {
			addrs = append(addrs, net.JoinHostPort(reg.Host, strconv.Itoa(int(reg.Port))))
		}
		for _, e := range reg.Endpoints {
			addrs = append(addrs, net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))))
		}
	}
	return addrs, nil
}

// run arms the watches and runs rebalances until ctx is done.
func (g *zkGroup) run(ctx context.Context) {
	cfg := &g.c.cfg
	var wg sync.WaitGroup
	defer wg.Wait()
	watch := func(arm func() (<-chan zk.Event, error)) {
		wg.Go(func() { g.watchLoop(ctx, g.trigger, arm) })
	}
	watchTopic := func(t string) {
		watch(func() (<-chan zk.Event, error) {
			_, _, ch, err := g.zk.GetW(zkpaths.TopicPath(t))
			if errors.Is(err, zk.ErrNoNode) {
				_, _, ch, err = g.zk.ExistsW(zkpaths.TopicPath(t))
			}
			return ch, err
		})
	}
	watch(func() (<-chan zk.Event, error) {
		_, _, ch, err := g.zk.ChildrenW(zkpaths.ConsumerIDsPath(cfg.GroupID))
		return ch, err
	})
	watch(func() (<-chan zk.Event, error) {
		_, _, ch, err := g.zk.ChildrenW(zkpaths.BrokerIDs)
		return ch, err
	})
	for _, t := range cfg.Topics {
		watchTopic(t)
	}
	// A filter's topics: ZookeeperTopicEventWatcher on /brokers/topics, and
	// a partition-change watch on each topic as it is found.
	watched := map[string]bool{}
	var filtered []string
	refilter := func() bool {
		topics, ok := g.filteredTopics()
		if !ok || slices.Equal(topics, filtered) {
			return false
		}
		g.log.Info("topics to consume", zap.Strings("topics", topics), zap.String("filter", cfg.filter.regex))
		filtered = topics
		for _, t := range topics {
			if !watched[t] {
				watched[t] = true
				watchTopic(t)
			}
		}
		return true
	}
	if cfg.filter != nil {
		wg.Go(func() {
			g.watchLoop(ctx, g.topicsChanged, func() (<-chan zk.Event, error) {
				_, _, ch, err := g.zk.ChildrenW(zkpaths.BrokerTopics)
				return ch, err
			})
		})
		refilter()
	}
	g.syncedRebalance(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.expired:
			g.sessionExpired()
		case <-g.renewed:
			// Both callbacks may have run before this loop looked: drop
			// the old session's partitions before rebalancing in the new.
			select {
			case <-g.expired:
				g.sessionExpired()
			default:
			}
			if err := g.register(ctx); err != nil {
				g.log.Error("re-registration after session expiry failed", zap.Error(err))
				continue
			}
			g.syncedRebalance(ctx)
		case <-g.trigger:
			g.syncedRebalance(ctx)
		case <-g.topicsChanged:
			// As WildcardStreamsHandler.handleTopicEvent: rebalance only
			// when a topic the filter allows came or went.
			if refilter() {
				g.syncedRebalance(ctx)
			}
		}
	}
}

// watchLoop keeps one watch armed, turning each notification into a signal
// on fired.
func (g *zkGroup) watchLoop(ctx context.Context, fired chan struct{}, arm func() (<-chan zk.Event, error)) {
	for {
		g.zkRead()
		ch, err := arm()
		if err != nil {
			// No session (expired, or ZooKeeper unreachable): try again.
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ch:
			if ok && ev.Type != zk.EventNotWatching {
				g.c.stats.zkWatches.Add(1)
				signal(fired)
			}
		}
	}
}

// sessionExpired drops what the session held: the owner znodes went with it.
func (g *zkGroup) sessionExpired() {
	g.c.pauseFetching()
	g.mu.Lock()
	g.owned = map[kafka.TopicPartition]string{}
	g.mu.Unlock()
	g.c.remove(g.c.owned(), true)
}

// syncedRebalance makes up to rebalance.max.retries attempts, backing off
// rebalance.backoff.ms after each failure.
func (g *zkGroup) syncedRebalance(ctx context.Context) {
	cfg := &g.c.cfg
	for attempt := range cfg.RebalanceMaxRetries {
		if ctx.Err() != nil {
			return
		}
		g.c.stats.rebalances.Add(1)
		g.c.emit(Event{Type: EventRebalanceStarted})
		err := g.rebalance(ctx)
		if err == nil {
			g.c.emit(Event{Type: EventRebalanceDone})
			return
		}
		g.log.Info("rebalance attempt failed", zap.Int("attempt", attempt+1), zap.Error(err))
		g.c.emit(Event{Type: EventRebalanceFailed, Err: err})
		select {
		case <-ctx.Done():
			return
		case <-time.After(cfg.RebalanceBackoff):
		}
	}
	err := fmt.Errorf("%s %w after %d retries", g.id, ErrRebalanceFailed, cfg.RebalanceMaxRetries)
	g.log.Error("rebalance failed", zap.Error(err))
	g.c.emit(Event{Type: EventRebalanceFailed, Err: err})
}

// rebalance is one attempt: stop fetching, commit, release, compute our
// share from our own reading of ZooKeeper, read its offsets and claim it.
func (g *zkGroup) rebalance(ctx context.Context) error {
	cfg := &g.c.cfg
	brokers, err := g.brokerAddrs(ctx)
	if err != nil {
		return err
	}
	g.c.pauseFetching()
	defer g.c.resumeFetching()
	if !cfg.DisableAutoCommit {
		if err := g.c.commitPositions(ctx, commitOnce); err != nil {
			g.log.Warn("commit before releasing partitions failed", zap.Error(err))
		}
	}
	g.release(false)
	if len(brokers) == 0 {
		return nil // nothing to consume until a broker registers (its watch fires)
	}
	actx, err := g.assignmentContext()
	if err != nil {
		return err
	}
	var share map[kafka.TopicPartition]string
	if cfg.PartitionAssignmentStrategy[0] == "roundrobin" {
		if share, err = legacyRoundRobin(actx); err != nil {
			return err
		}
	} else {
		share = legacyRange(actx)
	}
	offsets := map[kafka.TopicPartition]int64{}
	for tp := range share {
		g.zkRead()
		data, _, err := g.zk.Get(zkpaths.ConsumerOffsetPath(cfg.GroupID, tp.Topic, tp.Partition))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			offsets[tp] = -1
		case err != nil:
			return fmt.Errorf("read offset of %s-%d: %w", tp.Topic, tp.Partition, err)
		default:
			if offsets[tp], err = zkpaths.DecodeConsumerOffset(data); err != nil {
				return err
			}
		}
	}
	if err := g.claim(share); err != nil {
		return err
	}
	g.c.add(offsets, 0)
	return nil
}

// release deletes our owner znodes. Callbacks see the partitions revoked.
func (g *zkGroup) release(lost bool) {
	g.c.remove(g.c.owned(), lost)
	g.mu.Lock()
	owned := g.owned
	g.owned = map[kafka.TopicPartition]string{}
	g.mu.Unlock()
	for tp := range owned {
		g.zkWrite()
		err := g.zk.Delete(zkpaths.ConsumerOwnerPath(g.c.cfg.GroupID, tp.Topic, tp.Partition), -1)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			g.log.Warn("release of partition ownership failed", zap.String("topic", tp.Topic),
				zap.Int32("partition", tp.Partition), zap.Error(err))
		}
	}
}

// filteredTopics reads /brokers/topics and returns, sorted, the topics the
// consumer's filter allows; false when ZooKeeper could not be read (the
// watch loop retries and signals again).
func (g *zkGroup) filteredTopics() ([]string, bool) {
	g.zkRead()
	all, _, err := g.zk.Children(zkpaths.BrokerTopics)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		g.log.Warn("read of the topics failed", zap.Error(err))
		return nil, false
	}
	slices.Sort(all)
	return g.c.cfg.filter.filterTopics(all, !g.c.cfg.IncludeInternalTopics), true
}

// assignmentContext reads the group's members and the topics' partitions.
func (g *zkGroup) assignmentContext() (legacyContext, error) {
	cfg := &g.c.cfg
	actx := legacyContext{myThreads: map[string][]string{}, threads: map[string][]string{}, partitions: map[string][]int32{}}
	g.zkRead()
	ids, _, err := g.zk.Children(zkpaths.ConsumerIDsPath(cfg.GroupID))
	if err != nil {
		return actx, fmt.Errorf("read group members: %w", err)
	}
	allTopics := sync.OnceValues(func() ([]string, error) {
		g.zkRead()
		topics, _, err := g.zk.Children(zkpaths.BrokerTopics)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("read %s: %w", zkpaths.BrokerTopics, err)
		}
		return topics, nil
	})
	registered := false
	for _, id := range ids {
		g.zkRead()
		data, _, err := g.zk.Get(zkpaths.ConsumerIDPath(cfg.GroupID, id))
		if err != nil {
			return actx, fmt.Errorf("read registration of %s: %w", id, err) // it left meanwhile
		}
		reg, err := zkpaths.DecodeConsumerRegistration(data)
		if err != nil {
			return actx, err
		}
		registered = registered || id == g.id
		subscription, err := g.memberTopics(reg, allTopics)
		if err != nil {
			return actx, fmt.Errorf("registration of %s: %w", id, err)
		}
		for topic, n := range subscription {
			for i := range int(n) {
				thread := zkpaths.ConsumerThreadID(id, i)
				actx.threads[topic] = append(actx.threads[topic], thread)
				if id == g.id {
					actx.myThreads[topic] = append(actx.myThreads[topic], thread)
				}
			}
		}
	}
	if !registered {
		return actx, fmt.Errorf("own registration %s missing from the group", g.id)
	}
	for topic := range actx.threads {
		slices.Sort(actx.threads[topic])
	}
	for topic := range actx.myThreads {
		g.zkRead()
		data, _, err := g.zk.Get(zkpaths.TopicPath(topic))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return actx, fmt.Errorf("read topic %s: %w", topic, err)
		}
		ta, err := zkpaths.DecodeTopicAssignment(data)
		if err != nil {
			return actx, err
		}
		for p := range ta.Partitions {
			actx.partitions[topic] = append(actx.partitions[topic], p)
		}
		slices.Sort(actx.partitions[topic])
	}
	return actx, nil
}

// memberTopics is a member's topics and streams per topic, as 0.8.2's
// TopicCount.constructTopicCount reads them: a static registration lists
// them; a wildcard one holds one expression, applied here to the topics
// allTopics reads, with this consumer's exclude.internal.topics.
func (g *zkGroup) memberTopics(reg zkpaths.ConsumerRegistration, allTopics func() ([]string, error)) (map[string]int32, error) {
	if reg.Pattern == zkpaths.PatternStatic || len(reg.Subscription) != 1 {
		return reg.Subscription, nil
	}
	subscription := map[string]int32{}
	for regex, streams := range reg.Subscription {
		f, err := newTopicFilter(regex, reg.Pattern == zkpaths.PatternBlackList)
		if err != nil {
			return nil, err
		}
		all, err := allTopics()
		if err != nil {
			return nil, err
		}
		for _, t := range f.filterTopics(all, !g.c.cfg.IncludeInternalTopics) {
			subscription[t] = streams
		}
	}
	return subscription, nil
}

// claim creates our owner znodes. If any is held by someone else, it deletes
// those it created and fails the attempt.
func (g *zkGroup) claim(share map[kafka.TopicPartition]string) error {
	group := g.c.cfg.GroupID
	var claimed []kafka.TopicPartition
	var conflict error
	for tp, thread := range share {
		g.zkWrite()
		if err := g.zk.CreateIfMissing(zkpaths.ConsumerOwnersTopicPath(group, tp.Topic), nil); err != nil {
			conflict = err
			break
		}
		path := zkpaths.ConsumerOwnerPath(group, tp.Topic, tp.Partition)
		g.zkWrite()
		_, err := g.zk.Create(path, []byte(thread), zk.FlagEphemeral, nil)
		if errors.Is(err, zk.ErrNodeExists) {
			g.zkRead()
			if data, _, gerr := g.zk.Get(path); gerr == nil && string(data) == thread {
				err = nil // our own claim, retried after a lost connection
			} else {
				err = fmt.Errorf("%w: %s-%d is owned by %s", ErrOwnerConflict, tp.Topic, tp.Partition, data)
			}
		}
		if err != nil {
			conflict = err
			break
		}
		claimed = append(claimed, tp)
	}
	if conflict == nil {
		g.mu.Lock()
		for _, tp := range claimed {
			g.owned[tp] = share[tp]
		}
		g.mu.Unlock()
		return nil
	}
	for _, tp := range claimed {
		g.zkWrite()
		if err := g.zk.Delete(zkpaths.ConsumerOwnerPath(group, tp.Topic, tp.Partition), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			g.log.Warn("release of a claim failed", zap.Error(err))
		}
	}
	return conflict
}

// commit writes offsets to /consumers/<g>/offsets/<t>/<p>.
func (g *zkGroup) commit(_ context.Context, offsets map[kafka.TopicPartition]int64) error {
	group := g.c.cfg.GroupID
	var errs []error
	for tp, off := range offsets {
		path := zkpaths.ConsumerOffsetPath(group, tp.Topic, tp.Partition)
		data := zkpaths.EncodeConsumerOffset(off)
		g.zkWrite()
		_, err := g.zk.Set(path, data, -1)
		if errors.Is(err, zk.ErrNoNode) {
			g.zkWrite()
			err = g.zk.CreateIfMissing(path, data)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("commit %s-%d: %w", tp.Topic, tp.Partition, err))
		}
	}
	return errors.Join(errs...)
}

// abandon drops the ZooKeeper connection and keeps the session: the ids and
// owner znodes stay until ZooKeeper expires it.
func (g *zkGroup) abandon() { _ = g.zk.Abandon() }

// poll does nothing: the legacy consumer rebalances on its own goroutine,
// as 0.8's ZookeeperConsumerConnector did, whatever the application does.
func (g *zkGroup) poll(context.Context) error { return nil }

// leave closes the session: the ids and owner znodes go with it.
func (g *zkGroup) leave(context.Context) error {
	return g.zk.Close()
}
