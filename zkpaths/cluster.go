package zkpaths

import (
	"encoding/base64"
	"fmt"

	"github.com/zkafka/zkafka/kafka"
)

// ClusterIDData is the data of /cluster/id, created by the first broker to
// start. Its "version" is a JSON string, a quirk kept from Kafka:
//
//	{"version":"1","id":"Wg7ohS0NQ0yLbyGRDr3y6g"}
type ClusterIDData struct {
	ID string
}

// Encode returns the JSON, with "version" as the string "1".
func (c ClusterIDData) Encode() []byte {
	return newObject().str("version", "1").str("id", c.ID).bytes()
}

// DecodeClusterIDData reads the data of /cluster/id. The version may be a
// string or a number. The id is taken as it is: clusters formatted by hand
// may carry any non-empty string.
func DecodeClusterIDData(data []byte) (ClusterIDData, error) {
	o, err := parseObject("cluster id", data)
	if err != nil {
		return ClusterIDData{}, err
	}
	version, err := o.requiredLong("version")
	if err != nil {
		return ClusterIDData{}, err
	}
	if version < 1 {
		return ClusterIDData{}, malformed(o.kind, "unsupported version %d", version)
	}
	var c ClusterIDData
	if err := o.required("id", &c.ID); err != nil {
		return ClusterIDData{}, err
	}
	if c.ID == "" {
		return ClusterIDData{}, malformed(o.kind, "empty id")
	}
	return c, nil
}

// NewClusterID returns a new random cluster id: a version-4 UUID as 22
// characters of url-safe base64 without padding, like Kafka's Uuid.toString.
func NewClusterID() string { return kafka.NewUUID() }

// NewTopicID returns a new random topic id, in the same form as a cluster id.
func NewTopicID() string { return kafka.NewUUID() }

// ParseUUID decodes a 22-character url-safe base64 UUID, such as a topic id
// from /brokers/topics/<t>, into the 16 bytes of the wire protocol.
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(u) {
		return u, fmt.Errorf("%q is not a base64 UUID", s)
	}
	copy(u[:], b)
	return u, nil
}
