package ui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/zkpaths"
)

// Kinds of timeline events, the page's filters.
const (
	KindBroker     = "broker"
	KindController = "controller"
	KindLeader     = "leader"
	KindISR        = "isr"
	KindTopic      = "topic"
	KindAdmin      = "admin"
	KindConfig     = "config"
	KindGroup      = "group"
	KindLegacy     = "legacy"
	KindZooKeeper  = "zookeeper"
)

// Kinds lists every kind in the order the page offers them as filters.
var Kinds = []string{KindBroker, KindController, KindLeader, KindISR, KindTopic, KindAdmin, KindConfig, KindGroup, KindLegacy, KindZooKeeper}

// Event is one line of the timeline: something in the cluster changed.
type Event struct {
	Seq  uint64 // 1, 2, ... in the order the dashboard saw the changes
	Time time.Time
	Kind string
	Text string
	// Path and Version name the znode whose change this is and its data
	// version after the change (before it, for a deletion); Path is empty
	// for what the brokers report.
	Path    string
	Version int32
	Zxid    int64 // the zxid of the change (mzxid, or czxid for a creation)
}

// describe turns the mirror's changes into timeline events, in order. It is
// a pure function of the changes: every fact comes from the old and new
// znodes.
func describe(changes []change) []Event {
	var out []Event
	for _, c := range changes {
		out = append(out, describeOne(c)...)
	}
	return out
}

func describeOne(c change) []Event {
	parts := strings.Split(strings.TrimPrefix(c.path, "/"), "/")
	ev := func(kind, format string, args ...any) []Event {
		e := Event{Kind: kind, Text: fmt.Sprintf(format, args...), Path: c.path}
		switch {
		case c.new == nil:
			e.Version, e.Zxid = c.old.stat.Version, c.old.stat.Mzxid
		case c.old == nil || c.old.stat.Czxid != c.new.stat.Czxid:
			e.Version, e.Zxid = c.new.stat.Version, c.new.stat.Czxid
		default:
			e.Version, e.Zxid = c.new.stat.Version, c.new.stat.Mzxid
		}
		return []Event{e}
	}
	created, deleted := c.old == nil, c.new == nil
	recreated := !created && !deleted && c.old.stat.Czxid != c.new.stat.Czxid
	dataChanged := !created && !deleted && (recreated || c.old.stat.Mzxid != c.new.stat.Mzxid)
	if !created && !deleted && !dataChanged {
		return nil // only the children moved; they have events of their own
	}
	switch {
	case c.path == zkpaths.Controller:
		return describeController(c, ev)
	case c.path == zkpaths.ControllerEpoch:
		if deleted {
			return nil
		}
		now, err := zkpaths.DecodeControllerEpoch(c.new.data)
		if err != nil {
			return nil
		}
		if created {
			return ev(KindController, "controller epoch %d", now)
		}
		before, _ := zkpaths.DecodeControllerEpoch(c.old.data)
		return ev(KindController, "controller epoch %d → %d", before, now)
	case len(parts) == 3 && c.path == zkpaths.BrokerPath(brokerID(parts[2])):
		return describeBroker(c, parts[2], created, deleted, recreated, ev)
	case len(parts) == 3 && parts[0] == "brokers" && parts[1] == "topics":
		return describeTopic(c, parts[2], created, deleted, ev)
	case len(parts) == 6 && parts[0] == "brokers" && parts[1] == "topics" && parts[3] == "partitions" && parts[5] == "state":
		return describeState(c, parts[2]+"-"+parts[4], created, deleted, ev)
	case len(parts) == 3 && c.path == zkpaths.DeleteTopicPath(parts[2]):
		if created {
			return ev(KindAdmin, "deletion of topic %s requested", parts[2])
		}
		if deleted {
			return ev(KindAdmin, "deletion of topic %s done: the controller removed the request", parts[2])
		}
	case c.path == zkpaths.ReassignPartitions || c.path == zkpaths.PreferredReplicaElection:
		what := "reassignment"
		if c.path == zkpaths.PreferredReplicaElection {
			what = "preferred replica election"
		}
		switch {
		case created:
			return ev(KindAdmin, "%s requested (%s)", what, countPartitions(c.path, c.new.data))
		case deleted:
			return ev(KindAdmin, "%s done: the controller removed the request", what)
		}
		return ev(KindAdmin, "%s request changed (%s)", what, countPartitions(c.path, c.new.data))
	case len(parts) == 2 && parts[0] == "isr_change_notification" && created:
		return ev(KindAdmin, "ISR change notification %s written by a leader (%s)", parts[1], countPartitions(c.path, c.new.data))
	case len(parts) == 2 && parts[0] == "isr_change_notification" && deleted:
		return ev(KindAdmin, "ISR change notification %s consumed by the controller", parts[1])
	case len(parts) == 3 && parts[0] == "config" && parts[1] == "changes" && created:
		n, err := zkpaths.DecodeConfigChangeNotification(c.new.data)
		if err != nil {
			return nil
		}
		return ev(KindConfig, "config change notification %s: brokers re-read %s", parts[2], n.EntityPath)
	case len(parts) >= 3 && parts[0] == "config" && parts[1] != "changes" && !deleted:
		return describeConfig(c, strings.Join(parts[1:], "/"), ev)
	case len(parts) == 2 && parts[0] == "consumers" && (created || deleted):
		if created {
			return ev(KindLegacy, "legacy group %s created", parts[1])
		}
		return ev(KindLegacy, "legacy group %s deleted", parts[1])
	case len(parts) == 4 && parts[0] == "consumers" && parts[2] == "ids":
		switch {
		case created:
			return ev(KindLegacy, "legacy consumer %s joined group %s", parts[3], parts[1])
		case deleted:
			return ev(KindLegacy, "legacy consumer %s left group %s", parts[3], parts[1])
		}
	case len(parts) == 5 && parts[0] == "consumers" && parts[2] == "owners":
		tp := parts[3] + "-" + parts[4]
		switch {
		case created:
			return ev(KindLegacy, "%s: %s claimed by %s", parts[1], tp, c.new.data)
		case deleted:
			return ev(KindLegacy, "%s: %s released by %s", parts[1], tp, c.old.data)
		}
		return ev(KindLegacy, "%s: %s moved %s → %s", parts[1], tp, c.old.data, c.new.data)
	}
	return nil
}

