package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// The views are what the templates render: plain values built from the
// model under its read lock.

// statusView is the bar at the top of every view.
type statusView struct {
	ZooKeeper    string
	State        string
	Err          string
	Since        time.Time
	Session      string
	Requests     int64
	Znodes       int
	Loaded       bool
	Brokers      int
	Reachable    int
	LastPoll     time.Time
	Controller   int32
	Epoch        int32
	Actions      bool
	Subscribers  int
	TimelineSize int
}

type brokerView struct {
	ID           int32
	Live         bool
	Reachable    bool
	Err          string
	Endpoints    []string
	Rack         string
	Epoch        int64 // czxid of the registration
	Registered   time.Time
	Controller   bool
	Leaders      int
	Replicas     int
	Unregistered bool // named by an assignment but not registered: down
}

type clusterView struct {
	Status            statusView
	ClusterID         string
	Controller        int32 // -1: none
	ControllerSince   time.Time
	ControllerCzxid   int64
	Epoch             int32
	EpochVersion      int32
	EpochChanged      time.Time
	Brokers           []brokerView
	AdminRequests     []adminView
	Topics            int
	Partitions        int
	UnderReplicated   int
	Offline           int
	ControllerMissing bool
}

type adminView struct {
	Path    string
	Created time.Time
	Version int32
}

type replicaView struct {
	ID        int32
	Live      bool
	InISR     bool
	Leader    bool
	Preferred bool
	Known     bool // the broker reported its offsets
	LogStart  int64
	LogEnd    int64
	Adding    bool
	Removing  bool
}

type partitionView struct {
	ID              int32
	Replicas        []replicaView
	Leader          int32
	ISR             []int32
	LeaderEpoch     int32
	ControllerEpoch int32
	Version         int32 // the state znode's zkVersion
	HW              int64
	HasHW           bool
	HasState        bool
	UnderReplicated bool
	Offline         bool
	Reassigning     bool
	NotPreferred    bool
}

type topicView struct {
	Name            string
	ID              string
	Version         int32
	Partitions      []partitionView
	Config          []string
	Deleting        bool
	UnderReplicated int
	Offline         int
}

type topicsView struct {
	Topics []topicRow
}

type topicRow struct {
	Name            string
	Section         string
	Partitions      int
	UnderReplicated int
	Offline         int
}

type legacyConsumerView struct {
	ID           string
	Subscription string
	Pattern      string
	Registered   time.Time
	Epoch        int64
}

type legacyPartitionView struct {
	Topic     string
	Partition int32
	Owner     string
	Offset    int64
	HasOffset bool
	HW        int64
	HasHW     bool
	Lag       int64
	OwnerVer  int32
}

type legacyGroupView struct {
	Name       string
	Consumers  []legacyConsumerView
	Partitions []legacyPartitionView
}

type coordGroupView struct {
	*coordGroup
	Rows []groupRowView
}

type groupRowView struct {
	Topic     string
	Partition int32
	Member    string
	Committed int64
	HasCommit bool
	HW        int64
	HasHW     bool
	Lag       int64
}

type groupsView struct {
	Legacy      []legacyGroupView
	Coordinator []coordGroupView
	Polled      bool
}

// znodeView is the explorer's view of one znode.
type znodeView struct {
	Path     string
	Crumbs   []crumb
	Exists   bool
	Data     string
	Format   string // "json", "text", "binary" or "empty"
	Size     int
	Stat     zk.Stat
	Ctime    time.Time
	Mtime    time.Time
	Children []childView
}

type crumb struct{ Name, Path string }

type childView struct {
	Name, Path  string
	NumChildren int32
	Ephemeral   bool
}

func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func (m *Model) statusLocked() statusView {
	s := statusView{
		ZooKeeper: m.opts.ZooKeeper, State: m.zkState, Err: m.zkErr, Since: m.zkSince,
		Requests: m.requests.Load(), Znodes: len(m.nodes), Loaded: m.loaded, Controller: -1,
		Subscribers: len(m.subs), TimelineSize: len(m.timeline.events),
	}
	if m.session != 0 {
		s.Session = fmt.Sprintf("0x%x", m.session)
	}
	if n := m.nodes[zkpaths.BrokerIDs]; n != nil {
		s.Brokers = len(n.children)
	}
	if m.poll != nil {
		s.Reachable, s.LastPoll = len(m.poll.reachable), m.poll.at
	}
	if n := m.nodes[zkpaths.Controller]; n != nil {
		if r, err := zkpaths.DecodeControllerRegistration(n.data); err == nil {
			s.Controller = r.BrokerID
		}
	}
	if n := m.nodes[zkpaths.ControllerEpoch]; n != nil {
		s.Epoch, _ = zkpaths.DecodeControllerEpoch(n.data)
	}
	return s
}

