package zkclient_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
)

// A broker authenticated with SASL DIGEST-MD5 and zookeeper.set.acl creates its znodes as Kafka
// 2.8 does: all rights to sasl:<its user>, read for everyone except where secrets live; a client
// without credentials reads what is public and writes nothing; a wrong password is refused at once.
func TestSASLDigestAndSecureACLs(t *testing.T) {
	server := zktest.Start(t, zktest.Options{SASLUsers: map[string]string{"kafka": "kafka-secret", "other": "x", "latin": "pässwörd"}})
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	secure, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect + "/kafka", Logger: zaptest.NewLogger(t),
		SASL: &zkclient.SASL{Username: "kafka", Password: "kafka-secret"}, SecureACLs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer secure.Close()
	if err := secure.CreateIfMissing("/brokers/topics/t", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := secure.CreateIfMissing("/config/users/alice", []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if _, err := secure.Create("/consumers", nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	owner := zk.ACL{Perms: zk.PermAll, Scheme: "sasl", ID: "kafka"}
	public := []zk.ACL{owner, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	open := zk.WorldACL(zk.PermAll)
	for path, want := range map[string][]zk.ACL{
		"/brokers": public, "/brokers/topics/t": public, "/config": public,
		"/config/users": {owner}, "/config/users/alice": {owner}, "/consumers": open,
	} {
		got, _, err := secure.ACL(path)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ACL of %s = %v, %v; want %v", path, got, err, want)
		}
	}

	anonymous, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect})
	if err != nil {
		t.Fatal(err)
	}
	defer anonymous.Close()
	if got, _, err := anonymous.ACL("/kafka"); err != nil || !slices.Equal(got, public) {
		t.Errorf("the chroot's ACL = %v, %v; want %v", got, err, public)
	}
	if data, _, err := anonymous.Get("/kafka/brokers/topics/t"); err != nil || string(data) != "{}" {
		t.Errorf("anonymous read of a public znode: %q, %v", data, err)
	}
	if _, err := anonymous.Set("/kafka/brokers/topics/t", []byte("x"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous write: %v, want %v", err, zk.ErrNoAuth)
	}
	if _, _, err := anonymous.Get("/kafka/config/users/alice"); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous read of a credential: %v, want %v", err, zk.ErrNoAuth)
	}
	other, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect, SASL: &zkclient.SASL{Username: "other", Password: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Delete("/kafka/brokers/topics/t", -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("another user's delete: %v, want %v", err, zk.ErrNoAuth)
	}

	// RFC 2831 hashes credentials in ISO 8859-1 when they fit in it, as Java does.
	latin, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect, SASL: &zkclient.SASL{Username: "latin", Password: "pässwörd"}})
	if err != nil {
		t.Fatalf("a Latin-1 password: %v", err)
	}
	latin.Close()

	// ZooKeeper keeps a login per connection: after a reconnect the session must log in again.
	r := newRelay(t, server.Connect)
	relayed, err := zkclient.Connect(ctx, zkclient.Config{Connect: r.addr, SASL: &zkclient.SASL{Username: "kafka", Password: "kafka-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer relayed.Close()
	id := relayed.SessionID()
	r.drop()
	if _, err := relayed.Set("/kafka/brokers/topics/t", []byte("after reconnect"), -1); err != nil || relayed.SessionID() != id {
		t.Errorf("a write after a reconnect in session 0x%x (was 0x%x): %v", relayed.SessionID(), id, err)
	}

	for name, cfg := range map[string]zkclient.Config{
		"a wrong password":      {Connect: server.Connect, SASL: &zkclient.SASL{Username: "kafka", Password: "wrong"}},
		"a server without SASL": {Connect: zktest.SharedServer(t).Addr(), SASL: &zkclient.SASL{Username: "kafka", Password: "kafka-secret"}},
	} {
		start := time.Now()
		if _, err := zkclient.Connect(ctx, cfg); !errors.Is(err, zkclient.ErrSASLAuthFailed) {
			t.Errorf("%s: %v, want %v", name, err, zkclient.ErrSASLAuthFailed)
		}
		if took := time.Since(start); took > waitTimeout/2 {
			t.Errorf("%s was refused after %v, not at once", name, took)
		}
	}
}

func TestDefaultACL(t *testing.T) {
	creator := zk.AuthACL(zk.PermAll)
	public := append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
	for _, tc := range []struct {
		secure bool
		path   string
		want   []zk.ACL
	}{
		{false, "/config/users/alice", zk.WorldACL(zk.PermAll)},
		{true, "/", public},
		{true, "/controller", public},
		{true, "/consumers", zk.WorldACL(zk.PermAll)},
		{true, "/consumers/g/ids", public},
		{true, "/config/users", creator},
		{true, "/config/brokers/1", creator},
		{true, "/config/topics/t", public},
		{true, "/delegation_token/tokens/x", creator},
		{true, "/delegation_token/token_changes", public},
	} {
		if got := zkclient.DefaultACL(tc.secure, tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("DefaultACL(%v, %s) = %v, want %v", tc.secure, tc.path, got, tc.want)
		}
	}
}
