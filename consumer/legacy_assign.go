package consumer

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/zkafka/zkafka/kafka"
)

// legacyContext is what a 0.8.2 assignor sees: for each topic the consumer
// subscribes to, the thread ids of every consumer subscribed to it, sorted as
// plain strings, and the topic's partitions, sorted.
type legacyContext struct {
	myThreads  map[string][]string // topic → this consumer's thread ids
	threads    map[string][]string // topic → all thread ids, sorted
	partitions map[string][]int32  // topic → partitions, ascending
}

// legacyRange is 0.8.2's RangeAssignor: per topic, thread i of C (sorted)
// gets P/C partitions, the first P%C threads one more. It returns the
// partitions of this consumer's threads, with the owning thread id.
func legacyRange(ctx legacyContext) map[kafka.TopicPartition]string {
	out := map[kafka.TopicPartition]string{}
	for topic, mine := range ctx.myThreads {
		threads, parts := ctx.threads[topic], ctx.partitions[topic]
		if len(threads) == 0 {
			continue
		}
		per, extra := len(parts)/len(threads), len(parts)%len(threads)
		for _, thread := range mine {
			i := slices.Index(threads, thread)
			if i < 0 {
				continue
			}
			start := per*i + min(i, extra)
			n := per
			if i < extra {
				n++
			}
			for _, p := range parts[start : start+n] {
				out[kafka.TopicPartition{Topic: topic, Partition: p}] = thread
			}
		}
	}
	return out
}

// legacyRoundRobin is 0.8.2's RoundRobinAssignor. Every consumer must
// subscribe the same topics with the same stream counts (else the attempt
// fails, as Kafka's require does). Partitions of all topics, ordered by the
// Java hashCode of "[topic,partition]", go one by one to the sorted threads
// in a circle.
func legacyRoundRobin(ctx legacyContext) (map[kafka.TopicPartition]string, error) {
	var threads []string
	for topic, ts := range ctx.threads {
		if threads == nil {
			threads = ts
		} else if !slices.Equal(threads, ts) {
			return nil, fmt.Errorf("roundrobin needs every consumer to subscribe the same topics with the same stream counts; topic %q differs", topic)
		}
	}
	var all []kafka.TopicPartition
	for _, topic := range slices.Sorted(maps.Keys(ctx.myThreads)) {
		for _, p := range ctx.partitions[topic] {
			all = append(all, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return javaHash(all[i]) < javaHash(all[j]) })
	mine := map[string]bool{}
	for _, ts := range ctx.myThreads {
		for _, t := range ts {
			mine[t] = true
		}
	}
	out := map[kafka.TopicPartition]string{}
	for i, tp := range all {
		if len(threads) == 0 {
			break
		}
		if t := threads[i%len(threads)]; mine[t] {
			out[tp] = t
		}
	}
	return out, nil
}

// javaHash is Java's String.hashCode of TopicAndPartition's "[t,p]" string.
// Topic names are ASCII, so bytes are the UTF-16 code units.
func javaHash(tp kafka.TopicPartition) int32 {
	var h int32
	for _, b := range []byte("[" + tp.Topic + "," + strconv.Itoa(int(tp.Partition)) + "]") {
		h = 31*h + int32(b)
	}
	return h
}
