package broker_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/wire"
)

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	code := int16(0)
	if want != nil {
		code = want.Code
	}
	if got != code {
		t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// TestTransactionalAPIErrorCodes sends each transactional API the bad
// inputs Kafka 2.8 answers with an error, at the versions where the answer
// differs.
func TestTransactionalAPIErrorCodes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: txnProps(nil)})
	createTopic(t, c, "errs", 1, 1)
	addr := c.Addr(1)
	c.WaitFor("the transaction coordinator of \"e\"", func() bool {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorType = "e", 1
		return raw(t, addr, fc, 3).(*kmsg.FindCoordinatorResponse).ErrorCode == 0
	})
	initPID := func(id *string, timeout int32, pid int64, epoch int16, v int16) *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = id, timeout, pid, epoch
		var resp *kmsg.InitProducerIDResponse
		c.WaitFor("an InitProducerId answer the coordinator is ready for", func() bool {
			resp = raw(t, addr, req, v).(*kmsg.InitProducerIDResponse)
			return resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code && resp.ErrorCode != kerr.ConcurrentTransactions.Code
		})
		return resp
	}
	id := kmsg.StringPtr("e")
	wantCode(t, "InitProducerId with an empty id", initPID(kmsg.StringPtr(""), 1000, -1, -1, 4).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "InitProducerId with timeout 0", initPID(id, 0, -1, -1, 4).ErrorCode, kerr.InvalidTransactionTimeout)
	wantCode(t, "InitProducerId above transaction.max.timeout.ms", initPID(id, 900001, -1, -1, 4).ErrorCode, kerr.InvalidTransactionTimeout)
	wantCode(t, "InitProducerId with an epoch but no producer id", initPID(id, 1000, -1, 3, 4).ErrorCode, kerr.InvalidRequest)
	ok := initPID(id, 60000, -1, -1, 4)
	wantCode(t, "InitProducerId", ok.ErrorCode, nil)
	pid, epoch := ok.ProducerID, ok.ProducerEpoch
	wantCode(t, "InitProducerId v4 naming an unknown epoch", initPID(id, 60000, pid, epoch+5, 4).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "InitProducerId v3 naming an unknown epoch", initPID(id, 60000, pid, epoch+5, 3).ErrorCode, kerr.InvalidProducerEpoch)
	if idem := initPID(nil, 0, -1, -1, 4); idem.ErrorCode != 0 || idem.ProducerID < 0 || idem.ProducerEpoch != 0 {
		t.Errorf("idempotent InitProducerId: %+v", idem)
	}

	addParts := func(pid int64, epoch int16, v int16, topics map[string][]int32) map[string]int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = "e", pid, epoch
		for topic, ps := range topics {
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = topic, ps
			req.Topics = append(req.Topics, rt)
		}
		out := map[string]int16{}
		for _, rt := range raw(t, addr, req, v).(*kmsg.AddPartitionsToTxnResponse).Topics {
			for _, rp := range rt.Partitions {
				out[rt.Topic] = rp.ErrorCode
			}
		}
		return out
	}
	codes := addParts(pid, epoch, 3, map[string][]int32{"errs": {0}, "missing": {0}})
	wantCode(t, "AddPartitionsToTxn beside an unknown topic", codes["errs"], kerr.OperationNotAttempted)
	wantCode(t, "AddPartitionsToTxn of an unknown topic", codes["missing"], kerr.UnknownTopicOrPartition)
	wantCode(t, "AddPartitionsToTxn of an internal topic", addParts(pid, epoch, 3, map[string][]int32{"__consumer_offsets": {0}})["__consumer_offsets"],
		kerr.TopicAuthorizationFailed)
	wantCode(t, "AddPartitionsToTxn of another producer id", addParts(pid+1, epoch, 3, map[string][]int32{"errs": {0}})["errs"],
		kerr.InvalidProducerIDMapping)
	wantCode(t, "AddPartitionsToTxn v2 of an old epoch", addParts(pid, epoch-1, 2, map[string][]int32{"errs": {0}})["errs"], kerr.ProducerFenced)
	wantCode(t, "AddPartitionsToTxn v1 of an old epoch", addParts(pid, epoch-1, 1, map[string][]int32{"errs": {0}})["errs"], kerr.InvalidProducerEpoch)

	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "e", pid, epoch, true
	wantCode(t, "EndTxn without a transaction", raw(t, addr, end, 3).(*kmsg.EndTxnResponse).ErrorCode, kerr.InvalidTxnState)
	end.TransactionalID = "never-initialized"
	wantCode(t, "EndTxn of an unknown id", raw(t, addr, end, 3).(*kmsg.EndTxnResponse).ErrorCode, kerr.InvalidProducerIDMapping)

	addOff := kmsg.NewPtrAddOffsetsToTxnRequest()
	addOff.TransactionalID, addOff.ProducerID, addOff.ProducerEpoch, addOff.Group = "e", pid, epoch, "g"
	wantCode(t, "AddOffsetsToTxn", raw(t, addr, addOff, 3).(*kmsg.AddOffsetsToTxnResponse).ErrorCode, nil)

	toc := kmsg.NewPtrTxnOffsetCommitRequest()
	toc.TransactionalID, toc.Group, toc.ProducerID, toc.ProducerEpoch, toc.Generation = "e", "g", pid, epoch, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "missing"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Offset = 5
	rt.Partitions = append(rt.Partitions, rp)
	toc.Topics = append(toc.Topics, rt)
	wantCode(t, "TxnOffsetCommit of an unknown topic", raw(t, addr, toc, 3).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode,
		kerr.UnknownTopicOrPartition)
	toc.Topics[0].Topic, toc.MemberID = "errs", "nobody"
	wantCode(t, "TxnOffsetCommit before the group's coordinator exists",
		raw(t, addr, toc, 3).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, kerr.NotCoordinator)
	var code int16
	c.WaitFor("the group coordinator of \"g\"", func() bool {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = "g"
		if raw(t, addr, fc, 3).(*kmsg.FindCoordinatorResponse).ErrorCode != 0 {
			return false
		}
		code = raw(t, addr, toc, 3).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		return code != kerr.CoordinatorLoadInProgress.Code && code != kerr.NotCoordinator.Code
	})
	wantCode(t, "TxnOffsetCommit of an unknown member", code, kerr.UnknownMemberID)

	produceTxn := func(txnID *string, batch []byte) int16 {
		req := produceReq("errs", 0, batch)
		req.TransactionID = txnID
		return raw(t, addr, req, 7).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	batch := func(transactional bool, seq int32) []byte {
		h := wire.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, FirstTimestamp: 1, MaxTimestamp: 1}
		if transactional {
			h.Attributes = wire.AttrTransactional
		}
		return wire.AppendBatch(nil, h, []wire.Record{{Value: []byte("x")}})
	}
	wantCode(t, "Produce of transactional records without a transactional id", produceTxn(nil, batch(true, 0)), kerr.TransactionalIDAuthorizationFailed)
	wantCode(t, "Produce of transactional records", produceTxn(id, batch(true, 0)), nil)
	wantCode(t, "Produce of a plain batch during the transaction", produceTxn(nil, batch(false, 1)), kerr.InvalidTxnState)

	marker := func(topic string, pid int64, epoch int16, coordinatorEpoch int32) int16 {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch = pid, epoch, coordinatorEpoch
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = topic, []int32{0}
		m.Topics = append(m.Topics, mt)
		req.Markers = append(req.Markers, m)
		return raw(t, addr, req, 1).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
	}
	wantCode(t, "WriteTxnMarkers to a partition the broker lacks", marker("missing", 77, 0, 0), kerr.UnknownTopicOrPartition)
	wantCode(t, "WriteTxnMarkers", marker("errs", 77, 1, 5), nil)
	wantCode(t, "WriteTxnMarkers from an older coordinator", marker("errs", 77, 1, 4), kerr.TransactionCoordinatorFenced)
	wantCode(t, "WriteTxnMarkers of an older producer epoch", marker("errs", 77, 0, 5), kerr.InvalidProducerEpoch)
}

