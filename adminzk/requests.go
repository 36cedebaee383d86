package adminzk

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// WriteReassignment creates /admin/reassign_partitions, the pre-2.4 request
// the controller watches. While one is pending the request is refused with
// ErrReassignmentInProgress.
func (c *Client) WriteReassignment(r zkpaths.ReassignPartitionsData) error {
	if _, err := c.create(zkpaths.ReassignPartitions, r.Encode(), 0); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return adminErr(ErrReassignmentInProgress, kerr.ReassignmentInProgress, "There is an existing assignment running.")
		}
		return fmt.Errorf("create %s: %w", zkpaths.ReassignPartitions, err)
	}
	c.log.Info("Wrote a partition reassignment request", zap.Int("partitions", len(r.Partitions)))
	return nil
}

// PendingReassignment returns the request in /admin/reassign_partitions,
// if there is one.
func (c *Client) PendingReassignment() (zkpaths.ReassignPartitionsData, bool, error) {
	data, _, err := c.zk.Get(zkpaths.ReassignPartitions)
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.ReassignPartitionsData{}, false, nil
	}
	if err != nil {
		return zkpaths.ReassignPartitionsData{}, false, fmt.Errorf("read %s: %w", zkpaths.ReassignPartitions, err)
	}
	r, err := zkpaths.DecodeReassignPartitionsData(data)
	return r, err == nil, err
}

// WritePreferredReplicaElection creates /admin/preferred_replica_election
// for the partitions, which the controller watches. While one is pending
// the request is refused with ErrPreferredElectionInProgress.
func (c *Client) WritePreferredReplicaElection(partitions []kafka.TopicPartition) error {
	data := zkpaths.PreferredReplicaElectionData{Partitions: partitions}.Encode()
	if _, err := c.create(zkpaths.PreferredReplicaElection, data, 0); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return adminErr(ErrPreferredElectionInProgress, nil, "Preferred replica leader election currently in progress.")
		}
		return fmt.Errorf("write %s: %w", zkpaths.PreferredReplicaElection, err)
	}
	c.log.Info("Wrote a preferred replica election request", zap.Int("partitions", len(partitions)))
	return nil
}

// PendingPreferredReplicaElection returns the request in
// /admin/preferred_replica_election, if there is one.
func (c *Client) PendingPreferredReplicaElection() (zkpaths.PreferredReplicaElectionData, bool, error) {
	data, _, err := c.zk.Get(zkpaths.PreferredReplicaElection)
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.PreferredReplicaElectionData{}, false, nil
	}
	if err != nil {
		return zkpaths.PreferredReplicaElectionData{}, false, fmt.Errorf("read %s: %w", zkpaths.PreferredReplicaElection, err)
	}
	d, err := zkpaths.DecodePreferredReplicaElectionData(data)
	return d, err == nil, err
}
