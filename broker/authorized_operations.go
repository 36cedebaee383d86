package broker

import "github.com/zkafka/zkafka/acl"

// Authorized operations (KIP-430): Metadata, DescribeGroups and DescribeCluster can answer which ACL
// operations the client may perform on a resource, as a bit field of Kafka's AclOperation codes.
// With an authorizer they are the supported operations it allows; without one, as Kafka 2.8
// without one, every operation a resource type supports. A request that does not ask gets the
// schema's default, math.MinInt32.

// Kafka's AclOperation codes.
const (
	aclRead            = 3
	aclWrite           = 4
	aclCreate          = 5
	aclDelete          = 6
	aclAlter           = 7
	aclDescribe        = 8
	aclClusterAction   = 9
	aclDescribeConfigs = 10
	aclAlterConfigs    = 11
	aclIdempotentWrite = 12
)

// The operations each resource type supports (Kafka's AclEntry.supportedOperations), as bit fields.
var (
	clusterAuthorizedOperations = opsField(aclCreate, aclClusterAction, aclDescribeConfigs, aclAlterConfigs, aclIdempotentWrite, aclAlter, aclDescribe)
	topicAuthorizedOperations   = opsField(aclRead, aclWrite, aclCreate, aclDescribe, aclDelete, aclAlter, aclDescribeConfigs, aclAlterConfigs)
	groupAuthorizedOperations   = opsField(aclRead, aclDescribe, aclDelete)
)

func opsField(codes ...int) int32 {
	var f int32
	for _, c := range codes {
		f |= 1 << c
	}
	return f
}

// authorizedOperations is the bit field of operations the request's principal may perform on the
// resource.
func (s *Server) authorizedOperations(r *request, typ acl.ResourceType, name string) int32 {
	if s.authorizer == nil {
		switch typ {
		case acl.ResourceCluster:
			return clusterAuthorizedOperations
		case acl.ResourceGroup:
			return groupAuthorizedOperations
		}
		return topicAuthorizedOperations
	}
	return s.authorizer.AuthorizedOperations(r.principal(), r.clientIP(), typ, name)
}