// TestTimedOutTransactionIsAbortedAndTheLSOAdvances: a producer that opens
// a transaction and goes silent holds the last stable offset at its first
// record until transaction.timeout.ms passes; the coordinator then aborts
// it (the ABORT marker follows the record) and the LSO reaches the end.
func TestTimedOutTransactionIsAbortedAndTheLSOAdvances(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: txnProps(nil)})
	createTopic(t, c, "stuck", 1, 1)
	ctx := ctxT(t, 60*time.Second)
	plain := c.Client(kgo.DefaultProduceTopic("stuck"))
	if err := plain.ProduceSync(ctx, kgo.StringRecord("before")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stuck := c.Client(kgo.TransactionalID("stuck-app"), kgo.DefaultProduceTopic("stuck"), kgo.TransactionTimeout(time.Second))
	if err := stuck.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := stuck.ProduceSync(ctx, kgo.StringRecord("abandoned")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p, _ := c.Broker(1).ReplicaManager().Partition("stuck", 0)
	if lso, hw := p.Log().LastStableOffset(), p.HighWatermark(); lso != 1 || hw != 2 {
		t.Fatalf("LSO %d high watermark %d with the transaction open, want 1 and 2", lso, hw)
	}
	c.WaitFor("the timed out transaction aborted and the LSO at the end", func() bool {
		return p.Log().LastStableOffset() == 3 && p.HighWatermark() == 3
	})
	if got := readValues(t, c, "stuck", true); len(got) != 1 || got[0] != "before" {
		t.Fatalf("read_committed after the abort: %v", got)
	}
	if err := stuck.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the timed out producer committed")
	}
	if aborted := p.Log().AbortedTransactions(0, 3); len(aborted) != 1 || aborted[0].FirstOffset != 1 {
		t.Fatalf("aborted transactions %+v", aborted)
	}
}

