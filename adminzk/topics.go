package adminzk

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// MaxZnodeBytes is what fits in one znode under ZooKeeper's default
// jute.maxbuffer (1 MiB), with room for the request around it.
const MaxZnodeBytes = 1<<20 - 1024

// MinAssignmentBytes is a lower bound on the JSON of n partitions of rf
// replicas each in a topic znode, computed without building it, so an
// impossible request is refused before anything is allocated: each entry
// "<p>":[r,...], is the key's digits, six bytes of punctuation and at least
// 2·rf−1 bytes of replicas, less the last entry's comma.
func MinAssignmentBytes(n int32, rf int16) int64 {
	if n <= 0 {
		return 0
	}
	// Every key has one digit, and one more for each power of ten it reaches.
	digits := int64(n)
	for pow := int64(10); pow < int64(n); pow *= 10 {
		digits += int64(n) - pow
	}
	return digits + int64(n)*(5+2*int64(max(rf, 1))) - 1
}

// ValidateTopicCreate checks a topic creation against ZooKeeper as Kafka's
// validateTopicCreate does: a legal name, not marked for deletion, not
// existing, not colliding with an existing topic over '.' versus '_'; an
// assignment of partitions 0..n-1 with the same, non-zero number of
// distinct replicas each; and an assignment that fits in one znode. Which
// brokers the replicas name is the caller's concern.
func (c *Client) ValidateTopicCreate(topic string, assignment map[int32][]int32) error {
	if err := zkpaths.ValidateTopicName(topic); err != nil {
		return adminErr(zkpaths.ErrInvalidTopicName, kerr.InvalidTopicException, "%v", err)
	}
	if marked, err := c.MarkedForDeletion(topic); err != nil {
		return err
	} else if marked {
		return adminErr(ErrMarkedForDeletion, kerr.TopicAlreadyExists, "Topic '%s' is marked for deletion.", topic)
	}
	if exists, _, err := c.zk.Exists(zkpaths.TopicPath(topic)); err != nil {
		return err
	} else if exists {
		return topicExists(topic)
	}
	if err := c.checkCollision(topic); err != nil {
		return err
	}
	if err := validateAssignment(assignment); err != nil {
		return err
	}
	// A topic id is always 22 characters, so any id gives the real size.
	probe := zkpaths.TopicAssignment{TopicID: zkpaths.NewTopicID(), Partitions: assignment}
	if n := len(probe.Encode()); n > MaxZnodeBytes {
		return adminErr(ErrAssignmentTooLarge, kerr.InvalidPartitions,
			"The assignment of %d partitions is %d bytes, over ZooKeeper's %d-byte znode limit.", len(assignment), n, MaxZnodeBytes)
	}
	return nil
}

func topicExists(topic string) error {
	return adminErr(ErrTopicExists, kerr.TopicAlreadyExists, "Topic '%s' already exists.", topic)
}

// checkCollision rejects a name that collides with an existing topic's.
func (c *Client) checkCollision(topic string) error {
	if !strings.ContainsAny(topic, "._") {
		return nil
	}
	topics, _, err := c.zk.Children(zkpaths.BrokerTopics)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", zkpaths.BrokerTopics, err)
	}
	// Created meanwhile: it would otherwise collide with itself.
	if slices.Contains(topics, topic) {
		return topicExists(topic)
	}
	var colliding []string
	for _, t := range topics {
		if zkpaths.TopicNamesCollide(topic, t) {
			colliding = append(colliding, t)
		}
	}
	if len(colliding) > 0 {
		slices.Sort(colliding)
		return adminErr(ErrTopicCollision, kerr.InvalidTopicException,
			"Topic '%s' collides with existing topics: %s", topic, strings.Join(colliding, ", "))
	}
	return nil
}

// validateAssignment checks the shape of a new topic's assignment.
func validateAssignment(a map[int32][]int32) error {
	invalid := func(format string, args ...any) error {
		return adminErr(ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment, format, args...)
	}
	rf := -1
	for p := range int32(len(a)) {
		replicas, ok := a[p]
		switch {
		case !ok:
			return invalid("Partitions should be consecutive and start from 0.")
		case len(replicas) == 0:
			return invalid("Partition %d has no replicas.", p)
		case rf >= 0 && len(replicas) != rf:
			return invalid("All partitions should have the same number of replicas.")
		}
		rf = len(replicas)
		if len(slices.Compact(slices.Sorted(slices.Values(replicas)))) != len(replicas) {
			return invalid("Duplicate replica assignment found: %v", replicas)
		}
	}
	return nil
}

// CreateTopic creates a topic as Kafka's createTopicWithAssignment does:
// ValidateTopicCreate, then the config /config/topics/<t> (replacing one a
// deleted topic of the name may have left), then /brokers/topics/<t> with
// a new topic id, which the controller's watch turns into partitions. The
// caller has validated config. It returns what it wrote.
func (c *Client) CreateTopic(topic string, assignment map[int32][]int32, config map[string]string) (zkpaths.TopicAssignment, error) {
	return c.createTopic(topic, assignment, config, true)
}

// CreateTopicWithoutID is CreateTopic as Kafka 2.8's kafka-topics --zookeeper
// does it (createTopicWithAssignment with usesTopicId false): no topic id is
// written, and the controller gives the topic one when it loads it.
func (c *Client) CreateTopicWithoutID(topic string, assignment map[int32][]int32, config map[string]string) (zkpaths.TopicAssignment, error) {
	return c.createTopic(topic, assignment, config, false)
}

