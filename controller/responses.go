package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// processLeaderAndISRResponse logs the errors a broker reported for LeaderAndIsr. Kafka also
// marks replicas that answered KAFKA_STORAGE_ERROR offline; this controller does not track
// offline log directories yet.
func (c *Controller) processLeaderAndISRResponse(broker int32, resp kmsg.Response) {
	if c.cc == nil {
		return
	}
	r, ok := resp.(*kmsg.LeaderAndISRResponse)
	if !ok {
		c.log.Error("Unexpected response to LeaderAndIsr", zap.Int32("target-broker-id", broker))
		return
	}
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		c.stateLog.Error("Received error in LeaderAndIsr response", zap.Int32("target-broker-id", broker), zap.Error(err))
		return
	}
	names := map[[16]byte]string{}
	for name, t := range c.cc.topics {
		names[t.id] = name
	}
	report := func(topic string, p kmsg.LeaderAndISRResponseTopicPartition) {
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			c.stateLog.Warn("Broker failed LeaderAndIsr for a partition", zap.Int32("target-broker-id", broker),
				zap.Stringer("partition", kafka.TopicPartition{Topic: topic, Partition: p.Partition}), zap.Error(err))
		}
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			report(names[t.TopicID], p)
		}
	}
	for _, p := range r.Partitions {
		report(p.Topic, p)
	}
}

// processUpdateMetadataResponse logs an error a broker reported for UpdateMetadata.
func (c *Controller) processUpdateMetadataResponse(broker int32, resp kmsg.Response) {
	if c.cc == nil {
		return
	}
	r, ok := resp.(*kmsg.UpdateMetadataResponse)
	if !ok {
		c.log.Error("Unexpected response to UpdateMetadata", zap.Int32("target-broker-id", broker))
		return
	}
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		c.stateLog.Error("Received error in UpdateMetadata response", zap.Int32("target-broker-id", broker), zap.Error(err))
	}
}
