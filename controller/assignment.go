package controller

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// AssignReplicas places the replicas of partitions 0..partitions-1 on brokers with Kafka's
// rack-unaware algorithm (AdminUtils.assignReplicasToBrokersRackUnaware), exactly:
//
//   - brokers are sorted by id (and de-duplicated) first;
//   - the first replica of partition p is broker (p + startIndex) mod n, so leaders go round-robin;
//   - the j-th further replica sits 1 + (shift + j) mod (n-1) places after the first, so it is
//     never the first, and replicas of one partition are distinct;
//   - shift starts at replicaShift and grows by one every n partitions, so the same follower
//     tuples do not repeat.
//
// A negative startIndex or replicaShift is drawn at random from [0, n), as Kafka does when no
// fixed start index is given. Errors wrap ErrInvalidPartitions (partitions <= 0) or
// ErrInvalidReplicationFactor (replicationFactor <= 0 or more than the brokers); their text is
// Kafka's message. The first replica of each list is the preferred leader.
func AssignReplicas(brokers []int32, partitions int32, replicationFactor int16, startIndex, replicaShift int) (map[int32][]int32, error) {
	if partitions <= 0 {
		return nil, &kafkaError{ErrInvalidPartitions, "Number of partitions must be larger than 0."}
	}
	if replicationFactor <= 0 {
		return nil, &kafkaError{ErrInvalidReplicationFactor, "Replication factor must be larger than 0."}
	}
	sorted := slices.Clone(brokers)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	n := len(sorted)
	if int(replicationFactor) > n {
		return nil, &kafkaError{ErrInvalidReplicationFactor,
			fmt.Sprintf("Replication factor: %d larger than available brokers: %d.", replicationFactor, n)}
	}
	if startIndex < 0 {
		startIndex = rand.IntN(n)
	}
	if replicaShift < 0 {
		replicaShift = rand.IntN(n)
	}
	return assign(sorted, 0, partitions, replicationFactor, startIndex, replicaShift), nil
}

// assign is the rack-unaware placement loop for partitions startPartition..startPartition+count-1
// on sorted brokers.
func assign(sorted []int32, startPartition, count int32, replicationFactor int16, startIndex, replicaShift int) map[int32][]int32 {
	n := len(sorted)
	assignment := make(map[int32][]int32, count)
	for p := int(startPartition); p < int(startPartition+count); p++ {
		if p > 0 && p%n == 0 {
			replicaShift++
		}
		first := (p + startIndex) % n
		replicas := make([]int32, 0, replicationFactor)
		replicas = append(replicas, sorted[first])
		for j := range int(replicationFactor) - 1 {
			shift := 1 + (replicaShift+j)%(n-1)
			replicas = append(replicas, sorted[(first+shift)%n])
		}
		assignment[int32(p)] = replicas
	}
	return assignment
}

// AssignNewPartitions places the partitions added to a topic that has existing partitions
// 0..len(existing)-1, growing it to total (Kafka's AdminZkClient.createNewPartitionsAssignment):
// the replication factor is partition 0's, and both the start index and the initial shift are
// the position (in the sorted broker list) of the first broker whose id is at least partition 0's
// preferred replica, so the new partitions continue the existing round-robin. It returns only
// the new partitions. Errors wrap ErrInvalidPartitions (total not above the current count) or
// ErrInvalidReplicationFactor (more replicas than brokers).
func AssignNewPartitions(brokers []int32, existing map[int32][]int32, total int32) (map[int32][]int32, error) {
	current := int32(len(existing))
	if total <= current {
		return nil, &kafkaError{ErrInvalidPartitions,
			fmt.Sprintf("Topic currently has %d partitions, %d would not be an increase.", current, total)}
	}
	first := existing[0]
	if len(first) == 0 {
		return nil, &kafkaError{ErrInvalidReplicationFactor, "Partition 0 has no replicas."}
	}
	sorted := slices.Clone(brokers)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	rf := int16(len(first))
	if int(rf) > len(sorted) {
		return nil, &kafkaError{ErrInvalidReplicationFactor,
			fmt.Sprintf("Replication factor: %d larger than available brokers: %d.", rf, len(sorted))}
	}
	start := max(slices.IndexFunc(sorted, func(b int32) bool { return b >= first[0] }), 0)
	return assign(sorted, current, total-current, rf, start, start), nil
}

// AssignReplicasRandom is AssignReplicas with a random start index and a random, independently
// drawn initial shift, which is what Kafka's CreateTopics and auto topic creation use.
func AssignReplicasRandom(brokers []int32, partitions int32, replicationFactor int16) (map[int32][]int32, error) {
	return AssignReplicas(brokers, partitions, replicationFactor, -1, -1)
}
