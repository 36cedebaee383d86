package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// resetOffsets computes (and with --execute commits) new offsets for
// inactive groups and prints the plan.
func (g *adminGroupService) resetOffsets(ctx context.Context) error {
	if !g.opts.has("dry-run") && !g.opts.has("execute") {
		fmt.Fprintln(g.errOut, "WARN: No action will be performed as the --execute option is missing."+
			"In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run."+
			" You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.")
	}
	groups, err := g.groupIDs(ctx)
	if err != nil {
		return err
	}
	described, err := g.adm.DescribeGroups(ctx, groups...)
	if err != nil && len(described) == 0 {
		return err
	}
	plans := map[string]kadm.Offsets{}
	for _, id := range groups {
		state := described[id].State
		if state != "Empty" && state != "Dead" {
			g.printError("Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", id, state)
			plans[id] = kadm.Offsets{}
			continue
		}
		plan, err := g.planReset(ctx, id)
		if err != nil {
			return err
		}
		if g.opts.has("execute") {
			if err := g.adm.CommitAllOffsets(ctx, id, plan); err != nil {
				return err
			}
		}
		plans[id] = plan
	}
	if len(plans) == 0 {
		return nil
	}
	const format = "%-30s %-30s %-10s %-15s\n"
	fmt.Fprintf(g.out, "\n"+format, "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
	for _, id := range sortedKeys(plans) {
		for _, o := range plans[id].Sorted() {
			fmt.Fprintf(g.out, format, id, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.At, 10))
		}
	}
	return nil
}

// partitionsToReset is the reset scope: the group's committed partitions
// (--all-topics) or the --topic arguments, "t" or "t:0,1".
func (g *adminGroupService) partitionsToReset(ctx context.Context, committed kadm.OffsetResponses) ([]kadm.Partition, error) {
	var tps []kadm.Partition
	if g.opts.has("all-topics") {
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil {
				tps = append(tps, kadm.Partition{Topic: o.Topic, Partition: o.Partition})
			}
		})
		return tps, nil
	}
	for _, arg := range g.opts.all("topic") {
		topic, parts, hasParts := strings.Cut(arg, ":")
		if hasParts {
			for p := range strings.SplitSeq(parts, ",") {
				n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
				if err != nil {
					return nil, fmt.Errorf("Invalid partition '%s' specified in topic arg '%s''", p, arg)
				}
				tps = append(tps, kadm.Partition{Topic: topic, Partition: int32(n)})
			}
			continue
		}
		meta, err := g.adm.Metadata(ctx, topic)
		if err != nil {
			return nil, err
		}
		td, ok := meta.Topics[topic]
		if !ok || td.Err != nil {
			return nil, &messageError{msg: fmt.Sprintf("Topic '%s' does not exist", topic), code: kerr.UnknownTopicOrPartition}
		}
		for _, p := range td.Partitions.Sorted() {
			tps = append(tps, kadm.Partition{Topic: topic, Partition: p.Partition})
		}
	}
	return tps, nil
}

func (g *adminGroupService) planReset(ctx context.Context, group string) (kadm.Offsets, error) {
	committed, err := g.adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	tps, err := g.partitionsToReset(ctx, committed)
	if err != nil {
		return nil, err
	}
	topicSet := map[string]bool{}
	for _, tp := range tps {
		topicSet[tp.Topic] = true
	}
	topics := sortedKeys(topicSet)
	plan := kadm.Offsets{}
	if len(tps) == 0 {
		return plan, nil
	}
	starts, err := g.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	ends, err := g.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var byTime kadm.ListedOffsets
	if g.opts.has("to-datetime") {
		ms, err := parseResetDatetime(g.opts.value("to-datetime"))
		if err != nil {
			return nil, err
		}
		if byTime, err = g.adm.ListOffsetsAfterMilli(ctx, ms, topics...); err != nil {
			return nil, err
		}
	}
	for _, tp := range tps {
		start, okS := starts.Lookup(tp.Topic, tp.Partition)
		end, okE := ends.Lookup(tp.Topic, tp.Partition)
		if !okS || !okE || start.Err != nil || end.Err != nil {
			return nil, fmt.Errorf("Error getting offsets of topic partition: %s-%d", tp.Topic, tp.Partition)
		}
		current, hasCurrent := committed.Lookup(tp.Topic, tp.Partition)
		hasCurrent = hasCurrent && current.Err == nil && current.At >= 0
		var target int64
		switch {
		case g.opts.has("to-earliest"):
			target = start.Offset
		case g.opts.has("to-latest"):
			target = end.Offset
		case g.opts.has("to-current"):
			target = end.Offset
			if hasCurrent {
				target = current.At
			}
		case g.opts.has("to-datetime"):
			target = end.Offset
			// kadm falls back to the end offset itself, leaving no timestamp.
			if o, ok := byTime.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.Offset >= 0 && o.Timestamp >= 0 {
				target = o.Offset
			} else {
				fmt.Fprintf(g.out, "\nWarn: Partition %d from topic %s is empty. Falling back to latest known offset.\n", tp.Partition, tp.Topic)
			}
		case g.opts.has("to-offset"):
			n, _ := strconv.ParseInt(g.opts.value("to-offset"), 10, 64)
			target = g.clamp(tp, n, start.Offset, end.Offset)
		case g.opts.has("shift-by"):
			if !hasCurrent {
				return nil, fmt.Errorf("Cannot shift offset for partition %s-%d since there is no current committed offset", tp.Topic, tp.Partition)
			}
			n, _ := strconv.ParseInt(g.opts.value("shift-by"), 10, 64)
			target = g.clamp(tp, current.At+n, start.Offset, end.Offset)
		}
		plan.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: target, LeaderEpoch: -1})
	}
	return plan, nil
}

// clamp is Kafka's checkOffsetsRange: a new offset outside the log is moved
// to its nearer end, with a warning.
func (g *groupCommand) clamp(tp kadm.Partition, offset, start, end int64) int64 {
	switch {
	case offset > end:
		fmt.Fprintf(g.errOut, "WARN: New offset (%d) is higher than latest offset for topic partition %s-%d. Value will be set to %d\n", offset, tp.Topic, tp.Partition, end)
		return end
	case offset < start:
		fmt.Fprintf(g.errOut, "WARN: New offset (%d) is lower than earliest offset for topic partition %s-%d. Value will be set to %d\n", offset, tp.Topic, tp.Partition, start)
		return start
	}
	return offset
}

// parseResetDatetime reads --to-datetime's 'YYYY-MM-DDTHH:mm:SS.sss' with an
// optional zone (UTC when absent), as Kafka's convertTimestamp.
func parseResetDatetime(s string) (int64, error) {
	_, timePart, _ := strings.Cut(s, "T")
	v := s
	if !strings.ContainsAny(timePart, "+-Z") {
		v += "Z"
	}
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000Z07"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("Unparseable date: \"%s\"", v)
}
