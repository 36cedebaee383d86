package broker_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

const tokenJaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret" user_carol="carol-secret";`

// saslRaw sends one request on a SASL_PLAINTEXT connection authenticated
// with mech.
func saslRaw(t *testing.T, addr string, mech sasl.Mechanism, req kmsg.Request, v int16) kmsg.Response {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	cl, err := wire.DialSecure(ctx, addr, "token-test", wire.Security{SASL: mech})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer cl.Close()
	resp, err := cl.RequestVersion(ctx, req, v)
	if err != nil {
		t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	return resp
}

func tokenMech(id string, h []byte) sasl.Mechanism {
	return scram.Auth{User: id, Pass: base64.StdEncoding.EncodeToString(h), IsToken: true}.AsSha512Mechanism()
}

func renewToken(t *testing.T, addr string, mech sasl.Mechanism, h []byte, period int64) *kmsg.RenewDelegationTokenResponse {
	req := kmsg.NewPtrRenewDelegationTokenRequest()
	req.HMAC, req.RenewTimeMillis = h, period
	return saslRaw(t, addr, mech, req, 2).(*kmsg.RenewDelegationTokenResponse)
}

func expireToken(t *testing.T, addr string, mech sasl.Mechanism, h []byte, period int64) *kmsg.ExpireDelegationTokenResponse {
	req := kmsg.NewPtrExpireDelegationTokenRequest()
	req.HMAC, req.ExpiryPeriodMillis = h, period
	return saslRaw(t, addr, mech, req, 2).(*kmsg.ExpireDelegationTokenResponse)
}

func describeTokens(t *testing.T, addr string, mech sasl.Mechanism, owners []string) *kmsg.DescribeDelegationTokenResponse {
	req := kmsg.NewPtrDescribeDelegationTokenRequest()
	if owners != nil {
		req.Owners = []kmsg.DescribeDelegationTokenRequestOwner{}
	}
	for _, o := range owners {
		req.Owners = append(req.Owners, kmsg.DescribeDelegationTokenRequestOwner{PrincipalType: "User", PrincipalName: o})
	}
	return saslRaw(t, addr, mech, req, 2).(*kmsg.DescribeDelegationTokenResponse)
}

func createToken(t *testing.T, addr string, mech sasl.Mechanism, renewerType string, renewers ...string) *kmsg.CreateDelegationTokenResponse {
	req := kmsg.NewPtrCreateDelegationTokenRequest()
	req.MaxLifetimeMillis = -1
	for _, r := range renewers {
		req.Renewers = append(req.Renewers, kmsg.CreateDelegationTokenRequestRenewer{PrincipalType: renewerType, PrincipalName: r})
	}
	if mech == nil {
		return raw(t, addr, req, 2).(*kmsg.CreateDelegationTokenResponse)
	}
	return saslRaw(t, addr, mech, req, 2).(*kmsg.CreateDelegationTokenResponse)
}

// TestDelegationTokens runs two brokers with delegation.token.master.key:
// alice creates a token through broker 1 (with bob as renewer), its znode
// holds Kafka's JSON, a franz-go client authenticates with it (SCRAM with
// tokenauth=true) on broker 2 once the change notification reached it and
// produces as alice, and every error of the four APIs answers bad input:
// PLAINTEXT and token-authenticated connections, a Group renewer, an
// unknown HMAC, a stranger renewing, a token past its expiry, DESCRIBE
// denied on the token. Expiring removes the token everywhere, a token's
// expiry ends its sessions under connections.max.reauth.ms, and the expiry
// check removes a token that ran out.
func TestDelegationTokens(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":    tokenJaas,
		"delegation.token.master.key":                            "master-secret",
		"delegation.token.expiry.check.interval.ms":              "300",
		"listener.name.sasl_plaintext.connections.max.reauth.ms": "3600000",
		"authorizer.class.name":                                  "kafka.security.authorizer.AclAuthorizer",
		"allow.everyone.if.no.acl.found":                         "true",
		"super.users":                                            "User:admin",
	}})
	c.WaitForController()
	addr := func(id int32) string { a, _ := c.Broker(id).ListenerAddr("SASL_PLAINTEXT"); return a }
	b1, b2 := addr(1), addr(2)
	alice, bob, carol, admin := mechanism("PLAIN", "alice", "alice-secret"), mechanism("PLAIN", "bob", "bob-secret"),
		mechanism("PLAIN", "carol", "carol-secret"), mechanism("PLAIN", "admin", "admin-secret")

	if r := createToken(t, c.Addr(1), nil, "User"); r.ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code || r.PrincipalName != "ANONYMOUS" {
		t.Errorf("create on PLAINTEXT: %s %+v", kerr.ErrorForCode(r.ErrorCode), r)
	}
	if r := createToken(t, b1, alice, "Group", "g"); r.ErrorCode != kerr.InvalidPrincipalType.Code {
		t.Errorf("a Group renewer: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	created := createToken(t, b1, alice, "User", "bob")
	if created.ErrorCode != 0 {
		t.Fatalf("create: %s", kerr.ErrorForCode(created.ErrorCode))
	}
	id, h := created.TokenID, created.HMAC
	mac := hmac.New(sha512.New, []byte("master-secret"))
	mac.Write([]byte(id))
	if !hmac.Equal(h, mac.Sum(nil)) || len(id) != 22 {
		t.Errorf("token %q HMAC %x is not HMAC-SHA512 of the id with the master key", id, h)
	}
	if created.PrincipalType != "User" || created.PrincipalName != "alice" ||
		created.MaxTimestamp != created.IssueTimestamp+7*24*3600*1000 || created.ExpiryTimestamp != created.IssueTimestamp+24*3600*1000 {
		t.Errorf("created %+v", created)
	}
	data, _, err := c.ZooKeeper().Get(zkpaths.DelegationTokenPath(id))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"issueTimestamp":%d,"renewers":["User%%3Abob"],"tokenId":"%s","owner":"User%%3Aalice","expiryTimestamp":%d,"maxTimestamp":%d,"version":1}`,
		created.IssueTimestamp, id, created.ExpiryTimestamp, created.MaxTimestamp)
	if string(data) != want {
		t.Errorf("znode\n got %s\nwant %s", data, want)
	}

	// The token authenticates on broker 2 once notified; the client is alice.
	tok := tokenMech(id, h)
	wait.For(t, 10*time.Second, "broker 2 to accept the token", func() bool {
		cl, err := wire.DialSecure(context.Background(), b2, "t", wire.Security{SASL: tok})
		if err == nil {
			cl.Close()
		}
		return err == nil
	})
	produceAndConsume(t, []kgo.Opt{kgo.SeedBrokers(b2), kgo.SASL(tok), kgo.DefaultProduceTopic("tokens"), kgo.AllowAutoTopicCreation()}, "tokens", "with a token")
	if r := createToken(t, b2, tok, "User"); r.ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code || r.PrincipalName != "alice" {
		t.Errorf("create with a token: %s %+v", kerr.ErrorForCode(r.ErrorCode), r)
	}
	if r := renewToken(t, b2, tok, h, -1); r.ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code || r.ExpiryTimestamp != -1 {
		t.Errorf("renew with a token: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := describeTokens(t, b2, tok, nil); r.ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code {
		t.Errorf("describe with a token: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := expireToken(t, b2, tok, h, -1); r.ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code {
		t.Errorf("expire with a token: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	// A wrong HMAC as the password, and an unknown token id, fail.
	for _, m := range []sasl.Mechanism{tokenMech(id, h[1:]), tokenMech("no-such-token", h)} {
		if cl, err := wire.DialSecure(ctxT(t, 10*time.Second), b2, "t", wire.Security{SASL: m}); err == nil {
			cl.Close()
			t.Error("a bad token authenticated")
		}
	}

	// Renewals: bob renews, carol may not, an unknown HMAC is not found.
	before := time.Now().UnixMilli()
	if r := renewToken(t, b2, bob, h, 60000); r.ErrorCode != 0 || r.ExpiryTimestamp < before+60000 || r.ExpiryTimestamp > time.Now().UnixMilli()+60000 {
		t.Errorf("bob renews: %s %d", kerr.ErrorForCode(r.ErrorCode), r.ExpiryTimestamp)
	}
	if r := renewToken(t, b1, carol, h, -1); r.ErrorCode != kerr.DelegationTokenOwnerMismatch.Code || r.ExpiryTimestamp != -1 {
		t.Errorf("carol renews: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := expireToken(t, b1, carol, h, -1); r.ErrorCode != kerr.DelegationTokenOwnerMismatch.Code {
		t.Errorf("carol expires: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := renewToken(t, b1, alice, []byte("nope"), -1); r.ErrorCode != kerr.DelegationTokenNotFound.Code {
		t.Errorf("unknown HMAC: %s", kerr.ErrorForCode(r.ErrorCode))
	}

	// Describe: the owner and renewer see it, carol too while no ACL names
	// tokens, not once DESCRIBE is denied to her; the admin is a super user.
	describeIDs := func(addr string, m sasl.Mechanism, owners []string) []string {
		r := describeTokens(t, addr, m, owners)
		if r.ErrorCode != 0 {
			t.Fatalf("describe: %s", kerr.ErrorForCode(r.ErrorCode))
		}
		var ids []string
		for _, d := range r.TokenDetails {
			ids = append(ids, d.TokenID)
			if d.PrincipalName != "alice" || !hmac.Equal(d.HMAC, h) || len(d.Renewers) != 1 || d.Renewers[0].PrincipalName != "bob" {
				t.Errorf("described %+v", d)
			}
		}
		return ids
	}
	for name, m := range map[string]sasl.Mechanism{"alice": alice, "bob": bob, "carol": carol} {
		if got := describeIDs(b1, m, nil); len(got) != 1 || got[0] != id {
			t.Errorf("%s describes %v", name, got)
		}
	}
	if got := describeIDs(b1, alice, []string{"nobody"}); len(got) != 0 {
		t.Errorf("owners [nobody]: %v", got)
	}
	if got := describeIDs(b1, alice, []string{}); len(got) != 0 {
		t.Errorf("owners []: %v", got)
	}
	if got := describeIDs(b1, carol, []string{"bob"}); len(got) != 1 {
		t.Errorf("owners [bob], a renewer: %v", got)
	}
	acls := kmsg.NewPtrCreateACLsRequest()
	acls.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: kmsg.ACLResourceTypeDelegationToken, ResourceName: "*",
		ResourcePatternType: kmsg.ACLResourcePatternTypeLiteral, Principal: "User:carol", Host: "*",
		Operation: kmsg.ACLOperationDescribe, PermissionType: kmsg.ACLPermissionTypeDeny}}
	if r := raw(t, c.Addr(1), acls, 2).(*kmsg.CreateACLsResponse); r.Results[0].ErrorCode != 0 {
		t.Fatalf("create ACL: %s", kerr.ErrorForCode(r.Results[0].ErrorCode))
	}
	wait.For(t, 10*time.Second, "carol to be denied DESCRIBE", func() bool { return len(describeIDs(b1, carol, nil)) == 0 })
	if got := describeIDs(b1, admin, nil); len(got) != 1 {
		t.Errorf("the super user describes %v", got)
	}

	// Expiring at once removes the token from ZooKeeper and every broker.
	if r := expireToken(t, b1, alice, h, -1); r.ErrorCode != 0 || r.ExpiryTimestamp < before {
		t.Fatalf("expire: %s %d", kerr.ErrorForCode(r.ErrorCode), r.ExpiryTimestamp)
	}
	if ok, _, _ := c.ZooKeeper().Exists(zkpaths.DelegationTokenPath(id)); ok {
		t.Error("the expired token's znode remains")
	}
	if r := renewToken(t, b1, alice, h, -1); r.ErrorCode != kerr.DelegationTokenNotFound.Code {
		t.Errorf("renew an expired token: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	wait.For(t, 10*time.Second, "broker 2 to refuse the expired token", func() bool {
		cl, err := wire.DialSecure(context.Background(), b2, "t", wire.Security{SASL: tok})
		if err == nil {
			cl.Close()
		}
		return err != nil
	})

	// With connections.max.reauth.ms the token's expiry ends the session
	// sooner: the broker closes the connection at its first request after.
	third := createToken(t, b1, alice, "User")
	shortened := expireToken(t, b1, alice, third.HMAC, 1500)
	if shortened.ErrorCode != 0 {
		t.Fatalf("expire in 1.5 s: %s", kerr.ErrorForCode(shortened.ErrorCode))
	}
	sess, err := wire.DialSecure(ctxT(t, 10*time.Second), b1, "t", wire.Security{SASL: tokenMech(third.TokenID, third.HMAC)})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.RequestVersion(ctxT(t, 10*time.Second), kmsg.NewPtrMetadataRequest(), 9); err != nil {
		t.Fatalf("a request within the token's session: %v", err)
	}
	time.Sleep(time.Until(time.UnixMilli(shortened.ExpiryTimestamp).Add(300 * time.Millisecond)))
	if _, err := sess.RequestVersion(ctxT(t, 10*time.Second), kmsg.NewPtrMetadataRequest(), 9); err == nil {
		t.Error("the session outlived the token's expiry")
	}

	// A token whose expiry passed is DELEGATION_TOKEN_EXPIRED until the
	// expiry check removes it.
	second := createToken(t, b1, alice, "User")
	if r := expireToken(t, b1, alice, second.HMAC, 1); r.ErrorCode != 0 {
		t.Fatalf("expire in 1 ms: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	time.Sleep(5 * time.Millisecond)
	if r := renewToken(t, b1, alice, second.HMAC, -1); r.ErrorCode != kerr.DelegationTokenExpired.Code && r.ErrorCode != kerr.DelegationTokenNotFound.Code {
		t.Errorf("renew past expiry: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	wait.For(t, 10*time.Second, "the expiry check to remove the token", func() bool {
		ok, _, err := c.ZooKeeper().Exists(zkpaths.DelegationTokenPath(second.TokenID))
		return err == nil && !ok
	})
}

// TestDelegationTokensDisabled: without a master key every API answers
// DELEGATION_TOKEN_AUTH_DISABLED on a SASL connection.
func TestDelegationTokensDisabled(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": tokenJaas,
	}})
	a, _ := c.Broker(1).ListenerAddr("SASL_PLAINTEXT")
	alice := mechanism("PLAIN", "alice", "alice-secret")
	disabled := kerr.DelegationTokenAuthDisabled.Code
	if r := createToken(t, a, alice, "User"); r.ErrorCode != disabled || r.PrincipalName != "alice" || r.IssueTimestamp != -1 {
		t.Errorf("create: %s %+v", kerr.ErrorForCode(r.ErrorCode), r)
	}
	if r := renewToken(t, a, alice, []byte("x"), -1); r.ErrorCode != disabled {
		t.Errorf("renew: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := expireToken(t, a, alice, []byte("x"), -1); r.ErrorCode != disabled {
		t.Errorf("expire: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := describeTokens(t, a, alice, nil); r.ErrorCode != disabled {
		t.Errorf("describe: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	if ok, _, _ := c.ZooKeeper().Exists(zkpaths.DelegationTokens); ok {
		t.Error("/delegation_token/tokens created with tokens disabled")
	}
}
