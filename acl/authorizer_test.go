package acl

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// memStore is a Store in memory; raceOnce makes the next conditional write
// lose to another writer, as a concurrent broker would.
type memStore struct {
	mu       sync.Mutex
	acls     map[Resource]Versioned
	notified []Resource
	raceOnce func(*memStore)
}

func newMemStore() *memStore { return &memStore{acls: map[Resource]Versioned{}} }

func (m *memStore) Resources() ([]Resource, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Resource
	for r := range m.acls {
		out = append(out, r)
	}
	return out, nil
}

func (m *memStore) Get(r Resource) (Versioned, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.acls[r]; ok {
		return Versioned{slices.Clone(v.Entries), v.Version}, nil
	}
	return Versioned{Version: NoVersion}, nil
}

func (m *memStore) race() {
	if f := m.raceOnce; f != nil {
		m.raceOnce = nil
		f(m)
	}
}

func (m *memStore) Create(r Resource, e []Entry) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.race()
	if _, ok := m.acls[r]; ok {
		return false, nil
	}
	m.acls[r] = Versioned{slices.Clone(e), 0}
	return true, nil
}

func (m *memStore) Set(r Resource, e []Entry, version int32) (bool, int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.race()
	if v, ok := m.acls[r]; !ok || v.Version != version {
		return false, 0, nil
	}
	m.acls[r] = Versioned{slices.Clone(e), version + 1}
	return true, version + 1, nil
}

func (m *memStore) Delete(r Resource, version int32) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.race()
	if v, ok := m.acls[r]; ok && version != NoVersion && v.Version != version {
		return false, nil
	}
	delete(m.acls, r)
	return true, nil
}

func (m *memStore) Notify(r Resource) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notified = append(m.notified, r)
	return nil
}

var (
	alice = kafka.Principal{Type: "User", Name: "alice"}
	bob   = kafka.Principal{Type: "User", Name: "bob"}
)

func topic(name string) Resource    { return Resource{ResourceTopic, name, PatternLiteral} }
func prefixed(name string) Resource { return Resource{ResourceTopic, name, PatternPrefixed} }

func entry(p kafka.Principal, op Operation, perm Permission) Entry {
	return Entry{Principal: p.String(), Host: WildcardHost, Operation: op, Permission: perm}
}

func newAuthorizer(t *testing.T, cfg Config, bindings ...Binding) (*Authorizer, *memStore) {
	t.Helper()
	st := newMemStore()
	a := New(st, cfg, zap.NewNop())
	for i, err := range a.CreateACLs(bindings) {
		if err != nil {
			t.Fatalf("create %v: %v", bindings[i], err)
		}
	}
	return a, st
}

func TestAuthorize(t *testing.T) {
	a, _ := newAuthorizer(t, Config{SuperUsers: []kafka.Principal{{Type: "User", Name: "admin"}}},
		Binding{topic("orders"), entry(alice, OpRead, Allow)},
		Binding{prefixed("pay-"), entry(alice, OpWrite, Allow)},
		Binding{prefixed("pay-secret"), entry(alice, OpWrite, Deny)},
		Binding{topic("*"), entry(bob, OpDescribeConfigs, Allow)},
		Binding{topic("logs"), Entry{Principal: WildcardPrincipal, Host: "10.0.0.1", Operation: OpAll, Permission: Allow}},
		Binding{topic("audit"), entry(alice, OpAlterConfigs, Allow)},
		Binding{topic("audit"), entry(alice, OpDescribe, Deny)},
	)
	for _, c := range []struct {
		p    kafka.Principal
		host string
		op   Operation
		name string
		want bool
	}{
		{alice, "1.2.3.4", OpRead, "orders", true},
		{alice, "1.2.3.4", OpDescribe, "orders", true}, // implied by READ
		{alice, "1.2.3.4", OpWrite, "orders", false},
		{bob, "1.2.3.4", OpRead, "orders", false},
		{alice, "1.2.3.4", OpWrite, "pay-in", true}, // prefixed
		{alice, "1.2.3.4", OpWrite, "pay-secrets", false},
		{alice, "1.2.3.4", OpDescribe, "pay-secrets", true}, // deny of WRITE does not deny the DESCRIBE it implies
		{alice, "1.2.3.4", OpWrite, "pa", false},
		{bob, "1.2.3.4", OpDescribeConfigs, "anything", true}, // wildcard name
		{bob, "1.2.3.4", OpAlterConfigs, "anything", false},
		{bob, "10.0.0.1", OpDelete, "logs", true}, // ALL, wildcard principal, host
		{bob, "10.0.0.2", OpDelete, "logs", false},
		{alice, "1.2.3.4", OpDescribeConfigs, "audit", true}, // implied by ALTER_CONFIGS
		{alice, "1.2.3.4", OpDescribe, "audit", false},
		{kafka.Principal{Type: "User", Name: "admin"}, "1.2.3.4", OpDelete, "nothing", true},
		{alice, "1.2.3.4", OpRead, "no-acls", false},
	} {
		if got := a.Authorize(c.p, c.host, c.op, ResourceTopic, c.name); got != c.want {
			t.Errorf("%s from %s %s on %s: %v, want %v", c.p, c.host, c.op, c.name, got, c.want)
		}
	}
	if a.Authorize(alice, "1.2.3.4", OpRead, ResourceGroup, "orders") {
		t.Error("a topic's ACL allowed the group of the same name")
	}
}

