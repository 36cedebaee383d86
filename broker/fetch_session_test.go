package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionFetch is a Fetch v12 of partitions 0..n-1 of topic t with the given session fields.
func sessionFetch(replica int32, id, epoch int32, t string, n int) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.SessionID, req.SessionEpoch = 12, replica, id, epoch
	if n > 0 {
		ft := kmsg.FetchRequestTopic{Topic: t}
		for p := range n {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = int32(p), 0, 1<<20
			ft.Partitions = append(ft.Partitions, fp)
		}
		req.Topics = []kmsg.FetchRequestTopic{ft}
	}
	return req
}

// answer is a response to req with the given high watermark for every partition.
func answer(req *kmsg.FetchRequest, hw int64) *fetchResult {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, t := range req.Topics {
		rt := kmsg.FetchResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.HighWatermark, rp.LogStartOffset = p.Partition, hw, 0
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return &fetchResult{resp: resp}
}

// openSession makes a full fetch of n partitions through c and returns the session id granted.
func openSession(t *testing.T, c *fetchSessionCache, replica int32, topic string, n int, now time.Time) int32 {
	t.Helper()
	fc := c.newContext(sessionFetch(replica, 0, 0, topic, n), now)
	res := answer(fc.req, 0)
	fc.finish(res, now)
	return res.resp.SessionID
}

// TestFetchSessionEviction follows Kafka's FetchSessionCache: with every slot taken, a new session
// evicts a stale one first; else a follower's evicts the smallest consumer session (or an old
// follower's no bigger than itself); a consumer's evicts only old consumer sessions smaller than
// itself; and with no slots at all no session is made.
func TestFetchSessionEviction(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	c := newFetchSessionCache(2)
	small := openSession(t, c, -1, "a", 2, t0)
	big := openSession(t, c, -1, "b", 5, t0)
	if small == 0 || big == 0 || small == big {
		t.Fatalf("sessions %d and %d, want two distinct ids", small, big)
	}
	// Full: a young consumer session cannot push either out.
	if id := openSession(t, c, -1, "c", 9, t0.Add(time.Second)); id != 0 {
		t.Fatalf("consumer session %d created with the cache full of young sessions", id)
	}
	// A follower's can: the smallest consumer session goes.
	follower := openSession(t, c, 2, "f", 1, t0.Add(time.Second))
	if follower == 0 {
		t.Fatal("follower session not created over young consumer sessions")
	}
	if _, ok := c.sessions.Load(small); ok {
		t.Fatal("the smallest consumer session was not the one evicted")
	}
	if _, ok := c.sessions.Load(big); !ok {
		t.Fatal("the bigger consumer session was evicted")
	}
	// Used 100 s later, the follower's session stays; the big one, unused for over 120 s, is stale
	// and goes first, even for a consumer.
	fc := c.newContext(sessionFetch(2, follower, 1, "f", 0), t0.Add(100*time.Second))
	if fc.errorCode != 0 {
		t.Fatal(kerr.ErrorForCode(fc.errorCode))
	}
	fc.finish(answer(fc.req, 0), t0.Add(100*time.Second))
	if id := openSession(t, c, -1, "d", 1, t0.Add(121*time.Second)); id == 0 {
		t.Fatal("a stale session was not evicted")
	}
	if _, ok := c.sessions.Load(big); ok {
		t.Fatal("the stale session survived")
	}
	if _, ok := c.sessions.Load(follower); !ok {
		t.Fatal("the recently used follower session was evicted instead of the stale one")
	}
	c.mu.Lock()
	n := c.count
	c.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d sessions, want the 2 slots", n)
	}

	none := newFetchSessionCache(0)
	if id := openSession(t, none, 1, "a", 1, t0); id != 0 {
		t.Fatalf("session %d created with max.incremental.fetch.session.cache.slots=0", id)
	}
}

