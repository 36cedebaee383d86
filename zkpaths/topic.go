package zkpaths

import (
	"maps"
	"slices"
)

// TopicAssignment is the data of /brokers/topics/<t>, written as version 3:
//
//	{"version":3,"topic_id":"kV8Cg3xYTqyCTqMwu5wx9Q","partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},"removing_replicas":{}}
//
// Partition ids are object keys (decimal strings), written in ascending
// numeric order. The first replica of each list is the preferred leader.
// "topic_id" is left out until an id is assigned. Version 1 (0.8: partitions
// only) and version 2 (2.4: adding and removing replicas) decode too.
type TopicAssignment struct {
	TopicID    string // 22-char url-safe base64 UUID, empty when not yet assigned
	Partitions map[int32][]int32

	// During a reassignment Partitions holds target and original replicas;
	// AddingReplicas is target minus original, RemovingReplicas original minus
	// target. Partitions with empty lists are not written.
	AddingReplicas   map[int32][]int32
	RemovingReplicas map[int32][]int32
}

// TopicAssignmentVersion is the version Encode writes.
const TopicAssignmentVersion = 3

// PartitionIDs returns the topic's partition ids in ascending order.
func (t TopicAssignment) PartitionIDs() []int32 {
	return slices.Sorted(maps.Keys(t.Partitions))
}

// Encode returns the version-3 JSON.
func (t TopicAssignment) Encode() []byte {
	o := newObject().int("version", TopicAssignmentVersion)
	if t.TopicID != "" {
		o.str("topic_id", t.TopicID)
	}
	return o.raw("partitions", partitionMapJSON(t.Partitions, false)).
		raw("adding_replicas", partitionMapJSON(t.AddingReplicas, true)).
		raw("removing_replicas", partitionMapJSON(t.RemovingReplicas, true)).
		bytes()
}

// DecodeTopicAssignment reads the data of /brokers/topics/<t>, any version.
// The maps of the result are never nil; AddingReplicas and RemovingReplicas
// hold only partitions with a non-empty list, so a partition is being
// reassigned exactly when it appears in either.
func DecodeTopicAssignment(data []byte) (TopicAssignment, error) {
	o, err := parseObject("topic assignment", data)
	if err != nil {
		return TopicAssignment{}, err
	}
	if _, err := o.version(); err != nil {
		return TopicAssignment{}, err
	}
	var t TopicAssignment
	if ok, err := o.optional("topic_id", &t.TopicID); err != nil {
		return TopicAssignment{}, err
	} else if ok {
		if _, err := ParseUUID(t.TopicID); err != nil {
			return TopicAssignment{}, malformed(o.kind, "topic_id: %v", err)
		}
	}
	if t.Partitions, err = o.partitionMap("partitions", true, false); err != nil {
		return TopicAssignment{}, err
	}
	if t.AddingReplicas, err = o.partitionMap("adding_replicas", false, true); err != nil {
		return TopicAssignment{}, err
	}
	if t.RemovingReplicas, err = o.partitionMap("removing_replicas", false, true); err != nil {
		return TopicAssignment{}, err
	}
	return t, nil
}

// NoLeader is the leader of a partition for which no leader could be elected.
const NoLeader int32 = -1

// LeaderAndIsr is the data of /brokers/topics/<t>/partitions/<p>/state,
// version 1:
//
//	{"controller_epoch":33,"leader":2,"version":1,"leader_epoch":8,"isr":[2,3]}
//
// Every write of it is conditional on the znode's zkVersion, which callers
// keep beside this value.
type LeaderAndIsr struct {
	Leader          int32 // NoLeader when none could be elected
	LeaderEpoch     int32 // +1 on every controller-made change
	ISR             []int32
	ControllerEpoch int32 // epoch of the controller that decided the leader
}

// Encode returns the version-1 JSON.
func (l LeaderAndIsr) Encode() []byte {
	return newObject().
		int("controller_epoch", int64(l.ControllerEpoch)).
		int("leader", int64(l.Leader)).
		int("version", 1).
		int("leader_epoch", int64(l.LeaderEpoch)).
		raw("isr", int32Array(l.ISR)).
		bytes()
}

// DecodeLeaderAndIsr reads the data of a partition state znode. The ISR of
// the result is never nil.
func DecodeLeaderAndIsr(data []byte) (LeaderAndIsr, error) {
	o, err := parseObject("partition state", data)
	if err != nil {
		return LeaderAndIsr{}, err
	}
	if _, err := o.version(); err != nil {
		return LeaderAndIsr{}, err
	}
	var l LeaderAndIsr
	fields := []struct {
		name string
		v    *int32
	}{{"leader", &l.Leader}, {"leader_epoch", &l.LeaderEpoch}, {"controller_epoch", &l.ControllerEpoch}}
	for _, f := range fields {
		if err := o.required(f.name, f.v); err != nil {
			return LeaderAndIsr{}, err
		}
	}
	if err := o.required("isr", &l.ISR); err != nil {
		return LeaderAndIsr{}, err
	}
	if l.ISR == nil {
		l.ISR = []int32{}
	}
	return l, nil
}
