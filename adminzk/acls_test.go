package adminzk_test

import (
	"testing"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/adminzk"
)

// TestACLZnodes holds the znodes an ACL change writes to Kafka 2.8's
// bytes: the resource znodes, their notifications, and the paths
// AclAuthorizer.configure creates.
func TestACLZnodes(t *testing.T) {
	admin, zkc, _ := newAdmin(t)
	store := admin.ACLStore()
	if err := store.CreatePaths(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/kafka-acl/Topic", "/kafka-acl/TransactionalId", "/kafka-acl/DelegationToken",
		"/kafka-acl-extended/prefixed/Group", "/kafka-acl-extended/prefixed/Cluster", "/kafka-acl-changes", "/kafka-acl-extended-changes"} {
		if !exists(t, zkc, p) {
			t.Errorf("%s was not created", p)
		}
	}
	a := acl.New(store, acl.Config{}, zap.NewNop())
	alice := acl.Entry{Principal: "User:alice", Host: "*", Operation: acl.OpRead, Permission: acl.Allow}
	deny := acl.Entry{Principal: "User:*", Host: "10.0.0.1", Operation: acl.OpClusterAction, Permission: acl.Deny}
	orders := acl.Resource{Type: acl.ResourceTopic, Name: "orders", Pattern: acl.PatternLiteral}
	app := acl.Resource{Type: acl.ResourceGroup, Name: "app-", Pattern: acl.PatternPrefixed}
	for _, err := range a.CreateACLs([]acl.Binding{{Resource: orders, Entry: alice}, {Resource: orders, Entry: deny}, {Resource: app, Entry: alice}}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"/kafka-acl/Topic/orders":                            `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},{"principal":"User:*","permissionType":"Deny","operation":"ClusterAction","host":"10.0.0.1"}]}`,
		"/kafka-acl-extended/prefixed/Group/app-":            `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}`,
		"/kafka-acl-changes/acl_changes_0000000000":          `TOPIC:orders`,
		"/kafka-acl-extended-changes/acl_changes_0000000000": `{"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"}`,
	} {
		if got := get(t, zkc, path); got != want {
			t.Errorf("%s:\n got %s\nwant %s", path, got, want)
		}
	}

	// A second authorizer (another broker) loads them, and a removal of
	// the last ACL deletes the znode and notifies again.
	b := acl.New(store, acl.Config{}, zap.NewNop())
	if err := b.Load(); err != nil {
		t.Fatal(err)
	}
	if got := b.ACLs(acl.Filter{Type: acl.ResourceAny, Pattern: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny}); len(got) != 3 {
		t.Fatalf("loaded %v", got)
	}
	name := "app-"
	res := b.DeleteACLs([]acl.Filter{{Type: acl.ResourceGroup, Name: &name, Pattern: acl.PatternPrefixed, Operation: acl.OpAny, Permission: acl.PermissionAny}})
	if len(res[0]) != 1 || res[0][0].Err != nil {
		t.Fatalf("delete: %v", res)
	}
	if exists(t, zkc, "/kafka-acl-extended/prefixed/Group/app-") {
		t.Error("the emptied resource znode is still there")
	}
	if got := get(t, zkc, "/kafka-acl-extended-changes/acl_changes_0000000001"); got != `{"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"}` {
		t.Errorf("second notification %s", got)
	}
	r, err := adminzk.DecodeACLChange("/kafka-acl-changes", []byte("TOPIC:orders"))
	if err != nil || r != orders {
		t.Errorf("decoded %v, %v", r, err)
	}
}
