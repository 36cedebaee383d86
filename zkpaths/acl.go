package zkpaths

import "strings"

// ACL znodes, as Kafka 2.8's ZkAclStore and ZkAclChangeStore lay them out:
// one znode per resource pattern holding its ACLs, under the literal or the
// extended (prefixed) store, and a sequential change notification per
// update under the store's change path.
const (
	ACLLiteral         = "/kafka-acl"
	ACLLiteralChanges  = "/kafka-acl-changes"
	ACLExtended        = "/kafka-acl-extended"
	ACLPrefixed        = ACLExtended + "/prefixed"
	ACLExtendedChanges = "/kafka-acl-extended-changes"

	// ACLChangeSequencePrefix names both stores' notifications,
	// acl_changes_0000000007.
	ACLChangeSequencePrefix = "acl_changes_"
)

// ACLStorePath is the store of a pattern type: /kafka-acl for LITERAL,
// /kafka-acl-extended/<pattern in lower case> for the others.
func ACLStorePath(patternType string) string {
	if patternType == "LITERAL" {
		return ACLLiteral
	}
	return ACLExtended + "/" + strings.ToLower(patternType)
}

// ACLChangesPath is where a pattern type's change notifications go.
func ACLChangesPath(patternType string) string {
	if patternType == "LITERAL" {
		return ACLLiteralChanges
	}
	return ACLExtendedChanges
}

// ACLResourcePath is /kafka-acl/Topic/orders or
// /kafka-acl-extended/prefixed/Topic/pay- (ResourceZNode.path); the type is
// in upper camel case, as SecurityUtils.resourceTypeName writes it.
func ACLResourcePath(patternType, resourceType, name string) string {
	return ACLStorePath(patternType) + "/" + resourceType + "/" + name
}

// ACLPaths are what AclAuthorizer.configure creates when missing (
// KafkaZkClient.createAclPaths): each store with a child per resource type,
// then both change paths.
func ACLPaths(resourceTypes []string) []string {
	var out []string
	for _, store := range []string{ACLLiteral, ACLPrefixed} {
		out = append(out, store)
		for _, t := range resourceTypes {
			out = append(out, store+"/"+t)
		}
	}
	return append(out, ACLLiteralChanges, ACLExtendedChanges)
}

// ACLEntryData is one ACL as a resource znode holds it, names as Kafka
// writes them ("User:alice", "Allow", "Read", "*").
type ACLEntryData struct {
	Principal, PermissionType, Operation, Host string
}

// ACLData is the data of a resource znode (AclEntry.toJsonCompatibleMap):
//
//	{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}
type ACLData struct {
	ACLs []ACLEntryData
}

// Encode writes the ACLs in the order given.
func (d ACLData) Encode() []byte {
	list := []byte{'['}
	for i, e := range d.ACLs {
		if i > 0 {
			list = append(list, ',')
		}
		list = append(list, newObject().str("principal", e.Principal).str("permissionType", e.PermissionType).
			str("operation", e.Operation).str("host", e.Host).bytes()...)
	}
	list = append(list, ']')
	return newObject().int("version", 1).raw("acls", list).bytes()
}

// DecodeACLData reads a resource znode; empty data holds no ACLs, as in
// Kafka's AclEntry.fromBytes.
func DecodeACLData(data []byte) (ACLData, error) {
	if len(data) == 0 {
		return ACLData{}, nil
	}
	o, err := parseObject("ACLs", data)
	if err != nil {
		return ACLData{}, err
	}
	if v, err := o.version(); err != nil {
		return ACLData{}, err
	} else if v != 1 {
		return ACLData{}, malformed(o.kind, "unsupported version %d", v)
	}
	var raw []map[string]string
	if err := o.required("acls", &raw); err != nil {
		return ACLData{}, err
	}
	var d ACLData
	for _, m := range raw {
		e := ACLEntryData{Principal: m["principal"], PermissionType: m["permissionType"], Operation: m["operation"], Host: m["host"]}
		if e.Principal == "" || e.PermissionType == "" || e.Operation == "" || e.Host == "" {
			return ACLData{}, malformed(o.kind, "an ACL lacks principal, permissionType, operation or host")
		}
		d.ACLs = append(d.ACLs, e)
	}
	return d, nil
}

// ACLChange is the resource pattern a change notification names. A
// literal one is written as "TOPIC:orders" (the resource type's enum name,
// LiteralAclChangeStore); an extended one as JSON (ExtendedAclChangeEvent):
//
//	{"version":1,"resourceType":"TOPIC","name":"pay-","patternType":"PREFIXED"}
type ACLChange struct {
	ResourceType, Name, PatternType string
}

// Encode writes the notification of the change's store.
func (c ACLChange) Encode() []byte {
	if c.PatternType == "LITERAL" {
		return []byte(c.ResourceType + ":" + c.Name)
	}
	return newObject().int("version", 1).str("resourceType", c.ResourceType).str("name", c.Name).
		str("patternType", c.PatternType).bytes()
}

// DecodeLiteralACLChange reads a /kafka-acl-changes notification.
func DecodeLiteralACLChange(data []byte) (ACLChange, error) {
	typ, name, ok := strings.Cut(string(data), ":")
	if !ok {
		return ACLChange{}, malformed("ACL change", "expected a string in format ResourceType:ResourceName but got %s", data)
	}
	return ACLChange{ResourceType: typ, Name: name, PatternType: "LITERAL"}, nil
}

// DecodeExtendedACLChange reads a /kafka-acl-extended-changes notification.
func DecodeExtendedACLChange(data []byte) (ACLChange, error) {
	o, err := parseObject("ACL change", data)
	if err != nil {
		return ACLChange{}, err
	}
	if v, err := o.version(); err != nil {
		return ACLChange{}, err
	} else if v > 1 {
		return ACLChange{}, malformed(o.kind, "unsupported version %d", v)
	}
	var c ACLChange
	for name, dst := range map[string]*string{"resourceType": &c.ResourceType, "name": &c.Name, "patternType": &c.PatternType} {
		if err := o.required(name, dst); err != nil {
			return ACLChange{}, err
		}
	}
	return c, nil
}
