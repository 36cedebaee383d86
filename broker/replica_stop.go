package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Stopping replicas (Kafka's ReplicaManager.stopReplicas), the broker's side of StopReplica: the
// controller stops a replica when its broker shuts down (controlled shutdown: stop following,
// keep the log), when a reassignment drops it, and when its topic is deleted (delete the log).

// stopReplicaPartition is one StopReplica partition, whatever the request version.
type stopReplicaPartition struct {
	tp          kafka.TopicPartition
	leaderEpoch int32 // -1 (NoEpoch) before v3, -2 (EpochDuringDelete) for a topic being deleted
	delete      bool
}

// Leader epochs StopReplica uses instead of a real epoch.
const (
	stopReplicaNoEpoch           = -1
	stopReplicaEpochDuringDelete = -2
)

func stopReplicaPartitions(req *kmsg.StopReplicaRequest) []stopReplicaPartition {
	var out []stopReplicaPartition
	for _, t := range req.Topics {
		switch {
		case req.Version >= 3:
			for _, p := range t.PartitionStates {
				out = append(out, stopReplicaPartition{kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}, p.LeaderEpoch, p.Delete})
			}
		case req.Version >= 1:
			for _, p := range t.Partitions {
				out = append(out, stopReplicaPartition{kafka.TopicPartition{Topic: t.Topic, Partition: p}, stopReplicaNoEpoch, req.DeletePartitions})
			}
		default:
			out = append(out, stopReplicaPartition{kafka.TopicPartition{Topic: t.Topic, Partition: t.Partition}, stopReplicaNoEpoch, req.DeletePartitions})
		}
	}
	return out
}

// stopReplicas applies a StopReplica request (the controller epoch already checked) and returns
// each partition's error code. A partition is stopped when the request's leader epoch is -1, -2
// or newer than the local one, else it gets FENCED_LEADER_EPOCH. Stopping removes its fetcher
// and its copy to another log dir; with delete the partition leaves the replica manager and its
// log (and future log) is closed and deleted — also when this broker does not host the
// partition, so a leftover log goes too.
func (rm *ReplicaManager) stopReplicas(req *kmsg.StopReplicaRequest) map[kafka.TopicPartition]int16 {
	rm.stateChangeMu.Lock()
	defer rm.stateChangeMu.Unlock()
	codes := map[kafka.TopicPartition]int16{}
	for _, sp := range stopReplicaPartitions(req) {
		log := rm.log.With(zap.Stringer("partition", sp.tp), zap.Int32("controller-id", req.ControllerID),
			zap.Int32("leader-epoch", sp.leaderEpoch), zap.Bool("delete", sp.delete))
		p, hosted := rm.Partition(sp.tp.Topic, sp.tp.Partition)
		if hosted && sp.leaderEpoch != stopReplicaNoEpoch && sp.leaderEpoch != stopReplicaEpochDuringDelete {
			if current := p.LeaderEpoch(); sp.leaderEpoch <= current {
				log.Info("Ignoring StopReplica with a leader epoch not newer than the current one", zap.Int32("current-leader-epoch", current))
				codes[sp.tp] = kerr.FencedLeaderEpoch.Code
				continue
			}
		}
		rm.fetchers.removePartition(sp.tp)
		rm.alterLogDirs.removePartition(sp.tp)
		codes[sp.tp] = 0
		if !sp.delete {
			log.Info("Stopped replica")
			continue
		}
		if hosted {
			rm.mu.Lock()
			if rm.partitions[sp.tp] == p {
				delete(rm.partitions, sp.tp)
			}
			rm.mu.Unlock()
			// Requests waiting on the partition wake up and find it gone.
			p.mu.Lock()
			p.notifyLocked()
			p.mu.Unlock()
		}
		if err := rm.logs.Delete(sp.tp.Topic, sp.tp.Partition); err != nil {
			log.Error("Could not delete the log of a stopped replica", zap.Error(err))
			codes[sp.tp] = kerr.KafkaStorageError.Code
			continue
		}
		log.Info("Stopped and deleted replica")
	}
	rm.fetchers.shutdownIdle()
	rm.alterLogDirs.shutdownIdle()
	return codes
}
