package broker

import (
	"slices"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// leaderDuringDelete is the leader the controller sends in UpdateMetadata for
// a topic queued for deletion; brokers drop such partitions from the cache.
const leaderDuringDelete = -2

// PartitionMetadata is what a broker knows of one partition from the
// controller's UpdateMetadata.
type PartitionMetadata struct {
	Leader          int32
	LeaderEpoch     int32
	ISR             []int32
	Replicas        []int32
	OfflineReplicas []int32
	ZkVersion       int32
	ControllerEpoch int32
}

// AliveBroker is a live broker as the controller last described it.
type AliveBroker struct {
	ID        int32
	Rack      *string
	Endpoints map[string]BrokerEndpoint // by listener name
}

// BrokerEndpoint is a reachable host and port of one listener.
type BrokerEndpoint struct {
	Host string
	Port int32
}

type cachedTopic struct {
	id         [16]byte
	partitions map[int32]PartitionMetadata
}

// MetadataCache is the broker's copy of cluster metadata, replaced piece by
// piece by UpdateMetadata requests from the controller and read by Metadata
// and admin requests. It is Kafka's MetadataCache.
type MetadataCache struct {
	mu           sync.RWMutex
	controllerID int32
	brokers      map[int32]AliveBroker
	topics       map[string]*cachedTopic
	// updated is closed and replaced after every Update, to wake requests
	// waiting for metadata (CreateTopics).
	updated chan struct{}
}

// NewMetadataCache returns an empty cache: no brokers, no controller.
func NewMetadataCache() *MetadataCache {
	return &MetadataCache{controllerID: -1, brokers: map[int32]AliveBroker{}, topics: map[string]*cachedTopic{}, updated: make(chan struct{})}
}

// umPartition is one UpdateMetadata partition state, whatever the version.
type umPartition struct {
	topic   string
	topicID [16]byte
	state   kmsg.UpdateMetadataRequestTopicPartition
}

func updateMetadataPartitions(req *kmsg.UpdateMetadataRequest) []umPartition {
	var out []umPartition
	for _, p := range req.PartitionStates {
		out = append(out, umPartition{topic: p.Topic, state: p})
	}
	for _, t := range req.TopicStates {
		for _, p := range t.PartitionStates {
			out = append(out, umPartition{topic: t.Topic, topicID: t.TopicID, state: p})
		}
	}
	return out
}

// Update applies an UpdateMetadata request: the live broker list is replaced
// whole; partition states are replaced one by one, and partitions whose leader
// is LeaderDuringDelete are removed. It returns the topics that disappeared.
func (c *MetadataCache) Update(req *kmsg.UpdateMetadataRequest) (deleted []string) {
	brokers := make(map[int32]AliveBroker, len(req.LiveBrokers))
	for _, b := range req.LiveBrokers {
		ab := AliveBroker{ID: b.ID, Rack: b.Rack, Endpoints: map[string]BrokerEndpoint{}}
		if req.Version == 0 {
			ab.Endpoints["PLAINTEXT"] = BrokerEndpoint{Host: b.Host, Port: b.Port}
		}
		for _, e := range b.Endpoints {
			name := e.ListenerName
			if req.Version < 3 {
				// Before v3 endpoints carried only a security protocol id.
				name = securityProtocolName(e.SecurityProtocol)
			}
			ab.Endpoints[name] = BrokerEndpoint{Host: e.Host, Port: e.Port}
		}
		brokers[b.ID] = ab
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		close(c.updated)
		c.updated = make(chan struct{})
	}()
	c.controllerID = req.ControllerID
	c.brokers = brokers
	for _, p := range updateMetadataPartitions(req) {
		t := c.topics[p.topic]
		if p.state.Leader == leaderDuringDelete {
			if t != nil {
				delete(t.partitions, p.state.Partition)
				if len(t.partitions) == 0 {
					delete(c.topics, p.topic)
					deleted = append(deleted, p.topic)
				}
			}
			continue
		}
		if t == nil {
			t = &cachedTopic{partitions: map[int32]PartitionMetadata{}}
			c.topics[p.topic] = t
		}
		if p.topicID != ([16]byte{}) {
			t.id = p.topicID
		}
		t.partitions[p.state.Partition] = PartitionMetadata{
			Leader:          p.state.Leader,
			LeaderEpoch:     p.state.LeaderEpoch,
			ISR:             slices.Clone(p.state.ISR),
			Replicas:        slices.Clone(p.state.Replicas),
			OfflineReplicas: slices.Clone(p.state.OfflineReplicas),
			ZkVersion:       p.state.ZKVersion,
			ControllerEpoch: p.state.ControllerEpoch,
		}
	}
	return deleted
}

func securityProtocolName(id int16) string {
	switch id {
	case 0:
		return "PLAINTEXT"
	case 1:
		return "SSL"
	case 2:
		return "SASL_PLAINTEXT"
	case 3:
		return "SASL_SSL"
	}
	return "UNKNOWN"
}

// ControllerID returns the active controller's id, or -1 if unknown.
func (c *MetadataCache) ControllerID() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.controllerID
}

// AliveBrokers returns the live brokers sorted by id.
func (c *MetadataCache) AliveBrokers() []AliveBroker {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]AliveBroker, 0, len(c.brokers))
	for _, b := range c.brokers {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// HasAliveBroker reports whether the broker is registered, as the last
// UpdateMetadata said.
func (c *MetadataCache) HasAliveBroker(id int32) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.brokers[id]
	return ok
}

// Topics returns the names of all known topics, sorted.
func (c *MetadataCache) Topics() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.topics))
	for t := range c.topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Topic returns a copy of a topic's id and partitions.
func (c *MetadataCache) Topic(name string) (id [16]byte, partitions map[int32]PartitionMetadata, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.topics[name]
	if !ok {
		return id, nil, false
	}
	partitions = make(map[int32]PartitionMetadata, len(t.partitions))
	for p, m := range t.partitions {
		partitions[p] = m
	}
	return t.id, partitions, true
}

// Contains reports whether the cache knows the partition (Kafka's
// MetadataCache.contains).
func (c *MetadataCache) Contains(topic string, partition int32) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.topics[topic]
	if !ok {
		return false
	}
	_, ok = t.partitions[partition]
	return ok
}

// PartitionCount returns a topic's id and number of partitions, without
// copying their metadata (the consumer protocol's heartbeats ask it).
func (c *MetadataCache) PartitionCount(name string) (id [16]byte, n int32, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.topics[name]
	if !ok {
		return id, 0, false
	}
	return t.id, int32(len(t.partitions)), true
}

// TopicName returns the name of the topic with this id, as Kafka's
// getTopicName does. Ids are unique, except that topics the controller sent
// without one share the zero id; of those, the first name in order answers.
func (c *MetadataCache) TopicName(id [16]byte) (name string, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for n, t := range c.topics {
		if t.id == id && (!ok || n < name) {
			name, ok = n, true
		}
	}
	return name, ok
}

// HasLeaders reports whether every partition of the topic has a leader, which
// is when a CreateTopics response may be sent.
func (c *MetadataCache) HasLeaders(topic string, numPartitions int32) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.topics[topic]
	if !ok || int32(len(t.partitions)) < numPartitions {
		return false
	}
	for _, p := range t.partitions {
		if p.Leader < 0 {
			return false
		}
	}
	return true
}

// changed returns a channel closed at the next Update.
func (c *MetadataCache) changed() <-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.updated
}