// TestRestartRebuildsTheLSOAndAbortedIndex: after a restart the broker has
// the same aborted-transaction index and the same last stable offset, an
// open transaction included.
func TestRestartRebuildsTheLSOAndAbortedIndex(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: txnProps(map[string]string{"log.segment.bytes": "1024"})})
	createTopic(t, c, "restart", 1, 1)
	ctx := ctxT(t, 60*time.Second)
	prod := c.Client(kgo.TransactionalID("restart-app"), kgo.DefaultProduceTopic("restart"))
	for i := range 8 {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := prod.ProduceSync(ctx, kgo.StringRecord("padding-padding-padding-padding")).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(i%3 != 1)); err != nil {
			t.Fatal(err)
		}
	}
	open := c.Client(kgo.TransactionalID("restart-open"), kgo.DefaultProduceTopic("restart"))
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := open.ProduceSync(ctx, kgo.StringRecord("open")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p, _ := c.Broker(1).ReplicaManager().Partition("restart", 0)
	type snapshot struct {
		lso, hw int64
		index   map[int64][]storage.AbortedTxn
	}
	snap := func() snapshot {
		l := p.Log()
		return snapshot{l.LastStableOffset(), p.HighWatermark(), l.(*storage.Log).TransactionIndexes()}
	}
	before := snap()
	if before.lso >= before.hw || len(before.index) < 2 {
		t.Fatalf("before the restart: %+v (want an open transaction and aborted ones in two segments)", before)
	}
	c.StopBroker(1)
	c.StartBroker(1)
	c.WaitForLeader("restart", 0)
	p, _ = c.Broker(1).ReplicaManager().Partition("restart", 0)
	c.WaitFor("the high watermark back", func() bool { return p.HighWatermark() == before.hw })
	if after := snap(); !reflect.DeepEqual(after, before) {
		t.Fatalf("after the restart %+v, before %+v", after, before)
	}
}
