package broker_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// scramProperties are a PLAINTEXT listener for the harness and the admin
// client, and a SASL_PLAINTEXT one with both SCRAMs.
var scramProperties = map[string]string{
	"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
	"sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
}

// TestUserScramCredentialsKadm: franz-go's kadm upserts alice's credentials
// through AlterUserScramCredentials; the znode holds them in Kafka's format
// beside her quota, every broker learns them from the notification and a
// SCRAM client authenticates with them; DescribeUserScramCredentials shows
// their iterations; a deleted credential no longer authenticates.
func TestUserScramCredentialsKadm(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: scramProperties})
	c.WaitForController()
	adm := kadm.NewClient(c.Client())
	ctx := context.Background()
	user := "alice"
	if _, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &user}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}},
	}}); err != nil {
		t.Fatal(err)
	}
	upserts := []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "alice-secret"},
		{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "alice-secret"},
	}
	altered, err := adm.AlterUserSCRAMs(ctx, nil, upserts)
	if err != nil || !altered.Ok() || len(altered) != 1 {
		t.Fatalf("AlterUserSCRAMs: %v %+v", err, altered)
	}

	// The znode: Kafka's JSON, the quota kept, each credential derived from
	// the salt and salted password the client sent.
	data, _, err := c.ZooKeeper().Get(zkpaths.EntityConfigPath(zkpaths.EntityUsers, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	var znode struct {
		Version int               `json:"version"`
		Config  map[string]string `json:"config"`
	}
	if err := json.Unmarshal(data, &znode); err != nil || znode.Version != 1 || len(znode.Config) != 3 || znode.Config["producer_byte_rate"] != "1024" {
		t.Fatalf("znode %s: %v", data, err)
	}
	format := regexp.MustCompile(`^salt=[A-Za-z0-9+/]+=*,stored_key=[A-Za-z0-9+/]+=*,server_key=[A-Za-z0-9+/]+=*,iterations=(\d+)$`)
	for i, m := range []security.ScramMechanism{security.ScramSHA256, security.ScramSHA512} {
		u := upserts[i]
		want := m.CredentialFromSaltedPassword(u.Salt, u.SaltedPassword, int(u.Iterations)).String()
		got := znode.Config[m.Name]
		if got != want || !format.MatchString(got) || !strings.HasPrefix(got, "salt="+base64.StdEncoding.EncodeToString(u.Salt)+",") {
			t.Errorf("%s = %q, want %q", m.Name, got, want)
		}
		// What kafka-configs --zookeeper writes for the same password reads the same way.
		if _, err := security.ParseScramCredential(got); err != nil {
			t.Error(err)
		}
	}
	if want := (zkpaths.EntityConfig{Config: znode.Config}).Encode(); string(data) != string(want) {
		t.Errorf("znode bytes\n%s\nwant\n%s", data, want)
	}
	changes, _, err := c.ZooKeeper().Children(zkpaths.ConfigChanges)
	if err != nil {
		t.Fatal(err)
	}
	notified := false
	for _, ch := range changes {
		d, _, err := c.ZooKeeper().Get(zkpaths.ConfigChanges + "/" + ch)
		if n, derr := zkpaths.DecodeConfigChangeNotification(d); err == nil && derr == nil && n.EntityPath == "users/alice" {
			notified = true
		}
	}
	if !notified {
		t.Errorf("no change notification for users/alice among %v", changes)
	}

	authenticates := func(id int32, mech string) bool {
		addr, _ := c.Broker(id).ListenerAddr("SASL_PLAINTEXT")
		cl, err := wire.DialSecure(ctx, addr, "t", wire.Security{SASL: mechanism(mech, "alice", "alice-secret")})
		if err == nil {
			cl.Close()
		}
		return err == nil
	}
	for _, id := range []int32{1, 2} {
		for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
			c.WaitFor(fmt.Sprintf("alice to authenticate with %s on broker %d", mech, id), func() bool { return authenticates(id, mech) })
		}
	}
	addr, _ := c.Broker(2).ListenerAddr("SASL_PLAINTEXT")
	produceAndConsume(t, []kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(mechanism("SCRAM-SHA-256", "alice", "alice-secret")),
		kgo.DefaultProduceTopic("scram"), kgo.AllowAutoTopicCreation()}, "scram", "upserted")

	described, err := adm.DescribeUserSCRAMs(ctx, "alice")
	if err != nil || described["alice"].Err != nil ||
		fmt.Sprint(described["alice"].CredInfos) != "[SCRAM-SHA-256=iterations=8192 SCRAM-SHA-512=iterations=4096]" {
		t.Fatalf("DescribeUserSCRAMs: %v %+v", err, described)
	}

	altered, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha512}}, nil)
	if err != nil || !altered.Ok() {
		t.Fatalf("delete SCRAM-SHA-512: %v %+v", err, altered)
	}
	for _, id := range []int32{1, 2} {
		c.WaitFor(fmt.Sprintf("broker %d to forget alice's SCRAM-SHA-512 credential", id), func() bool { return !authenticates(id, "SCRAM-SHA-512") })
		if !authenticates(id, "SCRAM-SHA-256") {
			t.Errorf("broker %d: SCRAM-SHA-256 no longer authenticates", id)
		}
	}
	described, err = adm.DescribeUserSCRAMs(ctx)
	if err != nil || len(described) != 1 || fmt.Sprint(described["alice"].CredInfos) != "[SCRAM-SHA-256=iterations=8192]" {
		t.Fatalf("DescribeUserSCRAMs of everyone: %v %+v", err, described)
	}
}

