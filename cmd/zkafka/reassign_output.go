package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/kafka"
)

// generate prints the current assignment of the topics and a proposal that
// spreads each topic over the given brokers (those that are live, with their
// racks), keeping its partition count and replication factor. Placement is
// Kafka's rack-unaware algorithm; with racks it needs --disable-rack-aware,
// since this project has no rack-aware placement.
func (r *reassigner) generate(current assignment, brokers []int32, racks map[int32]string, rackAware bool) error {
	var usable []int32
	racked := 0
	for _, id := range brokers {
		if rack, ok := racks[id]; ok {
			usable = append(usable, id)
			if rack != "" {
				racked++
			}
		}
	}
	switch {
	case rackAware && racked > 0 && racked < len(usable):
		return errors.New("Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.")
	case rackAware && racked > 0:
		return errors.New("rack-aware replica assignment is not implemented here: add --disable-rack-aware to place replicas without rack information")
	}
	proposed := assignment{}
	byTopic := map[string]int32{}
	rf := map[string]int16{}
	for tp, replicas := range current {
		byTopic[tp.Topic]++
		rf[tp.Topic] = int16(len(replicas))
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		placed, err := controller.AssignReplicasRandom(usable, byTopic[topic], rf[topic])
		if err != nil {
			return err
		}
		for p, replicas := range placed {
			proposed[kafka.TopicPartition{Topic: topic, Partition: p}] = replicas
		}
	}
	fmt.Fprintf(r.out, "Current partition replica assignment\n%s\n\n", reassignmentJSON(current))
	fmt.Fprintf(r.out, "Proposed partition reassignment configuration\n%s\n", reassignmentJSON(proposed))
	return nil
}

func (r *reassigner) printRollback(targets []reassignTarget, current assignment) {
	kept := assignment{}
	for _, t := range targets {
		if replicas, ok := current[t.tp]; ok {
			kept[t.tp] = replicas
		}
	}
	fmt.Fprintf(r.out, "Current partition replica assignment\n\n%s\n\nSave this to use as the --reassignment-json-file option during rollback\n",
		reassignmentJSON(kept))
}

func (r *reassigner) printStarted(targets []reassignTarget) {
	tps := make([]kafka.TopicPartition, len(targets))
	for i, t := range targets {
		tps[i] = t.tp
	}
	slices.SortFunc(tps, kafka.Compare)
	fmt.Fprintf(r.out, "Successfully started partition reassignment%s for %s\n", plural(len(tps)), joinPartitions(tps, ","))
}

// printReassignments is --list's output.
func (r *reassigner) printReassignments(ongoing map[kafka.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition) {
	if len(ongoing) == 0 {
		fmt.Fprintln(r.out, "No partition reassignments found.")
		return
	}
	fmt.Fprintln(r.out, "Current partition reassignments:")
	for _, tp := range sortedPartitions(ongoing) {
		p := ongoing[tp]
		line := fmt.Sprintf("%s: replicas: %s.", tp.String(), joinInt32s(p.Replicas))
		if len(p.AddingReplicas) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinInt32s(p.AddingReplicas))
		}
		if len(p.RemovingReplicas) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinInt32s(p.RemovingReplicas))
		}
		fmt.Fprintln(r.out, line)
	}
}

// reassignmentState is what --verify reports for one partition.
type reassignmentState struct {
	current, target []int32
	done            bool
}

func (r *reassigner) printStates(states map[kafka.TopicPartition]reassignmentState) {
	fmt.Fprintln(r.out, "Status of partition reassignment:")
	for _, tp := range sortedPartitions(states) {
		s := states[tp]
		switch {
		case !s.done:
			fmt.Fprintf(r.out, "Reassignment of partition %s is still in progress.\n", tp.String())
		case slices.Equal(s.current, s.target):
			fmt.Fprintf(r.out, "Reassignment of partition %s is complete.\n", tp.String())
		default:
			fmt.Fprintf(r.out, "There is no active reassignment of partition %s, but replica set is %s rather than %s.\n",
				tp.String(), joinInt32s(s.current), joinInt32s(s.target))
		}
	}
}

// reassignmentJSON is Kafka's formatAsReassignmentJson: compact, partitions
// sorted, every log dir "any".
func reassignmentJSON(a assignment) string {
	type entry struct {
		Topic     string   `json:"topic"`
		Partition int32    `json:"partition"`
		Replicas  []int32  `json:"replicas"`
		LogDirs   []string `json:"log_dirs"`
	}
	doc := struct {
		Version    int     `json:"version"`
		Partitions []entry `json:"partitions"`
	}{Version: 1, Partitions: []entry{}}
	for _, tp := range sortedPartitions(a) {
		e := entry{Topic: tp.Topic, Partition: tp.Partition, Replicas: a[tp], LogDirs: []string{}}
		if e.Replicas == nil {
			e.Replicas = []int32{}
		}
		for range e.Replicas {
			e.LogDirs = append(e.LogDirs, "any")
		}
		doc.Partitions = append(doc.Partitions, e)
	}
	b, _ := json.Marshal(doc) // plain structs of strings and ints always marshal
	return string(b)
}

func sortedPartitions[V any](m map[kafka.TopicPartition]V) []kafka.TopicPartition {
	return slices.SortedFunc(maps.Keys(m), kafka.Compare)
}

// scalaList prints a sequence as Scala's List.toString does.
func scalaList[T any](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "List(" + strings.Join(s, ", ") + ")"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
