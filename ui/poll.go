package ui

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

// Kafka's replica ids in ListOffsets: a consumer sees the high watermark,
// the debugging consumer may ask any replica and sees its log end offset.
const (
	consumerReplicaID  = -1
	debuggingReplicaID = -2
)

// offsetsTopic is where the group coordinators keep offsets and group
// metadata.
const offsetsTopic = "__consumer_offsets"

// replicaKey names one replica of a partition.
type replicaKey struct {
	tp     kafka.TopicPartition
	broker int32
}

// replicaOffsets are a replica's log start and log end offsets.
type replicaOffsets struct {
	logStart, logEnd int64
}

// coordGroup is a group of the group coordinators as the brokers describe
// it, with the generation its coordinator last stored in
// __consumer_offsets.
type coordGroup struct {
	ID           string
	Coordinator  int32
	State        string
	ProtocolType string
	Protocol     string
	Generation   int32 // -1 until its group metadata has been read
	Leader       string
	Members      []coordMember
	Committed    map[kafka.TopicPartition]int64
	Err          string
}

type coordMember struct {
	ID, InstanceID, ClientID, Host string
	Assignment                     []kafka.TopicPartition
}

// groupMetadata is what the latest group metadata record of a group says
// and DescribeGroups does not.
type groupMetadata struct {
	generation int32
	leader     string
}

// pollResult is what the brokers answered in one round.
type pollResult struct {
	at        time.Time
	reachable map[int32]bool   // live broker → answered this round
	errs      map[int32]string // why a broker did not answer
	replicas  map[replicaKey]replicaOffsets
	hw        map[kafka.TopicPartition]int64
	groups    map[string]*coordGroup
}

// poller asks the brokers, over the Kafka protocol, what ZooKeeper does not
// hold: offsets per replica, the groups of the group coordinators and their
// committed offsets. It owns its connections and runs on one goroutine.
type poller struct {
	m     *Model
	conns map[string]*wire.Client // by address
	addrs map[int32]string        // broker id → address on the bootstrap listener
	// __consumer_offsets as read so far: next offset per partition and the
	// latest group metadata per group.
	next map[int32]int64
	meta map[string]groupMetadata
}