type eventFunc func(kind, format string, args ...any) []Event

func describeController(c change, ev eventFunc) []Event {
	id := func(n *znode) string {
		if r, err := zkpaths.DecodeControllerRegistration(n.data); err == nil {
			return strconv.Itoa(int(r.BrokerID))
		}
		return "?"
	}
	switch {
	case c.new == nil:
		return ev(KindController, "controller broker %s gone: /controller deleted, an election follows", id(c.old))
	case c.old == nil:
		return ev(KindController, "broker %s elected controller", id(c.new))
	}
	return ev(KindController, "controller moved: broker %s → broker %s", id(c.old), id(c.new))
}

func brokerID(s string) int32 {
	id, err := zkpaths.ParseBrokerID(s)
	if err != nil {
		return -1
	}
	return id
}

func describeBroker(c change, id string, created, deleted, recreated bool, ev eventFunc) []Event {
	switch {
	case created:
		return ev(KindBroker, "broker %s joined: registered with broker epoch %d (%s)", id, c.new.stat.Czxid, endpoints(id, c.new.data))
	case deleted:
		return ev(KindBroker, "broker %s left: its registration (broker epoch %d) is gone", id, c.old.stat.Czxid)
	case recreated:
		return ev(KindBroker, "broker %s registered again: broker epoch %d → %d", id, c.old.stat.Czxid, c.new.stat.Czxid)
	}
	return ev(KindBroker, "broker %s updated its registration (%s)", id, endpoints(id, c.new.data))
}

func endpoints(id string, data []byte) string {
	reg, err := zkpaths.DecodeBrokerRegistration(brokerID(id), data)
	if err != nil {
		return "unreadable registration"
	}
	var s []string
	for _, e := range reg.Endpoints {
		s = append(s, e.String())
	}
	return strings.Join(s, ", ")
}

func describeTopic(c change, topic string, created, deleted bool, ev eventFunc) []Event {
	if deleted {
		return ev(KindTopic, "topic %s deleted", topic)
	}
	now, err := zkpaths.DecodeTopicAssignment(c.new.data)
	if err != nil {
		return nil
	}
	if created {
		rf := 0
		for _, r := range now.Partitions {
			rf = max(rf, len(r))
		}
		return ev(KindTopic, "topic %s created: %d partitions, replication factor %d", topic, len(now.Partitions), rf)
	}
	before, err := zkpaths.DecodeTopicAssignment(c.old.data)
	if err != nil {
		return ev(KindTopic, "topic %s assignment written", topic)
	}
	switch {
	case len(now.Partitions) != len(before.Partitions):
		return ev(KindTopic, "topic %s: partitions %d → %d", topic, len(before.Partitions), len(now.Partitions))
	case len(now.AddingReplicas)+len(now.RemovingReplicas) > 0:
		return ev(KindTopic, "topic %s: reassigning %d partitions", topic, len(reassigning(now)))
	case len(before.AddingReplicas)+len(before.RemovingReplicas) > 0:
		return ev(KindTopic, "topic %s: reassignment complete", topic)
	}
	return ev(KindTopic, "topic %s assignment changed", topic)
}

func reassigning(t zkpaths.TopicAssignment) map[int32]bool {
	m := map[int32]bool{}
	for p := range t.AddingReplicas {
		m[p] = true
	}
	for p := range t.RemovingReplicas {
		m[p] = true
	}
	return m
}

