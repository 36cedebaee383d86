package controller

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Request versions the controller sends: Kafka 2.8's (inter.broker.protocol.version 2.8-IV1).
const (
	leaderAndISRVersion   int16 = 5
	updateMetadataVersion int16 = 7
	stopReplicaVersion    int16 = 3
)

// securityProtocolIDs maps security protocol names to their ids in UpdateMetadata.
var securityProtocolIDs = map[string]int16{
	zkpaths.SecurityProtocolPlaintext:     0,
	zkpaths.SecurityProtocolSSL:           1,
	zkpaths.SecurityProtocolSASLPlaintext: 2,
	zkpaths.SecurityProtocolSASLSSL:       3,
}

// leaderAndISREntry is one partition's state queued for one broker's LeaderAndIsr request.
type leaderAndISREntry struct {
	state leaderISRAndEpoch
	isNew bool
}

// requestBatch collects the requests of one round of state changes (Kafka's
// ControllerBrokerRequestBatch) and sends them per broker in Kafka's order: LeaderAndIsr first,
// then UpdateMetadata, then StopReplica. Each broker's sender is FIFO, so a broker applies a
// partition's leadership before it learns the partition's metadata.
type requestBatch struct {
	c                        *Controller
	leaderAndISR             map[int32]map[kafka.TopicPartition]leaderAndISREntry
	updateMetadataBrokers    map[int32]bool
	updateMetadataAllLive    bool // every live broker, as of send
	updateMetadataPartitions map[kafka.TopicPartition]bool
	stopReplica              map[int32]map[kafka.TopicPartition]bool // the delete flag
}

func (c *Controller) newBatch() *requestBatch {
	return &requestBatch{
		c:                        c,
		leaderAndISR:             map[int32]map[kafka.TopicPartition]leaderAndISREntry{},
		updateMetadataBrokers:    map[int32]bool{},
		updateMetadataPartitions: map[kafka.TopicPartition]bool{},
		stopReplica:              map[int32]map[kafka.TopicPartition]bool{},
	}
}

// addStopReplica queues StopReplica of the partition for broker; a partition queued twice is
// deleted if either asked for it.
func (b *requestBatch) addStopReplica(broker int32, tp kafka.TopicPartition, deletePartition bool) {
	m := b.stopReplica[broker]
	if m == nil {
		m = map[kafka.TopicPartition]bool{}
		b.stopReplica[broker] = m
	}
	m[tp] = m[tp] || deletePartition
}

// addLeaderAndISR queues the partition's current leadership for brokers and its metadata for
// every live broker. A partition queued twice for a broker keeps the later state, and stays
// isNew if either was.
func (b *requestBatch) addLeaderAndISR(brokers []int32, tp kafka.TopicPartition, isNew bool) {
	cc := b.c.cc
	state, ok := cc.leadership[tp]
	if !ok {
		return
	}
	for _, id := range brokers {
		if id < 0 {
			continue
		}
		m := b.leaderAndISR[id]
		if m == nil {
			m = map[kafka.TopicPartition]leaderAndISREntry{}
			b.leaderAndISR[id] = m
		}
		m[tp] = leaderAndISREntry{state: state, isNew: isNew || m[tp].isNew}
	}
	b.updateMetadataAllLive = true
	b.updateMetadataPartitions[tp] = true
}

// addUpdateMetadata queues UpdateMetadata for brokers, carrying the live brokers and the given
// partitions (none: the broker list only).
func (b *requestBatch) addUpdateMetadata(brokers []int32, partitions []kafka.TopicPartition) {
	for _, id := range brokers {
		b.updateMetadataBrokers[id] = true
	}
	for _, tp := range partitions {
		b.updateMetadataPartitions[tp] = true
	}
}

