package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// zn is a znode as the mirror holds it: data, version, czxid and mzxid.
func zn(data string, version int32, czxid, mzxid int64) *znode {
	return &znode{data: []byte(data), stat: zk.Stat{Version: version, Czxid: czxid, Mzxid: mzxid}}
}

const (
	state1 = `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}`
	broker = `{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://b1:9092"],"jmx_port":-1,"port":9092,"host":"b1","version":5,"timestamp":"1"}`
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		change   change
		kinds    []string
		texts    []string
		version  int32
		zxid     int64
		noEvents bool
	}{
		{
			name:   "controller moved",
			change: change{path: "/controller", old: zn(`{"version":1,"brokerid":1,"timestamp":"1"}`, 0, 10, 10), new: zn(`{"version":1,"brokerid":2,"timestamp":"2"}`, 0, 20, 20)},
			kinds:  []string{KindController}, texts: []string{"controller moved: broker 1 → broker 2"}, zxid: 20,
		},
		{
			name:   "controller gone",
			change: change{path: "/controller", old: zn(`{"version":1,"brokerid":3,"timestamp":"1"}`, 0, 10, 10)},
			kinds:  []string{KindController}, texts: []string{"controller broker 3 gone"}, zxid: 10,
		},
		{
			name:   "controller epoch",
			change: change{path: "/controller_epoch", old: zn("4", 4, 2, 30), new: zn("5", 5, 2, 40)},
			kinds:  []string{KindController}, texts: []string{"controller epoch 4 → 5"}, version: 5, zxid: 40,
		},
		{
			name:    "leader elected after failover",
			change:  change{path: "/brokers/topics/orders/partitions/0/state", old: zn(state1, 0, 5, 5), new: zn(`{"controller_epoch":2,"leader":2,"version":1,"leader_epoch":1,"isr":[2,3]}`, 1, 5, 50)},
			kinds:   []string{KindLeader, KindISR},
			texts:   []string{"orders-0: leader 1 → 2 (leader epoch 0 → 1, controller epoch 2)", "orders-0: ISR shrunk [1,2,3] → [2,3]"},
			version: 1, zxid: 50,
		},
		{
			name:   "ISR expanded",
			change: change{path: "/brokers/topics/orders/partitions/0/state", old: zn(`{"controller_epoch":2,"leader":2,"version":1,"leader_epoch":1,"isr":[2,3]}`, 1, 5, 50), new: zn(`{"controller_epoch":2,"leader":2,"version":1,"leader_epoch":1,"isr":[2,3,1]}`, 2, 5, 60)},
			kinds:  []string{KindISR}, texts: []string{"orders-0: ISR expanded [2,3] → [2,3,1]"}, version: 2, zxid: 60,
		},
		{
			name:   "no leader",
			change: change{path: "/brokers/topics/orders/partitions/0/state", old: zn(`{"controller_epoch":2,"leader":2,"version":1,"leader_epoch":1,"isr":[2]}`, 1, 5, 50), new: zn(`{"controller_epoch":2,"leader":-1,"version":1,"leader_epoch":2,"isr":[2]}`, 2, 5, 60)},
			kinds:  []string{KindLeader}, texts: []string{"orders-0: leader 2 → none"},
		},
		{
			name:   "broker joined",
			change: change{path: "/brokers/ids/1", new: zn(broker, 0, 37, 37)},
			kinds:  []string{KindBroker}, texts: []string{"broker 1 joined: registered with broker epoch 37 (PLAINTEXT://b1:9092)"}, zxid: 37,
		},
		{
			name:   "broker registered again",
			change: change{path: "/brokers/ids/1", old: zn(broker, 0, 37, 37), new: zn(broker, 0, 90, 90)},
			kinds:  []string{KindBroker}, texts: []string{"broker 1 registered again: broker epoch 37 → 90"}, zxid: 90,
		},
		{
			name:   "broker left",
			change: change{path: "/brokers/ids/2", old: zn(broker, 0, 40, 40)},
			kinds:  []string{KindBroker}, texts: []string{"broker 2 left: its registration (broker epoch 40) is gone"},
		},
		{
			name:   "topic created",
			change: change{path: "/brokers/topics/orders", new: zn(`{"version":3,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},"removing_replicas":{}}`, 0, 5, 5)},
			kinds:  []string{KindTopic}, texts: []string{"topic orders created: 2 partitions, replication factor 2"},
		},
		{
			name:   "partitions added",
			change: change{path: "/brokers/topics/orders", old: zn(`{"version":3,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}`, 0, 5, 5), new: zn(`{"version":3,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},"removing_replicas":{}}`, 1, 5, 9)},
			kinds:  []string{KindTopic}, texts: []string{"topic orders: partitions 1 → 2"}, version: 1,
		},
		{
			name:   "topic deletion requested",
			change: change{path: "/admin/delete_topics/orders", new: zn("", 0, 70, 70)},
			kinds:  []string{KindAdmin}, texts: []string{"deletion of topic orders requested"},
		},
		{
			name:   "reassignment consumed",
			change: change{path: "/admin/reassign_partitions", old: zn(`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,3]}]}`, 0, 80, 80)},
			kinds:  []string{KindAdmin}, texts: []string{"reassignment done: the controller removed the request"},
		},
		{
			name:   "ISR change notification",
			change: change{path: "/isr_change_notification/isr_change_0000000003", new: zn(`{"version":1,"partitions":[{"topic":"orders","partition":1}]}`, 0, 81, 81)},
			kinds:  []string{KindAdmin}, texts: []string{"ISR change notification isr_change_0000000003 written by a leader (orders-1)"},
		},
		{
			name:   "config changed",
			change: change{path: "/config/topics/orders", old: zn(`{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"delete"}}`, 0, 4, 4), new: zn(`{"version":1,"config":{"retention.ms":"60000","segment.ms":"10"}}`, 1, 4, 90)},
			kinds:  []string{KindConfig}, texts: []string{"config of topics/orders: retention.ms: 1000 → 60000, segment.ms=10, cleanup.policy removed"},
		},
		{
			name:   "legacy owner moved",
			change: change{path: "/consumers/g/owners/orders/0", old: zn("g_a-1-0", 0, 5, 5), new: zn("g_b-2-0", 0, 9, 9)},
			kinds:  []string{KindLegacy}, texts: []string{"g: orders-0 moved g_a-1-0 → g_b-2-0"},
		},
		{
			name:   "legacy consumer joined",
			change: change{path: "/consumers/g/ids/g_a-1", new: zn(`{"version":1,"subscription":{"orders":1},"pattern":"static","timestamp":"1"}`, 0, 5, 5)},
			kinds:  []string{KindLegacy}, texts: []string{"legacy consumer g_a-1 joined group g"},
		},
		{
			name:     "legacy offset commits are not news",
			change:   change{path: "/consumers/g/offsets/orders/0", old: zn("5", 0, 5, 5), new: zn("9", 1, 5, 9)},
			noEvents: true,
		},
		{
			name:     "a child change of a parent is its children's news",
			change:   change{path: "/brokers/ids", old: &znode{stat: zk.Stat{Cversion: 1, Czxid: 2, Mzxid: 2}}, new: &znode{stat: zk.Stat{Cversion: 2, Czxid: 2, Mzxid: 2}}},
			noEvents: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := describe([]change{tc.change})
			if tc.noEvents {
				if len(evs) != 0 {
					t.Fatalf("events %+v, want none", evs)
				}
				return
			}
			if len(evs) != len(tc.texts) {
				t.Fatalf("events %+v, want %d", evs, len(tc.texts))
			}
			for i, e := range evs {
				if e.Kind != tc.kinds[i] || !strings.HasPrefix(e.Text, tc.texts[i]) || e.Path != tc.change.path {
					t.Errorf("event %d: %s %q at %s, want %s %q", i, e.Kind, e.Text, e.Path, tc.kinds[i], tc.texts[i])
				}
				if tc.zxid != 0 && (e.Version != tc.version || e.Zxid != tc.zxid) {
					t.Errorf("event %d: version %d zxid %d, want %d and %d", i, e.Version, e.Zxid, tc.version, tc.zxid)
				}
			}
		})
	}
}

