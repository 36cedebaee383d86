package coordinator

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

func txnCommitReq(group, memberID string, generation int32, pid int64, epoch int16, offsets map[int32]int64) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = 3
	req.TransactionalID, req.Group, req.MemberID, req.Generation = "app", group, memberID, generation
	req.ProducerID, req.ProducerEpoch = pid, epoch
	ct := kmsg.NewTxnOffsetCommitRequestTopic()
	ct.Topic = "t"
	for p, o := range offsets {
		cp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		cp.Partition, cp.Offset = p, o
		ct.Partitions = append(ct.Partitions, cp)
	}
	req.Topics = append(req.Topics, ct)
	return req
}

// fetchStable is OffsetFetch v7 with require_stable: offset and error of t-0.
func fetchStable(c *Coordinator, group string) (int64, int16) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group, req.RequireStable = 7, group, true
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	req.Topics = append(req.Topics, rt)
	p := c.OffsetFetch(req).Topics[0].Partitions[0]
	return p.Offset, p.ErrorCode
}

var t0 = kafka.TopicPartition{Topic: "t", Partition: 0}

// TestTxnOffsetCommitIsVisibleOnlyAfterCommit: a transactional commit is
// pending (require_stable gets UNSTABLE_OFFSET_COMMIT, a plain fetch the
// previous offset) until its marker commits it; an aborted one is dropped.
func TestTxnOffsetCommitIsVisibleOnlyAfterCommit(t *testing.T) {
	c, _, _ := testCoordinator(t, nil)
	ctx := context.Background()
	part := PartitionFor("g", 4)
	resp := c.TxnOffsetCommit(ctx, txnCommitReq("g", "", -1, 7, 0, map[int32]int64{0: 10}))
	wantCode(t, "txn commit", resp.Topics[0].Partitions[0].ErrorCode, nil)
	if _, code := fetchStable(c, "g"); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable before the marker: %v", kerr.ErrorForCode(code))
	}
	if got, ok := fetchOffsets(c, "g")[t0]; ok {
		t.Fatalf("plain fetch before the marker: offset %d, want none", got)
	}
	c.CompleteTxn(7, []int32{part}, true)
	if off, code := fetchStable(c, "g"); code != 0 || off != 10 {
		t.Fatalf("after COMMIT: %d %v", off, kerr.ErrorForCode(code))
	}
	c.TxnOffsetCommit(ctx, txnCommitReq("g", "", -1, 7, 0, map[int32]int64{0: 20}))
	c.CompleteTxn(7, []int32{part}, false)
	if off, code := fetchStable(c, "g"); code != 0 || off != 10 {
		t.Fatalf("after ABORT: %d %v, want 10", off, kerr.ErrorForCode(code))
	}
}

// TestTxnOffsetCommitsReloadedWithTheirMarkers: a new coordinator loading
// the partition applies committed transactions, drops aborted ones and keeps
// an undecided one pending.
func TestTxnOffsetCommitsReloadedWithTheirMarkers(t *testing.T) {
	c, clock, store := testCoordinator(t, nil)
	ctx := context.Background()
	part := PartitionFor("g", 4)
	marker := func(pid int64, commit bool) {
		b := wire.AppendEndTxnMarkerBatch(nil, pid, 0, 0, wire.EndTxnMarker{Commit: commit})
		if _, _, err := store.Append(part, b); err != nil {
			t.Fatal(err)
		}
	}
	c.TxnOffsetCommit(ctx, txnCommitReq("g", "", -1, 1, 0, map[int32]int64{0: 10}))
	marker(1, true)
	c.TxnOffsetCommit(ctx, txnCommitReq("g", "", -1, 2, 0, map[int32]int64{0: 99}))
	marker(2, false)
	c.TxnOffsetCommit(ctx, txnCommitReq("g", "", -1, 3, 0, map[int32]int64{0: 30}))

	c.OnResign(part)
	c2 := startCoordinator(t, clock, store, nil)
	if got := fetchOffsets(c2, "g")[t0]; got != 10 {
		t.Fatalf("reloaded offset %d, want 10 (committed; 99 aborted)", got)
	}
	if _, code := fetchStable(c2, "g"); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("the undecided transaction is not pending: %v", kerr.ErrorForCode(code))
	}
	c2.CompleteTxn(3, []int32{part}, true)
	if off, _ := fetchStable(c2, "g"); off != 30 {
		t.Fatalf("after its COMMIT: %d", off)
	}
}

// TestTxnOffsetCommitChecksMemberAndGeneration is KIP-447's check: a
// producer committing for a consumer of an older generation, or one that
// left, is refused.
func TestTxnOffsetCommitChecksMemberAndGeneration(t *testing.T) {
	c, clock, _ := testCoordinator(t, nil)
	ctx := context.Background()
	_, follower := stableGroup(t, c, clock)
	resp := c.TxnOffsetCommit(ctx, txnCommitReq(testGroup, follower.MemberID, 0, 7, 0, map[int32]int64{0: 1}))
	wantCode(t, "old generation", resp.Topics[0].Partitions[0].ErrorCode, kerr.IllegalGeneration)
	resp = c.TxnOffsetCommit(ctx, txnCommitReq(testGroup, "someone-else", 1, 7, 0, map[int32]int64{0: 1}))
	wantCode(t, "unknown member", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownMemberID)
	resp = c.TxnOffsetCommit(ctx, txnCommitReq(testGroup, follower.MemberID, 1, 7, 0, map[int32]int64{0: 1}))
	wantCode(t, "current generation", resp.Topics[0].Partitions[0].ErrorCode, nil)
}
