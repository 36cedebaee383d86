package broker_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// entity builds a quota entity from type, name pairs; a nil name is the
// default entity.
func entity(pairs ...any) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i < len(pairs); i += 2 {
		e := kmsg.AlterClientQuotasRequestEntryEntity{Type: pairs[i].(string)}
		if name, ok := pairs[i+1].(string); ok {
			e.Name = &name
		}
		out = append(out, e)
	}
	return out
}

func setQuota(key string, value float64) kmsg.AlterClientQuotasRequestEntryOp {
	return kmsg.AlterClientQuotasRequestEntryOp{Key: key, Value: value}
}

func alterQuotas(t *testing.T, addr string, validateOnly bool, entries ...kmsg.AlterClientQuotasRequestEntry) []int16 {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries, req.ValidateOnly = entries, validateOnly
	resp := raw(t, addr, req, 1).(*kmsg.AlterClientQuotasResponse)
	var codes []int16
	for _, e := range resp.Entries {
		codes = append(codes, e.ErrorCode)
	}
	return codes
}

func match(entityType string, matchType kmsg.QuotasMatchType, name *string) kmsg.DescribeClientQuotasRequestComponent {
	return kmsg.DescribeClientQuotasRequestComponent{EntityType: entityType, MatchType: matchType, Match: name}
}

