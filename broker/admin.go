package broker

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/zkpaths"
)

// maxZnodeBytes is what fits in one znode under ZooKeeper's default
// jute.maxbuffer (1 MiB), with room for the request around it.
const maxZnodeBytes = 1<<20 - 1024

// maxTopicReplicas bounds partitions × replication factor before anything is
// allocated; each replica takes at least two bytes of JSON.
const maxTopicReplicas = maxZnodeBytes / 2

// internalTopics are the topics Kafka marks internal in Metadata.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

// topicError is a Kafka error code with a message for the client.
type topicError struct {
	code *kerr.Error
	msg  string
}

func (e *topicError) Error() string { return e.msg }
func (e *topicError) Unwrap() error { return e.code }

func topicErr(code *kerr.Error, format string, args ...any) error {
	return &topicError{code: code, msg: fmt.Sprintf(format, args...)}
}

// newTopic is a validated topic creation: an explicit assignment or a count
// and replication factor to assign, and the topic configs.
type newTopic struct {
	name              string
	numPartitions     int32
	replicationFactor int16
	assignment        map[int32][]int32
	configs           map[string]string
}

// createTopic writes a topic into ZooKeeper the way Kafka's AdminZkClient
// does: /config/topics/<t> first, then /brokers/topics/<t> with a new topic
// id. The controller's watch on /brokers/topics does the rest. With
// validateOnly nothing is written. It returns the final assignment.
func (s *Server) createTopic(t newTopic, validateOnly bool) (map[int32][]int32, error) {
	if err := zkpaths.ValidateTopicName(t.name); err != nil {
		return nil, topicErr(kerr.InvalidTopicException, "%v", err)
	}
	if err := s.checkTopicCollision(t.name); err != nil {
		return nil, err
	}
	cfg := s.defaultLogConfig()
	if err := applyTopicConfig(&cfg, t.configs); err != nil {
		return nil, topicErr(kerr.InvalidConfig, "%v", err)
	}
	assignment := t.assignment
	if assignment == nil {
		brokers, err := s.registeredBrokers()
		if err != nil {
			return nil, err
		}
		if int64(t.numPartitions)*int64(max(t.replicationFactor, 1)) > maxTopicReplicas {
			return nil, topicErr(kerr.InvalidPartitions, "%d partitions with replication factor %d do not fit in one /brokers/topics znode.", t.numPartitions, t.replicationFactor)
		}
		assignment, err = controller.AssignReplicasRandom(brokers, t.numPartitions, t.replicationFactor)
		switch {
		case errors.Is(err, controller.ErrInvalidPartitions):
			return nil, topicErr(kerr.InvalidPartitions, "Number of partitions must be larger than 0.")
		case errors.Is(err, controller.ErrInvalidReplicationFactor):
			return nil, topicErr(kerr.InvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", t.replicationFactor, len(brokers))
		case err != nil:
			return nil, err
		}
	} else if err := s.validateAssignment(assignment); err != nil {
		return nil, err
	}
	if validateOnly {
		return assignment, nil
	}
	if exists, _, err := s.zk.Exists(zkpaths.DeleteTopicPath(t.name)); err != nil {
		return nil, err
	} else if exists {
		return nil, topicErr(kerr.TopicAlreadyExists, "Topic '%s' is marked for deletion.", t.name)
	}
	if exists, _, err := s.zk.Exists(zkpaths.TopicPath(t.name)); err != nil {
		return nil, err
	} else if exists {
		return nil, topicErr(kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.name)
	}
	cfgData := zkpaths.EntityConfig{Config: t.configs}.Encode()
	if _, err := s.zk.Set(zkpaths.TopicConfigPath(t.name), cfgData, -1); errors.Is(err, zk.ErrNoNode) {
		if err := s.zk.CreateIfMissing(zkpaths.TopicConfigPath(t.name), cfgData); err != nil {
			return nil, fmt.Errorf("write %s: %w", zkpaths.TopicConfigPath(t.name), err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("write %s: %w", zkpaths.TopicConfigPath(t.name), err)
	}
	ta := zkpaths.TopicAssignment{TopicID: zkpaths.NewTopicID(), Partitions: assignment}
	if data := ta.Encode(); len(data) > maxZnodeBytes {
		return nil, topicErr(kerr.InvalidPartitions, "The assignment of %d partitions is %d bytes, over ZooKeeper's %d-byte znode limit.", len(assignment), len(data), maxZnodeBytes)
	}
	if _, err := s.zk.Create(zkpaths.TopicPath(t.name), ta.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return nil, topicErr(kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.name)
		}
		return nil, fmt.Errorf("create %s: %w", zkpaths.TopicPath(t.name), err)
	}
	s.log.Info("Created topic", zap.String("topic", t.name), zap.Int("partitions", len(assignment)), zap.String("assignment", formatAssignment(assignment)))
	return assignment, nil
}

// checkTopicCollision rejects a name that differs from an existing topic only
// by '.' versus '_', which collide in metric names (Kafka's rule).
func (s *Server) checkTopicCollision(name string) error {
	if !strings.ContainsAny(name, "._") {
		return nil
	}
	topics, _, err := s.zk.Children(zkpaths.BrokerTopics)
	if err != nil {
		return err
	}
	norm := strings.ReplaceAll(name, ".", "_")
	for _, t := range topics {
		if t != name && strings.ReplaceAll(t, ".", "_") == norm {
			return topicErr(kerr.InvalidTopicException, "Topic '%s' collides with existing topics: %s", name, t)
		}
	}
	return nil
}

// registeredBrokers lists the ids under /brokers/ids, sorted.
func (s *Server) registeredBrokers() ([]int32, error) {
	children, _, err := s.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", zkpaths.BrokerIDs, err)
	}
	ids := make([]int32, 0, len(children))
	for _, c := range children {
		id, err := zkpaths.ParseBrokerID(c)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// validateAssignment checks a manual replica assignment as Kafka does:
// partitions numbered 0..n-1, the same replication factor everywhere, no
// duplicate replicas, and only registered brokers.
func (s *Server) validateAssignment(a map[int32][]int32) error {
	brokers, err := s.registeredBrokers()
	if err != nil {
		return err
	}
	rf := -1
	for p := int32(0); p < int32(len(a)); p++ {
		replicas, ok := a[p]
		if !ok {
			return topicErr(kerr.InvalidReplicaAssignment, "Partitions should be consecutive and start from 0.")
		}
		if len(replicas) == 0 {
			return topicErr(kerr.InvalidReplicaAssignment, "Partition %d has no replicas.", p)
		}
		if rf >= 0 && len(replicas) != rf {
			return topicErr(kerr.InvalidReplicaAssignment, "All partitions should have the same number of replicas.")
		}
		rf = len(replicas)
		seen := map[int32]bool{}
		for _, r := range replicas {
			if seen[r] {
				return topicErr(kerr.InvalidReplicaAssignment, "Duplicate replica assignment found: %v", replicas)
			}
			seen[r] = true
			if !slices.Contains(brokers, r) {
				return topicErr(kerr.InvalidReplicaAssignment, "Unknown broker %d in replica assignment.", r)
			}
		}
	}
	return nil
}

func formatAssignment(a map[int32][]int32) string {
	var b strings.Builder
	for p := int32(0); p < int32(len(a)); p++ {
		if p > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(p)))
		b.WriteByte(':')
		for i, r := range a[p] {
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteString(strconv.Itoa(int(r)))
		}
	}
	return b.String()
}
