package consumer

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestReadCommitted: a read_committed member of a group sees the committed
// transactions only and gets past the aborted one and every marker; a
// read_uncommitted one sees everything.
func TestReadCommitted(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"group.initial.rebalance.delay.ms":         "0",
		"group.min.session.timeout.ms":             "500",
		"transaction.state.log.num.partitions":     "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
	}})
	createTopic(t, c, "rc", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod := c.Client(kgo.TransactionalID("rc-app"), kgo.DefaultProduceTopic("rc"))
	for i, commit := range []bool{true, false, true} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			if err := prod.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("t%d-%d", i, j))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	values := func(recs []Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, string(r.Value))
		}
		return out
	}
	cfg := groupConfig(c, "rc-committed", "rc")
	cfg.IsolationLevel = "read_committed"
	committed := values(pollN(t, newConsumer(t, cfg), 6))
	if want := []string{"t0-0", "t0-1", "t0-2", "t2-0", "t2-1", "t2-2"}; !slices.Equal(committed, want) {
		t.Fatalf("read_committed: %v, want %v", committed, want)
	}
	all := values(pollN(t, newConsumer(t, groupConfig(c, "rc-uncommitted", "rc")), 9))
	if !slices.Contains(all, "t1-0") || len(all) != 9 {
		t.Fatalf("read_uncommitted: %v", all)
	}
}