func (c *Client) createTopic(topic string, assignment map[int32][]int32, config map[string]string, usesTopicID bool) (zkpaths.TopicAssignment, error) {
	if err := c.ValidateTopicCreate(topic, assignment); err != nil {
		return zkpaths.TopicAssignment{}, err
	}
	// The config goes first, so that brokers creating the logs see it. No
	// other writer owns the config of a topic that does not exist yet, so
	// it is written at any version.
	cfgPath := zkpaths.TopicConfigPath(topic)
	cfgData := zkpaths.EntityConfig{Config: config}.Encode()
	if _, err := c.zk.Set(cfgPath, cfgData, -1); errors.Is(err, zk.ErrNoNode) {
		if _, err := c.create(cfgPath, cfgData, 0); errors.Is(err, zk.ErrNodeExists) {
			_, err = c.zk.Set(cfgPath, cfgData, -1)
			if err != nil {
				return zkpaths.TopicAssignment{}, fmt.Errorf("write %s: %w", cfgPath, err)
			}
		} else if err != nil {
			return zkpaths.TopicAssignment{}, fmt.Errorf("write %s: %w", cfgPath, err)
		}
	} else if err != nil {
		return zkpaths.TopicAssignment{}, fmt.Errorf("write %s: %w", cfgPath, err)
	}
	ta := zkpaths.TopicAssignment{Partitions: assignment}
	if usesTopicID {
		ta.TopicID = zkpaths.NewTopicID()
	}
	if _, err := c.create(zkpaths.TopicPath(topic), ta.Encode(), 0); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return zkpaths.TopicAssignment{}, topicExists(topic)
		}
		return zkpaths.TopicAssignment{}, fmt.Errorf("create %s: %w", zkpaths.TopicPath(topic), err)
	}
	c.log.Info("Created topic", zap.String("topic", topic), zap.Int("partitions", len(assignment)), zap.String("assignment", FormatAssignment(assignment)))
	return ta, nil
}

// AddPartitions grows a topic as Kafka's addPartitions does. It reads
// /brokers/topics/<t> and asks grow for the replicas of the new partitions,
// given the current assignment (which grow may inspect but not keep); then,
// unless validateOnly, it writes the grown assignment back at the version
// it read. When another writer changed the topic meanwhile it reads again
// and asks grow again. It returns grow's partitions.
func (c *Client) AddPartitions(topic string, grow func(current zkpaths.TopicAssignment) (map[int32][]int32, error), validateOnly bool) (map[int32][]int32, error) {
	path := zkpaths.TopicPath(topic)
	for {
		data, stat, err := c.read(path)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, unknownTopic(topic)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		a, err := zkpaths.DecodeTopicAssignment(data)
		if err != nil {
			return nil, err
		}
		added, err := grow(a)
		if err != nil || validateOnly {
			return added, err
		}
		for p, replicas := range added {
			a.Partitions[p] = replicas
		}
		_, err = c.zk.Set(path, a.Encode(), stat.Version)
		switch {
		case errors.Is(err, zk.ErrBadVersion):
			continue
		case errors.Is(err, zk.ErrNoNode):
			return nil, unknownTopic(topic)
		case err != nil:
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		c.log.Info("Added partitions", zap.String("topic", topic), zap.Int("partitions", len(a.Partitions)), zap.String("new-assignment", FormatAssignment(added)))
		return added, nil
	}
}

func unknownTopic(topic string) error {
	return adminErr(ErrUnknownTopic, kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", topic)
}

// MarkTopicForDeletion creates /admin/delete_topics/<t>, as Kafka's
// deleteTopic does; the controller deletes the topic when
// delete.topic.enable allows it. A topic already marked is
// ErrMarkedForDeletion, a missing one ErrUnknownTopic.
func (c *Client) MarkTopicForDeletion(topic string) error {
	if exists, _, err := c.zk.Exists(zkpaths.TopicPath(topic)); err != nil {
		return err
	} else if !exists {
		return adminErr(ErrUnknownTopic, kerr.UnknownTopicOrPartition, "Topic `%s` to delete does not exist", topic)
	}
	if _, err := c.create(zkpaths.DeleteTopicPath(topic), nil, 0); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return adminErr(ErrMarkedForDeletion, kerr.TopicAlreadyExists, "topic %s is already marked for deletion", topic)
		}
		return fmt.Errorf("create %s: %w", zkpaths.DeleteTopicPath(topic), err)
	}
	c.log.Info("Marked topic for deletion", zap.String("topic", topic))
	return nil
}

// MarkedForDeletion reports whether /admin/delete_topics/<t> exists.
func (c *Client) MarkedForDeletion(topic string) (bool, error) {
	exists, _, err := c.zk.Exists(zkpaths.DeleteTopicPath(topic))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", zkpaths.DeleteTopicPath(topic), err)
	}
	return exists, nil
}

// FormatAssignment prints an assignment as "0:1-2,1:2-3" for logs.
func FormatAssignment(a map[int32][]int32) string {
	var b strings.Builder
	for i, p := range slices.Sorted(maps.Keys(a)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(p)))
		b.WriteByte(':')
		for j, r := range a[p] {
			if j > 0 {
				b.WriteByte('-')
			}
			b.WriteString(strconv.Itoa(int(r)))
		}
	}
	return b.String()
}
