package main

// Replica moves between a broker's log dirs: the "log_dirs" entries of a
// reassignment JSON file other than "any". As Kafka 2.8's
// ReassignPartitionsCommand, --execute sends them with AlterReplicaLogDirs
// after the partition reassignment, retrying while a broker answers
// REPLICA_NOT_AVAILABLE (its replica does not exist yet) until --timeout,
// and --verify reports each move from the brokers' DescribeLogDirs.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// replicaMove is one replica to move to a log dir (Kafka's
// TopicPartitionReplica and its target).
type replicaMove struct {
	tp     kafka.TopicPartition
	broker int32
	dir    string
}

// String is TopicPartitionReplica's "topic-partition-broker".
func (m replicaMove) String() string { return fmt.Sprintf("%s-%d", m.tp, m.broker) }

// replicaMoves lists the targets' moves ordered by broker, topic and
// partition (Kafka's compareTopicPartitionReplicas).
func replicaMoves(targets []reassignTarget) []replicaMove {
	var moves []replicaMove
	for _, t := range targets {
		for i, dir := range t.logDirs {
			if dir != "any" {
				moves = append(moves, replicaMove{t.tp, t.replicas[i], dir})
			}
		}
	}
	slices.SortFunc(moves, func(a, b replicaMove) int {
		if a.broker != b.broker {
			return int(a.broker) - int(b.broker)
		}
		return kafka.Compare(a.tp, b.tp)
	})
	return moves
}

func joinMoves(moves []replicaMove) string {
	s := make([]string, len(moves))
	for i, m := range moves {
		s[i] = m.String()
	}
	return strings.Join(s, ",")
}

// errNeedsBootstrapServer is 2.8's answer to log dirs given with --zookeeper.
var errNeedsBootstrapServer = errors.New("bootstrap-server needs to be provided when replica reassignments are present.")

// logDirThrottleOps sets replica.alter.log.dirs.io.max.bytes.per.second on
// every broker with a move (Kafka's modifyLogDirThrottle).
func logDirThrottleOps(moves []replicaMove, throttle int64) []configOps {
	var ops []configOps
	var brokers []int32
	for _, m := range moves {
		if !slices.Contains(brokers, m.broker) {
			brokers = append(brokers, m.broker)
			ops = append(ops, configOps{kind: kmsg.ConfigResourceTypeBroker, name: strconv.Itoa(int(m.broker)),
				set: map[string]string{brokerThrottles[2]: strconv.FormatInt(throttle, 10)}})
		}
	}
	return ops
}

// executeMoves sends the moves until every broker took its own, printing
// those started; a broker without the replica yet is asked again every
// 100 ms until timeout (Kafka's executeMoves).
func (r *adminReassigner) executeMoves(moves []replicaMove, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pending := moves
	for {
		completed, err := r.alterReplicaLogDirs(pending)
		if err != nil {
			return err
		}
		if len(completed) > 0 {
			fmt.Fprintf(r.out, "Successfully started log directory move%s for: %s\n", plural(len(completed)), joinMoves(completed))
		}
		pending = slices.DeleteFunc(pending, func(m replicaMove) bool { return slices.Contains(completed, m) })
		if len(pending) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			return &terseError{fmt.Sprintf("Timed out before log directory move%s could be started for: %s", plural(len(pending)), joinMoves(pending))}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alterReplicaLogDirs sends each broker its moves and returns those it
// took; REPLICA_NOT_AVAILABLE leaves a move pending, any other error fails.
func (r *adminReassigner) alterReplicaLogDirs(moves []replicaMove) ([]replicaMove, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	var completed []replicaMove
	for _, m := range moves {
		req := kmsg.NewPtrAlterReplicaLogDirsRequest()
		req.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{{Dir: m.dir, Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: m.tp.Topic, Partitions: []int32{m.tp.Partition}}}}}
		resp, err := req.RequestWith(ctx, r.cl.Broker(int(m.broker)))
		if err != nil {
			return nil, fmt.Errorf("Failed to alter dir for %s: %w", m, err)
		}
		code := int16(-1)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if t.Topic == m.tp.Topic && p.Partition == m.tp.Partition {
					code = p.ErrorCode
				}
			}
		}
		switch err := kerr.ErrorForCode(code); {
		case err == nil:
			completed = append(completed, m)
		case errors.Is(err, kerr.ReplicaNotAvailable):
		default:
			return nil, fmt.Errorf("Failed to alter dir for %s: %s", m, javaException(err))
		}
	}
	return completed, nil
}

// replicaLogDirs is where a replica's current and future logs are, as the
// Admin client's describeReplicaLogDirs reads them from DescribeLogDirs; found
// is false when its broker did not answer.
type replicaLogDirs struct {
	current, future string
	found           bool
}

func (r *adminReassigner) describeReplicaLogDirs(moves []replicaMove) map[replicaMove]replicaLogDirs {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	out := map[replicaMove]replicaLogDirs{}
	answers := map[int32]*kmsg.DescribeLogDirsResponse{}
	for _, m := range moves {
		resp, asked := answers[m.broker]
		if !asked {
			req := kmsg.NewPtrDescribeLogDirsRequest()
			resp, _ = req.RequestWith(ctx, r.cl.Broker(int(m.broker)))
			answers[m.broker] = resp
		}
		if resp == nil {
			continue
		}
		info := replicaLogDirs{found: true}
		for _, d := range resp.Dirs {
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					if t.Topic != m.tp.Topic || p.Partition != m.tp.Partition || d.ErrorCode != 0 {
						continue
					}
					if p.IsFuture {
						info.future = d.Dir
					} else {
						info.current = d.Dir
					}
				}
			}
		}
		out[m] = info
	}
	return out
}

// verifyMoves prints each move's state in 2.8's words and reports whether
// any is still under way (Kafka's verifyReplicaMoves).
func (r *adminReassigner) verifyMoves(moves []replicaMove) bool {
	infos := r.describeReplicaLogDirs(moves)
	ongoing := false
	lines := make([]string, 0, len(moves))
	for _, m := range moves {
		info := infos[m]
		var line string
		switch {
		case !info.found:
			ongoing = true
			line = fmt.Sprintf("Partition %s cannot be found in any live log directory on broker %d.", m.tp, m.broker)
		case info.current == "":
			ongoing = true
			line = fmt.Sprintf("Partition %s is not found in any live log dir on broker %d. There is likely an offline log directory on the broker.", m.tp, m.broker)
		case info.future == "" && info.current == m.dir:
			line = fmt.Sprintf("Reassignment of replica %s completed successfully.", m)
		case info.future == "":
			line = fmt.Sprintf("Partition %s on broker %d is not being moved from log dir %s to %s.", m.tp, m.broker, info.current, m.dir)
		case info.future == m.dir:
			ongoing = true
			line = fmt.Sprintf("Reassignment of replica %s is still in progress.", m)
		default:
			ongoing = true
			line = fmt.Sprintf("Partition %s on broker %d is being moved to log dir %s instead of %s.", m.tp, m.broker, info.future, m.dir)
		}
		lines = append(lines, line)
	}
	fmt.Fprintln(r.out, strings.Join(lines, "\n"))
	return ongoing
}