// TestFetchSessionResponses: an incremental fetch reads every partition of the session and answers
// only those with news (records, a new high watermark, an error), moving them to the end of the
// session; the epoch must follow; a duplicate answer is refused.
func TestFetchSessionResponses(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	c := newFetchSessionCache(10)
	id := openSession(t, c, 1, "t", 3, now)

	fc := c.newContext(sessionFetch(1, id, 1, "t", 0), now)
	if n := len(fc.req.Topics[0].Partitions); n != 3 {
		t.Fatalf("incremental fetch reads %d partitions, want the session's 3", n)
	}
	res := answer(fc.req, 0)
	res.resp.Topics[0].Partitions[0].HighWatermark = 4                           // news
	res.resp.Topics[0].Partitions[2].ErrorCode = kerr.NotLeaderForPartition.Code // news
	fc.finish(res, now)
	var got []int32
	for _, p := range res.resp.Topics[0].Partitions {
		got = append(got, p.Partition)
	}
	if res.resp.SessionID != id || !slices.Equal(got, []int32{0, 2}) {
		t.Fatalf("session %d answered partitions %v, want session %d and [0 2]", res.resp.SessionID, got, id)
	}

	// Epoch 2 now; the partitions with news moved to the end: order 1, 0, 2.
	fc = c.newContext(sessionFetch(1, id, 2, "t", 0), now)
	var order []int32
	for _, p := range fc.req.Topics[0].Partitions {
		order = append(order, p.Partition)
	}
	if !slices.Equal(order, []int32{1, 0, 2}) {
		t.Fatalf("session order %v, want [1 0 2]", order)
	}
	res = answer(fc.req, 0)
	res.resp.Topics[0].Partitions[1].HighWatermark = 4 // partition 0, as last sent
	// Partition 2's error is gone, but its cached high watermark was reset: it is sent again.
	fc.finish(res, now)
	got = got[:0]
	for _, p := range res.resp.Topics[0].Partitions {
		got = append(got, p.Partition)
	}
	if !slices.Equal(got, []int32{2}) {
		t.Fatalf("answered partitions %v, want [2]", got)
	}

	// A replayed epoch is refused; so is an answer raced by a newer fetch.
	if fc := c.newContext(sessionFetch(1, id, 2, "t", 0), now); fc.errorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("replayed epoch: %v", kerr.ErrorForCode(fc.errorCode))
	}
	first := c.newContext(sessionFetch(1, id, 3, "t", 0), now)
	second := c.newContext(sessionFetch(1, id, 4, "t", 0), now)
	res = answer(first.req, 9)
	first.finish(res, now)
	if res.resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(res.resp.Topics) != 0 {
		t.Fatalf("answer to a superseded fetch: error %v, %d topics", kerr.ErrorForCode(res.resp.ErrorCode), len(res.resp.Topics))
	}
	res = answer(second.req, 9)
	second.finish(res, now)
	if res.resp.ErrorCode != 0 || len(res.resp.Topics[0].Partitions) != 3 {
		t.Fatalf("answer to the current fetch: %v", res.resp)
	}
}

// TestFetchSessionHandler: the follower's side sends everything once, then only what changed and
// what it forgot, and starts over after an error.
func TestFetchSessionHandler(t *testing.T) {
	var h fetchSessionHandler
	req := sessionFetch(1, 0, 0, "t", 3)
	h.build(req)
	if req.SessionID != 0 || req.SessionEpoch != 0 || len(req.Topics[0].Partitions) != 3 {
		t.Fatalf("first fetch: session %d epoch %d, %d partitions", req.SessionID, req.SessionEpoch, len(req.Topics[0].Partitions))
	}
	h.handleResponse(&kmsg.FetchResponse{SessionID: 77})

	req = sessionFetch(1, 0, 0, "t", 3)
	req.Topics[0].Partitions[1].FetchOffset = 10
	req.Topics[0].Partitions = req.Topics[0].Partitions[:2] // partition 2 no longer fetched
	h.build(req)
	if req.SessionID != 77 || req.SessionEpoch != 1 || len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 ||
		req.Topics[0].Partitions[0].Partition != 1 {
		t.Fatalf("incremental fetch: session %d epoch %d, topics %+v", req.SessionID, req.SessionEpoch, req.Topics)
	}
	if len(req.ForgottenTopics) != 1 || !slices.Equal(req.ForgottenTopics[0].Partitions, []int32{2}) {
		t.Fatalf("forgotten %+v, want partition 2", req.ForgottenTopics)
	}
	h.handleResponse(&kmsg.FetchResponse{SessionID: 77})

	req = sessionFetch(1, 0, 0, "t", 2)
	req.Topics[0].Partitions[1].FetchOffset = 10
	h.build(req)
	if req.SessionEpoch != 2 || len(req.Topics) != 0 || len(req.ForgottenTopics) != 0 {
		t.Fatalf("unchanged fetch: epoch %d, topics %+v, forgotten %+v", req.SessionEpoch, req.Topics, req.ForgottenTopics)
	}
	h.handleResponse(&kmsg.FetchResponse{ErrorCode: kerr.InvalidFetchSessionEpoch.Code})
	req = sessionFetch(1, 0, 0, "t", 2)
	h.build(req)
	if req.SessionID != 77 || req.SessionEpoch != 0 || len(req.Topics[0].Partitions) != 2 {
		t.Fatalf("after a session error: session %d epoch %d, want a full fetch closing session 77", req.SessionID, req.SessionEpoch)
	}
	h.handleResponse(&kmsg.FetchResponse{SessionID: 0}) // the cache was full: sessionless
	req = sessionFetch(1, 0, 0, "t", 2)
	h.build(req)
	if req.SessionID != 0 || req.SessionEpoch != 0 || len(req.Topics[0].Partitions) != 2 {
		t.Fatalf("sessionless: session %d epoch %d", req.SessionID, req.SessionEpoch)
	}
}
