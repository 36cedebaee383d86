package acl

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Versioned is one resource's ACLs as stored, with the version of the
// stored copy: NoVersion when nothing is stored.
type Versioned struct {
	Entries []Entry
	Version int32
}

// NoVersion is the version of a resource with no stored ACLs.
const NoVersion int32 = -1

// Store keeps the ACLs of every resource pattern: ZooKeeper in a broker,
// a map in tests. Writes are conditional on the version read, as Kafka's
// KafkaZkClient does them, so two writers never lose each other's ACLs.
type Store interface {
	// Resources lists every resource pattern with stored ACLs.
	Resources() ([]Resource, error)
	// Get reads one resource's ACLs; absent, it answers NoVersion.
	Get(r Resource) (Versioned, error)
	// Create stores the first ACLs of a resource, false if some exist.
	Create(r Resource, entries []Entry) (bool, error)
	// Set replaces the ACLs stored at version, false if the version moved
	// on; it returns the new version.
	Set(r Resource, entries []Entry, version int32) (bool, int32, error)
	// Delete removes the resource's ACLs stored at version, false if the
	// version moved on; nothing stored counts as deleted.
	Delete(r Resource, version int32) (bool, error)
	// Notify tells every broker that the resource's ACLs changed.
	Notify(r Resource) error
}

// maxUpdateRetries is how often a conditional update is retried after
// losing a race, as Kafka's AclAuthorizer.
const maxUpdateRetries = 10

// Config is the AclAuthorizer's configuration.
type Config struct {
	// SuperUsers may do everything (super.users).
	SuperUsers []kafka.Principal
	// AllowEveryoneIfNoACL allows an operation on a resource that no ACL
	// matches (allow.everyone.if.no.acl.found).
	AllowEveryoneIfNoACL bool
}

