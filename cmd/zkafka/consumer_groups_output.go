package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// groupStates are Kafka's ConsumerGroupState names by lower case.
var groupStates = map[string]string{
	"preparingrebalance": "PreparingRebalance", "completingrebalance": "CompletingRebalance",
	"stable": "Stable", "dead": "Dead", "empty": "Empty",
}

// shouldPrint is Kafka's shouldPrintMemberState: the state notes, and
// whether there are rows to print.
func (g *groupCommand) shouldPrint(group, state string, rows int) bool {
	switch state {
	case "Dead":
		g.printError("Consumer group '%s' does not exist.", group)
	case "Empty":
		fmt.Fprintf(g.errOut, "\nConsumer group '%s' has no active members.\n", group)
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		fmt.Fprintf(g.errOut, "\nWarning: Consumer group '%s' is rebalancing.\n", group)
	}
	return state != "Dead" && rows > 0
}

// offsetRow is one line of --describe --offsets.
type offsetRow struct {
	topic                      string
	partition                  int32 // -1: none
	offset, logEnd             int64 // -1: unknown
	consumerID, host, clientID string
}

func (r offsetRow) cells() (topic, partition, offset, logEnd, lag string) {
	topic, partition, offset, logEnd, lag = r.topic, missing, missing, missing, missing
	if r.partition >= 0 {
		partition = strconv.Itoa(int(r.partition))
	}
	if r.offset >= 0 {
		offset = strconv.FormatInt(r.offset, 10)
	}
	if r.logEnd >= 0 {
		logEnd = strconv.FormatInt(r.logEnd, 10)
	}
	if r.offset >= 0 && r.logEnd >= 0 {
		lag = strconv.FormatInt(r.logEnd-r.offset, 10)
	}
	return
}

// memberPartitions is a member as --describe --offsets shows it.
type memberPartitions struct {
	id, host, clientID string
	tps                []kadm.Partition
}

func assignedPartitions(m kadm.DescribedGroupMember) []kadm.Partition {
	var tps []kadm.Partition
	if a, ok := m.Assigned.AsConsumer(); ok {
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, kadm.Partition{Topic: t.Topic, Partition: p})
			}
		}
	}
	// Kafka sorts a member's rows by partition.
	slices.SortStableFunc(tps, func(a, b kadm.Partition) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	return tps
}

func (g *groupCommand) printMembers(d kadm.DescribedGroup) {
	if !g.shouldPrint(d.Group, d.State, len(d.Members)) {
		return
	}
	verbose := g.opts.has("verbose")
	groupW, consumerW, instanceW, hostW, clientW := max(15, len(d.Group)), 15, 17, 15, 15
	withInstance := false
	instanceID := func(m kadm.DescribedGroupMember) string {
		if m.InstanceID == nil {
			return ""
		}
		return *m.InstanceID
	}
	for _, m := range d.Members {
		consumerW, hostW, clientW = max(consumerW, len(m.MemberID)), max(hostW, len(m.ClientHost)), max(clientW, len(m.ClientID))
		instanceW = max(instanceW, len(instanceID(m)))
		withInstance = withInstance || instanceID(m) != ""
	}
	// The GROUP-INSTANCE-ID column appears only for groups with static members.
	row := func(group, member, instance, host, client, partitions string) {
		if withInstance {
			fmt.Fprintf(g.out, "%-*s %-*s %-*s %-*s %-*s %-15s ", groupW, group, consumerW, member, instanceW, instance, hostW, host, clientW, client, partitions)
		} else {
			fmt.Fprintf(g.out, "%-*s %-*s %-*s %-*s %-15s ", groupW, group, consumerW, member, hostW, host, clientW, client, partitions)
		}
	}
	fmt.Fprintln(g.out)
	row("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
	if verbose {
		fmt.Fprint(g.out, "ASSIGNMENT")
	}
	fmt.Fprintln(g.out)
	for _, m := range d.Members {
		tps := assignedPartitions(m)
		row(d.Group, m.MemberID, instanceID(m), m.ClientHost, m.ClientID, strconv.Itoa(len(tps)))
		if verbose {
			fmt.Fprint(g.out, assignmentString(tps))
		}
		fmt.Fprintln(g.out)
	}
}

// assignmentString is "t1(0,2), t2(1)" with topics and partitions sorted,
// or "-".
func assignmentString(tps []kadm.Partition) string {
	if len(tps) == 0 {
		return missing
	}
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	var parts []string
	for _, t := range sortedKeys(byTopic) {
		ps := byTopic[t]
		slices.Sort(ps)
		parts = append(parts, t+"("+joinInt32s(ps)+")")
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func (g *groupCommand) printState(d kadm.DescribedGroup) {
	if !g.shouldPrint(d.Group, d.State, 1) {
		return
	}
	coordinator := fmt.Sprintf("%s:%d (%d)", d.Coordinator.Host, d.Coordinator.Port, d.Coordinator.NodeID)
	width := max(25, len(coordinator))
	format := fmt.Sprintf("%%-%ds %%-25s %%-20s %%-15s %%s", width)
	fmt.Fprintf(g.out, "\n"+format, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
	fmt.Fprintf(g.out, "\n"+format+"\n", d.Group, coordinator, d.Protocol, d.State, strconv.Itoa(len(d.Members)))
}

// exceptionNames are the Java exceptions Kafka's tools print for the error
// codes a group deletion gets.
var exceptionNames = map[*kerr.Error]string{
	kerr.NonEmptyGroup:            "GroupNotEmptyException",
	kerr.GroupIDNotFound:          "GroupIdNotFoundException",
	kerr.InvalidGroupID:           "InvalidGroupIdException",
	kerr.CoordinatorNotAvailable:  "CoordinatorNotAvailableException",
	kerr.NotCoordinator:           "NotCoordinatorException",
	kerr.GroupAuthorizationFailed: "GroupAuthorizationException",
}

func groupDeleteException(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if name, ok := exceptionNames[ke]; ok {
			return "org.apache.kafka.common.errors." + name + ": " + ke.Description
		}
		return ke.Message + ": " + ke.Description
	}
	return err.Error()
}
