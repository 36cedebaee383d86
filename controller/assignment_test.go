package controller

import (
	"errors"
	"maps"
	"slices"
	"testing"
)

func TestAssignReplicas(t *testing.T) {
	tests := []struct {
		name         string
		brokers      []int32
		partitions   int32
		rf           int16
		start, shift int
		want         map[int32][]int32
	}{
		{
			name:    "five brokers rf3 from zero (reference 5.1)",
			brokers: []int32{0, 1, 2, 3, 4}, partitions: 10, rf: 3,
			want: map[int32][]int32{
				0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
				5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2},
			},
		},
		{
			name:    "four brokers rf2 start2 shift3 (reference 5.1)",
			brokers: []int32{101, 102, 103, 104}, partitions: 6, rf: 2, start: 2, shift: 3,
			want: map[int32][]int32{
				0: {103, 104}, 1: {104, 101}, 2: {101, 102}, 3: {102, 103}, 4: {103, 101}, 5: {104, 102},
			},
		},
		{
			name:    "unsorted and duplicated brokers are sorted and de-duplicated",
			brokers: []int32{104, 102, 101, 103, 102}, partitions: 6, rf: 2, start: 2, shift: 3,
			want: map[int32][]int32{
				0: {103, 104}, 1: {104, 101}, 2: {101, 102}, 3: {102, 103}, 4: {103, 101}, 5: {104, 102},
			},
		},
		{
			name:    "one broker",
			brokers: []int32{7}, partitions: 3, rf: 1,
			want: map[int32][]int32{0: {7}, 1: {7}, 2: {7}},
		},
		{
			name:    "rf equal to broker count",
			brokers: []int32{1, 2, 3}, partitions: 4, rf: 3, start: 1,
			want: map[int32][]int32{0: {2, 3, 1}, 1: {3, 1, 2}, 2: {1, 2, 3}, 3: {2, 1, 3}}, // shift grows at p=3
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AssignReplicas(tt.brokers, tt.partitions, tt.rf, tt.start, tt.shift)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("AssignReplicas = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAssignReplicasErrors(t *testing.T) {
	tests := []struct {
		name       string
		brokers    []int32
		partitions int32
		rf         int16
		want       error
		msg        string
	}{
		{"zero partitions", []int32{1, 2}, 0, 1, ErrInvalidPartitions, "Number of partitions must be larger than 0."},
		{"negative partitions", []int32{1, 2}, -3, 1, ErrInvalidPartitions, "Number of partitions must be larger than 0."},
		{"zero replication factor", []int32{1, 2}, 1, 0, ErrInvalidReplicationFactor, "Replication factor must be larger than 0."},
		{"negative replication factor", []int32{1, 2}, 1, -1, ErrInvalidReplicationFactor, "Replication factor must be larger than 0."},
		{"more replicas than brokers", []int32{1, 2, 3}, 1, 4, ErrInvalidReplicationFactor, "Replication factor: 4 larger than available brokers: 3."},
		{"duplicates do not count twice", []int32{1, 1}, 1, 2, ErrInvalidReplicationFactor, "Replication factor: 2 larger than available brokers: 1."},
		{"no brokers", nil, 1, 1, ErrInvalidReplicationFactor, "Replication factor: 1 larger than available brokers: 0."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := AssignReplicas(tt.brokers, tt.partitions, tt.rf, 0, 0)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if err.Error() != tt.msg {
				t.Errorf("message %q, want Kafka's %q", err.Error(), tt.msg)
			}
		})
		t.Run(tt.name+" random", func(t *testing.T) {
			if _, err := AssignReplicasRandom(tt.brokers, tt.partitions, tt.rf); !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

// TestAssignReplicasRandom checks the properties every start index and shift guarantee: distinct
// replicas per partition, first replicas round-robin over the sorted brokers, and that the random
// result is one of the fixed-start results.
func TestAssignReplicasRandom(t *testing.T) {
	brokers := []int32{5, 3, 9, 1}
	for range 50 {
		got, err := AssignReplicasRandom(brokers, 8, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 8 {
			t.Fatalf("%d partitions, want 8", len(got))
		}
		leaders := map[int32]int{}
		for p, replicas := range got {
			if len(replicas) != 3 {
				t.Fatalf("partition %d has %d replicas", p, len(replicas))
			}
			if s := slices.Compact(slices.Sorted(slices.Values(replicas))); len(s) != 3 {
				t.Fatalf("partition %d has repeated replicas %v", p, replicas)
			}
			leaders[replicas[0]]++
		}
		for _, b := range brokers {
			if leaders[b] != 2 {
				t.Fatalf("broker %d leads %d partitions, want 2: %v", b, leaders[b], got)
			}
		}
		found := false
		for start := range 4 {
			for shift := range 4 {
				fixed, _ := AssignReplicas(brokers, 8, 3, start, shift)
				found = found || maps.EqualFunc(got, fixed, slices.Equal)
			}
		}
		if !found {
			t.Fatalf("random assignment %v matches no start index and shift", got)
		}
	}
}
