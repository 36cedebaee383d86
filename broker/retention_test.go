package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestRetentionBySizeAdvancesLogStart wires the pieces together: a topic's
// segment.bytes and retention.bytes from CreateTopics reach its log, the
// retention check deletes old segments below the high watermark, and
// ListOffsets(earliest) shows the new log start offset.
func TestRetentionBySizeAdvancesLogStart(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"log.retention.check.interval.ms": "50"}})
	addr := c.Addr(1)
	createTopicOn(t, c, addr, "retained", map[string]string{"segment.bytes": "1024", "retention.bytes": "2048"})
	produceBatches(t, c, addr, "retained", 40)
	earliest := func() int64 { return earliestOffset(t, addr, "retained") }
	// Each batch is about 270 bytes. What stays is at most retention.bytes
	// plus one segment plus the active one: about 12 batches, so the log
	// start offset ends at 28 or more.
	wait.For(t, 10*time.Second, "retention to delete old segments", func() bool {
		return earliest() >= 28
	})
	if code := raw(t, addr, fetchReq("retained", 0, 0, 1), 11).(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetOutOfRange.Code {
		t.Errorf("fetch at offset 0 after retention: code %d, want OFFSET_OUT_OF_RANGE", code)
	}
}

// TestClockSkewMovesRetention: zkafka.clock.skew.ms, set on one broker as a
// dynamic config, jumps its wall clock, and time-based retention follows the
// broker's clock as Kafka's does: records an hour-long retention.ms keeps
// are deleted once the clock is two hours ahead. The config is described as
// a dynamic broker config, and deleting it brings the clock back.
func TestClockSkewMovesRetention(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"log.retention.check.interval.ms": "50"}})
	addr := c.Addr(1)
	createTopicOn(t, c, addr, "skewed", map[string]string{"segment.bytes": "1024", "retention.ms": "3600000"})
	produceBatches(t, c, addr, "skewed", 20)
	earliest := func() int64 { return earliestOffset(t, addr, "skewed") }
	if got := earliest(); got != 0 {
		t.Fatalf("log start %d with a correct clock, want 0: an hour's retention keeps fresh records", got)
	}

	adm := adminOf(c)
	skew := "7200000"
	alter := func(op kadm.IncrementalOp) {
		t.Helper()
		rs, err := adm.AlterBrokerConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{{Op: op, Name: "zkafka.clock.skew.ms", Value: &skew}}, 1)
		if err == nil {
			err = rs[0].Err
		}
		if err != nil {
			t.Fatalf("alter zkafka.clock.skew.ms: %v", err)
		}
	}
	alter(kadm.SetConfig)
	// Every segment goes, the active one after a roll: the log starts at its end.
	wait.For(t, 10*time.Second, "retention to delete the segments two hours old by the skewed clock", func() bool {
		return earliest() == 20
	})
	rcs, err := adm.DescribeBrokerConfigs(ctxT(t, 10*time.Second), 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rcs.On("1", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, kv := range cfg.Configs {
		if kv.Key == "zkafka.clock.skew.ms" {
			found = true
			if kv.MaybeValue() != skew || kv.Source != kmsg.ConfigSourceDynamicBrokerConfig {
				t.Errorf("zkafka.clock.skew.ms described as %q from %v, want %s from DYNAMIC_BROKER_CONFIG", kv.MaybeValue(), kv.Source, skew)
			}
		}
	}
	if !found {
		t.Error("DescribeConfigs does not list zkafka.clock.skew.ms")
	}
	alter(kadm.DeleteConfig)
	wait.For(t, 10*time.Second, "the clock back", func() bool {
		return broker.ClockSkew(c.Broker(1)) == 0
	})
}

// createTopicOn creates a one-partition, one-replica topic with configs through broker addr and waits
// for its leader.
func createTopicOn(t *testing.T, c *testcluster.Cluster, addr, topic string, configs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	for k, v := range configs {
		rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: k, Value: kmsgStr(v)})
	}
	req.Topics = append(req.Topics, rt)
	if resp := raw(t, addr, req, 5).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(resp.Topics[0].ErrorCode))
	}
	c.WaitForLeader(topic, 0)
}

// earliestOffset is ListOffsets(earliest) of partition 0: the log start offset.
func earliestOffset(t *testing.T, addr, topic string) int64 {
	t.Helper()
	lr := kmsg.NewPtrListOffsetsRequest()
	lr.ReplicaID = -1
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Timestamp = -2
	lr.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{p}}}
	return raw(t, addr, lr, 5).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].Offset
}

// produceBatches writes n batches of one 200-byte record to partition 0 through addr.
func produceBatches(t *testing.T, c *testcluster.Cluster, addr, topic string, n int) {
	t.Helper()
	for range n {
		if code, _ := produceCode(t, c, addr, produceReq(topic, 0, recordBatch(make([]byte, 200)))); code != 0 {
			t.Fatal(kerr.ErrorForCode(code))
		}
	}
}
