package broker

// AlterReplicaLogDirs (key 34), versions 0–2 (KIP-113).
//
//	v1: same as v0 (throttle time changes)
//	v2: flexible
//
// Moves replicas of this broker to another of its log.dirs, each named by
// its absolute path (a partition named under several dirs goes to the last
// one). Per partition, as Kafka 2.8's ReplicaManager.alterReplicaLogDirs:
// INVALID_TOPIC_EXCEPTION when the future directory's name would pass 255
// bytes, LOG_DIR_NOT_FOUND for a path that is not a log dir,
// KAFKA_STORAGE_ERROR for an offline destination, for a replica whose log
// dir is offline, or for a future log that cannot be created (any log dir
// offline); then the destination is remembered for a replica not created
// yet, which gets REPLICA_NOT_AVAILABLE and is created there when a
// LeaderAndIsr brings it. A replica already in the destination stays; one
// being moved elsewhere gives that move up. Otherwise a future log is
// created and copied (replica_alter_log_dirs.go) until it replaces the
// current one.

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/storage"
)

var alterReplicaLogDirsAPI = api{
	key: 34, min: 0, max: maxVersion(34),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpAlter); resp != nil {
			return resp
		}
		req := r.body.(*kmsg.AlterReplicaLogDirsRequest)
		return alterReplicaLogDirsResponse(req, s.replicas.alterReplicaLogDirs(alterReplicaLogDirsTargets(req)))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		r := req.(*kmsg.AlterReplicaLogDirsRequest)
		codes := map[kafka.TopicPartition]int16{}
		for tp := range alterReplicaLogDirsTargets(r) {
			codes[tp] = code
		}
		return alterReplicaLogDirsResponse(r, codes)
	},
}

// alterReplicaLogDirsTargets maps each partition to its destination path,
// the last one named (Kafka's partitionDirs).
func alterReplicaLogDirsTargets(req *kmsg.AlterReplicaLogDirsRequest) map[kafka.TopicPartition]string {
	out := map[kafka.TopicPartition]string{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				out[kafka.TopicPartition{Topic: t.Topic, Partition: p}] = d.Dir
			}
		}
	}
	return out
}

// alterReplicaLogDirsResponse groups the codes by topic, in topic-partition
// order.
func alterReplicaLogDirsResponse(req *kmsg.AlterReplicaLogDirsRequest, codes map[kafka.TopicPartition]int16) *kmsg.AlterReplicaLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	tps := make([]kafka.TopicPartition, 0, len(codes))
	for tp := range codes {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, kafka.Compare)
	for _, tp := range tps {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != tp.Topic {
			resp.Topics = append(resp.Topics, kmsg.AlterReplicaLogDirsResponseTopic{Topic: tp.Topic})
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, kmsg.AlterReplicaLogDirsResponseTopicPartition{Partition: tp.Partition, ErrorCode: codes[tp]})
	}
	return resp
}

// alterReplicaLogDirs moves each partition to its destination path and
// returns each one's error code.
func (rm *ReplicaManager) alterReplicaLogDirs(targets map[kafka.TopicPartition]string) map[kafka.TopicPartition]int16 {
	rm.stateChangeMu.Lock()
	defer rm.stateChangeMu.Unlock()
	codes := make(map[kafka.TopicPartition]int16, len(targets))
	for tp, path := range targets {
		err := rm.alterReplicaLogDir(tp, path)
		codes[tp] = errorCode(err)
		if err != nil {
			rm.log.Warn("Unable to alter log dirs", zap.Stringer("partition", tp), zap.String("dir", path), zap.Error(err))
		}
	}
	rm.alterLogDirs.shutdownIdle()
	return codes
}

func (rm *ReplicaManager) alterReplicaLogDir(tp kafka.TopicPartition, path string) error {
	// Kafka refuses a topic whose future directory name a filesystem could
	// not hold (KAFKA-4893).
	if len(storage.FutureDirName(tp)) > 255 {
		return kerr.InvalidTopicException
	}
	dir, ok := rm.logs.DirOf(path)
	if !ok {
		return kerr.LogDirNotFound
	}
	if rm.logs.Offline(dir) {
		return kerr.KafkaStorageError
	}
	p, hosted := rm.Partition(tp.Topic, tp.Partition)
	current, hasLog := rm.logs.Get(tp.Topic, tp.Partition)
	hosted = hosted && hasLog
	if hosted {
		if rm.logs.Offline(filepath.Dir(current.Dir())) {
			return kerr.KafkaStorageError
		}
		if future, ok := rm.logs.Future(tp.Topic, tp.Partition); ok && filepath.Dir(future.Dir()) != dir {
			// A new destination: the move under way is given up.
			rm.alterLogDirs.removePartition(tp)
			if err := rm.logs.DeleteFuture(tp.Topic, tp.Partition); err != nil {
				return err
			}
		}
	}
	rm.logs.MaybeUpdatePreferredLogDir(tp.Topic, tp.Partition, dir)
	if !hosted {
		// Kafka keeps REPLICA_NOT_AVAILABLE here for compatibility.
		return kerr.ReplicaNotAvailable
	}
	if filepath.Dir(current.Dir()) == dir {
		rm.log.Info("Current log directory is same as requested log dir; skipping future replica creation",
			zap.Stringer("partition", tp), zap.String("dir", dir))
		return nil
	}
	if _, ok := rm.logs.Future(tp.Topic, tp.Partition); ok {
		return nil
	}
	cfg, err := rm.logConfig(tp.Topic)
	if err != nil {
		return err
	}
	future, err := rm.logs.GetOrCreateFuture(tp.Topic, tp.Partition, dir, cfg)
	if err != nil {
		return err
	}
	rm.alterLogDirs.addPartition(tp, p, future, future.HighWatermark())
	return nil
}
