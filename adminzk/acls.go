package adminzk

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/zkpaths"
)

// ACLStore is the acl.Store on ZooKeeper, Kafka's ZkAclStore through
// KafkaZkClient: one znode per resource pattern, written conditionally on
// its version, and a sequential notification per change.
type ACLStore struct{ c *Client }

// ACLStore returns the ZooKeeper store of ACLs on this client's session.
func (c *Client) ACLStore() *ACLStore { return &ACLStore{c} }

var _ acl.Store = (*ACLStore)(nil)

// storedPatterns are the pattern types with a store (PatternType.isSpecific).
var storedPatterns = []acl.PatternType{acl.PatternLiteral, acl.PatternPrefixed}

// CreatePaths creates the stores and change paths when missing, as
// AclAuthorizer.configure does (createAclPaths).
func (s *ACLStore) CreatePaths() error {
	var types []string
	for _, t := range acl.ResourceTypes {
		types = append(types, t.ZkName())
	}
	for _, p := range zkpaths.ACLPaths(types) {
		if err := s.c.zk.CreateIfMissing(p, nil); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return nil
}

func resourcePath(r acl.Resource) string {
	return zkpaths.ACLResourcePath(r.Pattern.String(), r.Type.ZkName(), r.Name)
}

// Resources lists every resource znode of both stores; a child of a store
// that is not a resource type is skipped, as Kafka's loadCache warns and
// skips it.
func (s *ACLStore) Resources() ([]acl.Resource, error) {
	var out []acl.Resource
	for _, pattern := range storedPatterns {
		store := zkpaths.ACLStorePath(pattern.String())
		types, err := s.c.children(store)
		if err != nil {
			return nil, err
		}
		for _, t := range types {
			typ, err := acl.ParseResourceType(t)
			if err != nil || typ <= acl.ResourceAny {
				s.c.log.Warn("Ignoring unknown ResourceType", zap.String("path", store+"/"+t))
				continue
			}
			names, err := s.c.children(store + "/" + t)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				out = append(out, acl.Resource{Type: typ, Name: n, Pattern: pattern})
			}
		}
	}
	return out, nil
}

// Get reads one resource's ACLs. An entry whose names Kafka does not know
// makes the znode unreadable, as it does for Kafka.
func (s *ACLStore) Get(r acl.Resource) (acl.Versioned, error) {
	p := resourcePath(r)
	data, stat, err := s.c.zk.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return acl.Versioned{Version: acl.NoVersion}, nil
	}
	if err != nil {
		return acl.Versioned{}, fmt.Errorf("read %s: %w", p, err)
	}
	d, err := zkpaths.DecodeACLData(data)
	if err != nil {
		return acl.Versioned{}, fmt.Errorf("read %s: %w", p, err)
	}
	v := acl.Versioned{Version: stat.Version}
	for _, e := range d.ACLs {
		op, err := acl.ParseOperation(e.Operation)
		if err != nil {
			return acl.Versioned{}, fmt.Errorf("read %s: %w", p, err)
		}
		perm, err := acl.ParsePermission(e.PermissionType)
		if err != nil {
			return acl.Versioned{}, fmt.Errorf("read %s: %w", p, err)
		}
		v.Entries = append(v.Entries, acl.Entry{Principal: e.Principal, Host: e.Host, Operation: op, Permission: perm})
	}
	return v, nil
}

func encodeACLs(entries []acl.Entry) []byte {
	var d zkpaths.ACLData
	for _, e := range entries {
		d.ACLs = append(d.ACLs, zkpaths.ACLEntryData{Principal: e.Principal, PermissionType: e.Permission.ZkName(), Operation: e.Operation.ZkName(), Host: e.Host})
	}
	return d.Encode()
}

// Create writes a resource's first ACLs (createAclsForResourceIfNotExists).
func (s *ACLStore) Create(r acl.Resource, entries []acl.Entry) (bool, error) {
	_, err := s.c.create(resourcePath(r), encodeACLs(entries), 0)
	if errors.Is(err, zk.ErrNodeExists) {
		return false, nil
	}
	return err == nil, err
}

// Set replaces a resource's ACLs at version (conditionalSetAclsForResource).
func (s *ACLStore) Set(r acl.Resource, entries []acl.Entry, version int32) (bool, int32, error) {
	stat, err := s.c.zk.Set(resourcePath(r), encodeACLs(entries), version)
	if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	return true, stat.Version, nil
}

// Delete removes a resource znode at version (conditionalDelete).
func (s *ACLStore) Delete(r acl.Resource, version int32) (bool, error) {
	err := s.c.zk.Delete(resourcePath(r), version)
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		return false, nil
	case err == nil || errors.Is(err, zk.ErrNoNode):
		return true, nil
	}
	return false, err
}

// Notify creates the change notification of the resource's store
// (createAclChangeNotification).
func (s *ACLStore) Notify(r acl.Resource) error {
	change := zkpaths.ACLChange{ResourceType: r.Type.String(), Name: r.Name, PatternType: r.Pattern.String()}
	prefix := zkpaths.ACLChangesPath(r.Pattern.String()) + "/" + zkpaths.ACLChangeSequencePrefix
	_, err := s.c.create(prefix, change.Encode(), zk.FlagSequence)
	return err
}

// DecodeACLChange reads a notification of the store under changesPath
// into the resource it names.
func DecodeACLChange(changesPath string, data []byte) (acl.Resource, error) {
	decode := zkpaths.DecodeExtendedACLChange
	if changesPath == zkpaths.ACLLiteralChanges {
		decode = zkpaths.DecodeLiteralACLChange
	}
	c, err := decode(data)
	if err != nil {
		return acl.Resource{}, err
	}
	typ, err := acl.ParseResourceType(c.ResourceType)
	if err != nil {
		return acl.Resource{}, err
	}
	pattern, err := acl.ParsePatternType(c.PatternType)
	if err != nil {
		return acl.Resource{}, err
	}
	return acl.Resource{Type: typ, Name: c.Name, Pattern: pattern}, nil
}