// send hands every request to the channel manager. Brokers that are not live get nothing.
func (b *requestBatch) send() {
	c, cc := b.c, b.c.cc
	for _, id := range slices.Sorted(maps.Keys(b.leaderAndISR)) {
		target, ok := cc.liveBrokers[id]
		if !ok {
			continue
		}
		req, leaders := b.leaderAndISRRequest(target, b.leaderAndISR[id])
		c.stateLog.Info("Sending LeaderAndIsr request",
			zap.Int32("target-broker-id", id), zap.Int("become-leader", leaders),
			zap.Int("become-follower", len(b.leaderAndISR[id])-leaders))
		c.channels.send(id, brokerRequest{req: req, onResponse: func(resp kmsg.Response) {
			c.enqueue(leaderAndISRResponseEvent{broker: id, resp: resp})
		}})
	}
	if b.updateMetadataAllLive {
		for id := range cc.liveBrokers {
			b.updateMetadataBrokers[id] = true
		}
	}
	if len(b.updateMetadataBrokers) > 0 {
		partitions := slices.SortedFunc(maps.Keys(b.updateMetadataPartitions), kafka.Compare)
		brokers := slices.Sorted(maps.Keys(b.updateMetadataBrokers))
		c.stateLog.Info("Sending UpdateMetadata request",
			zap.String("target-broker-ids", joinIDs(brokers)), zap.Int("partitions", len(partitions)))
		for _, id := range brokers {
			target, ok := cc.liveBrokers[id]
			if !ok {
				continue
			}
			c.channels.send(id, brokerRequest{req: b.updateMetadataRequest(target, partitions), onResponse: func(resp kmsg.Response) {
				c.enqueue(updateMetadataResponseEvent{broker: id, resp: resp})
			}})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.stopReplica)) {
		target, ok := cc.liveBrokers[id]
		if !ok {
			continue
		}
		req := b.stopReplicaRequest(target, b.stopReplica[id])
		c.stateLog.Info("Sending StopReplica request", zap.Int32("target-broker-id", id), zap.Int("partitions", len(b.stopReplica[id])))
		c.channels.send(id, brokerRequest{req: req, onResponse: func(resp kmsg.Response) {
			c.enqueue(stopReplicaResponseEvent{broker: id, req: req, resp: resp})
		}})
	}
}

// stopReplicaRequest builds a StopReplica v3 for target. The leader epoch of each partition is
// -2 (EpochDuringDelete) for topics being deleted, so the broker deletes whatever epoch it has,
// and otherwise the cached one (-1 if none), which the broker checks against its own.
func (b *requestBatch) stopReplicaRequest(target liveBroker, entries map[kafka.TopicPartition]bool) *kmsg.StopReplicaRequest {
	c, cc := b.c, b.c.cc
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = stopReplicaVersion
	req.ControllerID = c.cfg.BrokerID
	req.ControllerEpoch = cc.epoch
	req.BrokerEpoch = target.epoch
	var topic *kmsg.StopReplicaRequestTopic
	for _, tp := range slices.SortedFunc(maps.Keys(entries), kafka.Compare) {
		if topic == nil || topic.Topic != tp.Topic {
			req.Topics = append(req.Topics, kmsg.NewStopReplicaRequestTopic())
			topic = &req.Topics[len(req.Topics)-1]
			topic.Topic = tp.Topic
		}
		p := kmsg.NewStopReplicaRequestTopicPartitionState()
		p.Partition = tp.Partition
		p.Delete = entries[tp]
		switch l, ok := cc.leadership[tp]; {
		case cc.topicsToBeDeleted[tp.Topic]:
			p.LeaderEpoch = epochDuringDelete
		case ok:
			p.LeaderEpoch = l.leaderEpoch
		default:
			p.LeaderEpoch = noEpoch
		}
		topic.PartitionStates = append(topic.PartitionStates, p)
	}
	return req
}

