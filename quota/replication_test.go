package quota

import (
	"slices"
	"testing"
	"time"
)

// TestReplicationRate: a replication quota is SimpleRate's — measured from
// the oldest sample, at least one window — so the bound is exceeded after
// one window's worth of bytes, and not once the samples expire.
func TestReplicationRate(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	q := NewReplication(Config{Samples: 11, Window: time.Second, Now: c.now})
	q.Record(1 << 20)
	if q.Exceeded() {
		t.Fatal("an unbounded quota is exceeded")
	}
	q.SetRate(1000)
	if !q.Exceeded() {
		t.Fatal("1 MiB within a second is not above 1000 B/s")
	}
	c.advance(12 * time.Second)
	if q.Exceeded() {
		t.Fatal("still exceeded after every sample expired")
	}
	q.Record(1000)
	if q.Exceeded() {
		t.Fatal("1000 B in the first window reads above 1000 B/s: the window is not at least one")
	}
	q.Record(1)
	if !q.Exceeded() {
		t.Fatal("1001 B in the first window is not above 1000 B/s")
	}
	c.advance(2 * time.Second)
	if q.Exceeded() {
		t.Fatal("1001 B over two seconds reads above 1000 B/s")
	}
}

// TestThrottledReplicas: Kafka's list format, filtered by broker, and "*".
func TestThrottledReplicas(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  ThrottledReplicas
		bad   bool
	}{
		{value: "*", want: ThrottledReplicas{All: true}},
		{value: " * ", want: ThrottledReplicas{All: true}},
		{value: ""},
		{value: "0:1,1:2,2:1", want: ThrottledReplicas{Partitions: []int32{0, 2}}},
		{value: "0:2, 1:2"},
		{value: "0:1,*", bad: true},
		{value: "a:1", bad: true},
		{value: "0-1", bad: true},
		{value: "0:99999999999", bad: true},
	} {
		got, err := ParseThrottledReplicas(tc.value, 1)
		if (err != nil) != tc.bad || got.All != tc.want.All || !slices.Equal(got.Partitions, tc.want.Partitions) {
			t.Errorf("ParseThrottledReplicas(%q) = %+v, %v; want %+v (error %v)", tc.value, got, err, tc.want, tc.bad)
		}
	}
	q := NewReplication(Config{Samples: 11, Window: time.Second})
	q.MarkThrottled("a", ThrottledReplicas{Partitions: []int32{0, 2}})
	q.MarkThrottled("b", ThrottledReplicas{All: true})
	for _, tc := range []struct {
		topic     string
		partition int32
		want      bool
	}{{"a", 0, true}, {"a", 1, false}, {"a", 2, true}, {"b", 7, true}, {"c", 0, false}} {
		if got := q.IsThrottled(tc.topic, tc.partition); got != tc.want {
			t.Errorf("IsThrottled(%s-%d) = %v", tc.topic, tc.partition, got)
		}
	}
	q.MarkThrottled("b", ThrottledReplicas{})
	if q.IsThrottled("b", 7) {
		t.Error("an empty list left the topic throttled")
	}
}
