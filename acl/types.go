package acl

import (
	"fmt"
	"strings"
)

// ResourceType is Kafka's ResourceType, with its wire code.
type ResourceType int8

// Kafka's resource types. Unknown and Any only appear in filters.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
)

// ResourceTypes are the concrete types, in Kafka's enum order.
var ResourceTypes = []ResourceType{ResourceTopic, ResourceGroup, ResourceCluster, ResourceTransactionalID, ResourceDelegationToken}

var resourceTypeNames = map[ResourceType]string{
	ResourceUnknown: "UNKNOWN", ResourceAny: "ANY", ResourceTopic: "TOPIC", ResourceGroup: "GROUP",
	ResourceCluster: "CLUSTER", ResourceTransactionalID: "TRANSACTIONAL_ID", ResourceDelegationToken: "DELEGATION_TOKEN",
}

// String is the Java enum's name (TOPIC), as ACL toString and the literal
// change notifications write it.
func (t ResourceType) String() string { return enumName(resourceTypeNames, t) }

// ZkName is the type as ZooKeeper paths write it (Topic, TransactionalId):
// SecurityUtils.resourceTypeName, the enum name in upper camel case.
func (t ResourceType) ZkName() string { return upperCamel(t.String()) }

// ParseResourceType reads either form, case-insensitively, as
// ResourceType.fromString and SecurityUtils.resourceType do.
func ParseResourceType(s string) (ResourceType, error) {
	return parseEnum(resourceTypeNames, s, "ResourceType")
}

// PatternType is Kafka's PatternType: how a resource name matches.
type PatternType int8

// Kafka's pattern types. Any and Match only appear in filters: Match finds
// the patterns that match a name (literal, wildcard and prefixes of it).
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

var patternTypeNames = map[PatternType]string{
	PatternUnknown: "UNKNOWN", PatternAny: "ANY", PatternMatch: "MATCH", PatternLiteral: "LITERAL", PatternPrefixed: "PREFIXED",
}

func (p PatternType) String() string { return enumName(patternTypeNames, p) }

// ParsePatternType reads a pattern type's name, case-insensitively.
func ParsePatternType(s string) (PatternType, error) {
	return parseEnum(patternTypeNames, s, "PatternType")
}

// Operation is Kafka's AclOperation.
type Operation int8

// Kafka's operations, with their wire codes.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
)

var operationNames = map[Operation]string{
	OpUnknown: "UNKNOWN", OpAny: "ANY", OpAll: "ALL", OpRead: "READ", OpWrite: "WRITE", OpCreate: "CREATE",
	OpDelete: "DELETE", OpAlter: "ALTER", OpDescribe: "DESCRIBE", OpClusterAction: "CLUSTER_ACTION",
	OpDescribeConfigs: "DESCRIBE_CONFIGS", OpAlterConfigs: "ALTER_CONFIGS", OpIdempotentWrite: "IDEMPOTENT_WRITE",
}

func (o Operation) String() string { return enumName(operationNames, o) }

// ZkName is the operation as the ACL JSON writes it (Read, ClusterAction).
func (o Operation) ZkName() string { return upperCamel(o.String()) }

// ParseOperation reads either form, case-insensitively.
func ParseOperation(s string) (Operation, error) { return parseEnum(operationNames, s, "AclOperation") }

// Permission is Kafka's AclPermissionType.
type Permission int8

// Kafka's permission types.
const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	Deny              Permission = 2
	Allow             Permission = 3
)

var permissionNames = map[Permission]string{PermissionUnknown: "UNKNOWN", PermissionAny: "ANY", Deny: "DENY", Allow: "ALLOW"}

func (p Permission) String() string { return enumName(permissionNames, p) }

// ZkName is the permission as the ACL JSON writes it (Allow, Deny).
func (p Permission) ZkName() string { return upperCamel(p.String()) }

// ParsePermission reads either form, case-insensitively.
func ParsePermission(s string) (Permission, error) {
	return parseEnum(permissionNames, s, "AclPermissionType")
}

// Wildcards, as Kafka's AclEntry and ResourcePattern define them.
const (
	WildcardResource  = "*"
	WildcardHost      = "*"
	WildcardPrincipal = "User:*"
	// ClusterName is the name of the one Cluster resource.
	ClusterName = "kafka-cluster"
)

// Resource is Kafka's ResourcePattern: a type, a name and how the name
// matches. In a binding the pattern is Literal or Prefixed.
type Resource struct {
	Type    ResourceType
	Name    string
	Pattern PatternType
}