// leaderAndISRRequest builds a LeaderAndIsr v5 for target and counts the partitions it leads.
func (b *requestBatch) leaderAndISRRequest(target liveBroker, entries map[kafka.TopicPartition]leaderAndISREntry) (*kmsg.LeaderAndISRRequest, int) {
	c, cc := b.c, b.c.cc
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = leaderAndISRVersion
	req.ControllerID = c.cfg.BrokerID
	req.ControllerEpoch = cc.epoch
	req.BrokerEpoch = target.epoch
	req.Type = 0 // UNKNOWN: not a full or incremental KRaft-migration request
	leaders := map[int32]bool{}
	becomeLeader := 0
	var topic *kmsg.LeaderAndISRRequestTopicState
	for _, tp := range slices.SortedFunc(maps.Keys(entries), kafka.Compare) {
		e := entries[tp]
		if topic == nil || topic.Topic != tp.Topic {
			req.TopicStates = append(req.TopicStates, kmsg.NewLeaderAndISRRequestTopicState())
			topic = &req.TopicStates[len(req.TopicStates)-1]
			topic.Topic = tp.Topic
			if t, ok := cc.topics[tp.Topic]; ok {
				topic.TopicID = t.id
			}
		}
		p := kmsg.NewLeaderAndISRRequestTopicPartition()
		p.Partition = tp.Partition
		p.ControllerEpoch = e.state.controllerEpoch
		p.Leader = e.state.leader
		p.LeaderEpoch = e.state.leaderEpoch
		p.ISR = slices.Clone(e.state.isr)
		p.ZKVersion = e.state.zkVersion
		p.Replicas = slices.Clone(cc.replicas(tp))
		if t, ok := cc.topics[tp.Topic]; ok {
			p.AddingReplicas = slices.Clone(t.assignment.AddingReplicas[tp.Partition])
			p.RemovingReplicas = slices.Clone(t.assignment.RemovingReplicas[tp.Partition])
		}
		p.IsNew = e.isNew
		topic.PartitionStates = append(topic.PartitionStates, p)
		leaders[e.state.leader] = true
		if e.state.leader == target.reg.ID {
			becomeLeader++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(leaders)) {
		lb, ok := cc.liveBrokers[id]
		if !ok {
			continue
		}
		ep, ok := lb.reg.Endpoint(c.cfg.InterBrokerListener)
		if !ok {
			continue
		}
		l := kmsg.NewLeaderAndISRRequestLiveLeader()
		l.BrokerID, l.Host, l.Port = id, ep.Host, ep.Port
		req.LiveLeaders = append(req.LiveLeaders, l)
	}
	return req, becomeLeader
}

// updateMetadataRequest builds an UpdateMetadata v7 for target with every live broker and the
// partitions that have leadership; offline replicas are the assigned ones that are not live.
func (b *requestBatch) updateMetadataRequest(target liveBroker, partitions []kafka.TopicPartition) *kmsg.UpdateMetadataRequest {
	c, cc := b.c, b.c.cc
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = updateMetadataVersion
	req.ControllerID = c.cfg.BrokerID
	req.ControllerEpoch = cc.epoch
	req.BrokerEpoch = target.epoch
	var topic *kmsg.UpdateMetadataRequestTopicState
	for _, tp := range partitions {
		state, ok := cc.leadership[tp]
		if !ok {
			continue
		}
		if topic == nil || topic.Topic != tp.Topic {
			req.TopicStates = append(req.TopicStates, kmsg.NewUpdateMetadataRequestTopicState())
			topic = &req.TopicStates[len(req.TopicStates)-1]
			topic.Topic = tp.Topic
			if t, ok := cc.topics[tp.Topic]; ok {
				topic.TopicID = t.id
			}
		}
		p := kmsg.NewUpdateMetadataRequestTopicPartition()
		p.Partition = tp.Partition
		p.ControllerEpoch = state.controllerEpoch
		p.Leader = state.leader
		if cc.topicsToBeDeleted[tp.Topic] {
			p.Leader = leaderDuringDelete // brokers drop the partition
		}
		p.LeaderEpoch = state.leaderEpoch
		p.ISR = slices.Clone(state.isr)
		p.ZKVersion = state.zkVersion
		p.Replicas = slices.Clone(cc.replicas(tp))
		p.OfflineReplicas = []int32{}
		for _, r := range p.Replicas {
			if !cc.isLive(r) {
				p.OfflineReplicas = append(p.OfflineReplicas, r)
			}
		}
		topic.PartitionStates = append(topic.PartitionStates, p)
	}
	for _, id := range cc.liveBrokerIDs() {
		reg := cc.liveBrokers[id].reg
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		for _, ep := range reg.Endpoints {
			e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			e.Port, e.Host, e.ListenerName = ep.Port, ep.Host, ep.ListenerName
			e.SecurityProtocol = securityProtocolIDs[ep.SecurityProtocol]
			lb.Endpoints = append(lb.Endpoints, e)
		}
		if reg.Rack != "" {
			rack := reg.Rack
			lb.Rack = &rack
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	return req
}
