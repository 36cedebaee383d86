package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
)

// TestControllerMutationQuota: with controller_mutation_rate 0.1 a client's
// token bucket holds 1.1 partitions; a CreateTopics of 12 partitions from a
// full bucket is allowed and leaves it about 109 s in debt. Then the strict
// versions (CreateTopics v6, CreatePartitions v3, DeleteTopics v5) refuse
// with THROTTLING_QUOTA_EXCEEDED and the throttle left, changing nothing,
// while the older versions mutate and throttle. Another client id is not
// limited.
func TestControllerMutationQuota(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	alterQuotas(t, addr, false, kmsg.AlterClientQuotasRequestEntry{
		Entity: entity("client-id", "mutator"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("controller_mutation_rate", 0.1)},
	})
	ctx := ctxT(t, 60*time.Second)
	send := func(clientID string, req kmsg.Request, v int16) kmsg.Response {
		t.Helper()
		cl, err := wire.Dial(ctx, addr, clientID)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		resp, err := cl.RequestVersion(ctx, req, v)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	create := func(clientID string, v int16, partitions int32, names ...string) *kmsg.CreateTopicsResponse {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 15000
		for _, name := range names {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
			req.Topics = append(req.Topics, rt)
		}
		return send(clientID, req, v).(*kmsg.CreateTopicsResponse)
	}
	exists := func(topic string) bool {
		ok, _, err := c.ZooKeeper().Exists("/brokers/topics/" + topic)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	// Until the quota reaches the broker every creation passes; the first
	// refused one follows a creation that put the bucket in debt.
	n := 0
	var refused *kmsg.CreateTopicsResponse
	wait.For(t, 10*time.Second, "the mutation quota applied", func() bool {
		n++
		refused = create("mutator", 6, 12, fmt.Sprintf("first-%d", n))
		return refused.Topics[0].ErrorCode == kerr.ThrottlingQuotaExceeded.Code
	})
	if ms := refused.ThrottleMillis; ms <= 0 || ms > 109000 {
		t.Errorf("refused creation: throttle %d ms, want up to the 109 s the debt of 10.9 partitions takes at 0.1/s", ms)
	}
	if msg := refused.Topics[0].ErrorMessage; msg == nil || *msg != "The throttling quota has been exceeded." {
		t.Errorf("error message %v", msg)
	}
	if exists(fmt.Sprintf("first-%d", n)) {
		t.Error("a topic refused by the quota was created")
	}
	both := create("mutator", 6, 1, "strict-a", "strict-b")
	for _, rt := range both.Topics {
		if rt.ErrorCode != kerr.ThrottlingQuotaExceeded.Code || exists(rt.Topic) {
			t.Errorf("v6 topic %s in debt: %v, exists %v", rt.Topic, kerr.ErrorForCode(rt.ErrorCode), exists(rt.Topic))
		}
	}

	permissive := create("mutator", 5, 2, "permissive")
	if permissive.Topics[0].ErrorCode != 0 || permissive.ThrottleMillis <= 0 || !exists("permissive") {
		t.Errorf("v5 creation in debt: %v, throttle %d ms, exists %v; want created and throttled",
			kerr.ErrorForCode(permissive.Topics[0].ErrorCode), permissive.ThrottleMillis, exists("permissive"))
	}

	grow := kmsg.NewPtrCreatePartitionsRequest()
	grow.TimeoutMillis = 15000
	grow.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "permissive", Count: 3}}
	if r := send("mutator", grow, 3).(*kmsg.CreatePartitionsResponse); r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || r.ThrottleMillis <= 0 {
		t.Errorf("CreatePartitions v3 in debt: %v, throttle %d ms", kerr.ErrorForCode(r.Topics[0].ErrorCode), r.ThrottleMillis)
	}

	c.WaitForLeader("permissive", 1)
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis = 15000
	del.TopicNames = []string{"permissive"}
	del.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("permissive")}}
	if r := send("mutator", del, 5).(*kmsg.DeleteTopicsResponse); r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || !exists("permissive") {
		t.Errorf("DeleteTopics v5 in debt: %v, topic exists %v", kerr.ErrorForCode(r.Topics[0].ErrorCode), exists("permissive"))
	}
	if r := send("mutator", del, 4).(*kmsg.DeleteTopicsResponse); r.Topics[0].ErrorCode != 0 || r.ThrottleMillis <= 0 {
		t.Errorf("DeleteTopics v4 in debt: %v, throttle %d ms; want deleted and throttled", kerr.ErrorForCode(r.Topics[0].ErrorCode), r.ThrottleMillis)
	}

	if r := create("other", 6, 12, "other"); r.Topics[0].ErrorCode != 0 || r.ThrottleMillis != 0 {
		t.Errorf("a client without a quota: %v, throttle %d ms", kerr.ErrorForCode(r.Topics[0].ErrorCode), r.ThrottleMillis)
	}
}