func TestTimelineKeepsTheLatestInOrder(t *testing.T) {
	tl := timeline{limit: 3}
	now := time.Now()
	for _, text := range []string{"a", "b", "c", "d", "e"} {
		tl.add(now, Event{Text: text})
	}
	var got []string
	for _, e := range tl.since(0) {
		got = append(got, e.Text)
	}
	if !slices.Equal(got, []string{"c", "d", "e"}) {
		t.Fatalf("kept %v, want [c d e]", got)
	}
	if s := tl.since(4); len(s) != 1 || s[0].Seq != 5 || s[0].Text != "e" {
		t.Fatalf("since 4: %+v, want event 5 only", s)
	}
	if s := tl.since(5); len(s) != 0 {
		t.Fatalf("since 5: %+v, want none", s)
	}
}

// TestSectionsOf: a change re-renders only the sections that show it.
func TestSectionsOf(t *testing.T) {
	const statePath = "/brokers/topics/orders/partitions/0/state"
	nodes := map[string]*znode{"/brokers/topics": {children: []string{"orders", "payments"}}}
	for _, tc := range []struct {
		name string
		c    change
		want []string
	}{
		{"a new leader epoch only", change{path: statePath, old: zn(state1, 0, 5, 5), new: zn(`{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":7,"isr":[1,2,3]}`, 1, 5, 6)},
			[]string{"topic:orders"}},
		{"a new leader", change{path: statePath, old: zn(state1, 0, 5, 5), new: zn(`{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":1,"isr":[1,2,3]}`, 1, 5, 6)},
			[]string{"topic:orders", "topics", "cluster"}},
		{"a shrunk ISR", change{path: statePath, old: zn(state1, 0, 5, 5), new: zn(`{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}`, 1, 5, 6)},
			[]string{"topic:orders", "topics", "cluster"}},
		{"a broker leaving", change{path: "/brokers/ids/2", old: zn(broker, 0, 5, 5)},
			[]string{"cluster", "topics", "status", "topic:orders", "topic:payments"}},
		{"a topic config", change{path: "/config/topics/payments", new: zn(`{"version":1,"config":{}}`, 0, 5, 5)},
			[]string{"topic:payments", "topics"}},
		{"a legacy offset", change{path: "/consumers/g/offsets/orders/0", new: zn("5", 0, 5, 5)},
			[]string{"legacy"}},
		{"the controller", change{path: "/controller", new: zn(`{"version":1,"brokerid":1,"timestamp":"1"}`, 0, 5, 5)},
			[]string{"cluster", "status"}},
	} {
		if got := sectionsOf(tc.c, nodes); !slices.Equal(got, tc.want) {
			t.Errorf("%s: sections %v, want %v", tc.name, got, tc.want)
		}
	}
}