// String is ResourcePattern.toString, as kafka-acls prints it.
func (r Resource) String() string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", r.Type, r.Name, r.Pattern)
}

// Entry is Kafka's AccessControlEntry: who, from where, which operation,
// allowed or denied. Principal is the "Type:Name" string.
type Entry struct {
	Principal  string
	Host       string
	Operation  Operation
	Permission Permission
}

// String is AccessControlEntry.toString, as kafka-acls prints it.
func (e Entry) String() string {
	return fmt.Sprintf("(principal=%s, host=%s, operation=%s, permissionType=%s)", e.Principal, e.Host, e.Operation, e.Permission)
}

// Binding is Kafka's AclBinding: an entry on a resource pattern.
type Binding struct {
	Resource Resource
	Entry    Entry
}

// unknown reports whether any element is UNKNOWN or a filter-only value
// (AclBinding.isUnknown, and the values ResourcePattern refuses).
func (b Binding) unknown() bool {
	r, e := b.Resource, b.Entry
	return r.Type <= ResourceAny || r.Type > ResourceDelegationToken ||
		(r.Pattern != PatternLiteral && r.Pattern != PatternPrefixed) ||
		e.Operation <= OpAny || e.Operation > OpIdempotentWrite ||
		(e.Permission != Allow && e.Permission != Deny)
}

// Filter is Kafka's AclBindingFilter. A nil Name, Principal or Host
// matches any; Any matches any type, operation or permission.
type Filter struct {
	Type       ResourceType
	Name       *string
	Pattern    PatternType
	Principal  *string
	Host       *string
	Operation  Operation
	Permission Permission
}

// Unknown reports whether the filter has an UNKNOWN element
// (AclBindingFilter.isUnknown), which Kafka's requests refuse.
func (f Filter) Unknown() bool {
	return f.Type == ResourceUnknown || f.Type > ResourceDelegationToken ||
		f.Pattern == PatternUnknown || f.Pattern > PatternPrefixed ||
		f.Operation == OpUnknown || f.Operation > OpIdempotentWrite ||
		f.Permission == PermissionUnknown || f.Permission > Allow
}

// MatchesResource is ResourcePatternFilter.matches: a Match filter with a
// name finds the literal pattern of that name, the wildcard and every
// prefix of the name; Any with a name finds patterns of exactly that name.
func (f Filter) MatchesResource(r Resource) bool {
	if f.Type != ResourceAny && f.Type != r.Type {
		return false
	}
	if f.Pattern != PatternAny && f.Pattern != PatternMatch && f.Pattern != r.Pattern {
		return false
	}
	if f.Name == nil {
		return true
	}
	if f.Pattern == PatternAny || f.Pattern == r.Pattern {
		return *f.Name == r.Name
	}
	if r.Pattern == PatternPrefixed {
		return strings.HasPrefix(*f.Name, r.Name)
	}
	return *f.Name == r.Name || r.Name == WildcardResource
}

// MatchesEntry is AccessControlEntryFilter.matches: exact comparisons, no
// wildcard semantics.
func (f Filter) MatchesEntry(e Entry) bool {
	return (f.Principal == nil || *f.Principal == e.Principal) &&
		(f.Host == nil || *f.Host == e.Host) &&
		(f.Operation == OpAny || f.Operation == e.Operation) &&
		(f.Permission == PermissionAny || f.Permission == e.Permission)
}

// Matches is AclBindingFilter.matches.
func (f Filter) Matches(b Binding) bool {
	return f.MatchesResource(b.Resource) && f.MatchesEntry(b.Entry)
}

// exactResource is the one resource a filter can match, if it names one
// (ResourcePatternFilter.matchesAtMostOne).
func (f Filter) exactResource() (Resource, bool) {
	if f.Type <= ResourceAny || f.Name == nil || (f.Pattern != PatternLiteral && f.Pattern != PatternPrefixed) {
		return Resource{}, false
	}
	return Resource{Type: f.Type, Name: *f.Name, Pattern: f.Pattern}, true
}

func enumName[T ~int8](names map[T]string, v T) string {
	if n, ok := names[v]; ok {
		return n
	}
	return "UNKNOWN"
}

func parseEnum[T ~int8](names map[T]string, s, what string) (T, error) {
	norm := strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(s)), "_", "")
	for v, n := range names {
		if strings.ReplaceAll(n, "_", "") == norm {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown %s %q", ErrUnknownName, what, s)
}

// upperCamel turns CLUSTER_ACTION into ClusterAction.
func upperCamel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		b.WriteString(w[:1])
		b.WriteString(strings.ToLower(w[1:]))
	}
	return b.String()
}
