package broker_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestRestartTruncatesTornTail simulates a crash in the middle of writing a
// batch: after a restart the broker serves every complete batch, never the
// torn one, and appends continue right after the last complete batch.
func TestRestartTruncatesTornTail(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	if code := createTopicRaw(t, addr, "torn", 1); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	c.WaitForLeader("torn", 0)
	for range 5 {
		if code, _ := produceCode(t, c, addr, produceReq("torn", 0, recordBatch([]byte("complete")))); code != 0 {
			t.Fatal(kerr.ErrorForCode(code))
		}
	}
	c.StopBroker(1)

	dir := c.Properties(1)["log.dirs"]
	// A crash leaves no clean-shutdown marker, and half a batch at the end.
	if err := os.Remove(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatal(err)
	}
	segment := filepath.Join(dir, "torn-0", "00000000000000000000.log")
	batch := recordBatch([]byte("torn batch that never finished"))
	f, err := os.OpenFile(segment, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(batch[:len(batch)/2])
	f.Close()

	c.StartBroker(1)
	c.WaitForLeader("torn", 0)
	addr = c.Addr(1)
	resp := raw(t, addr, fetchReq("torn", 0, 0, 1), 11).(*kmsg.FetchResponse)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.HighWatermark != 5 {
		t.Fatalf("after recovery: code %d high watermark %d, want 5", p.ErrorCode, p.HighWatermark)
	}
	var batches []kmsg.RecordBatch
	for b := p.RecordBatches; len(b) > 0; {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatalf("served bytes are not whole batches: %v", err)
		}
		batches = append(batches, rb)
		b = b[12+rb.Length:]
	}
	if len(batches) != 5 {
		t.Fatalf("served %d batches, want the 5 complete ones", len(batches))
	}
	if code, off := produceCode(t, c, addr, produceReq("torn", 0, recordBatch([]byte("after")))); code != 0 || off != 5 {
		t.Fatalf("append after recovery: code %d offset %d, want 5", code, off)
	}
}
