package acl

import "errors"

var (
	// ErrUnknownName: a resource type, pattern type, operation or
	// permission name Kafka does not define.
	ErrUnknownName = errors.New("unknown name")
	// ErrInvalidBinding: an ACL binding with an UNKNOWN or filter-only
	// element, or without a resource name (Kafka's InvalidRequestException).
	ErrInvalidBinding = errors.New("invalid ACL binding")
	// ErrTooManyRetries: a resource's ACLs kept changing under a
	// conditional update (Kafka's maxUpdateRetries).
	ErrTooManyRetries = errors.New("ACL update retries exhausted")
)