func (m *Model) pollLoop(ctx context.Context) {
	p := &poller{m: m, conns: map[string]*wire.Client{}, addrs: map[int32]string{}, next: map[int32]int64{}, meta: map[string]groupMetadata{}}
	defer func() {
		for _, c := range p.conns {
			c.Close()
		}
	}()
	t := time.NewTicker(m.opts.PollInterval)
	defer t.Stop()
	for {
		if in, ok := m.pollInput(); ok {
			m.applyPoll(p.round(ctx, in))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pollInput is what a round needs from the mirror: live brokers and where
// every partition's replicas and leader are.
type pollInput struct {
	live     []int32
	replicas map[kafka.TopicPartition][]int32
	leaders  map[kafka.TopicPartition]int32
}

func (m *Model) pollInput() (pollInput, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.loaded {
		return pollInput{}, false
	}
	in := pollInput{live: slices.Sorted(maps.Keys(m.liveLocked())), replicas: map[kafka.TopicPartition][]int32{}, leaders: map[kafka.TopicPartition]int32{}}
	for _, topic := range m.topicNamesLocked() {
		ts, ok := m.topicLocked(topic)
		if !ok {
			continue
		}
		for p, r := range ts.assignment.Partitions {
			tp := kafka.TopicPartition{Topic: topic, Partition: p}
			in.replicas[tp] = r
			if st, ok := ts.states[p]; ok {
				in.leaders[tp] = st.Leader
			}
		}
	}
	return in, true
}

const requestTimeout = 3 * time.Second

// round asks every live broker once.
func (p *poller) round(ctx context.Context, in pollInput) *pollResult {
	r := &pollResult{
		at: time.Now(), reachable: map[int32]bool{}, errs: map[int32]string{},
		replicas: map[replicaKey]replicaOffsets{}, hw: map[kafka.TopicPartition]int64{}, groups: map[string]*coordGroup{},
	}
	p.refreshAddrs(ctx, in.live)
	for _, id := range in.live {
		err := p.askBroker(ctx, id, in, r)
		if err != nil {
			r.errs[id] = err.Error()
			if addr, ok := p.addrs[id]; ok {
				// A restarted broker may listen elsewhere: ask for its address again.
				p.drop(addr)
				delete(p.addrs, id)
			}
			continue
		}
		r.reachable[id] = true
	}
	for _, g := range r.groups {
		g.Generation = -1
		if md, ok := p.meta[g.ID]; ok {
			g.Generation, g.Leader = md.generation, md.leader
		}
	}
	return r
}

// refreshAddrs learns the brokers' addresses on the listener the bootstrap
// servers belong to, as a Kafka client does, from a Metadata request.
func (p *poller) refreshAddrs(ctx context.Context, live []int32) {
	known := true
	for _, id := range live {
		if _, ok := p.addrs[id]; !ok {
			known = false
		}
	}
	if known && len(live) > 0 {
		return
	}
	candidates := slices.Collect(maps.Values(p.addrs))
	candidates = append(candidates, p.m.opts.Bootstrap...)
	for _, addr := range candidates {
		c, err := p.conn(ctx, addr)
		if err != nil {
			continue
		}
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{}
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		resp, err := c.Request(rctx, req)
		cancel()
		if err != nil {
			p.drop(addr)
			continue
		}
		for _, b := range resp.(*kmsg.MetadataResponse).Brokers {
			p.addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		}
		return
	}
}

func (p *poller) conn(ctx context.Context, addr string) (*wire.Client, error) {
	if c, ok := p.conns[addr]; ok {
		return c, nil
	}
	dctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	c, err := wire.Dial(dctx, addr, "zkafka-ui")
	if err != nil {
		return nil, err
	}
	p.conns[addr] = c
	return c, nil
}

func (p *poller) drop(addr string) {
	if c, ok := p.conns[addr]; ok {
		c.Close()
		delete(p.conns, addr)
	}
}

var errNoAddress = errors.New("no address: the brokers' metadata does not list it")

// askBroker asks one broker for its replicas' offsets, its groups and the
// group metadata in the __consumer_offsets partitions it leads.
func (p *poller) askBroker(ctx context.Context, id int32, in pollInput, r *pollResult) error {
	addr, ok := p.addrs[id]
	if !ok {
		return errNoAddress
	}
	c, err := p.conn(ctx, addr)
	if err != nil {
		return err
	}
	var hosted, led []kafka.TopicPartition
	for tp, reps := range in.replicas {
		if slices.Contains(reps, id) {
			hosted = append(hosted, tp)
		}
		if in.leaders[tp] == id {
			led = append(led, tp)
		}
	}
	slices.SortFunc(hosted, kafka.Compare)
	slices.SortFunc(led, kafka.Compare)
	starts, err := listOffsets(ctx, c, debuggingReplicaID, -2, hosted)
	if err != nil {
		return err
	}
	ends, err := listOffsets(ctx, c, debuggingReplicaID, -1, hosted)
	if err != nil {
		return err
	}
	for tp, end := range ends {
		if start, ok := starts[tp]; ok {
			r.replicas[replicaKey{tp, id}] = replicaOffsets{logStart: start, logEnd: end}
		}
	}
	hws, err := listOffsets(ctx, c, consumerReplicaID, -1, led)
	if err != nil {
		return err
	}
	maps.Copy(r.hw, hws)
	if err := p.groups(ctx, c, id, r); err != nil {
		return err
	}
	var offsetsLed []int32
	for _, tp := range led {
		if tp.Topic == offsetsTopic {
			offsetsLed = append(offsetsLed, tp.Partition)
		}
	}
	return p.readGroupMetadata(ctx, c, offsetsLed, starts)
}

// listOffsets sends one ListOffsets for tps at a timestamp (-1 latest, -2
// earliest) and returns the offsets of the partitions that answered.
func listOffsets(ctx context.Context, c *wire.Client, replica int32, ts int64, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
	out := map[kafka.TopicPartition]int64{}
	if len(tps) == 0 {
		return out, nil
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = replica
	for _, tp := range tps {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
		}
		pr := kmsg.NewListOffsetsRequestTopicPartition()
		pr.Partition, pr.Timestamp, pr.MaxNumOffsets = tp.Partition, ts, 1
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, pr)
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := c.Request(rctx, req)
	if err != nil {
		return nil, fmt.Errorf("ListOffsets: %w", err)
	}
	for _, t := range resp.(*kmsg.ListOffsetsResponse).Topics {
		for _, pr := range t.Partitions {
			if pr.ErrorCode != 0 {
				continue
			}
			off := pr.Offset
			if len(pr.OldStyleOffsets) > 0 {
				off = pr.OldStyleOffsets[0]
			}
			out[kafka.TopicPartition{Topic: t.Topic, Partition: pr.Partition}] = off
		}
	}
	return out, nil
}

// groups lists the groups a broker coordinates, describes them and fetches
// their committed offsets.
func (p *poller) groups(ctx context.Context, c *wire.Client, id int32, r *pollResult) error {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := c.Request(rctx, kmsg.NewPtrListGroupsRequest())
	if err != nil {
		return fmt.Errorf("ListGroups: %w", err)
	}
	listed := resp.(*kmsg.ListGroupsResponse)
	if err := kerr.ErrorForCode(listed.ErrorCode); err != nil {
		// COORDINATOR_LOAD_IN_PROGRESS and friends: the groups show next round.
		return nil
	}
	if len(listed.Groups) == 0 {
		return nil
	}
	describe := kmsg.NewPtrDescribeGroupsRequest()
	for _, g := range listed.Groups {
		describe.Groups = append(describe.Groups, g.Group)
	}
	resp, err = c.Request(rctx, describe)
	if err != nil {
		return fmt.Errorf("DescribeGroups: %w", err)
	}
	for _, d := range resp.(*kmsg.DescribeGroupsResponse).Groups {
		g := &coordGroup{ID: d.Group, Coordinator: id, State: d.State, ProtocolType: d.ProtocolType, Protocol: d.Protocol, Committed: map[kafka.TopicPartition]int64{}}
		if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
			g.Err = err.Error()
		}
		for _, mem := range d.Members {
			cm := coordMember{ID: mem.MemberID, ClientID: mem.ClientID, Host: mem.ClientHost}
			if mem.InstanceID != nil {
				cm.InstanceID = *mem.InstanceID
			}
			if d.ProtocolType == "consumer" {
				var a kmsg.ConsumerMemberAssignment
				if err := a.ReadFrom(mem.MemberAssignment); err == nil {
					for _, t := range a.Topics {
						for _, part := range t.Partitions {
							cm.Assignment = append(cm.Assignment, kafka.TopicPartition{Topic: t.Topic, Partition: part})
						}
					}
					slices.SortFunc(cm.Assignment, kafka.Compare)
				}
			}
			g.Members = append(g.Members, cm)
		}
		fetch := kmsg.NewPtrOffsetFetchRequest()
		fetch.Group = d.Group
		fetch.Topics = nil // every partition with a committed offset
		resp, err := c.Request(rctx, fetch)
		if err != nil {
			return fmt.Errorf("OffsetFetch %s: %w", d.Group, err)
		}
		for _, t := range resp.(*kmsg.OffsetFetchResponse).Topics {
			for _, pr := range t.Partitions {
				if pr.ErrorCode == 0 && pr.Offset >= 0 {
					g.Committed[kafka.TopicPartition{Topic: t.Topic, Partition: pr.Partition}] = pr.Offset
				}
			}
		}
		r.groups[g.ID] = g
	}
	return nil
}

// readGroupMetadata reads what is new in the __consumer_offsets partitions
// the broker leads, keeping each group's latest generation: DescribeGroups
// does not tell it.
func (p *poller) readGroupMetadata(ctx context.Context, c *wire.Client, partitions []int32, starts map[kafka.TopicPartition]int64) error {
	if len(partitions) == 0 {
		return nil
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = consumerReplicaID
	req.MaxBytes = 4 << 20
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = offsetsTopic
	for _, part := range partitions {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = part
		fp.FetchOffset = max(p.next[part], starts[kafka.TopicPartition{Topic: offsetsTopic, Partition: part}])
		fp.PartitionMaxBytes = 1 << 20
		t.Partitions = append(t.Partitions, fp)
	}
	req.Topics = append(req.Topics, t)
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := c.Request(rctx, req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", offsetsTopic, err)
	}
	for _, rt := range resp.(*kmsg.FetchResponse).Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				continue
			}
			for b, err := range wire.Batches(rp.RecordBatches) {
				if err != nil {
					break
				}
				p.next[rp.Partition] = b.LastOffset() + 1
				if b.Attributes.Control() {
					continue
				}
				for rec, err := range b.Records() {
					if err != nil {
						break
					}
					p.groupRecord(rec.Key, rec.Value)
				}
			}
		}
	}
	return nil
}

