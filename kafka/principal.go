package kafka

import (
	"fmt"
	"strings"
)

// Principal is who a connection authenticated as (Kafka's KafkaPrincipal):
// a type, "User" for every principal Kafka's own authenticators make, and a
// name.
type Principal struct {
	Type, Name string
}

// Anonymous is the principal of a connection that did not authenticate
// (a PLAINTEXT listener's), Kafka's KafkaPrincipal.ANONYMOUS.
var Anonymous = Principal{Type: "User", Name: "ANONYMOUS"}

// String is Kafka's "Type:Name" form, as ACLs and super.users write it.
func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal reads the "Type:Name" form (SecurityUtils.parseKafkaPrincipal):
// the name may itself contain colons.
func ParsePrincipal(s string) (Principal, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok || typ == "" {
		return Principal{}, fmt.Errorf("expected a string in format principalType:principalName but got %s", s)
	}
	return Principal{Type: typ, Name: name}, nil
}