// describeQuotas returns the entries matching components as
// "user=alice,client-id=<default>: key=value" lines, sorted.
func describeQuotas(t *testing.T, addr string, strict bool, components ...kmsg.DescribeClientQuotasRequestComponent) ([]string, int16) {
	t.Helper()
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Components, req.Strict = components, strict
	resp := raw(t, addr, req, 1).(*kmsg.DescribeClientQuotasResponse)
	var out []string
	for _, e := range resp.Entries {
		var parts []string
		for _, c := range e.Entity {
			name := "<default>"
			if c.Name != nil {
				name = *c.Name
			}
			parts = append(parts, c.Type+"="+name)
		}
		line := strings.Join(parts, ",") + ":"
		for _, v := range e.Values {
			line += " " + v.Key + "=" + strconv.FormatFloat(v.Value, 'f', -1, 64)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out, resp.ErrorCode
}

// TestClientQuotaAPIs: AlterClientQuotas writes the znodes Kafka 2.8 writes
// (sanitized names, longs as integers, doubles as Java prints them) with a
// change notification each; bad entries fail alone with INVALID_REQUEST;
// DescribeClientQuotas filters as 2.8 does.
func TestClientQuotaAPIs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	zkc := zkSession(t, c.ZK)
	codes := alterQuotas(t, addr, false,
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("user", "alice", "client-id", "my app"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("producer_byte_rate", 1024)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("user", nil), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("request_percentage", 50)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("client-id", nil), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("consumer_byte_rate", 2048), setQuota("producer_byte_rate", 4096)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("client-id", "x"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("consumer_byte_rate", 1.5)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("client-id", "x"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("no_such_quota", 1)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("user", "a", "user", "b"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("producer_byte_rate", 1)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("ip", "1.2.3.4"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("connection_creation_rate", 1)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("ip", "1.2.3.4", "user", "a"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("connection_creation_rate", 1)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("ip", "no-such-host.invalid"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("connection_creation_rate", 1)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("ip", "1.2.3.5"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("producer_byte_rate", 1)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("ip", "1.2.3.5"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("connection_creation_rate", 1.5)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("client-id", "x"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("connection_creation_rate", 1)}},
	)
	bad := kerr.InvalidRequest.Code
	if want := []int16{0, 0, 0, bad, bad, bad, 0, bad, bad, bad, bad, bad}; !slices.Equal(codes, want) {
		t.Fatalf("alter codes %v, want %v", codes, want)
	}
	for path, want := range map[string]string{
		"/config/users/alice/clients/my%20app": `{"version":1,"config":{"producer_byte_rate":"1024"}}`,
		"/config/users/<default>":              `{"version":1,"config":{"request_percentage":"50.0"}}`,
		"/config/clients/<default>":            `{"version":1,"config":{"consumer_byte_rate":"2048","producer_byte_rate":"4096"}}`,
		"/config/ips/1.2.3.4":                  `{"version":1,"config":{"connection_creation_rate":"1"}}`,
	} {
		data, _, err := zkc.Get(path)
		if err != nil || string(data) != want {
			t.Errorf("%s = %s (%v), want %s", path, data, err, want)
		}
	}
	if _, _, err := zkc.Get("/config/clients/x"); err == nil {
		t.Error("a refused entry was written")
	}
	changes, _, err := zkc.Children(zkpaths.ConfigChanges)
	if err != nil || len(changes) != 4 {
		t.Errorf("%d config change notifications (%v), want 4", len(changes), err)
	}

	// Validate only: checked, not written.
	if codes := alterQuotas(t, addr, true, kmsg.AlterClientQuotasRequestEntry{Entity: entity("client-id", "v"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("producer_byte_rate", 1)}}); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("validate only: %v", codes)
	}
	if ok, _, _ := zkc.Exists("/config/clients/v"); ok {
		t.Error("validate only wrote /config/clients/v")
	}

	alice, app, def := kmsg.StringPtr("alice"), kmsg.StringPtr("my app"), (*string)(nil)
	for _, tc := range []struct {
		name       string
		strict     bool
		components []kmsg.DescribeClientQuotasRequestComponent
		want       []string
	}{
		{"everything", false, nil, []string{
			"client-id=<default>: consumer_byte_rate=2048 producer_byte_rate=4096",
			"ip=1.2.3.4: connection_creation_rate=1",
			"user=<default>: request_percentage=50",
			"user=alice,client-id=my app: producer_byte_rate=1024"}},
		{"ips", true, []kmsg.DescribeClientQuotasRequestComponent{match("ip", kmsg.QuotasMatchTypeAny, nil)}, []string{"ip=1.2.3.4: connection_creation_rate=1"}},
		{"ip 1.2.3.4", false, []kmsg.DescribeClientQuotasRequestComponent{match("ip", kmsg.QuotasMatchTypeExact, kmsg.StringPtr("1.2.3.4"))}, []string{"ip=1.2.3.4: connection_creation_rate=1"}},
		{"default ip", false, []kmsg.DescribeClientQuotasRequestComponent{match("ip", kmsg.QuotasMatchTypeDefault, def)}, nil},
		{"users, strict", true, []kmsg.DescribeClientQuotasRequestComponent{match("user", kmsg.QuotasMatchTypeAny, nil)}, []string{"user=<default>: request_percentage=50"}},
		{"user alice", false, []kmsg.DescribeClientQuotasRequestComponent{match("user", kmsg.QuotasMatchTypeExact, alice)}, []string{"user=alice,client-id=my app: producer_byte_rate=1024"}},
		{"user alice, strict", true, []kmsg.DescribeClientQuotasRequestComponent{match("user", kmsg.QuotasMatchTypeExact, alice)}, nil},
		{"alice and her app", true, []kmsg.DescribeClientQuotasRequestComponent{match("user", kmsg.QuotasMatchTypeExact, alice), match("client-id", kmsg.QuotasMatchTypeExact, app)}, []string{"user=alice,client-id=my app: producer_byte_rate=1024"}},
		{"default client", false, []kmsg.DescribeClientQuotasRequestComponent{match("client-id", kmsg.QuotasMatchTypeDefault, def)}, []string{"client-id=<default>: consumer_byte_rate=2048 producer_byte_rate=4096"}},
	} {
		got, code := describeQuotas(t, addr, tc.strict, tc.components...)
		if code != 0 || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q (code %d), want %q", tc.name, got, code, tc.want)
		}
	}
	if _, code := describeQuotas(t, addr, false, match("user", kmsg.QuotasMatchTypeAny, nil), match("user", kmsg.QuotasMatchTypeAny, nil)); code != bad {
		t.Errorf("duplicate filter component: code %d, want INVALID_REQUEST", code)
	}
	if _, code := describeQuotas(t, addr, false, match("ip", kmsg.QuotasMatchTypeAny, nil), match("user", kmsg.QuotasMatchTypeAny, nil)); code != bad {
		t.Errorf("ip with user filter components: code %d, want INVALID_REQUEST", code)
	}
	if _, code := describeQuotas(t, addr, false, match("user", kmsg.QuotasMatchTypeExact, nil)); code != bad {
		t.Errorf("exact match without a name: code %d, want INVALID_REQUEST", code)
	}

	// Removing the last key leaves an entity with no quota: not described.
	if codes := alterQuotas(t, addr, false, kmsg.AlterClientQuotasRequestEntry{Entity: entity("user", nil), Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "request_percentage", Remove: true}}}); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("remove: %v", codes)
	}
	if got, _ := describeQuotas(t, addr, true, match("user", kmsg.QuotasMatchTypeAny, nil)); len(got) != 0 {
		t.Errorf("after removing the default user's quota: %q", got)
	}
	// Nothing matching is an empty list, not a null one: Java's admin client
	// reads it whenever there is no error.
	none := kmsg.NewPtrDescribeClientQuotasRequest()
	none.Components, none.Strict = []kmsg.DescribeClientQuotasRequestComponent{match("user", kmsg.QuotasMatchTypeExact, kmsg.StringPtr("nobody"))}, true
	if resp := raw(t, addr, none, 1).(*kmsg.DescribeClientQuotasResponse); resp.ErrorCode != 0 || resp.Entries == nil {
		t.Errorf("describing a user with no quota: error %d, null entries %v; want none and an empty list", resp.ErrorCode, resp.Entries == nil)
	}
}

// produceAs sends one produce of a value of n bytes to topic-0 on cl.
func produceAs(t *testing.T, cl *wire.Client, topic string, n int) *kmsg.ProduceResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	batch := wire.AppendBatch(nil, wire.BatchHeader{ProducerID: -1, BaseSequence: -1}, []wire.Record{{Value: make([]byte, n)}})
	resp, err := cl.RequestVersion(ctx, produceReq(topic, 0, batch), 7)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.ProduceResponse)
}

// TestProduceAndFetchQuotasThrottle: once a quota set through
// AlterClientQuotas reaches the broker, a produce that takes the client's
// rate above it carries Kafka's throttle time and the connection is muted
// for that long; a fetch above the consumer quota is answered empty with
// its throttle time. Other client ids are not throttled.
func TestProduceAndFetchQuotasThrottle(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	createTopic(t, c, "quota", 1, 1)
	// Entries are written, and their notifications applied, in order: once
	// "slow" is throttled, "zero" has its quota too.
	alterQuotas(t, addr, false,
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("client-id", "zero"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("producer_byte_rate", 2000)}},
		kmsg.AlterClientQuotasRequestEntry{Entity: entity("client-id", "slow"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("producer_byte_rate", 2000), setQuota("consumer_byte_rate", 2000)}})

	ctx := ctxT(t, 30*time.Second)
	slow, err := wire.Dial(ctx, addr, "slow")
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// Until the notification is applied nothing is recorded; then 25 kB
	// over the 10 s minimum window is 2.5 kB/s, a quarter above the quota:
	// throttled a quarter of the window, 2.5 s.
	var throttled *kmsg.ProduceResponse
	wait.For(t, 10*time.Second, "the quota applied", func() bool {
		throttled = produceAs(t, slow, "quota", 25000)
		return throttled.ThrottleMillis > 0
	})
	if ms := throttled.ThrottleMillis; ms < 2500 || ms > 2700 {
		t.Fatalf("throttle %d ms, want 2.5 s and a little for the request's other bytes", ms)
	}
	if p := throttled.Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Fatalf("a throttled produce is still appended: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	start := time.Now()
	produceAs(t, slow, "quota", 1)
	if muted := time.Since(start); muted < time.Duration(throttled.ThrottleMillis)*time.Millisecond-100*time.Millisecond {
		t.Errorf("the next request was answered after %v, within the %d ms throttle", muted, throttled.ThrottleMillis)
	}

	// acks=0 gets no response, but its connection is muted all the same:
	// the ApiVersions sent right behind a 25 kB produce waits about 2.5 s.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	zero := produceReq("quota", 0, wire.AppendBatch(nil, wire.BatchHeader{ProducerID: -1, BaseSequence: -1}, []wire.Record{{Value: make([]byte, 25000)}}))
	zero.Acks, zero.Version = 0, 7
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 0
	start = time.Now()
	if _, err := conn.Write(slices.Concat(wire.AppendRequest(nil, 1, "zero", zero), wire.AppendRequest(nil, 2, "zero", av))); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.ReadFrame(conn, 1<<20); err != nil {
		t.Fatal(err)
	}
	if muted := time.Since(start); muted < 2*time.Second {
		t.Errorf("the request behind an acks=0 produce above the quota was answered after %v", muted)
	}

	fast, err := wire.Dial(ctx, addr, "fast")
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	if r := produceAs(t, fast, "quota", 25000); r.ThrottleMillis != 0 {
		t.Errorf("a client without a quota was throttled %d ms", r.ThrottleMillis)
	}

	// The log holds 50 kB: a fetch of it all is above the consumer quota.
	req := fetchReq("quota", 0, 0, 1<<20)
	resp, err := slow.RequestVersion(ctx, req, 11)
	if err != nil {
		t.Fatal(err)
	}
	f := resp.(*kmsg.FetchResponse)
	if f.ThrottleMillis <= 0 || len(f.Topics) != 0 {
		t.Errorf("fetch above the quota: throttle %d ms, %d topics; want a throttle and an empty response", f.ThrottleMillis, len(f.Topics))
	}
}
