package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// zkGroupService is the --zookeeper backend: the 0.10 tool's
// ZkConsumerGroupService, for groups of the ZooKeeper-based consumer under
// /consumers.
type zkGroupService struct {
	*groupCommand
	zk *zkclient.Client
}

// list is --list: the groups under /consumers.
func (g *zkGroupService) list(context.Context) error {
	groups, _, err := g.zk.Children(zkpaths.Consumers)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	slices.Sort(groups)
	for _, id := range groups {
		fmt.Fprintln(g.out, id)
	}
	return nil
}

// describe is --describe of each --group.
func (g *zkGroupService) describe(ctx context.Context) error {
	for _, group := range g.opts.all("group") {
		if err := g.describeGroup(ctx, group); err != nil {
			return err
		}
	}
	return nil
}

func childrenOrNone(zkc *zkclient.Client, path string) ([]string, error) {
	c, _, err := zkc.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(c)
	return c, err
}

func (g *zkGroupService) describeGroup(ctx context.Context, group string) error {
	if ok, _, err := g.zk.Exists(zkpaths.ConsumerGroupPath(group)); err != nil {
		return err
	} else if !ok {
		g.printError("The consumer group '%s' does not exist.", group)
		return nil
	}
	owned, err := childrenOrNone(g.zk, zkpaths.ConsumerGroupPath(group)+"/owners")
	if err != nil {
		return err
	}
	withOffsets, err := childrenOrNone(g.zk, zkpaths.ConsumerGroupPath(group)+"/offsets")
	if err != nil {
		return err
	}
	topics := slices.Compact(slices.Sorted(slices.Values(append(owned, withOffsets...))))
	consumers, err := childrenOrNone(g.zk, zkpaths.ConsumerIDsPath(group))
	if err != nil {
		return err
	}
	var (
		rows     []offsetRow
		tps      []kadm.Partition
		owning   = map[string]bool{}
		leaderOf = map[kadm.Partition]bool{}
	)
	for _, topic := range topics {
		data, _, err := g.zk.Get(zkpaths.TopicPath(topic))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		ta, err := zkpaths.DecodeTopicAssignment(data)
		if err != nil {
			return err
		}
		for _, p := range ta.PartitionIDs() {
			tp := kadm.Partition{Topic: topic, Partition: p}
			tps = append(tps, tp)
			if state, _, err := g.zk.Get(zkpaths.PartitionStatePath(topic, p)); err == nil {
				if st, err := zkpaths.DecodeLeaderAndIsr(state); err == nil && st.Leader >= 0 {
					leaderOf[tp] = true
				}
			}
		}
	}
	ends, err := zkLogEndOffsets(ctx, g.zk, tps)
	if err != nil {
		return err
	}
	for _, tp := range tps {
		r := offsetRow{topic: tp.Topic, partition: tp.Partition, offset: -1, logEnd: -1, consumerID: missing}
		if owner, _, err := g.zk.Get(zkpaths.ConsumerOwnerPath(group, tp.Topic, tp.Partition)); err == nil {
			// The owner is a consumer thread id, "<consumer id>-<thread>".
			id := string(owner)
			if i := strings.LastIndexByte(id, '-'); i > 0 {
				id = id[:i]
			}
			r.consumerID, owning[id] = id, true
		}
		if data, _, err := g.zk.Get(zkpaths.ConsumerOffsetPath(group, tp.Topic, tp.Partition)); err == nil {
			if off, err := zkpaths.DecodeConsumerOffset(data); err == nil {
				r.offset = off
			}
		} else {
			g.printError("Could not fetch offset from zookeeper for group '%s' partition '%s-%d' due to missing offset data in zookeeper.", group, tp.Topic, tp.Partition)
		}
		if e, ok := ends.Lookup(tp.Topic, tp.Partition); ok && e.Err == nil && leaderOf[tp] {
			r.logEnd = e.Offset
		}
		rows = append(rows, r)
	}
	// Members owning nothing get a row per subscribed topic.
	for _, id := range consumers {
		if owning[id] {
			continue
		}
		data, _, err := g.zk.Get(zkpaths.ConsumerIDPath(group, id))
		if err != nil {
			continue
		}
		reg, err := zkpaths.DecodeConsumerRegistration(data)
		if err != nil {
			return err
		}
		for range reg.Subscription {
			rows = append(rows, offsetRow{topic: missing, partition: -1, offset: -1, logEnd: -1, consumerID: id})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	topicW, consumerW := 15, 15
	for _, r := range rows {
		topicW, consumerW = max(topicW, len(r.topic)), max(consumerW, len(r.consumerID))
	}
	format := fmt.Sprintf("%%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds \n", topicW, consumerW)
	fmt.Fprintf(g.out, "\n"+format, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID")
	for _, r := range rows {
		topic, partition, offset, logEnd, lag := r.cells()
		fmt.Fprintf(g.out, format, topic, partition, offset, logEnd, lag, r.consumerID)
	}
	return nil
}

// zkLogEndOffsets asks the brokers registered in ZooKeeper for the log end
// offsets of tps.
func zkLogEndOffsets(ctx context.Context, zkc *zkclient.Client, tps []kadm.Partition) (kadm.ListedOffsets, error) {
	if len(tps) == 0 {
		return kadm.ListedOffsets{}, nil
	}
	ids, err := childrenOrNone(zkc, zkpaths.BrokerIDs)
	if err != nil {
		return nil, err
	}
	var seeds []string
	for _, id := range ids {
		n, err := strconv.ParseInt(id, 10, 32)
		if err != nil {
			continue
		}
		data, _, err := zkc.Get(zkpaths.BrokerPath(int32(n)))
		if err != nil {
			continue
		}
		reg, err := zkpaths.DecodeBrokerRegistration(int32(n), data)
		if err != nil {
			continue
		}
		if len(reg.Endpoints) > 0 {
			seeds = append(seeds, fmt.Sprintf("%s:%d", reg.Endpoints[0].Host, reg.Endpoints[0].Port))
		} else {
			seeds = append(seeds, fmt.Sprintf("%s:%d", reg.Host, reg.Port))
		}
	}
	if len(seeds) == 0 {
		return kadm.ListedOffsets{}, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("ConsumerGroupCommand"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	return kadm.NewClient(cl).ListEndOffsets(ctx, sortedKeys(topics)...)
}

// deleteGroups removes inactive ZooKeeper groups, as 0.10's
// AdminUtils.deleteConsumerGroupInZK: a group with registered consumers stays.
func (g *zkGroupService) deleteGroups(context.Context) error {
	admin := newAdminZk(g.zk)
	failed := false
	for _, group := range g.opts.all("group") {
		err := admin.DeleteConsumerGroup(group)
		switch {
		case errors.Is(err, adminzk.ErrUnknownGroup):
			g.printError("Delete for group '%s' failed because group does not exist.", group)
			failed = true
		case errors.Is(err, adminzk.ErrGroupActive):
			g.printError("Delete for group '%s' failed because its consumers are still active.", group)
			failed = true
		case err != nil:
			return err
		default:
			fmt.Fprintf(g.out, "Deleted all consumer group information for group '%s' in zookeeper.\n", group)
		}
	}
	if failed {
		return errReported
	}
	return nil
}