// TestUserScramCredentialsErrors: every refusal of Kafka 2.8's
// AlterUserScramCredentials and DescribeUserScramCredentials, per user,
// with its message; a valid user in the same request is still altered.
func TestUserScramCredentialsErrors(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	controllerID := c.WaitForController()
	cl := c.Client()
	ctx := context.Background()
	salt := []byte("salt")
	salted := security.ScramSHA256.SaltedPassword("secret", salt, 4096)
	up := func(user string, mech int8, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		return kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: user, Mechanism: mech, Iterations: iterations, Salt: salt, SaltedPassword: salted}
	}
	del := func(user string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
		return kmsg.AlterUserSCRAMCredentialsRequestDeletion{Name: user, Mechanism: mech}
	}
	alter := func(dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion, ups []kmsg.AlterUserSCRAMCredentialsRequestUpsertion) map[string]string {
		t.Helper()
		req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		req.Deletions, req.Upsertions = dels, ups
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range resp.Results {
			out[r.User] = fmt.Sprintf("%v: %s", kerr.ErrorForCode(r.ErrorCode), scramMessage(r.ErrorMessage))
		}
		return out
	}
	emptySalted := up("erin", 1, 4096)
	emptySalted.SaltedPassword = nil
	got := alter(
		[]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("carol", 2), del("frank", 3), del("bob", 1)},
		[]kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
			up("", 1, 4096), up("gina", 0, 4096), up("hank", 1, 4095), up("ivan", 2, 16385),
			up("bob", 1, 4096), up("judy", 1, 4096), up("judy", 1, 8192), emptySalted,
			up("dave", 1, 4096), up("dave", 2, 16384),
		})
	want := map[string]string{
		"":      "<nil>: Username must not be empty",
		"gina":  "<nil>: Unknown SCRAM mechanism",
		"frank": "<nil>: Unknown SCRAM mechanism",
		"hank":  "<nil>: Too few iterations",
		"ivan":  "<nil>: Too many iterations",
		"bob":   "<nil>: A user credential cannot be altered twice in the same request",
		"judy":  "<nil>: A user credential cannot be altered twice in the same request",
		"carol": "<nil>: Attempt to delete a user credential that does not exist",
		"erin":  "<nil>: The server experienced an unexpected error when processing the request.",
		"dave":  "<nil>: ",
	}
	codes := map[string]*kerr.Error{
		"": kerr.UnacceptableCredential, "gina": kerr.UnsupportedSaslMechanism, "frank": kerr.UnsupportedSaslMechanism,
		"hank": kerr.UnacceptableCredential, "ivan": kerr.UnacceptableCredential, "bob": kerr.DuplicateResource,
		"judy": kerr.DuplicateResource, "carol": kerr.ResourceNotFound, "erin": kerr.UnknownServerError,
	}
	for u, w := range want {
		if e := codes[u]; e != nil {
			w = e.Error() + strings.TrimPrefix(w, "<nil>")
		}
		if got[u] != w {
			t.Errorf("user %q: %q, want %q", u, got[u], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("results %v", got)
	}
	// Only dave was written.
	users, _, err := c.ZooKeeper().Children(zkpaths.Config + "/" + zkpaths.EntityUsers)
	if err != nil || fmt.Sprint(users) != "[dave]" {
		t.Errorf("/config/users: %v %v", users, err)
	}

	// NOT_CONTROLLER from another broker, for every user once, sorted.
	other := int32(1)
	if controllerID == 1 {
		other = 2
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("zed", 1)}
	req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("amy", 1, 4096), up("zed", 2, 4096)}
	resp, err := cl.Broker(int(other)).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if rs := resp.(*kmsg.AlterUserSCRAMCredentialsResponse).Results; len(rs) != 2 || rs[0].User != "amy" || rs[1].User != "zed" ||
		rs[0].ErrorCode != kerr.NotController.Code || rs[1].ErrorCode != kerr.NotController.Code {
		t.Errorf("from broker %d: %+v", other, rs)
	}

	// A malformed stored credential fails its user's description.
	err = adminzk.New(c.ZooKeeper(), zap.NewNop()).ChangeEntityConfig(zkpaths.EntityUsers, "mallory", func(cfg map[string]string) (bool, error) {
		cfg["SCRAM-SHA-512"] = "salt=abc"
		cfg["consumer_byte_rate"] = "10"
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	describe := func(names ...string) []string {
		t.Helper()
		req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		if names != nil {
			req.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{}
		}
		for _, n := range names {
			req.Users = append(req.Users, kmsg.DescribeUserSCRAMCredentialsRequestUser{Name: n})
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("describe: %v %+v", err, resp)
		}
		var out []string
		for _, r := range resp.Results {
			var infos []string
			for _, i := range r.CredentialInfos {
				infos = append(infos, fmt.Sprintf("%d:%d", i.Mechanism, i.Iterations))
			}
			out = append(out, fmt.Sprintf("%s %v %s %v", r.User, kerr.ErrorForCode(r.ErrorCode), scramMessage(r.ErrorMessage), infos))
		}
		return out
	}
	if got := describe("dave", "", "bob", "bob", "nobody", "mallory"); strings.Join(got, "\n") != strings.Join([]string{
		"dave <nil>  [1:4096 2:16384]",
		" RESOURCE_NOT_FOUND: A request illegally referred to a resource that does not exist. Username must not be empty []",
		"bob DUPLICATE_RESOURCE: A request illegally referred to the same resource twice. Cannot describe SCRAM credentials for the same user twice in a single request: bob []",
		"nobody RESOURCE_NOT_FOUND: A request illegally referred to a resource that does not exist. Attempt to describe a user credential that does not exist: nobody []",
		"mallory UNKNOWN_SERVER_ERROR: The server experienced an unexpected error when processing the request. The server experienced an unexpected error when processing the request. []",
	}, "\n") {
		t.Errorf("describe named:\n%s", strings.Join(got, "\n"))
	}
	// Null and empty both describe every user with a credential, sorted.
	for _, names := range [][]string{nil, {}} {
		if got := describe(names...); len(got) != 2 || !strings.HasPrefix(got[0], "dave <nil>") || !strings.HasPrefix(got[1], "mallory UNKNOWN_SERVER_ERROR") {
			t.Errorf("describe all (%#v):\n%s", names, strings.Join(got, "\n"))
		}
	}
}

// scramMessage is a nullable error message, "" for null.
func scramMessage(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