func TestAllowEveryoneIfNoACLFound(t *testing.T) {
	a, _ := newAuthorizer(t, Config{AllowEveryoneIfNoACL: true}, Binding{topic("guarded"), entry(alice, OpRead, Allow)})
	if !a.Authorize(bob, "1.2.3.4", OpWrite, ResourceTopic, "open") {
		t.Error("no ACL: refused despite allow.everyone.if.no.acl.found")
	}
	if a.Authorize(bob, "1.2.3.4", OpRead, ResourceTopic, "guarded") {
		t.Error("an ACL exists: allowed a principal it does not name")
	}
}

func TestAuthorizeByResourceType(t *testing.T) {
	for _, c := range []struct {
		name     string
		bindings []Binding
		want     bool
	}{
		{"none", nil, false},
		{"literal allow", []Binding{{topic("t"), entry(alice, OpWrite, Allow)}}, true},
		{"literal allow denied", []Binding{{topic("t"), entry(alice, OpWrite, Allow)}, {topic("t"), entry(alice, OpWrite, Deny)}}, false},
		{"denied by a prefix", []Binding{{topic("t1"), entry(alice, OpWrite, Allow)}, {prefixed("t"), entry(alice, OpWrite, Deny)}}, false},
		{"prefix allow", []Binding{{prefixed("a"), entry(alice, OpAll, Allow)}, {topic("b"), entry(alice, OpWrite, Deny)}}, true},
		{"wildcard deny", []Binding{{prefixed("a"), entry(alice, OpWrite, Allow)}, {topic("*"), entry(alice, OpWrite, Deny)}}, false},
		{"other principal", []Binding{{topic("t"), entry(bob, OpWrite, Allow)}}, false},
	} {
		a, _ := newAuthorizer(t, Config{}, c.bindings...)
		if got := a.AuthorizeByResourceType(alice, "1.2.3.4", OpWrite, ResourceTopic); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAuthorizedOperations(t *testing.T) {
	a, _ := newAuthorizer(t, Config{}, Binding{Resource{ResourceGroup, "g", PatternLiteral}, entry(alice, OpRead, Allow)})
	want := int32(1<<OpRead | 1<<OpDescribe)
	if got := a.AuthorizedOperations(alice, "h", ResourceGroup, "g"); got != want {
		t.Errorf("authorized operations %b, want %b", got, want)
	}
}

func TestCreateDeleteAndNotifications(t *testing.T) {
	a, st := newAuthorizer(t, Config{}, Binding{topic("t"), entry(alice, OpRead, Allow)}, Binding{topic("t"), entry(bob, OpRead, Allow)},
		Binding{prefixed("t"), entry(alice, OpWrite, Allow)})
	if !reflect.DeepEqual(st.notified, []Resource{topic("t"), prefixed("t")}) {
		t.Errorf("notifications %v", st.notified)
	}
	// A binding that exists already changes nothing and notifies nobody.
	st.notified = nil
	if errs := a.CreateACLs([]Binding{{topic("t"), entry(alice, OpRead, Allow)}}); errs[0] != nil || st.notified != nil {
		t.Errorf("re-create: %v, notified %v", errs, st.notified)
	}
	errs := a.CreateACLs([]Binding{{Resource{ResourceTopic, "x", PatternMatch}, entry(alice, OpRead, Allow)}, {topic("x"), entry(alice, OpAny, Allow)}})
	for _, err := range errs {
		if err == nil {
			t.Error("a filter-only element was accepted in a binding")
		}
	}
	name := "t1"
	res := a.DeleteACLs([]Filter{
		{Type: ResourceTopic, Name: &name, Pattern: PatternMatch, Operation: OpWrite, Permission: PermissionAny},
		{Type: ResourceAny, Pattern: PatternAny, Principal: ptr(bob.String()), Operation: OpAny, Permission: PermissionAny},
	})
	want := [][]Deleted{{{Binding: Binding{prefixed("t"), entry(alice, OpWrite, Allow)}}}, {{Binding: Binding{topic("t"), entry(bob, OpRead, Allow)}}}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("deleted %v, want %v", res, want)
	}
	if _, ok := st.acls[prefixed("t")]; ok {
		t.Error("the emptied prefixed resource is still stored")
	}
	if got := a.ACLs(Filter{Type: ResourceAny, Pattern: PatternAny, Operation: OpAny, Permission: PermissionAny}); !reflect.DeepEqual(got, []Binding{{topic("t"), entry(alice, OpRead, Allow)}}) {
		t.Errorf("left %v", got)
	}
}

func TestConditionalUpdateRetries(t *testing.T) {
	a, st := newAuthorizer(t, Config{}, Binding{topic("t"), entry(alice, OpRead, Allow)})
	// Another broker adds bob's ACL between this authorizer's read and write.
	st.raceOnce = func(m *memStore) {
		v := m.acls[topic("t")]
		m.acls[topic("t")] = Versioned{append(slices.Clone(v.Entries), entry(bob, OpRead, Allow)), v.Version + 1}
	}
	if errs := a.CreateACLs([]Binding{{topic("t"), entry(alice, OpWrite, Allow)}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	got := st.acls[topic("t")]
	if len(got.Entries) != 3 || got.Version != 2 {
		t.Errorf("stored %v: the other writer's ACL was lost or the retry did not happen", got)
	}
	if !a.Authorize(bob, "h", OpRead, ResourceTopic, "t") {
		t.Error("the cache missed the other writer's ACL read on retry")
	}
}

func TestRefreshAndLoad(t *testing.T) {
	a, st := newAuthorizer(t, Config{})
	st.acls[topic("t")] = Versioned{[]Entry{entry(alice, OpRead, Allow)}, 0}
	if a.Authorize(alice, "h", OpRead, ResourceTopic, "t") {
		t.Fatal("allowed before the notification")
	}
	if err := a.Refresh(topic("t")); err != nil {
		t.Fatal(err)
	}
	if !a.Authorize(alice, "h", OpRead, ResourceTopic, "t") {
		t.Error("refused after the notification")
	}
	b := New(st, Config{}, zap.NewNop())
	if err := b.Load(); err != nil {
		t.Fatal(err)
	}
	if !b.Authorize(alice, "h", OpRead, ResourceTopic, "t") {
		t.Error("Load missed a stored ACL")
	}
}

func TestFilterMatchesResource(t *testing.T) {
	name := "foo-bar"
	for _, c := range []struct {
		f    Filter
		r    Resource
		want bool
	}{
		{Filter{Type: ResourceTopic, Name: &name, Pattern: PatternMatch}, topic("foo-bar"), true},
		{Filter{Type: ResourceTopic, Name: &name, Pattern: PatternMatch}, topic("*"), true},
		{Filter{Type: ResourceTopic, Name: &name, Pattern: PatternMatch}, prefixed("foo"), true},
		{Filter{Type: ResourceTopic, Name: &name, Pattern: PatternMatch}, prefixed("bar"), false},
		{Filter{Type: ResourceTopic, Name: &name, Pattern: PatternAny}, topic("*"), false},
		{Filter{Type: ResourceTopic, Name: &name, Pattern: PatternLiteral}, prefixed("foo-bar"), false},
		{Filter{Type: ResourceAny, Pattern: PatternAny}, Resource{ResourceGroup, "g", PatternPrefixed}, true},
	} {
		if got := c.f.MatchesResource(c.r); got != c.want {
			t.Errorf("%+v matches %v: %v, want %v", c.f, c.r, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	got := fmt.Sprintln(ResourceTransactionalID.ZkName(), OpClusterAction.ZkName(), Allow.ZkName(), topic("t"), entry(alice, OpRead, Allow))
	want := "TransactionalId ClusterAction Allow ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL) (principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, s := range []string{"TransactionalId", "transactional_id", "TRANSACTIONAL_ID"} {
		if r, err := ParseResourceType(s); err != nil || r != ResourceTransactionalID {
			t.Errorf("%s: %v %v", s, r, err)
		}
	}
	if _, err := ParseOperation("Fly"); err == nil {
		t.Error("parsed an unknown operation")
	}
}

func ptr[T any](v T) *T { return &v }
