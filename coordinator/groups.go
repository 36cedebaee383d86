package coordinator

// The group admin APIs: DescribeGroups, ListGroups, DeleteGroups.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// DescribeGroup describes one group: an unknown group is Dead with no
// members; member metadata and assignments are shown only when Stable.
func (c *Coordinator) DescribeGroup(groupID string) kmsg.DescribeGroupsResponseGroup {
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = groupID
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.validateLocked(groupID, offsetAPI); err != nil {
		d.ErrorCode = errCode(err)
		return d
	}
	g, ok := c.groups[groupID]
	if !ok {
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
	defer c.mu.Unlock()
	if !c.active {
		return nil, kerr.CoordinatorNotAvailable
	}
	for partition, p := range c.partitions {
		switch {
		case p.loading:
			err = kerr.CoordinatorLoadInProgress
		case !c.store.IsLeader(partition):
			c.unloadLocked(partition)
		}
	}
	want := map[string]bool{}
	for _, s := range states {
		want[s] = true
	}
	for _, g := range c.groups {
		if len(want) > 0 && !want[g.state.String()] {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = g.id, g.protocolType, g.state.String()
		groups = append(groups, lg)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Group < groups[j].Group })
	return groups, err
}

// DeleteGroups deletes Empty groups: their offsets and metadata get
// tombstones. A group with members is NON_EMPTY_GROUP; an unknown one is
// GROUP_ID_NOT_FOUND.
func (c *Coordinator) DeleteGroups(groupIDs []string) map[string]error {
	out := map[string]error{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range groupIDs {
		if err := c.validateLocked(id, offsetAPI); err != nil {
			out[id] = err
			continue
		}
		g, ok := c.groups[id]
		switch {
		case !ok || g.is(Dead):
			out[id] = kerr.GroupIDNotFound
		case !g.is(Empty):
			out[id] = kerr.NonEmptyGroup
		default:
			c.transitionLocked(g, Dead)
			var removed []topicPartition
			for tp := range g.offsets {
				removed = append(removed, tp)
			}
			g.offsets = map[topicPartition]committedOffset{}
			delete(c.groups, id)
			c.writeTombstonesLocked(g, removed, true)
			c.log.Info("Deleted group", zap.String("group", id), zap.Int("offsets", len(removed)))
			out[id] = nil
		}
	}
	return out
}
