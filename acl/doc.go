// Package acl is Kafka 2.8's AclAuthorizer
// (authorizer.class.name=kafka.security.authorizer.AclAuthorizer): who may
// do what to which resource.
//
// An ACL binding is an entry — principal ("User:alice" or the wildcard
// "User:*"), host (an IP address or "*"), operation, Allow or Deny — on a
// resource pattern: a type (Topic, Group, Cluster, TransactionalId,
// DelegationToken) and a name matched literally ("*" is every name) or as
// a prefix. A request's operation on a resource is allowed when
//
//	the principal is one of super.users, or
//	no ACL matches the resource and allow.everyone.if.no.acl.found=true, or
//	no matching Deny names the operation (or ALL), and
//	a matching Allow names it, ALL, or an operation implying it:
//	DESCRIBE is implied by READ, WRITE, DELETE and ALTER,
//	DESCRIBE_CONFIGS by ALTER_CONFIGS.
//
// Deny beats allow, and a Deny is never implied: denying READ still lets
// an Allow of DESCRIBE describe.
//
// The Authorizer keeps every ACL in an immutable map behind one atomic
// pointer, so a request's check takes no lock. Writes (CreateACLs,
// DeleteACLs, Refresh on a change notification) go through a Store —
// adminzk's ZooKeeper store in a broker, with Kafka's znodes:
//
//	/kafka-acl/<Type>/<name>                     literal patterns
//	/kafka-acl-extended/prefixed/<Type>/<name>   prefixed patterns
//	/kafka-acl-changes/acl_changes_N             "TOPIC:name" per literal change
//	/kafka-acl-extended-changes/acl_changes_N    JSON per prefixed change
//
// Each write is conditional on the version read and retried when another
// broker or tool got there first; then the writer notifies every broker,
// which re-reads that one resource (Refresh).
package acl
