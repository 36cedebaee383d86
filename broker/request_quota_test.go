package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
)

// TestRequestPercentageQuota: a client id allowed a millionth of a percent
// of a handler thread is above its quota after any request once the quota
// reaches the broker. Its responses carry a throttle bounded to one window
// (1 s), a client that throttles itself (KIP-219) gets the response first
// and its next request waits the throttle out, and a consumer fetch is
// answered empty. A follower's fetch is exempt, and other client ids are
// not throttled.
func TestRequestPercentageQuota(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	createTopic(t, c, "busy", 1, 1)
	ctx := ctxT(t, 60*time.Second)
	dial := func(clientID string) *wire.Client {
		t.Helper()
		cl, err := wire.Dial(ctx, addr, clientID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	request := func(cl *wire.Client, req kmsg.Request, v int16) kmsg.Response {
		t.Helper()
		resp, err := cl.RequestVersion(ctx, req, v)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	idle := dial("idle")
	produceAs(t, idle, "busy", 100)
	alterQuotas(t, addr, false, kmsg.AlterClientQuotasRequestEntry{
		Entity: entity("client-id", "busy"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("request_percentage", 1e-6)},
	})

	busy := dial("busy")
	var md *kmsg.MetadataResponse
	wait.For(t, 10*time.Second, "the request quota applied", func() bool {
		md = request(busy, kmsg.NewPtrMetadataRequest(), 9).(*kmsg.MetadataResponse)
		return md.ThrottleMillis > 0
	})
	if md.ThrottleMillis > 1000 {
		t.Errorf("throttled %d ms: a request quota's throttle is at most one window (1 s)", md.ThrottleMillis)
	}
	start := time.Now()
	md = request(busy, kmsg.NewPtrMetadataRequest(), 9).(*kmsg.MetadataResponse)
	if muted := time.Since(start); md.ThrottleMillis <= 0 || muted < 500*time.Millisecond {
		t.Errorf("the request after a throttled one was answered after %v (throttle %d ms): the connection was not muted", muted, md.ThrottleMillis)
	}

	fetch := request(dial("busy"), fetchReq("busy", 0, 0, 1), 11).(*kmsg.FetchResponse)
	if fetch.ThrottleMillis <= 0 || len(fetch.Topics) != 0 {
		t.Errorf("consumer fetch above the request quota: throttle %d ms, %d topics; want a throttle and an empty response", fetch.ThrottleMillis, len(fetch.Topics))
	}
	follower := fetchReq("busy", 0, 0, 1)
	follower.ReplicaID = 2 // not a replica: answered without records, and without a throttle
	if f := request(dial("busy"), follower, 11).(*kmsg.FetchResponse); f.ThrottleMillis != 0 {
		t.Errorf("a follower's fetch was throttled %d ms", f.ThrottleMillis)
	}
	if f := request(idle, fetchReq("busy", 0, 0, 1), 11).(*kmsg.FetchResponse); f.ThrottleMillis != 0 || len(f.Topics) != 1 || len(f.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Errorf("a client without a quota: throttle %d ms, response %+v", f.ThrottleMillis, f.Topics)
	}
}
