package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/coordinator"
	"github.com/zkafka/zkafka/internal/testcluster"
)

// recordsIn counts the records stored in a local log from its start.
func recordsIn(t *testing.T, c *testcluster.Cluster, topic string, partition int32) int {
	t.Helper()
	p, ok := c.Broker(1).ReplicaManager().Partition(topic, partition)
	if !ok {
		t.Fatalf("no local %s-%d", topic, partition)
	}
	l, n := p.Log(), 0
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			break
		}
		for len(data) > 0 {
			var b kmsg.RecordBatch
			if err := b.ReadFrom(data); err != nil {
				t.Fatal(err)
			}
			n += int(b.NumRecords)
			off = b.FirstOffset + int64(b.LastOffsetDelta) + 1
			data = data[12+int(b.Length):]
		}
	}
	return n
}

// The log cleaner compacts __consumer_offsets: many commits of one
// partition shrink to about one record per key, and the offset survives a
// restart of the broker.
func TestGroupOffsetsTopicCompacted(t *testing.T) {
	props := map[string]string{"log.cleaner.backoff.ms": "50", "offsets.topic.segment.bytes": "1024"}
	for k, v := range groupProps {
		props[k] = v
	}
	c := testcluster.Start(t, testcluster.Options{Properties: props})
	createGroupTopic(t, c, "compacted", 1)
	const group = "compaction-group"
	waitForCoordinator(t, c, group)
	adm := kadm.NewClient(c.Client())
	const commits = 200
	for i := 1; i <= commits; i++ {
		var o kadm.Offsets
		o.AddOffset("compacted", 0, int64(i), -1)
		if resp, err := adm.CommitOffsets(ctxT(t, 10*time.Second), group, o); err != nil || resp.Error() != nil {
			t.Fatalf("commit %d: %v %v", i, err, resp.Error())
		}
	}
	partition := coordinator.PartitionFor(group, 5)
	c.WaitFor("__consumer_offsets compacted", func() bool { return recordsIn(t, c, "__consumer_offsets", partition) < commits/4 })

	c.StopBroker(1)
	c.StartBroker(1)
	waitForCoordinator(t, c, group)
	offs, err := kadm.NewClient(c.Client()).FetchOffsets(ctxT(t, 10*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("compacted", 0); o.At != commits {
		t.Fatalf("offset after compaction and restart: %d, want %d", o.At, commits)
	}
}