// assignments decodes every topic's assignment and partition states.
type topicState struct {
	assignment zkpaths.TopicAssignment
	version    int32
	states     map[int32]zkpaths.LeaderAndIsr
	versions   map[int32]int32
}

func (m *Model) topicLocked(topic string) (topicState, bool) {
	n := m.nodes[zkpaths.TopicPath(topic)]
	if n == nil {
		return topicState{}, false
	}
	a, err := zkpaths.DecodeTopicAssignment(n.data)
	if err != nil {
		a = zkpaths.TopicAssignment{Partitions: map[int32][]int32{}}
	}
	ts := topicState{assignment: a, version: n.stat.Version, states: map[int32]zkpaths.LeaderAndIsr{}, versions: map[int32]int32{}}
	for p := range a.Partitions {
		if s := m.nodes[zkpaths.PartitionStatePath(topic, p)]; s != nil {
			if st, err := zkpaths.DecodeLeaderAndIsr(s.data); err == nil {
				ts.states[p], ts.versions[p] = st, s.stat.Version
			}
		}
	}
	return ts, true
}

func (m *Model) liveLocked() map[int32]bool {
	live := map[int32]bool{}
	if n := m.nodes[zkpaths.BrokerIDs]; n != nil {
		for _, c := range n.children {
			if id, err := zkpaths.ParseBrokerID(c); err == nil {
				live[id] = true
			}
		}
	}
	return live
}

func (m *Model) topicNamesLocked() []string {
	if n := m.nodes[zkpaths.BrokerTopics]; n != nil {
		return n.children
	}
	return nil
}

