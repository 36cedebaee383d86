package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestTransactionTools: console-consumer --formatter prints
// __transaction_state as Kafka's TransactionLogMessageFormatter, and
// dump-log shows the COMMIT and ABORT control batches, the
// aborted-transaction index, the producer snapshot and, with
// --transaction-log-decoder, the transaction log's records.
func TestTransactionTools(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1",
		"transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(c.Client()).CreateTopic(ctx, 1, 1, nil, "tx"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	c.WaitForLeader("tx", 0)
	prod := c.Client(kgo.TransactionalID("tools-app"), kgo.DefaultProduceTopic("tx"))
	for i, commit := range []bool{true, false} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 2 - i {
			if err := prod.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("v%d%d", i, j))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// Empty, Ongoing, PrepareCommit, CompleteCommit, Ongoing, PrepareAbort, CompleteAbort.
	r := runZkafka("console-consumer", "--bootstrap-server", strings.Join(c.BootstrapAddrs(), ","), "--topic", "__transaction_state",
		"--partition", "0", "--offset", "earliest", "--max-messages", "7", "--formatter", transactionLogFormatterClass)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	states := regexp.MustCompile(`^tools-app::TransactionMetadata\(transactionalId=tools-app, producerId=\d+, producerEpoch=0, ` +
		`txnTimeoutMs=\d+, state=(\w+), pendingState=None, topicPartitions=Set\(([^)]*)\), txnStartTimestamp=-?\d+, txnLastUpdateTimestamp=\d+\)$`)
	var got []string
	for _, l := range lines {
		m := states.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("formatter line %q\nstderr: %s", l, r.stderr)
		}
		got = append(got, m[1]+"["+m[2]+"]")
	}
	want := "Empty[] Ongoing[tx-0] PrepareCommit[tx-0] CompleteCommit[] Ongoing[tx-0] PrepareAbort[tx-0] CompleteAbort[]"
	if strings.Join(got, " ") != want {
		t.Fatalf("transaction states %v, want %s", got, want)
	}

	logDir := c.Properties(1)["log.dirs"]
	c.StopBroker(1)
	segment := filepath.Join(logDir, "tx-0", "00000000000000000000")
	r = runZkafka("dump-log", "--files", segment+".log", "--print-data-log")
	for _, re := range []string{
		`baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: \d+ producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true`,
		`\| offset: 2 isValid: true crc: null keySize: 4 valueSize: 6 CreateTime: \d+ baseOffset: 2 lastOffset: 2 baseSequence: -1 lastSequence: -1 producerEpoch: 0 partitionLeaderEpoch: 0 batchSize: 78 magic: 2 compressType: NONE position: \d+ sequence: -1 headerKeys: \[\] endTxnMarker: COMMIT coordinatorEpoch: 0`,
		`\| offset: 4 isValid: true crc: null keySize: 4 valueSize: 6 CreateTime: \d+ baseOffset: 4 lastOffset: 4 baseSequence: -1 lastSequence: -1 producerEpoch: 0 partitionLeaderEpoch: 0 batchSize: 78 magic: 2 compressType: NONE position: \d+ sequence: -1 headerKeys: \[\] endTxnMarker: ABORT coordinatorEpoch: 0`,
		`isTransactional: true isControl: false`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("dump-log of the segment misses %s:\n%s", re, r.stdout)
		}
	}
	r = runZkafka("dump-log", "--files", segment+".txnindex")
	if !regexp.MustCompile(`version: 0 producerId: \d+ firstOffset: 3 lastOffset: 4 lastStableOffset: 5\n$`).MatchString(r.stdout) {
		t.Errorf("dump-log of the transaction index:\n%s%s", r.stdout, r.stderr)
	}
	r = runZkafka("dump-log", "--files", filepath.Join(logDir, "tx-0", "00000000000000000005.snapshot"))
	if !regexp.MustCompile(`producerId: \d+ producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: None firstSequence: 2 lastSequence: 2 lastOffset: 3`).MatchString(r.stdout) {
		t.Errorf("dump-log of the producer snapshot:\n%s%s", r.stdout, r.stderr)
	}
	r = runZkafka("dump-log", "--files", filepath.Join(logDir, "__transaction_state-0", "00000000000000000000.log"), "--transaction-log-decoder")
	if !strings.Contains(r.stdout, " key: transaction_metadata::transactionalId=tools-app payload: producerId:") ||
		!strings.Contains(r.stdout, ",state=CompleteAbort,partitions=[],") {
		t.Errorf("dump-log --transaction-log-decoder:\n%s%s", r.stdout, r.stderr)
	}
}