func describeState(c change, tp string, created, deleted bool, ev eventFunc) []Event {
	if deleted {
		return nil // the topic's deletion says it
	}
	now, err := zkpaths.DecodeLeaderAndIsr(c.new.data)
	if err != nil {
		return nil
	}
	if created {
		return ev(KindLeader, "%s: leader %s elected, ISR %s (leader epoch %d)", tp, leader(now.Leader), ids(now.ISR), now.LeaderEpoch)
	}
	before, err := zkpaths.DecodeLeaderAndIsr(c.old.data)
	if err != nil {
		return nil
	}
	var out []Event
	if before.Leader != now.Leader {
		out = append(out, ev(KindLeader, "%s: leader %s → %s (leader epoch %d → %d, controller epoch %d)",
			tp, leader(before.Leader), leader(now.Leader), before.LeaderEpoch, now.LeaderEpoch, now.ControllerEpoch)...)
	}
	if !slices.Equal(sorted(before.ISR), sorted(now.ISR)) {
		verb := "changed"
		switch {
		case len(now.ISR) < len(before.ISR):
			verb = "shrunk"
		case len(now.ISR) > len(before.ISR):
			verb = "expanded"
		}
		out = append(out, ev(KindISR, "%s: ISR %s %s → %s", tp, verb, ids(before.ISR), ids(now.ISR))...)
	}
	if len(out) == 0 {
		out = ev(KindLeader, "%s: leader %s, leader epoch %d → %d (controller epoch %d)", tp, leader(now.Leader), before.LeaderEpoch, now.LeaderEpoch, now.ControllerEpoch)
	}
	return out
}

func describeConfig(c change, entity string, ev eventFunc) []Event {
	now, err := zkpaths.DecodeEntityConfig(c.new.data)
	if err != nil {
		return nil
	}
	before := zkpaths.EntityConfig{Config: map[string]string{}}
	if c.old != nil {
		if b, err := zkpaths.DecodeEntityConfig(c.old.data); err == nil {
			before = b
		}
	}
	var diffs []string
	keys := slices.Sorted(maps.Keys(now.Config))
	for k := range before.Config {
		if _, ok := now.Config[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		b, had := before.Config[k]
		n, has := now.Config[k]
		switch {
		case !had && has:
			diffs = append(diffs, k+"="+n)
		case had && !has:
			diffs = append(diffs, k+" removed")
		case b != n:
			diffs = append(diffs, k+": "+b+" → "+n)
		}
	}
	if len(diffs) == 0 {
		if c.old == nil {
			return nil // an empty entity config appearing says nothing yet
		}
		return ev(KindConfig, "config of %s written, unchanged", entity)
	}
	return ev(KindConfig, "config of %s: %s", entity, strings.Join(diffs, ", "))
}

// countPartitions says how many partitions an admin request or ISR change
// notification names.
func countPartitions(p string, data []byte) string {
	var n int
	switch {
	case p == zkpaths.ReassignPartitions:
		r, err := zkpaths.DecodeReassignPartitionsData(data)
		if err != nil {
			return "unreadable"
		}
		n = len(r.Partitions)
	case p == zkpaths.PreferredReplicaElection:
		r, err := zkpaths.DecodePreferredReplicaElectionData(data)
		if err != nil {
			return "unreadable"
		}
		n = len(r.Partitions)
	default:
		r, err := zkpaths.DecodeIsrChangeNotificationData(data)
		if err != nil {
			return "unreadable"
		}
		var s []string
		for _, tp := range r.Partitions {
			s = append(s, tp.String())
		}
		return strings.Join(s, ", ")
	}
	if n == 1 {
		return "1 partition"
	}
	return strconv.Itoa(n) + " partitions"
}

func leader(id int32) string {
	if id == zkpaths.NoLeader {
		return "none"
	}
	return strconv.Itoa(int(id))
}

func ids(v []int32) string {
	s := make([]string, len(v))
	for i, id := range v {
		s[i] = strconv.Itoa(int(id))
	}
	return "[" + strings.Join(s, ",") + "]"
}

func sorted(v []int32) []int32 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// timeline keeps the latest events in order, so a page that loads or
// reconnects finds what happened before it.
type timeline struct {
	events []Event // oldest first, at most limit
	limit  int
	seq    uint64
}

func (t *timeline) add(now time.Time, evs ...Event) {
	for _, e := range evs {
		t.seq++
		e.Seq, e.Time = t.seq, now
		t.events = append(t.events, e)
	}
	if over := len(t.events) - t.limit; over > 0 {
		t.events = slices.Delete(t.events, 0, over)
	}
}

// since returns the events after seq, oldest first.
func (t *timeline) since(seq uint64) []Event {
	i, _ := slices.BinarySearchFunc(t.events, seq+1, func(e Event, s uint64) int {
		switch {
		case e.Seq < s:
			return -1
		case e.Seq > s:
			return 1
		}
		return 0
	})
	return slices.Clone(t.events[i:])
}
