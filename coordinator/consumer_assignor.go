package coordinator

// The server-side assignors of the consumer protocol (Kafka 4.0's
// UniformAssignor and RangeAssignor). Kafka walks members, and in places
// topics and partitions, in hash-map order; these walk members by id (range:
// static members first, by instance id) and topics by id, so the same group
// always gets the same assignment.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// assignorMember is one member as an assignor sees it.
type assignorMember struct {
	id, instanceID string
	topics         []topicID  // subscribed, sorted
	current        assignment // its target so far
}

// assignorSpec is a group's input to an assignor: members sorted by id and
// the partition count of every subscribed topic.
type assignorSpec struct {
	members     []assignorMember
	partitions  map[topicID]int32
	homogeneous bool // every member subscribes to the same topics
}

type assignor func(assignorSpec) (map[string]assignment, error)

var assignors = map[string]assignor{"uniform": uniformAssign, "range": rangeAssign}

var errUnassigned = errors.New("partitions were left unassigned")

func compareTopicIDs(a, b topicID) int { return bytes.Compare(a[:], b[:]) }

// uniformAssign spreads partitions so member counts differ by at most one,
// keeping each member's partitions where balance allows (balance first,
// then stickiness).
func uniformAssign(spec assignorSpec) (map[string]assignment, error) {
	if spec.homogeneous {
		return uniformHomogeneous(spec)
	}
	return uniformHeterogeneous(spec)
}

// uniformHomogeneous is UniformHomogeneousAssignmentBuilder: a quota per
// member over all topics, each keeping what it had up to its quota, then
// the free partitions filling the members below quota in order. The extra
// partitions (total mod members) go to the members that held the most, so
// that a balanced assignment does not move (Kafka 4.0.x, KAFKA-18688).
func uniformHomogeneous(spec assignorSpec) (map[string]assignment, error) {
	out := make(map[string]assignment, len(spec.members))
	for _, m := range spec.members {
		out[m.id] = assignment{}
	}
	if len(spec.members) == 0 || len(spec.members[0].topics) == 0 {
		return out, nil
	}
	topics := spec.members[0].topics
	subscribed := map[topicID]bool{}
	owned := map[topicID]map[int32]bool{}
	for _, m := range spec.members {
		for t, ps := range m.current {
			if owned[t] == nil {
				owned[t] = map[int32]bool{}
			}
			for _, p := range ps {
				owned[t][p] = true
			}
		}
	}
	type tp struct {
		t topicID
		p int32
	}
	var unassigned []tp
	total := 0
	for _, t := range topics {
		n, ok := spec.partitions[t]
		if !ok {
			return nil, fmt.Errorf("topic %x has no metadata", t)
		}
		subscribed[t] = true
		for p := range n {
			if !owned[t][p] {
				unassigned = append(unassigned, tp{t, p})
			}
		}
		total += int(n)
	}
	minQuota, extra := total/len(spec.members), total%len(spec.members)
	order := slices.Clone(spec.members)
	slices.SortStableFunc(order, func(a, b assignorMember) int { return cmp.Compare(b.current.size(), a.current.size()) })
	type unfilled struct {
		id        string
		remaining int
	}
	var below []unfilled
	for _, m := range order {
		quota := minQuota
		if extra > 0 {
			quota++
			extra--
		}
		for _, t := range slices.SortedFunc(maps.Keys(m.current), compareTopicIDs) {
			if !subscribed[t] {
				continue
			}
			for _, p := range m.current[t] {
				if quota > 0 && p < spec.partitions[t] {
					out[m.id].add(t, p)
					quota--
				} else if p < spec.partitions[t] {
					unassigned = append(unassigned, tp{t, p})
				}
			}
		}
		if quota > 0 {
			below = append(below, unfilled{m.id, quota})
		}
	}
	for _, u := range below {
		for range u.remaining {
			if len(unassigned) == 0 {
				break
			}
			out[u.id].add(unassigned[0].t, unassigned[0].p)
			unassigned = unassigned[1:]
		}
	}
	if len(unassigned) > 0 {
		return nil, errUnassigned
	}
	return out, nil
}

