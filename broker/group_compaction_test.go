package broker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/zkafka/zkafka/coordinator"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/wire"
)

// recordsIn counts the records stored in a local log from its start, and
// lists the message formats (magic bytes) they are stored in.
func recordsIn(t *testing.T, c *testcluster.Cluster, topic string, partition int32) (int, []int8) {
	t.Helper()
	p, ok := c.Broker(1).ReplicaManager().Partition(topic, partition)
	if !ok {
		t.Fatalf("no local %s-%d", topic, partition)
	}
	l, n := p.Log(), 0
	var magics []int8
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			break
		}
		for b, err := range wire.Batches(data) {
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range b.Records() {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if !slices.Contains(magics, b.Magic) {
				magics = append(magics, b.Magic)
			}
			off = b.LastOffset() + 1
		}
	}
	return n, magics
}

// The log cleaner compacts __consumer_offsets: many commits of one
// partition shrink to about one record per key, and the offset survives a
// restart of the broker. With log.message.format.version 0.10.2 the topic
// holds v1 messages, compacted and reloaded as well.
func TestGroupOffsetsTopicCompacted(t *testing.T) {
	for _, tc := range []struct {
		format string
		magic  int8
	}{{"2.8-IV1", 2}, {"0.10.2", 1}} {
		t.Run(tc.format, func(t *testing.T) {
			props := map[string]string{"log.cleaner.backoff.ms": "50", "offsets.topic.segment.bytes": "1024", "log.message.format.version": tc.format}
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
			c.WaitFor("__consumer_offsets compacted", func() bool {
				n, _ := recordsIn(t, c, "__consumer_offsets", partition)
				return n < commits/4
			})
			if _, magics := recordsIn(t, c, "__consumer_offsets", partition); !slices.Equal(magics, []int8{tc.magic}) {
				t.Fatalf("__consumer_offsets holds magics %v, want %d", magics, tc.magic)
			}

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
		})
	}
}