// groupRecord applies one __consumer_offsets record: only group metadata
// (key version 2) matters here; a tombstone removes the group.
func (p *poller) groupRecord(key, value []byte) {
	if len(key) < 2 || int16(binary.BigEndian.Uint16(key)) != 2 {
		return
	}
	var k kmsg.GroupMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return
	}
	if value == nil {
		delete(p.meta, k.Group)
		return
	}
	var v kmsg.GroupMetadataValue
	if err := v.ReadFrom(value); err != nil {
		p.m.log.Debug("unreadable group metadata", zap.String("group", k.Group), zap.Error(err))
		return
	}
	md := groupMetadata{generation: v.Generation}
	if v.Leader != nil {
		md.leader = *v.Leader
	}
	p.meta[k.Group] = md
}

// applyPoll publishes a round's answers, with timeline events for what
// changed since the round before.
func (m *Model) applyPoll(r *pollResult) {
	m.mu.Lock()
	prev := m.poll
	m.poll = r
	m.rev++
	m.touchLocked(sectionStatus)
	var evs []Event
	if prev != nil {
		evs = pollEvents(prev, r)
		changedTopics := map[string]bool{}
		for k, v := range r.replicas {
			if prev.replicas[k] != v {
				changedTopics[k.tp.Topic] = true
			}
		}
		for k := range prev.replicas {
			if _, ok := r.replicas[k]; !ok {
				changedTopics[k.tp.Topic] = true
			}
		}
		hwChanged := false
		for k, v := range r.hw {
			if prev.hw[k] != v {
				changedTopics[k.Topic], hwChanged = true, true
			}
		}
		for t := range changedTopics {
			m.touchLocked(topicSection(t))
		}
		if hwChanged {
			m.touchLocked(sectionLegacy)
		}
		if hwChanged || !groupsEqual(prev.groups, r.groups) {
			m.touchLocked(sectionGroups)
		}
		if !maps.Equal(prev.reachable, r.reachable) {
			m.touchLocked(sectionCluster)
		}
	} else {
		for id := range m.sections {
			m.touchLocked(id)
		}
		m.touchLocked(sectionGroups)
		m.touchLocked(sectionLegacy)
		m.touchLocked(sectionCluster)
	}
	m.timeline.add(r.at, evs...)
	m.mu.Unlock()
	m.notify()
}

