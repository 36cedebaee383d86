package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// adminGroupService is the --bootstrap-server backend: Kafka 2.8's
// ConsumerGroupCommand over the group coordinator's APIs.
type adminGroupService struct {
	*groupCommand
	cl  *kgo.Client
	adm *kadm.Client
}

// describe is --describe: offsets (the default), --members or --state of
// each group, from the group coordinators.
func (g *adminGroupService) describe(ctx context.Context) error {
	groups, err := g.groupIDs(ctx)
	if err != nil {
		return err
	}
	described, err := g.adm.DescribeGroups(ctx, groups...)
	if err != nil && len(described) == 0 {
		return err
	}
	modern := g.describeConsumerProtocolGroups(ctx, groups, described)
	for _, id := range groups {
		if d, ok := modern[id]; ok {
			if err := g.printConsumerProtocolGroup(ctx, d); err != nil {
				return err
			}
			continue
		}
		d, ok := described[id]
		if !ok {
			g.printError("The consumer group '%s' does not exist.", id)
			continue
		}
		if d.Err != nil {
			return fmt.Errorf("describe group %s: %w", id, d.Err)
		}
		switch {
		case g.opts.has("members"):
			g.printMembers(d)
		case g.opts.has("state"):
			g.printState(d)
		default:
			var members []memberPartitions
			for _, m := range d.Members {
				members = append(members, memberPartitions{m.MemberID, m.ClientHost, m.ClientID, assignedPartitions(m)})
			}
			if err := g.printOffsets(ctx, d.Group, d.State, members); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *adminGroupService) groupIDs(ctx context.Context) ([]string, error) {
	if g.opts.has("all-groups") {
		listed, err := g.adm.ListGroups(ctx)
		if err != nil {
			return nil, err
		}
		return listed.Groups(), nil
	}
	ids := slices.Clone(g.opts.all("group"))
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func (g *adminGroupService) list(ctx context.Context) error {
	if !g.opts.has("state") {
		listed, err := g.adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		for _, id := range listed.Groups() {
			fmt.Fprintln(g.out, id)
		}
		return nil
	}
	var states []string
	for s := range strings.SplitSeq(g.opts.value("state"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		canonical, ok := groupStates[strings.ToLower(s)]
		if !ok {
			return fmt.Errorf("State '%s' is not valid", s)
		}
		states = append(states, canonical)
	}
	listed, err := g.adm.ListGroups(ctx, states...)
	if err != nil {
		return err
	}
	ids := listed.Groups()
	width := 15
	for _, id := range ids {
		width = max(width, len(id))
	}
	fmt.Fprintf(g.out, "%-*s %s\n", width, "GROUP", "STATE")
	for _, id := range ids {
		fmt.Fprintf(g.out, "%-*s %s\n", width, id, listed[id].State)
	}
	return nil
}

// printOffsets is --describe --offsets: each member's partitions (the
// members with the most first) and then the committed partitions nobody
// owns, with their lag.
func (g *adminGroupService) printOffsets(ctx context.Context, group, state string, all []memberPartitions) error {
	committed, err := g.adm.FetchOffsets(ctx, group)
	if err != nil {
		return err
	}
	var members []memberPartitions
	for _, m := range all {
		if len(m.tps) > 0 {
			members = append(members, m)
		}
	}
	slices.SortStableFunc(members, func(a, b memberPartitions) int { return len(b.tps) - len(a.tps) })
	topicSet := map[string]bool{}
	assigned := map[kadm.Partition]bool{}
	for _, m := range members {
		for _, tp := range m.tps {
			topicSet[tp.Topic], assigned[tp] = true, true
		}
	}
	var unassigned []kadm.Partition
	committed.Each(func(o kadm.OffsetResponse) {
		tp := kadm.Partition{Topic: o.Topic, Partition: o.Partition}
		if o.Err == nil && o.At >= 0 && !assigned[tp] {
			unassigned = append(unassigned, tp)
			topicSet[o.Topic] = true
		}
	})
	// Kafka sorts the rows without a consumer by partition.
	slices.SortFunc(unassigned, func(a, b kadm.Partition) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	ends := kadm.ListedOffsets{}
	if len(topicSet) > 0 {
		if ends, err = g.adm.ListEndOffsets(ctx, sortedKeys(topicSet)...); err != nil {
			return err
		}
	}
	row := func(tp kadm.Partition, consumerID, host, clientID string) offsetRow {
		r := offsetRow{topic: tp.Topic, partition: tp.Partition, offset: -1, logEnd: -1, consumerID: consumerID, host: host, clientID: clientID}
		if o, ok := committed.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.At >= 0 {
			r.offset = o.At
		}
		if e, ok := ends.Lookup(tp.Topic, tp.Partition); ok && e.Err == nil {
			r.logEnd = e.Offset
		}
		return r
	}
	var rows []offsetRow
	for _, m := range members {
		for _, tp := range m.tps {
			rows = append(rows, row(tp, m.id, m.host, m.clientID))
		}
	}
	for _, tp := range unassigned {
		rows = append(rows, row(tp, missing, missing, missing))
	}
	if !g.shouldPrint(group, state, len(rows)) {
		return nil
	}
	groupW, topicW, consumerW, hostW := 15, 15, 15, 15
	for _, r := range rows {
		groupW, topicW = max(groupW, len(group)), max(topicW, len(r.topic))
		consumerW, hostW = max(consumerW, len(r.consumerID)), max(hostW, len(r.host))
	}
	format := fmt.Sprintf("%%-%ds %%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds %%-%ds %%s\n", groupW, topicW, consumerW, hostW)
	fmt.Fprintf(g.out, "\n"+format, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, r := range rows {
		topic, partition, offset, logEnd, lag := r.cells()
		fmt.Fprintf(g.out, format, group, topic, partition, offset, logEnd, lag, r.consumerID, r.host, r.clientID)
	}
	return nil
}

func (g *adminGroupService) deleteGroups(ctx context.Context) error {
	groups, err := g.groupIDs(ctx)
	if err != nil {
		return err
	}
	resp, err := g.adm.DeleteGroups(ctx, groups...)
	if err != nil && len(resp) == 0 {
		return err
	}
	var ok []string
	failed := map[string]error{}
	for _, id := range groups {
		r, found := resp[id]
		switch {
		case !found:
			failed[id] = err
		case r.Err != nil:
			failed[id] = r.Err
		default:
			ok = append(ok, id)
		}
	}
	quoted := func(ids []string) string { return "'" + strings.Join(ids, "', '") + "'" }
	if len(failed) == 0 {
		fmt.Fprintf(g.out, "Deletion of requested consumer groups (%s) was successful.\n", quoted(ok))
		return nil
	}
	g.printError("Deletion of some consumer groups failed:")
	for _, id := range sortedKeys(failed) {
		fmt.Fprintf(g.errOut, "* Group '%s' could not be deleted due to: %s\n", id, groupDeleteException(failed[id]))
	}
	if len(ok) > 0 {
		fmt.Fprintf(g.out, "\nThese consumer groups were deleted successfully: %s\n", quoted(ok))
	}
	return errReported
}

// deleteOffsets is --delete-offsets: OffsetDelete for the --topic
// partitions ("t" for all of a topic's partitions, "t:0,1"), then Kafka's
// per-partition status table.
func (g *adminGroupService) deleteOffsets(ctx context.Context) error {
	group := g.opts.value("group")
	type result struct {
		tp  kadm.Partition
		err error
	}
	var results []result
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	topics := g.opts.all("topic")
	for _, arg := range topics {
		topic, parts, hasParts := strings.Cut(arg, ":")
		var partitions []int32
		if hasParts {
			for p := range strings.SplitSeq(parts, ",") {
				n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
				if err != nil {
					return fmt.Errorf("Invalid partition '%s' specified in topic arg '%s''", p, arg)
				}
				partitions = append(partitions, int32(n))
			}
		} else {
			meta, err := g.adm.Metadata(ctx, topic)
			if err != nil {
				return err
			}
			td, ok := meta.Topics[topic]
			if !ok || td.Err != nil {
				results = append(results, result{kadm.Partition{Topic: topic, Partition: -1}, kerr.UnknownTopicOrPartition})
				continue
			}
			for _, p := range td.Partitions.Sorted() {
				partitions = append(partitions, p.Partition)
			}
		}
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = topic
		for _, p := range partitions {
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, g.cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			results = append(results, result{kadm.Partition{Topic: t.Topic, Partition: p.Partition}, kerr.ErrorForCode(p.ErrorCode)})
		}
	}
	top := kerr.ErrorForCode(resp.ErrorCode)
	// The Java admin client fails the whole call with the first partition's
	// error, and the tool reports that as the top-level result.
	for _, r := range results {
		if top == nil && r.err != nil {
			top = r.err
		}
	}
	switch top {
	case nil:
		fmt.Fprintf(g.out, "Request succeed for deleting offsets with topic %s group %s\n", strings.Join(topics, ", "), group)
	case kerr.InvalidGroupID:
		g.printError("'%s' is not valid.", group)
	case kerr.GroupIDNotFound:
		g.printError("'%s' does not exist.", group)
	case kerr.GroupAuthorizationFailed:
		g.printError("Access to '%s' is not authorized.", group)
	case kerr.NonEmptyGroup:
		g.printError("Deleting offsets of a consumer group '%s' is forbidden if the group is not empty.", group)
	case kerr.GroupSubscribedToTopic, kerr.TopicAuthorizationFailed, kerr.UnknownTopicOrPartition:
		g.printError("Encounter some partition level error, see the follow-up details:")
	default:
		name := top.Error()
		var ke *kerr.Error
		if errors.As(top, &ke) {
			name = ke.Message
		}
		g.printError("Encounter some unknown error: %s", name)
	}
	// Kafka orders the rows by topic and partition as one string.
	slices.SortFunc(results, func(a, b result) int {
		return strings.Compare(a.tp.Topic+strconv.Itoa(int(a.tp.Partition)), b.tp.Topic+strconv.Itoa(int(b.tp.Partition)))
	})
	const format = "%-30s %-15s %-15s\n"
	fmt.Fprintf(g.out, "\n"+format, "TOPIC", "PARTITION", "STATUS")
	failed := top != nil
	for _, r := range results {
		partition, status := strconv.Itoa(int(r.tp.Partition)), "Successful"
		if r.tp.Partition < 0 {
			partition = "Not Provided"
		}
		if r.err != nil {
			failed = true
			status = "Error: " + kafkaMessage(r.err)
		}
		fmt.Fprintf(g.out, format, r.tp.Topic, partition, status)
	}
	if failed {
		return errReported
	}
	return nil
}
