package quota

import (
	"testing"
	"time"
)

// Anonymous is the user of a client that did not authenticate.
const Anonymous = "ANONYMOUS"

type clock struct{ t time.Time }

func (c *clock) now() time.Time           { return c.t }
func (c *clock) advance(d time.Duration)  { c.t = c.t.Add(d) }
func newManager(c *clock) *Manager        { return New(Config{Samples: 11, Window: time.Second, Now: c.now}) }
func set(m *Manager, path, key, v string) { m.Set(path, map[string]string{key: v}) }

// TestPrecedence: the first level of Kafka's order that sets the key
// applies, and the rate is measured per the tags of that level.
func TestPrecedence(t *testing.T) {
	m := newManager(&clock{t: time.Unix(1000, 0)})
	set(m, "clients/<default>", ProducerByteRate, "8")
	set(m, "clients/app", ProducerByteRate, "7")
	set(m, "users/<default>", ProducerByteRate, "6")
	set(m, "users/<default>/clients/<default>", ProducerByteRate, "5")
	set(m, "users/<default>/clients/app", ProducerByteRate, "4")
	set(m, "users/alice", ProducerByteRate, "3")
	set(m, "users/alice/clients/<default>", ProducerByteRate, "2")
	set(m, "users/alice/clients/app", ProducerByteRate, "1")
	for _, tc := range []struct {
		remove     string // the level above is removed first
		want       float64
		user, clnt string // the measured rate's tags
	}{
		{"", 1, "alice", "app"},
		{"users/alice/clients/app", 2, "alice", "app"},
		{"users/alice/clients/<default>", 3, "alice", ""},
		{"users/alice", 4, "alice", "app"},
		{"users/<default>/clients/app", 5, "alice", "app"},
		{"users/<default>/clients/<default>", 6, "alice", ""},
		{"users/<default>", 7, "", "app"},
		{"clients/app", 8, "", "app"},
	} {
		if tc.remove != "" {
			m.Set(tc.remove, nil)
		}
		got, key, ok := m.Quota(Produce, "alice", "app")
		if !ok || got != tc.want || key.user != tc.user || key.client != tc.clnt {
			t.Errorf("after removing %q: quota %v (%v) tags %q/%q, want %v tags %q/%q", tc.remove, got, ok, key.user, key.client, tc.want, tc.user, tc.clnt)
		}
	}
	if _, _, ok := m.Quota(Fetch, "alice", "app"); ok {
		t.Error("a fetch quota applies where only producer_byte_rate is set")
	}
	m.Set("clients/<default>", nil)
	if _, _, ok := m.Quota(Produce, "alice", "app"); ok {
		t.Error("a quota applies after every one was removed")
	}
}

// TestThrottleTime: under the quota nothing is throttled; above it the
// throttle is Kafka's (rate - quota) / quota × window, the window at least
// Samples-1 windows; the rate falls as samples expire.
func TestThrottleTime(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := newManager(c)
	set(m, "clients/app", ProducerByteRate, "100")
	// 1000 bytes over the 10 s minimum window: 100 B/s, at the quota.
	if d := m.Record(Produce, Anonymous, "app", 1000); d != 0 {
		t.Fatalf("at the quota: throttled %v", d)
	}
	// 1000 more: 200 B/s, twice the quota: throttled one window of 10 s.
	if d := m.Record(Produce, Anonymous, "app", 1000); d != 10*time.Second {
		t.Fatalf("twice the quota: throttled %v, want 10s", d)
	}
	// Another client id has its own quota level (none) and is not throttled.
	if d := m.Record(Produce, Anonymous, "other", 1e9); d != 0 {
		t.Fatalf("a client without a quota throttled %v", d)
	}
	// Eleven windows later the samples have expired.
	c.advance(11 * time.Second)
	if d := m.Record(Produce, Anonymous, "app", 500); d != 0 {
		t.Fatalf("after the samples expired: throttled %v", d)
	}
	// Unrecord takes bytes back: 500 + 1000 - 1000 stays under the quota.
	if a, ok := m.Lookup(Produce, Anonymous, "app"); ok {
		a.Unrecord(1000)
	}
	if d := m.Record(Produce, Anonymous, "app", 1000); d != 0 {
		t.Fatalf("after unrecording: throttled %v", d)
	}
}

// TestDefaultQuotaIsPerClient: a quota on the default client id limits
// each client id on its own, as Kafka's metric tags do.
func TestDefaultQuotaIsPerClient(t *testing.T) {
	m := newManager(&clock{t: time.Unix(1000, 0)})
	set(m, "clients/<default>", ConsumerByteRate, "100")
	if d := m.Record(Fetch, Anonymous, "a", 1000); d != 0 {
		t.Fatalf("a: %v", d)
	}
	if d := m.Record(Fetch, Anonymous, "b", 1000); d != 0 {
		t.Fatalf("b shares a's rate: throttled %v", d)
	}
	set(m, "users/ANONYMOUS", ConsumerByteRate, "100")
	m.Record(Fetch, Anonymous, "a", 1000)
	if d := m.Record(Fetch, Anonymous, "b", 1000); d == 0 {
		t.Fatal("a user quota is not shared by the user's client ids")
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{"app": "app", "a b": "a%20b", "a*b": "a%2Ab", "a~b": "a~b", "a/b": "a%2Fb", "é": "%C3%A9"} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
		if back, err := Desanitize(Sanitize(in)); err != nil || back != in {
			t.Errorf("Desanitize(Sanitize(%q)) = %q, %v", in, back, err)
		}
	}
}

// TestRequestThrottleIsBounded: request_percentage counts percent-seconds
// of handler time, and its throttle is at most one window, where a byte
// rate's is not.
func TestRequestThrottleIsBounded(t *testing.T) {
	m := newManager(&clock{t: time.Unix(1000, 0)})
	set(m, "clients/app", RequestPercentage, "10")
	// 1 percent-second (10 ms of handler time) over the 10 s window: 0.1%.
	if d := m.Record(Request, Anonymous, "app", 1); d != 0 {
		t.Fatalf("0.1%% of a thread against a 10%% quota: throttled %v", d)
	}
	// 200 more: 20.1%, about twice the quota: Kafka's formula gives 10 s,
	// bounded to the 1 s window.
	if d := m.Record(Request, Anonymous, "app", 200); d != time.Second {
		t.Fatalf("twice the request quota: throttled %v, want the 1s bound", d)
	}
	set(m, "clients/app", ProducerByteRate, "10")
	if d := m.Record(Produce, Anonymous, "app", 201); d <= time.Second {
		t.Fatalf("a byte rate's throttle was bounded too: %v", d)
	}
}