// pollEvents are the timeline events between two rounds: brokers that
// stopped or started answering, and groups that appeared, went, changed
// state or rebalanced.
func pollEvents(prev, r *pollResult) []Event {
	var evs []Event
	for _, id := range slices.Sorted(maps.Keys(r.errs)) {
		if prev.reachable[id] {
			evs = append(evs, Event{Kind: KindBroker, Text: fmt.Sprintf("broker %d does not answer on the Kafka port: %s", id, r.errs[id])})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.reachable)) {
		if _, failed := prev.errs[id]; failed {
			evs = append(evs, Event{Kind: KindBroker, Text: fmt.Sprintf("broker %d answers on the Kafka port again", id)})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.groups)) {
		g, before := r.groups[id], prev.groups[id]
		switch {
		case before == nil:
			evs = append(evs, Event{Kind: KindGroup, Text: fmt.Sprintf("group %s appeared on coordinator broker %d: %s, %d members", id, g.Coordinator, g.State, len(g.Members))})
		case before.Generation >= 0 && g.Generation > before.Generation:
			evs = append(evs, Event{Kind: KindGroup, Text: fmt.Sprintf("group %s rebalanced: generation %d → %d, protocol %s, %d members, leader %s",
				id, before.Generation, g.Generation, orNone(g.Protocol), len(g.Members), orNone(g.Leader))})
		case before.State != g.State:
			evs = append(evs, Event{Kind: KindGroup, Text: fmt.Sprintf("group %s: %s → %s", id, before.State, g.State)})
		case before.Coordinator != g.Coordinator:
			evs = append(evs, Event{Kind: KindGroup, Text: fmt.Sprintf("group %s moved to coordinator broker %d", id, g.Coordinator)})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(prev.groups)) {
		if _, ok := r.groups[id]; !ok && len(r.errs) == 0 {
			evs = append(evs, Event{Kind: KindGroup, Text: fmt.Sprintf("group %s is gone", id)})
		}
	}
	return evs
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func groupsEqual(a, b map[string]*coordGroup) bool {
	if len(a) != len(b) {
		return false
	}
	for id, g := range a {
		h, ok := b[id]
		if !ok || g.State != h.State || g.Generation != h.Generation || g.Coordinator != h.Coordinator ||
			len(g.Members) != len(h.Members) || !maps.Equal(g.Committed, h.Committed) {
			return false
		}
		for i := range g.Members {
			if g.Members[i].ID != h.Members[i].ID || !slices.Equal(g.Members[i].Assignment, h.Members[i].Assignment) {
				return false
			}
		}
	}
	return true
}
