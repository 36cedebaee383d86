package consumer

import (
	"maps"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/zkpaths"
)

// TestTopicFilter: 0.8.2's TopicFilter normalizes the expression (commas
// are alternatives, spaces and surrounding quotes go), matches whole topic
// names, and leaves the internal topics out unless told otherwise.
func TestTopicFilter(t *testing.T) {
	topics := []string{"__consumer_offsets", "__transaction_state", "logs", "logs-eu", "metrics", "orders"}
	for _, tc := range []struct {
		raw             string
		black, internal bool
		regex           string
		want            []string
	}{
		{raw: "logs", regex: "logs", want: []string{"logs"}},
		{raw: " 'logs.*, metrics' ", regex: "logs.*|metrics", want: []string{"logs", "logs-eu", "metrics"}},
		{raw: `"orders"`, regex: "orders", want: []string{"orders"}},
		{raw: ".*", regex: ".*", want: []string{"logs", "logs-eu", "metrics", "orders"}},
		{raw: ".*", internal: true, regex: ".*", want: topics},
		{raw: "logs.*", black: true, regex: "logs.*", want: []string{"metrics", "orders"}},
		{raw: "orders,metrics", black: true, internal: true, regex: "orders|metrics",
			want: []string{"__consumer_offsets", "__transaction_state", "logs", "logs-eu"}},
	} {
		f, err := newTopicFilter(tc.raw, tc.black)
		if err != nil {
			t.Fatalf("%q: %v", tc.raw, err)
		}
		if got := f.filterTopics(topics, !tc.internal); f.regex != tc.regex || !slices.Equal(got, tc.want) {
			t.Errorf("%q (black %v, internal %v): regex %q, topics %v; want %q, %v", tc.raw, tc.black, tc.internal, f.regex, got, tc.regex, tc.want)
		}
	}
	if _, err := newTopicFilter("(?=lookahead)", false); err == nil {
		t.Error("a regex Go cannot compile was accepted")
	}
}

// TestLegacyWildcardSubscriptions runs 0.8.2's three kinds of
// registration against a real ZooKeeper and broker: each writes its pattern
// in /consumers/<g>/ids/<id>; a whitelisted consumer takes up a topic
// created after it started; a blacklisted one never sees the topics its
// expression names, nor the internal ones.
func TestLegacyWildcardSubscriptions(t *testing.T) {
	c := startCluster(t)
	createTopic(t, c, "logs-a", 2)
	createTopic(t, c, "metrics", 1)
	produce(t, c, "logs-a", 2, 0, 3)
	produce(t, c, "metrics", 1, 0, 3)

	static := newConsumer(t, legacyConfig(c, "static", "metrics"))
	cfg := legacyConfig(c, "white", "")
	cfg.Topics, cfg.Whitelist = nil, " logs-.* "
	white := newConsumer(t, cfg)
	cfg = legacyConfig(c, "black", "")
	cfg.Topics, cfg.Blacklist = nil, "logs-.*"
	black := newConsumer(t, cfg)

	for _, tc := range []struct {
		c    *Consumer
		want string
	}{
		{static, `^\{"version":1,"subscription":\{"metrics":1\},"pattern":"static","timestamp":"[0-9]+"\}$`},
		{white, `^\{"version":1,"subscription":\{"logs-\.\*":1\},"pattern":"white_list","timestamp":"[0-9]+"\}$`},
		{black, `^\{"version":1,"subscription":\{"logs-\.\*":1\},"pattern":"black_list","timestamp":"[0-9]+"\}$`},
	} {
		data, _, err := c.ZooKeeper().Get(zkpaths.ConsumerIDPath(tc.c.cfg.GroupID, tc.c.MemberID()))
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(tc.want).Match(data) {
			t.Errorf("registration of group %s: %s, want %s", tc.c.cfg.GroupID, data, tc.want)
		}
	}

	if got := values(pollN(t, white, 6)); !slices.Equal(got, []string{"logs-a:0-0", "logs-a:0-1", "logs-a:0-2", "logs-a:1-0", "logs-a:1-1", "logs-a:1-2"}) {
		t.Errorf("whitelisted consumer read %v", got)
	}
	if got := values(pollN(t, black, 3)); !slices.Equal(got, []string{"metrics:0-0", "metrics:0-1", "metrics:0-2"}) {
		t.Errorf("blacklisted consumer read %v", got)
	}
	createTopic(t, c, "logs-b", 1)
	createTopic(t, c, "audit", 1)
	produce(t, c, "logs-b", 1, 0, 2)
	produce(t, c, "audit", 1, 0, 2)
	if got := values(pollN(t, white, 2)); !slices.Equal(got, []string{"logs-b:0-0", "logs-b:0-1"}) {
		t.Errorf("whitelisted consumer read %v from the new topics, want logs-b's records", got)
	}
	if got := values(pollN(t, black, 2)); !slices.Equal(got, []string{"audit:0-0", "audit:0-1"}) {
		t.Errorf("blacklisted consumer read %v from the new topics, want audit's records", got)
	}
	wait.For(t, 10*time.Second, "the wildcard consumers' assignments", func() bool {
		return slices.Equal(slices.Sorted(maps.Keys(white.Assignment())), []string{"logs-a", "logs-b"}) &&
			slices.Equal(slices.Sorted(maps.Keys(black.Assignment())), []string{"audit", "metrics"}) &&
			slices.Equal(slices.Sorted(maps.Keys(static.Assignment())), []string{"metrics"})
	})
}

// values is each record as "<topic>:<value>", sorted.
func values(records []Record) []string {
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = r.Topic + ":" + string(r.Value)
	}
	slices.Sort(out)
	return out
}