// ParseSuperUsers reads super.users: principals separated by semicolons.
func ParseSuperUsers(s string) ([]kafka.Principal, error) {
	if s == "" {
		return nil, nil
	}
	var out []kafka.Principal
	for _, p := range strings.Split(s, ";") {
		pr, err := kafka.ParsePrincipal(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

// Authorizer is Kafka's AclAuthorizer: it decides each request's
// operations from a cache of every ACL, and writes ACL changes to its
// store. Requests read the cache through one atomic pointer to an
// immutable snapshot; a change copies the snapshot (ACL changes are rare,
// checks are on every request).
type Authorizer struct {
	store      Store
	log        *zap.Logger
	superUsers map[kafka.Principal]bool
	allowIfNo  bool

	cache atomic.Pointer[map[Resource]Versioned]
	// mu orders the writers of store and cache: the ACL APIs and change
	// notifications (Kafka's lock), never a request's check.
	mu sync.Mutex
}

// New returns an authorizer with an empty cache; Load fills it.
func New(store Store, cfg Config, log *zap.Logger) *Authorizer {
	a := &Authorizer{store: store, log: log, allowIfNo: cfg.AllowEveryoneIfNoACL, superUsers: map[kafka.Principal]bool{}}
	for _, p := range cfg.SuperUsers {
		a.superUsers[p] = true
	}
	empty := map[Resource]Versioned{}
	a.cache.Store(&empty)
	return a
}

// Load reads every stored ACL into the cache (AclAuthorizer.loadCache).
func (a *Authorizer) Load() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	resources, err := a.store.Resources()
	if err != nil {
		return err
	}
	all := make(map[Resource]Versioned, len(resources))
	for _, r := range resources {
		v, err := a.store.Get(r)
		if err != nil {
			return err
		}
		if len(v.Entries) > 0 {
			all[r] = v
		}
	}
	a.cache.Store(&all)
	return nil
}

// Refresh re-reads one resource's ACLs after a change notification.
func (a *Authorizer) Refresh(r Resource) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, err := a.store.Get(r)
	if err != nil {
		return err
	}
	a.updateCache(r, v)
	a.log.Info("Processed ACL change notification", zap.Stringer("resource", r), zap.Int("acls", len(v.Entries)))
	return nil
}

// updateCache replaces one resource in a copy of the cache; mu is held.
func (a *Authorizer) updateCache(r Resource, v Versioned) {
	next := maps.Clone(*a.cache.Load())
	if len(v.Entries) == 0 {
		delete(next, r)
	} else {
		next[r] = v
	}
	a.cache.Store(&next)
}

// IsSuperUser reports whether p is one of super.users.
func (a *Authorizer) IsSuperUser(p kafka.Principal) bool { return a.superUsers[p] }

// Authorize decides whether p, connected from host (an IP address), may
// perform op on the named resource (AclAuthorizer.authorizeAction): a
// super user may; otherwise, with no ACL on the resource,
// allow.everyone.if.no.acl.found decides; otherwise a matching Deny
// refuses and a matching Allow — of op or an operation implying it —
// allows.
func (a *Authorizer) Authorize(p kafka.Principal, host string, op Operation, typ ResourceType, name string) bool {
	if a.superUsers[p] {
		return true
	}
	acls := a.matching(typ, name)
	if len(acls) == 0 {
		return a.allowIfNo
	}
	principal := p.String()
	if matchingExists(acls, principal, host, op, Deny) {
		return false
	}
	for _, implied := range impliedBy(op) {
		if matchingExists(acls, principal, host, implied, Allow) {
			return true
		}
	}
	return false
}

// impliedBy lists the operations whose Allow allows op: DESCRIBE is
// implied by READ, WRITE, DELETE and ALTER, DESCRIBE_CONFIGS by
// ALTER_CONFIGS (AclOperation's documented inheritance).
func impliedBy(op Operation) []Operation {
	switch op {
	case OpDescribe:
		return []Operation{OpDescribe, OpRead, OpWrite, OpDelete, OpAlter}
	case OpDescribeConfigs:
		return []Operation{OpDescribeConfigs, OpAlterConfigs}
	}
	return []Operation{op}
}

// matching gathers the entries of the wildcard, the literal name and every
// stored prefix of the name.
func (a *Authorizer) matching(typ ResourceType, name string) []Entry {
	cache := *a.cache.Load()
	var out []Entry
	out = append(out, cache[Resource{typ, WildcardResource, PatternLiteral}].Entries...)
	if name != WildcardResource {
		out = append(out, cache[Resource{typ, name, PatternLiteral}].Entries...)
	}
	for i := 1; i <= len(name); i++ {
		out = append(out, cache[Resource{typ, name[:i], PatternPrefixed}].Entries...)
	}
	return out
}

func matchingExists(acls []Entry, principal, host string, op Operation, perm Permission) bool {
	for _, e := range acls {
		if e.Permission == perm && (e.Principal == principal || e.Principal == WildcardPrincipal) &&
			(e.Operation == op || e.Operation == OpAll) && (e.Host == host || e.Host == WildcardHost) {
			return true
		}
	}
	return false
}

// AuthorizeByResourceType decides whether p may perform op on at least one
// resource of the type (Kafka's authorizeByResourceType, which
// InitProducerId asks about topics): some Allow matches and no Deny
// dominates it — a denied literal name, or a denied prefix of the allowed
// name or prefix; a Deny on the wildcard refuses everything.
func (a *Authorizer) AuthorizeByResourceType(p kafka.Principal, host string, op Operation, typ ResourceType) bool {
	if a.superUsers[p] {
		return true
	}
	principal := p.String()
	var denyLiterals, denyPrefixes, allowLiterals, allowPrefixes []string
	for r, v := range *a.cache.Load() {
		if r.Type != typ {
			continue
		}
		for _, e := range v.Entries {
			if (e.Principal != principal && e.Principal != WildcardPrincipal) ||
				(e.Host != host && e.Host != WildcardHost) || (e.Operation != op && e.Operation != OpAll) {
				continue
			}
			switch {
			case e.Permission == Deny && r.Pattern == PatternLiteral:
				denyLiterals = append(denyLiterals, r.Name)
			case e.Permission == Deny:
				denyPrefixes = append(denyPrefixes, r.Name)
			case r.Pattern == PatternLiteral:
				allowLiterals = append(allowLiterals, r.Name)
			default:
				allowPrefixes = append(allowPrefixes, r.Name)
			}
		}
	}
	if slices.Contains(denyLiterals, WildcardResource) {
		return false
	}
	if a.allowIfNo {
		return true
	}
	dominated := func(name string) bool {
		return slices.ContainsFunc(denyPrefixes, func(d string) bool { return strings.HasPrefix(name, d) })
	}
	for _, pre := range allowPrefixes {
		if !dominated(pre) {
			return true
		}
	}
	for _, lit := range allowLiterals {
		if lit == WildcardResource || (!slices.Contains(denyLiterals, lit) && !dominated(lit)) {
			return true
		}
	}
	return false
}

// SupportedOperations are the operations each resource type has
// (AclEntry.supportedOperations), in Kafka's order.
var SupportedOperations = map[ResourceType][]Operation{
	ResourceTopic:           {OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs},
	ResourceGroup:           {OpRead, OpDescribe, OpDelete},
	ResourceCluster:         {OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe},
	ResourceTransactionalID: {OpDescribe, OpWrite},
	ResourceDelegationToken: {OpDescribe},
}

// AuthorizedOperations is the bit field of the supported operations p
// may perform on the resource (KIP-430's authorized operations).
func (a *Authorizer) AuthorizedOperations(p kafka.Principal, host string, typ ResourceType, name string) int32 {
	var f int32
	for _, op := range SupportedOperations[typ] {
		if a.Authorize(p, host, op, typ, name) {
			f |= 1 << op
		}
	}
	return f
}

// ACLs lists the cached bindings the filter matches (Authorizer.acls).
func (a *Authorizer) ACLs(f Filter) []Binding {
	var out []Binding
	for r, v := range *a.cache.Load() {
		if !f.MatchesResource(r) {
			continue
		}
		for _, e := range v.Entries {
			if f.MatchesEntry(e) {
				out = append(out, Binding{r, e})
			}
		}
	}
	sortBindings(out)
	return out
}

func sortBindings(bs []Binding) {
	slices.SortFunc(bs, func(x, y Binding) int {
		return strings.Compare(x.Resource.String()+x.Entry.String(), y.Resource.String()+y.Entry.String())
	})
}

// CreateACLs stores the bindings, one error (or nil) per binding
// (AclAuthorizer.createAcls): bindings on one resource are added in one
// conditional update.
func (a *Authorizer) CreateACLs(bindings []Binding) []error {
	errs := make([]error, len(bindings))
	byResource := map[Resource][]int{}
	var order []Resource
	for i, b := range bindings {
		if b.unknown() {
			errs[i] = fmt.Errorf("%w: Failed to create ACL: ACL binding contains unknown elements", ErrInvalidBinding)
			continue
		}
		if _, ok := byResource[b.Resource]; !ok {
			order = append(order, b.Resource)
		}
		byResource[b.Resource] = append(byResource[b.Resource], i)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range order {
		idx := byResource[r]
		err := a.updateResource(r, func(cur []Entry) []Entry {
			next := slices.Clone(cur)
			for _, i := range idx {
				if !slices.Contains(next, bindings[i].Entry) {
					next = append(next, bindings[i].Entry)
				}
			}
			return next
		})
		for _, i := range idx {
			errs[i] = err
		}
	}
	return errs
}

// Deleted is one binding a DeleteACLs filter matched, with the error that
// kept it (nil when it was deleted).
type Deleted struct {
	Binding Binding
	Err     error
}

// DeleteACLs removes the bindings each filter matches, returning them per
// filter (AclAuthorizer.deleteAcls); a binding matched by several filters
// is reported under the first.
func (a *Authorizer) DeleteACLs(filters []Filter) [][]Deleted {
	out := make([][]Deleted, len(filters))
	a.mu.Lock()
	defer a.mu.Unlock()
	resources := slices.Collect(maps.Keys(*a.cache.Load()))
	for _, f := range filters {
		if r, ok := f.exactResource(); ok && !slices.Contains(resources, r) {
			resources = append(resources, r)
		}
	}
	slices.SortFunc(resources, func(x, y Resource) int { return strings.Compare(x.String(), y.String()) })
	for _, r := range resources {
		var matching []int
		for i, f := range filters {
			if f.MatchesResource(r) {
				matching = append(matching, i)
			}
		}
		if len(matching) == 0 {
			continue
		}
		var removed []Deleted
		var removedBy []int
		err := a.updateResource(r, func(cur []Entry) []Entry {
			removed, removedBy = nil, nil
			var keep []Entry
			for _, e := range cur {
				i := slices.IndexFunc(matching, func(i int) bool { return filters[i].MatchesEntry(e) })
				if i < 0 {
					keep = append(keep, e)
					continue
				}
				removed = append(removed, Deleted{Binding: Binding{r, e}})
				removedBy = append(removedBy, matching[i])
			}
			return keep
		})
		for j, d := range removed {
			d.Err = err
			out[removedBy[j]] = append(out[removedBy[j]], d)
		}
	}
	return out
}

// updateResource applies change to the resource's ACLs in the store,
// conditionally on the version read, re-reading and retrying when another
// writer got there first (updateResourceAcls); then the cache and a change
// notification follow. mu is held.
func (a *Authorizer) updateResource(r Resource, change func([]Entry) []Entry) error {
	cur, cached := (*a.cache.Load())[r]
	if !cached {
		var err error
		if cur, err = a.store.Get(r); err != nil {
			return err
		}
	}
	for retry := 0; ; retry++ {
		next := change(cur.Entries)
		var ok bool
		var version int32
		var err error
		switch {
		case len(next) == 0 && cur.Version == NoVersion:
			ok, version = true, NoVersion // nothing stored, nothing to delete
		case len(next) == 0:
			ok, err = a.store.Delete(r, cur.Version)
			version = NoVersion
		case cur.Version == NoVersion:
			ok, err = a.store.Create(r, next)
		default:
			ok, version, err = a.store.Set(r, next, cur.Version)
		}
		if err != nil {
			return err
		}
		if ok {
			a.updateCache(r, Versioned{next, version})
			if sameEntries(cur.Entries, next) {
				return nil
			}
			a.log.Info("Updated ACLs", zap.Stringer("resource", r), zap.Int32("version", version))
			return a.store.Notify(r)
		}
		if retry == maxUpdateRetries {
			return fmt.Errorf("%w: Failed to update ACLs for %s after trying a maximum of %d times", ErrTooManyRetries, r, maxUpdateRetries)
		}
		time.Sleep(time.Duration(5+rand.IntN(45)) * time.Millisecond)
		if cur, err = a.store.Get(r); err != nil {
			return err
		}
	}
}

func sameEntries(x, y []Entry) bool {
	return len(x) == len(y) && !slices.ContainsFunc(x, func(e Entry) bool { return !slices.Contains(y, e) })
}