// uniformHeterogeneous is UniformHeterogeneousAssignmentBuilder: members
// keep their partitions of topics they still subscribe to; each topic's free
// partitions (topics with the most partitions per subscriber first) go to
// its least loaded subscribers; then partitions move from the most to the
// least loaded subscriber of a topic until their counts differ by at most
// one, in at most 16 passes.
func uniformHeterogeneous(spec assignorSpec) (map[string]assignment, error) {
	out := make(map[string]assignment, len(spec.members))
	index := map[string]int{}
	subscribers := map[topicID][]int{}
	for i, m := range spec.members {
		out[m.id], index[m.id] = assignment{}, i
		for _, t := range m.topics {
			if _, ok := spec.partitions[t]; !ok {
				return nil, fmt.Errorf("topic %x has no metadata", t)
			}
			subscribers[t] = append(subscribers[t], i)
		}
	}
	owner := map[topicID]map[int32]bool{}
	for _, m := range spec.members {
		for t, ps := range m.current {
			if !slices.Contains(m.topics, t) {
				continue
			}
			for _, p := range ps {
				if p < spec.partitions[t] {
					out[m.id].add(t, p)
					if owner[t] == nil {
						owner[t] = map[int32]bool{}
					}
					owner[t][p] = true
				}
			}
		}
	}
	topics := slices.Collect(maps.Keys(subscribers))
	slices.SortFunc(topics, func(a, b topicID) int {
		ra := float64(spec.partitions[a]) / float64(len(subscribers[a]))
		rb := float64(spec.partitions[b]) / float64(len(subscribers[b]))
		if c := cmp.Compare(rb, ra); c != 0 {
			return c
		}
		if c := cmp.Compare(len(subscribers[a]), len(subscribers[b])); c != 0 {
			return c
		}
		return compareTopicIDs(a, b)
	})
	count := func(i int) int { return out[spec.members[i].id].size() }
	leastLoaded := func(subs []int) int {
		return slices.MinFunc(subs, func(a, b int) int {
			if c := cmp.Compare(count(a), count(b)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	for _, t := range topics {
		for p := range spec.partitions[t] {
			if !owner[t][p] {
				out[spec.members[leastLoaded(subscribers[t])].id].add(t, p)
			}
		}
	}
	for range 16 {
		moved := false
		for _, t := range topics {
			subs := subscribers[t]
			for len(subs) >= 2 {
				least := leastLoaded(subs)
				most := -1
				for _, i := range subs {
					if len(out[spec.members[i].id][t]) > 0 && (most < 0 || count(i) > count(most)) {
						most = i
					}
				}
				if most < 0 || count(most)-count(least) <= 1 {
					break
				}
				from, to := out[spec.members[most].id], out[spec.members[least].id]
				ps := from[t]
				p := ps[len(ps)-1]
				if from[t] = ps[:len(ps)-1]; len(from[t]) == 0 {
					delete(from, t)
				}
				to.add(t, p)
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return out, nil
}

// rangeAssign is RangeAssignor: for each topic, its subscribers in order
// (static members first by instance id, then the others by member id) take
// consecutive ranges, the first (partitions mod subscribers) one more, so
// members subscribed to topics of equal partition counts get the same
// partition numbers in each (co-partitioning). It is not sticky.
func rangeAssign(spec assignorSpec) (map[string]assignment, error) {
	members := slices.Clone(spec.members)
	slices.SortStableFunc(members, func(a, b assignorMember) int {
		switch {
		case a.instanceID != "" && b.instanceID != "":
			return cmp.Compare(a.instanceID, b.instanceID)
		case a.instanceID != "":
			return -1
		case b.instanceID != "":
			return 1
		}
		return cmp.Compare(a.id, b.id)
	})
	out := make(map[string]assignment, len(members))
	subscribers := map[topicID][]string{}
	for _, m := range members {
		out[m.id] = assignment{}
		for _, t := range m.topics {
			if _, ok := spec.partitions[t]; !ok {
				return nil, fmt.Errorf("topic %x has no metadata", t)
			}
			subscribers[t] = append(subscribers[t], m.id)
		}
	}
	for t, subs := range subscribers {
		n := spec.partitions[t]
		quota, extra := n/int32(len(subs)), n%int32(len(subs))
		next := int32(0)
		for _, id := range subs {
			take := quota
			if extra > 0 {
				take++
				extra--
			}
			for p := next; p < min(next+take, n); p++ {
				out[id].add(t, p)
			}
			next += take
		}
	}
	return out, nil
}
