package main

// Groups on KIP-848's consumer protocol, which Kafka 2.8's tool never met:
// they are described with ConsumerGroupDescribe and printed as Kafka 4.0's
// ConsumerGroupCommand prints them (member epochs, target assignments,
// group and target assignment epochs).

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// describeConsumerProtocolGroups describes, with ConsumerGroupDescribe, the
// groups DescribeGroups did not find (a consumer-protocol group is Dead to
// it, as Kafka 4.0 answers); a broker without the API, or a group it does
// not know either, leaves them out.
func (g *adminGroupService) describeConsumerProtocolGroups(ctx context.Context, ids []string, classic kadm.DescribedGroups) map[string]kadm.DescribedConsumerGroup {
	var missing []string
	for _, id := range ids {
		if d, ok := classic[id]; !ok || d.Err == nil && d.State == "Dead" {
			missing = append(missing, id)
		}
	}
	out := map[string]kadm.DescribedConsumerGroup{}
	if len(missing) == 0 {
		return out
	}
	described, _ := g.adm.DescribeConsumerGroups(ctx, missing...)
	for id, d := range described {
		if d.Err == nil {
			out[id] = d
		}
	}
	return out
}

func (g *adminGroupService) printConsumerProtocolGroup(ctx context.Context, d kadm.DescribedConsumerGroup) error {
	switch {
	case g.opts.has("members"):
		g.printConsumerProtocolMembers(d)
	case g.opts.has("state"):
		g.printConsumerProtocolState(d)
	default:
		var members []memberPartitions
		for _, m := range d.Members {
			members = append(members, memberPartitions{m.MemberID, m.ClientHost, m.ClientID, topicsSetPartitions(m.Assignment)})
		}
		return g.printOffsets(ctx, d.Group, d.State, members)
	}
	return nil
}

// topicsSetPartitions lists a set's partitions by partition, then topic, as
// Kafka sorts a member's rows.
func topicsSetPartitions(s kadm.TopicsSet) []kadm.Partition {
	var tps []kadm.Partition
	for t, ps := range s {
		for p := range ps {
			tps = append(tps, kadm.Partition{Topic: t, Partition: p})
		}
	}
	slices.SortFunc(tps, func(a, b kadm.Partition) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	return tps
}

// consumerAssignmentString is Kafka 4.0's getAssignmentString:
// "topicA:0,1;topicB:3", partitions and topic chunks sorted as strings, or
// "-" for none.
func consumerAssignmentString(s kadm.TopicsSet) string {
	var chunks []string
	for t, ps := range s {
		var nums []string
		for p := range ps {
			nums = append(nums, strconv.Itoa(int(p)))
		}
		if len(nums) == 0 {
			continue
		}
		slices.Sort(nums)
		chunks = append(chunks, t+":"+strings.Join(nums, ","))
	}
	if len(chunks) == 0 {
		return missing
	}
	slices.Sort(chunks)
	return strings.Join(chunks, ";")
}

// printConsumerProtocolMembers is --describe --members [--verbose] for a
// consumer-protocol group: with --verbose each member's epoch and
// assignment beside the group's target epoch and the member's target.
func (g *adminGroupService) printConsumerProtocolMembers(d kadm.DescribedConsumerGroup) {
	if !g.shouldPrint(d.Group, d.State, len(d.Members)) {
		return
	}
	currentW, targetW := 20, 20
	cells := make([]memberCells, len(d.Members))
	for i, m := range d.Members {
		cells[i] = memberCells{m.MemberID, derefOr(m.InstanceID, ""), m.ClientHost, m.ClientID}
		currentW = max(currentW, len(consumerAssignmentString(m.Assignment)))
		targetW = max(targetW, len(consumerAssignmentString(m.TargetAssignment)))
	}
	cols := newMemberColumns(d.Group, cells)
	verbose := g.opts.has("verbose")
	cols.header(g.out)
	if verbose {
		fmt.Fprintf(g.out, "%-15s %-*s %-15s %-*s", "CURRENT-EPOCH", currentW, "CURRENT-ASSIGNMENT", "TARGET-EPOCH", targetW, "TARGET-ASSIGNMENT")
	}
	fmt.Fprintln(g.out)
	for i, m := range d.Members {
		cols.row(g.out, d.Group, cells[i], strconv.Itoa(len(topicsSetPartitions(m.Assignment))))
		if verbose {
			fmt.Fprintf(g.out, "%-15s %-*s %-15s %-*s", strconv.Itoa(int(m.MemberEpoch)), currentW, consumerAssignmentString(m.Assignment),
				strconv.Itoa(int(d.AssignmentEpoch)), targetW, consumerAssignmentString(m.TargetAssignment))
		}
		fmt.Fprintln(g.out)
	}
}

// printConsumerProtocolState is --describe --state for a consumer-protocol
// group, as Kafka 4.0 prints it (its --state --verbose, with the group's
// epochs, needs 4.0's option rules; --members --verbose shows them here).
func (g *adminGroupService) printConsumerProtocolState(d kadm.DescribedConsumerGroup) {
	if !g.shouldPrint(d.Group, d.State, 1) {
		return
	}
	coordinator := fmt.Sprintf("%s:%d  (%d)", d.Coordinator.Host, d.Coordinator.Port, d.Coordinator.NodeID)
	groupW, coordinatorW := max(15, len(d.Group)), max(25, len(coordinator))
	strategy := d.AssignorName
	if strategy == "" {
		strategy = missing
	}
	members := strconv.Itoa(len(d.Members))
	format := fmt.Sprintf("\n%%-%ds %%-%ds %%-20s %%-20s %%s", groupW, coordinatorW)
	fmt.Fprintf(g.out, format, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
	fmt.Fprintf(g.out, format+"\n", d.Group, coordinator, strategy, d.State, members)
}
