package coordinator

// The group admin APIs: DescribeGroups, ListGroups, DeleteGroups.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// DescribeGroup describes one group: an unknown group is Dead with no
// members; member metadata and assignments are shown only when Stable.
func (c *Coordinator) DescribeGroup(groupID string) kmsg.DescribeGroupsResponseGroup {
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = groupID
	g, err := c.lockGroup(groupID, offsetAPI, false)
	if err != nil {
		d.ErrorCode = errCode(err)
		return d
	}
	if g == nil {
		d.State = Dead.String()
		return d
	}
	defer g.mu.Unlock()
	if g.modern != nil {
		// Kafka 4.0 describes only classic groups here: a consumer group is
		// Dead (GROUP_ID_NOT_FOUND from v6, which 2.8 does not have);
		// ConsumerGroupDescribe describes it.
		d.State = Dead.String()
		return d
	}
	d.State, d.ProtocolType = g.state.String(), g.protocolType
	if g.is(Stable) {
		d.Protocol = g.protocolName
	}
	for _, id := range g.order {
		m := g.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.ClientID, dm.ClientHost = m.id, m.clientID, m.clientHost
		if m.instanceID != "" {
			dm.InstanceID = kmsg.StringPtr(m.instanceID)
		}
		if g.is(Stable) {
			dm.ProtocolMetadata, dm.MemberAssignment = m.metadata(g.protocolName), m.assignment
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// ListGroups lists the groups of every partition this broker coordinates,
// filtered by state when states is not empty (v4). While a partition loads
// the answer is COORDINATOR_LOAD_IN_PROGRESS with what is loaded.
func (c *Coordinator) ListGroups(states []string) (groups []kmsg.ListGroupsResponseGroup, err error) {
	c.mu.Lock()
	if !c.active {
		c.mu.Unlock()
		return nil, kerr.CoordinatorNotAvailable
	}
	var owned []int32
	for partition, p := range c.partitions {
		if p.loading {
			err = kerr.CoordinatorLoadInProgress
		} else {
			owned = append(owned, partition)
		}
	}
	c.mu.Unlock()
	for _, partition := range owned {
		if !c.store.IsLeader(partition) {
			c.OnResign(partition)
		}
	}
	all := c.loadedGroups()
	want := map[string]bool{}
	for _, s := range states {
		want[s] = true
	}
	for _, g := range all {
		g.mu.Lock()
		protocolType, state := g.protocolType, g.state.String()
		if g.modern != nil {
			protocolType, state = consumerProtocolType, g.modern.state()
		}
		if !g.is(Dead) && (len(want) == 0 || want[state]) {
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group, lg.ProtocolType, lg.GroupState = g.id, protocolType, state
			groups = append(groups, lg)
		}
		g.mu.Unlock()
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Group < groups[j].Group })
	return groups, err
}

// DeleteGroups deletes Empty groups: their offsets and metadata get
// tombstones. A group with members is NON_EMPTY_GROUP; an unknown one is
// GROUP_ID_NOT_FOUND.
func (c *Coordinator) DeleteGroups(groupIDs []string) map[string]error {
	out := map[string]error{}
	for _, id := range groupIDs {
		out[id] = c.deleteGroup(id)
	}
	return out
}

func (c *Coordinator) deleteGroup(id string) error {
	g, err := c.lockGroup(id, offsetAPI, false)
	switch {
	case err != nil:
		return err
	case g == nil:
		return kerr.GroupIDNotFound
	}
	defer g.mu.Unlock()
	if !g.empty() {
		return kerr.NonEmptyGroup
	}
	c.transitionLocked(g, Dead)
	c.removeGroupLocked(g)
	var removed []kafka.TopicPartition
	for tp := range g.offsets {
		removed = append(removed, tp)
	}
	g.offsets = map[kafka.TopicPartition]committedOffset{}
	c.writeTombstonesLocked(g, removed, true)
	c.log.Info("Deleted group", zap.String("group", id), zap.Int("offsets", len(removed)))
	return nil
}
