package main

import (
	"errors"
	"fmt"
	"io"
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

// memberColumns are the columns --describe --members prints for every
// member, whatever its group's protocol: their widths (Kafka's minimums, or
// the longest value) and whether GROUP-INSTANCE-ID appears, which it does
// only for groups with static members.
type memberColumns struct {
	groupW, consumerW, instanceW, hostW, clientW int
	withInstance                                 bool
}

// memberCells is one member's cells in those columns.
type memberCells struct{ id, instance, host, client string }

func newMemberColumns(group string, members []memberCells) memberColumns {
	c := memberColumns{groupW: max(15, len(group)), consumerW: 15, instanceW: 17, hostW: 15, clientW: 15}
	for _, m := range members {
		c.consumerW, c.hostW, c.clientW = max(c.consumerW, len(m.id)), max(c.hostW, len(m.host)), max(c.clientW, len(m.client))
		c.instanceW = max(c.instanceW, len(m.instance))
		c.withInstance = c.withInstance || m.instance != ""
	}
	return c
}

// row prints a row's common cells, each followed by a space.
func (c memberColumns) row(w io.Writer, group string, m memberCells, partitions string) {
	if c.withInstance {
		fmt.Fprintf(w, "%-*s %-*s %-*s %-*s %-*s %-15s ", c.groupW, group, c.consumerW, m.id, c.instanceW, m.instance, c.hostW, m.host, c.clientW, m.client, partitions)
	} else {
		fmt.Fprintf(w, "%-*s %-*s %-*s %-*s %-15s ", c.groupW, group, c.consumerW, m.id, c.hostW, m.host, c.clientW, m.client, partitions)
	}
}

// header prints the common headings.
func (c memberColumns) header(w io.Writer) {
	fmt.Fprintln(w)
	c.row(w, "GROUP", memberCells{"CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID"}, "#PARTITIONS")
}

func (g *groupCommand) printMembers(d kadm.DescribedGroup) {
	if !g.shouldPrint(d.Group, d.State, len(d.Members)) {
		return
	}
	verbose := g.opts.has("verbose")
	cells := make([]memberCells, len(d.Members))
	for i, m := range d.Members {
		cells[i] = memberCells{m.MemberID, derefOr(m.InstanceID, ""), m.ClientHost, m.ClientID}
	}
	cols := newMemberColumns(d.Group, cells)
	cols.header(g.out)
	if verbose {
		fmt.Fprint(g.out, "ASSIGNMENT")
	}
	fmt.Fprintln(g.out)
	for i, m := range d.Members {
		tps := assignedPartitions(m)
		cols.row(g.out, d.Group, cells[i], strconv.Itoa(len(tps)))
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
