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
	assignment := make(map[int32][]int32, partitions)
	for p := range int(partitions) {
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
	return assignment, nil
}

// AssignReplicasRandom is AssignReplicas with a random start index and a random, independently
// drawn initial shift, which is what Kafka's CreateTopics and auto topic creation use.
func AssignReplicasRandom(brokers []int32, partitions int32, replicationFactor int16) (map[int32][]int32, error) {
	return AssignReplicas(brokers, partitions, replicationFactor, -1, -1)
}
