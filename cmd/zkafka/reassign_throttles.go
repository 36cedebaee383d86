package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// partitionMove is where a partition's data comes from and goes to.
type partitionMove struct{ sources, destinations []int32 }

// proposedMoves is Kafka's calculateProposedMoveMap: the sources of a
// partition already moving stay those of its ongoing reassignment.
func proposedMoves(ongoing map[kafka.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition,
	targets []reassignTarget, current assignment) map[kafka.TopicPartition]partitionMove {
	moves := map[kafka.TopicPartition]partitionMove{}
	for tp, p := range ongoing {
		var sources []int32
		for _, id := range p.Replicas {
			if !slices.Contains(p.AddingReplicas, id) {
				sources = append(sources, id)
			}
		}
		moves[tp] = partitionMove{sources: sources, destinations: p.AddingReplicas}
	}
	for _, t := range targets {
		sources := current[t.tp]
		if m, ok := moves[t.tp]; ok {
			sources = m.sources
		}
		var dest []int32
		for _, id := range t.replicas {
			if !slices.Contains(sources, id) {
				dest = append(dest, id)
			}
		}
		moves[t.tp] = partitionMove{sources: sources, destinations: dest}
	}
	return moves
}

func topicThrottleValues(moves map[kafka.TopicPartition]partitionMove) (leader, follower map[string]string) {
	leaderSets, followerSets := map[string][]string{}, map[string][]string{}
	for tp, m := range moves {
		leaderSets[tp.Topic] = append(leaderSets[tp.Topic], replicaEntries(tp.Partition, m.sources)...)
		followerSets[tp.Topic] = append(followerSets[tp.Topic], replicaEntries(tp.Partition, m.destinations)...)
	}
	leader, follower = map[string]string{}, map[string]string{}
	for t := range leaderSets {
		// Kafka keeps the entries in a sorted set of strings.
		l, f := leaderSets[t], followerSets[t]
		slices.Sort(l)
		slices.Sort(f)
		leader[t], follower[t] = strings.Join(slices.Compact(l), ","), strings.Join(slices.Compact(f), ",")
	}
	return leader, follower
}

// replicaEntries are the "partition:broker" entries of a throttled replica
// list.
func replicaEntries(partition int32, brokers []int32) []string {
	entries := []string{}
	for _, id := range brokers {
		entries = append(entries, fmt.Sprintf("%d:%d", partition, id))
	}
	return entries
}

func reassigningBrokers(moves map[kafka.TopicPartition]partitionMove) []int32 {
	var ids []int32
	for _, m := range moves {
		ids = append(ids, m.sources...)
		ids = append(ids, m.destinations...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func throttleScope(live []int32, targets []reassignTarget) ([]int32, []string) {
	brokers := slices.Clone(live)
	var topics []string
	for _, t := range targets {
		brokers = append(brokers, t.replicas...)
		topics = append(topics, t.tp.Topic)
	}
	slices.Sort(brokers)
	slices.Sort(topics)
	return slices.Compact(brokers), slices.Compact(topics)
}
