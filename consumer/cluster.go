package consumer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

// cluster holds the consumer's view of the brokers: connections, partition
// leaders, partition counts and topic ids, refreshed by Metadata requests.
type cluster struct {
	clientID  string
	security  wire.Security // how every connection meets the brokers' listener
	stats     *counters
	bootstrap func(context.Context) ([]string, error) // addresses to ask first
	log       *zap.Logger

	// cutUntil (unix nanoseconds) is when CutNetwork's cut ends.
	cutUntil atomic.Int64

	mu         sync.Mutex
	conns      map[int32]*wire.Client
	addrs      map[int32]string
	leaders    map[kafka.TopicPartition]int32
	partitions map[string]int32 // topic → partition count
	// topicNames maps topic ids (KIP-516) to names: the consumer group
	// protocol names the partitions it assigns by topic id.
	topicNames map[[16]byte]string
	topicIDs   map[string][16]byte
	// topicErrors is what the last Metadata answer said of topics it could not describe, as
	// logged; it is logged again only when it changes.
	topicErrors string
}

func newCluster(clientID string, sec wire.Security, stats *counters, bootstrap func(context.Context) ([]string, error), log *zap.Logger) *cluster {
	return &cluster{
		clientID: clientID, security: sec, stats: stats, bootstrap: bootstrap, log: log,
		conns: map[int32]*wire.Client{}, addrs: map[int32]string{},
		leaders: map[kafka.TopicPartition]int32{}, partitions: map[string]int32{},
		topicNames: map[[16]byte]string{}, topicIDs: map[string][16]byte{},
	}
}

// request sends req on cl, counting it.
func (k *cluster) request(ctx context.Context, cl *wire.Client, req kmsg.Request) (kmsg.Response, error) {
	return k.requestVersion(ctx, cl, req, -1)
}

// requestVersion sends req on cl at version v, or at the negotiated version
// if v is negative, counting it.
func (k *cluster) requestVersion(ctx context.Context, cl *wire.Client, req kmsg.Request, v int16) (kmsg.Response, error) {
	if time.Now().UnixNano() < k.cutUntil.Load() {
		return nil, ErrNetworkCut
	}
	k.stats.kafkaRequests.Add(1)
	switch req.(type) {
	case *kmsg.JoinGroupRequest:
		k.stats.joinGroups.Add(1)
	case *kmsg.SyncGroupRequest:
		k.stats.syncGroups.Add(1)
	case *kmsg.HeartbeatRequest, *kmsg.ConsumerGroupHeartbeatRequest:
		k.stats.heartbeats.Add(1)
	}
	if v >= 0 {
		return cl.RequestVersion(ctx, req, v)
	}
	return cl.Request(ctx, req)
}

// dial connects to a broker with the consumer's client id and security.
func (k *cluster) dial(ctx context.Context, addr string) (*wire.Client, error) {
	return wire.DialSecure(ctx, addr, k.clientID, k.security)
}

// broker returns a connection to broker id, dialing it if needed.
func (k *cluster) broker(ctx context.Context, id int32) (*wire.Client, error) {
	k.mu.Lock()
	cl, addr := k.conns[id], k.addrs[id]
	k.mu.Unlock()
	if cl != nil {
		return cl, nil
	}
	if addr == "" {
		return nil, fmt.Errorf("broker %d: address unknown: %w", id, kerr.LeaderNotAvailable)
	}
	cl, err := k.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if old := k.conns[id]; old != nil {
		cl.Close()
		return old, nil
	}
	k.conns[id] = cl
	return cl, nil
}

// drop forgets broker id's connection after an I/O error.
func (k *cluster) drop(id int32, cl *wire.Client) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conns[id] == cl {
		delete(k.conns, id)
		cl.Close()
	}
}

