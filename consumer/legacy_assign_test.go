package consumer

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/zkafka/zkafka/kafka"
)

func threadsOf(consumers map[string]int) []string {
	var out []string
	for id, n := range consumers {
		for i := range n {
			out = append(out, id+"-"+string(rune('0'+i)))
		}
	}
	slices.Sort(out)
	return out
}

func TestLegacyRangeVectors(t *testing.T) {
	// Kafka's RangeAssignor comment: C1 and C2 with two streams each, 5 partitions.
	all := threadsOf(map[string]int{"C1": 2, "C2": 2})
	parts := []int32{0, 1, 2, 3, 4}
	want := map[string][]int32{"C1-0": {0, 1}, "C1-1": {2}, "C2-0": {3}, "C2-1": {4}}
	for _, me := range []string{"C1", "C2"} {
		mine := []string{me + "-0", me + "-1"}
		got := legacyRange(legacyContext{
			myThreads: map[string][]string{"t": mine}, threads: map[string][]string{"t": all},
			partitions: map[string][]int32{"t": parts},
		})
		for _, thread := range mine {
			var ps []int32
			for tp, th := range got {
				if th == thread {
					ps = append(ps, tp.Partition)
				}
			}
			slices.Sort(ps)
			if !slices.Equal(ps, want[thread]) {
				t.Errorf("%s got %v, want %v", thread, ps, want[thread])
			}
		}
	}

	// Thread ids sort as strings: g_a-10 and g_a-11 come before g_a-2.
	var threads []string
	for i := range 12 {
		threads = append(threads, "g_a-"+itoa(i))
	}
	sorted := slices.Sorted(slices.Values(threads))
	var ps []int32
	for p := range int32(12) {
		ps = append(ps, p)
	}
	got := legacyRange(legacyContext{
		myThreads: map[string][]string{"t": threads}, threads: map[string][]string{"t": sorted},
		partitions: map[string][]int32{"t": ps},
	})
	for thread, p := range map[string]int32{"g_a-10": 2, "g_a-11": 3, "g_a-2": 4, "g_a-9": 11, "g_a-0": 0, "g_a-1": 1} {
		if got[kafka.TopicPartition{Topic: "t", Partition: p}] != thread {
			t.Errorf("p%d owned by %s, want %s", p, got[kafka.TopicPartition{Topic: "t", Partition: p}], thread)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestLegacyRoundRobinVectors(t *testing.T) {
	assign := func(me string, topics map[string][]int32) map[kafka.TopicPartition]string {
		threads := map[string][]string{}
		for topic := range topics {
			threads[topic] = []string{"g_a-0", "g_b-0"}
		}
		mine := map[string][]string{}
		for topic := range topics {
			mine[topic] = []string{me}
		}
		got, err := legacyRoundRobin(legacyContext{myThreads: mine, threads: threads, partitions: topics})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	names := func(m map[kafka.TopicPartition]string) []string {
		var out []string
		for tp := range maps.Keys(m) {
			out = append(out, tp.Topic+"-"+itoa(int(tp.Partition)))
		}
		slices.Sort(out)
		return out
	}
	two := map[string][]int32{"t0": {0, 1, 2}, "t1": {0, 1, 2}}
	if got, want := names(assign("g_a-0", two)), []string{"t0-0", "t0-2", "t1-1"}; !slices.Equal(got, want) {
		t.Errorf("g_a-0 got %v, want %v", got, want)
	}
	if got, want := names(assign("g_b-0", two)), []string{"t0-1", "t1-0", "t1-2"}; !slices.Equal(got, want) {
		t.Errorf("g_b-0 got %v, want %v", got, want)
	}
	var twelve []int32
	for p := range int32(12) {
		twelve = append(twelve, p)
	}
	one := map[string][]int32{"t": twelve}
	if got, want := names(assign("g_a-0", one)), []string{"t-0", "t-10", "t-2", "t-4", "t-6", "t-8"}; !slices.Equal(got, want) {
		t.Errorf("g_a-0 got %v, want %v", got, want)
	}

	// Different subscriptions fail the attempt, as 0.8.2's require does.
	_, err := legacyRoundRobin(legacyContext{
		myThreads:  map[string][]string{"t0": {"g_a-0"}},
		threads:    map[string][]string{"t0": {"g_a-0", "g_b-0"}, "t1": {"g_b-0"}},
		partitions: map[string][]int32{"t0": {0}},
	})
	if err == nil {
		t.Error("roundrobin accepted different subscriptions")
	}
}