func (m *Model) clusterLocked() clusterView {
	v := clusterView{Status: m.statusLocked(), Controller: -1}
	if n := m.nodes[zkpaths.ClusterID]; n != nil {
		if c, err := zkpaths.DecodeClusterIDData(n.data); err == nil {
			v.ClusterID = c.ID
		}
	}
	if n := m.nodes[zkpaths.Controller]; n != nil {
		if r, err := zkpaths.DecodeControllerRegistration(n.data); err == nil {
			v.Controller, v.ControllerSince, v.ControllerCzxid = r.BrokerID, millis(r.Timestamp), n.stat.Czxid
		}
	}
	v.ControllerMissing = v.Controller < 0
	if n := m.nodes[zkpaths.ControllerEpoch]; n != nil {
		v.Epoch, _ = zkpaths.DecodeControllerEpoch(n.data)
		v.EpochVersion, v.EpochChanged = n.stat.Version, millis(n.stat.Mtime)
	}
	live := m.liveLocked()
	brokers := map[int32]*brokerView{}
	for id := range live {
		bv := &brokerView{ID: id, Live: true, Controller: id == v.Controller}
		if n := m.nodes[zkpaths.BrokerPath(id)]; n != nil {
			bv.Epoch, bv.Registered = n.stat.Czxid, millis(n.stat.Ctime)
			if reg, err := zkpaths.DecodeBrokerRegistration(id, n.data); err == nil {
				for _, e := range reg.Endpoints {
					bv.Endpoints = append(bv.Endpoints, e.String())
				}
				bv.Rack = reg.Rack
			}
		}
		if m.poll != nil {
			bv.Reachable, bv.Err = m.poll.reachable[id], m.poll.errs[id]
		}
		brokers[id] = bv
	}
	for _, topic := range m.topicNamesLocked() {
		ts, ok := m.topicLocked(topic)
		if !ok {
			continue
		}
		v.Topics++
		for p, reps := range ts.assignment.Partitions {
			v.Partitions++
			st, hasState := ts.states[p]
			for _, r := range reps {
				bv := brokers[r]
				if bv == nil {
					bv = &brokerView{ID: r, Unregistered: true}
					brokers[r] = bv
				}
				bv.Replicas++
			}
			if hasState {
				if bv := brokers[st.Leader]; bv != nil {
					bv.Leaders++
				}
				if len(st.ISR) < len(reps) {
					v.UnderReplicated++
				}
				if st.Leader == zkpaths.NoLeader || !live[st.Leader] {
					v.Offline++
				}
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(brokers)) {
		v.Brokers = append(v.Brokers, *brokers[id])
	}
	for _, p := range []string{zkpaths.ReassignPartitions, zkpaths.PreferredReplicaElection} {
		if n := m.nodes[p]; n != nil {
			v.AdminRequests = append(v.AdminRequests, adminView{Path: p, Created: millis(n.stat.Ctime), Version: n.stat.Version})
		}
	}
	if n := m.nodes[zkpaths.DeleteTopics]; n != nil {
		for _, c := range n.children {
			p := zkpaths.DeleteTopicPath(c)
			if cn := m.nodes[p]; cn != nil {
				v.AdminRequests = append(v.AdminRequests, adminView{Path: p, Created: millis(cn.stat.Ctime), Version: cn.stat.Version})
			}
		}
	}
	return v
}

func (m *Model) topicsLocked() topicsView {
	var v topicsView
	live := m.liveLocked()
	for _, topic := range m.topicNamesLocked() {
		ts, ok := m.topicLocked(topic)
		if !ok {
			continue
		}
		row := topicRow{Name: topic, Section: topicSection(topic), Partitions: len(ts.assignment.Partitions)}
		for p, reps := range ts.assignment.Partitions {
			st, ok := ts.states[p]
			if ok && len(st.ISR) < len(reps) {
				row.UnderReplicated++
			}
			if !ok || st.Leader == zkpaths.NoLeader || !live[st.Leader] {
				row.Offline++
			}
		}
		v.Topics = append(v.Topics, row)
	}
	return v
}

func (m *Model) topicViewLocked(topic string) (topicView, bool) {
	ts, ok := m.topicLocked(topic)
	if !ok {
		return topicView{}, false
	}
	live := m.liveLocked()
	v := topicView{Name: topic, ID: ts.assignment.TopicID, Version: ts.version}
	if n := m.nodes[zkpaths.TopicConfigPath(topic)]; n != nil {
		if c, err := zkpaths.DecodeEntityConfig(n.data); err == nil {
			for _, k := range slices.Sorted(maps.Keys(c.Config)) {
				v.Config = append(v.Config, k+"="+c.Config[k])
			}
		}
	}
	v.Deleting = m.nodes[zkpaths.DeleteTopicPath(topic)] != nil
	for _, p := range ts.assignment.PartitionIDs() {
		reps := ts.assignment.Partitions[p]
		tp := kafka.TopicPartition{Topic: topic, Partition: p}
		pv := partitionView{ID: p, Leader: zkpaths.NoLeader}
		st, hasState := ts.states[p]
		if hasState {
			pv.HasState = true
			pv.Leader, pv.ISR, pv.LeaderEpoch, pv.ControllerEpoch, pv.Version = st.Leader, st.ISR, st.LeaderEpoch, st.ControllerEpoch, ts.versions[p]
			pv.UnderReplicated = len(st.ISR) < len(reps)
			pv.NotPreferred = len(reps) > 0 && st.Leader != reps[0] && st.Leader != zkpaths.NoLeader
		}
		pv.Offline = !hasState || st.Leader == zkpaths.NoLeader || !live[st.Leader]
		pv.Reassigning = len(ts.assignment.AddingReplicas[p])+len(ts.assignment.RemovingReplicas[p]) > 0
		for i, r := range reps {
			rv := replicaView{
				ID: r, Live: live[r], InISR: slices.Contains(pv.ISR, r), Leader: r == pv.Leader, Preferred: i == 0,
				Adding: slices.Contains(ts.assignment.AddingReplicas[p], r), Removing: slices.Contains(ts.assignment.RemovingReplicas[p], r),
			}
			if m.poll != nil {
				if o, ok := m.poll.replicas[replicaKey{tp, r}]; ok {
					rv.Known, rv.LogStart, rv.LogEnd = true, o.logStart, o.logEnd
				}
			}
			pv.Replicas = append(pv.Replicas, rv)
		}
		if m.poll != nil {
			pv.HW, pv.HasHW = m.poll.hw[tp]
		}
		if pv.UnderReplicated {
			v.UnderReplicated++
		}
		if pv.Offline {
			v.Offline++
		}
		v.Partitions = append(v.Partitions, pv)
	}
	return v, true
}

func (m *Model) hwLocked(tp kafka.TopicPartition) (int64, bool) {
	if m.poll == nil {
		return 0, false
	}
	hw, ok := m.poll.hw[tp]
	return hw, ok
}

func (m *Model) groupsLocked() groupsView {
	v := groupsView{Polled: m.poll != nil}
	if n := m.nodes[zkpaths.Consumers]; n != nil {
		for _, g := range n.children {
			v.Legacy = append(v.Legacy, m.legacyGroupLocked(g))
		}
	}
	if m.poll != nil {
		for _, id := range slices.Sorted(maps.Keys(m.poll.groups)) {
			g := m.poll.groups[id]
			gv := coordGroupView{coordGroup: g}
			owner := map[kafka.TopicPartition]string{}
			tps := map[kafka.TopicPartition]bool{}
			for _, mem := range g.Members {
				for _, tp := range mem.Assignment {
					owner[tp], tps[tp] = mem.ID, true
				}
			}
			for tp := range g.Committed {
				tps[tp] = true
			}
			for _, tp := range slices.SortedFunc(maps.Keys(tps), kafka.Compare) {
				row := groupRowView{Topic: tp.Topic, Partition: tp.Partition, Member: owner[tp]}
				row.Committed, row.HasCommit = g.Committed[tp]
				row.HW, row.HasHW = m.hwLocked(tp)
				if row.HasCommit && row.HasHW {
					row.Lag = max(row.HW-row.Committed, 0)
				}
				gv.Rows = append(gv.Rows, row)
			}
			v.Coordinator = append(v.Coordinator, gv)
		}
	}
	return v
}

func (m *Model) legacyGroupLocked(group string) legacyGroupView {
	v := legacyGroupView{Name: group}
	if n := m.nodes[zkpaths.ConsumerIDsPath(group)]; n != nil {
		for _, id := range n.children {
			cv := legacyConsumerView{ID: id}
			if cn := m.nodes[zkpaths.ConsumerIDPath(group, id)]; cn != nil {
				cv.Epoch = cn.stat.Czxid
				if reg, err := zkpaths.DecodeConsumerRegistration(cn.data); err == nil {
					var subs []string
					for _, t := range slices.Sorted(maps.Keys(reg.Subscription)) {
						subs = append(subs, fmt.Sprintf("%s×%d", t, reg.Subscription[t]))
					}
					cv.Subscription, cv.Pattern, cv.Registered = strings.Join(subs, ", "), reg.Pattern, millis(reg.Timestamp)
				}
			}
			v.Consumers = append(v.Consumers, cv)
		}
	}
	rows := map[kafka.TopicPartition]*legacyPartitionView{}
	row := func(topic, part string) *legacyPartitionView {
		p, err := zkpaths.ParsePartitionID(part)
		if err != nil {
			return nil
		}
		tp := kafka.TopicPartition{Topic: topic, Partition: p}
		if r, ok := rows[tp]; ok {
			return r
		}
		r := &legacyPartitionView{Topic: topic, Partition: p}
		r.HW, r.HasHW = m.hwLocked(tp)
		rows[tp] = r
		return r
	}
	base := zkpaths.ConsumerGroupPath(group)
	for _, kind := range []string{"owners", "offsets"} {
		tn := m.nodes[base+"/"+kind]
		if tn == nil {
			continue
		}
		for _, topic := range tn.children {
			pn := m.nodes[base+"/"+kind+"/"+topic]
			if pn == nil {
				continue
			}
			for _, part := range pn.children {
				n := m.nodes[base+"/"+kind+"/"+topic+"/"+part]
				r := row(topic, part)
				if n == nil || r == nil {
					continue
				}
				if kind == "owners" {
					r.Owner, r.OwnerVer = string(n.data), n.stat.Version
				} else if off, err := zkpaths.DecodeConsumerOffset(n.data); err == nil {
					r.Offset, r.HasOffset = off, true
				}
			}
		}
	}
	for _, tp := range slices.SortedFunc(maps.Keys(rows), kafka.Compare) {
		r := rows[tp]
		if r.HasOffset && r.HasHW {
			r.Lag = max(r.HW-r.Offset, 0)
		}
		v.Partitions = append(v.Partitions, *r)
	}
	return v
}

// Znode returns the explorer's view of a znode, from the mirror.
func (m *Model) znode(p string) znodeView {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v := znodeView{Path: p, Crumbs: crumbs(p)}
	n := m.nodes[p]
	if n == nil {
		return v
	}
	v.Exists, v.Stat, v.Size = true, n.stat, len(n.data)
	v.Ctime, v.Mtime = millis(n.stat.Ctime), millis(n.stat.Mtime)
	v.Data, v.Format = formatData(n.data)
	for _, name := range n.children {
		cp := join(p, name)
		cv := childView{Name: name, Path: cp}
		if cn := m.nodes[cp]; cn != nil {
			cv.NumChildren, cv.Ephemeral = cn.stat.NumChildren, cn.stat.EphemeralOwner != 0
		}
		v.Children = append(v.Children, cv)
	}
	return v
}

func crumbs(p string) []crumb {
	out := []crumb{{Name: "/", Path: "/"}}
	if p == "/" {
		return out
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i := range parts {
		out = append(out, crumb{Name: parts[i], Path: "/" + strings.Join(parts[:i+1], "/")})
	}
	return out
}

// formatData shows znode data: JSON indented, other text as it is, binary
// as hex. The template escapes whatever it is.
func formatData(data []byte) (string, string) {
	switch {
	case len(data) == 0:
		return "", "empty"
	case json.Valid(data) && (data[0] == '{' || data[0] == '['):
		var b bytes.Buffer
		if err := json.Indent(&b, data, "", "  "); err == nil {
			return b.String(), "json"
		}
	case utf8.Valid(data):
		return string(data), "text"
	}
	return fmt.Sprintf("% x", data), "binary"
}