// any returns a connection to some broker: a connected one, else the first
// bootstrap address that answers.
func (k *cluster) any(ctx context.Context) (*wire.Client, int32, error) {
	k.mu.Lock()
	for id, cl := range k.conns {
		k.mu.Unlock()
		return cl, id, nil
	}
	k.mu.Unlock()
	addrs, err := k.bootstrap(ctx)
	if err != nil {
		return nil, 0, err
	}
	errs := []error{}
	for _, addr := range addrs {
		cl, err := k.dial(ctx, addr)
		if err == nil {
			return cl, -1, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, 0, errors.New("no brokers known")
	}
	return nil, 0, fmt.Errorf("no broker reachable: %w", errors.Join(errs...))
}

// refresh sends a Metadata request for topics and records brokers, leaders
// and partition counts.
func (k *cluster) refresh(ctx context.Context, topics []string) error {
	cl, id, err := k.any(ctx)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := k.request(ctx, cl, req)
	if id == -1 {
		cl.Close() // a bootstrap connection: brokers are dialed by id from now on
	}
	if err != nil {
		if id != -1 {
			k.drop(id, cl)
		}
		return fmt.Errorf("metadata: %w", err)
	}
	md := resp.(*kmsg.MetadataResponse)
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, b := range md.Brokers {
		addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		if old, ok := k.addrs[b.NodeID]; ok && old != addr {
			if cl := k.conns[b.NodeID]; cl != nil {
				cl.Close()
				delete(k.conns, b.NodeID)
			}
		}
		k.addrs[b.NodeID] = addr
	}
	var errs []string
	for _, t := range md.Topics {
		if t.Topic != nil && t.ErrorCode != 0 {
			name := strconv.Itoa(int(t.ErrorCode))
			var ke *kerr.Error
			if errors.As(kerr.ErrorForCode(t.ErrorCode), &ke) {
				name = ke.Message
			}
			errs = append(errs, *t.Topic+"="+name)
		}
		if t.Topic == nil || t.ErrorCode != 0 {
			continue
		}
		k.partitions[*t.Topic] = int32(len(t.Partitions))
		if t.TopicID != ([16]byte{}) {
			// A topic deleted and created again has a new id.
			delete(k.topicNames, k.topicIDs[*t.Topic])
			k.topicNames[t.TopicID], k.topicIDs[*t.Topic] = *t.Topic, t.TopicID
		}
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: *t.Topic, Partition: p.Partition}
			if p.ErrorCode == 0 && p.Leader >= 0 {
				k.leaders[tp] = p.Leader
			} else {
				delete(k.leaders, tp)
			}
		}
	}
	// Kafka's NetworkClient warns of every such answer; once per change says it as clearly.
	slices.Sort(errs)
	if joined := "{" + strings.Join(errs, ", ") + "}"; len(errs) > 0 && joined != k.topicErrors {
		k.log.Warn("Error while fetching metadata", zap.String("errors", joined))
		k.topicErrors = joined
	} else if len(errs) == 0 {
		k.topicErrors = ""
	}
	return nil
}

// leader returns the known leader of tp.
func (k *cluster) leader(tp kafka.TopicPartition) (int32, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	id, ok := k.leaders[tp]
	return id, ok
}

// forgetLeader marks tp's leader unknown so the next fetch refreshes it.
func (k *cluster) forgetLeader(tp kafka.TopicPartition) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.leaders, tp)
}

// topicName returns the name of the topic with id, if Metadata told it.
func (k *cluster) topicName(id [16]byte) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	name, ok := k.topicNames[id]
	return name, ok
}

// topicID returns the id of the topic named name, if Metadata told it.
func (k *cluster) topicID(name string) ([16]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	id, ok := k.topicIDs[name]
	return id, ok
}

// partitionCounts returns the partition count of each topic known.
func (k *cluster) partitionCounts(topics []string) map[string]int32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int32{}
	for _, t := range topics {
		if n, ok := k.partitions[t]; ok {
			out[t] = n
		}
	}
	return out
}

// close closes every connection.
func (k *cluster) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, cl := range k.conns {
		cl.Close()
		delete(k.conns, id)
	}
}

// listOffset asks tp's leader for its earliest (-2) or latest (-1) offset.
func (k *cluster) listOffset(ctx context.Context, tp kafka.TopicPartition, timestamp int64, readCommitted bool) (int64, error) {
	id, ok := k.leader(tp)
	if !ok {
		if err := k.refresh(ctx, []string{tp.Topic}); err != nil {
			return 0, err
		}
		if id, ok = k.leader(tp); !ok {
			return 0, fmt.Errorf("list offsets %s-%d: %w", tp.Topic, tp.Partition, kerr.LeaderNotAvailable)
		}
	}
	cl, err := k.broker(ctx, id)
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	if readCommitted {
		req.IsolationLevel = 1 // the latest offset is the last stable offset
	}
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = tp.Partition
	rp.Timestamp = timestamp
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := k.request(ctx, cl, req)
	if err != nil {
		k.drop(id, cl)
		return 0, fmt.Errorf("list offsets %s-%d: %w", tp.Topic, tp.Partition, err)
	}
	topics := resp.(*kmsg.ListOffsetsResponse).Topics
	if len(topics) == 0 || len(topics[0].Partitions) == 0 {
		return 0, fmt.Errorf("list offsets %s-%d: partition missing from the response", tp.Topic, tp.Partition)
	}
	p := topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		k.forgetLeader(tp)
		return 0, fmt.Errorf("list offsets %s-%d: %w", tp.Topic, tp.Partition, err)
	}
	if len(p.OldStyleOffsets) > 0 { // v0
		return p.OldStyleOffsets[0], nil
	}
	return p.Offset, nil
}
