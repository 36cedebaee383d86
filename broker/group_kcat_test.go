package broker_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// kcat -G is librdkafka's balanced consumer: it joins the group, consumes
// every partition to its end, and commits on close; a second run of the
// same group starts from the committed offsets and reads nothing.
func TestGroupKcatBalancedConsumer(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: groupProps})
	bootstrap := strings.Join(c.BootstrapAddrs(), ",")
	const topic, group = "kcat-group-topic", "kcat-group"
	createGroupTopic(t, c, topic, 3)
	producer := c.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := range 30 {
		if err := producer.ProduceSync(ctxT(t, 10*time.Second), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// Without -o, kcat -G starts from the committed offsets (none yet:
	// auto.offset.reset applies).
	run := func() string {
		return kcat(t, "", "-b", bootstrap, "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-q", "-f", "%s\n", topic)
	}
	out := run()
	got := strings.Fields(out)
	sort.Strings(got)
	if len(got) != 30 {
		t.Fatalf("kcat -G read %d records, want 30:\n%s", len(got), out)
	}

	offs, err := kadm.NewClient(c.Client()).FetchOffsets(ctxT(t, 10*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		if o, ok := offs.Lookup(topic, p); !ok || o.At != 10 {
			t.Fatalf("committed offset of partition %d: %+v, want 10", p, o)
		}
	}
	if out := run(); strings.TrimSpace(out) != "" {
		t.Fatalf("a second kcat -G run read records past the committed offsets:\n%s", out)
	}
	described, err := kadm.NewClient(c.Client()).DescribeGroups(ctxT(t, 10*time.Second), group)
	if err != nil || described[group].State != "Empty" || described[group].ProtocolType != "consumer" {
		t.Fatalf("group after kcat left: %+v %v", described[group], err)
	}
}
