package zkpaths

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Security protocol names, Kafka's SecurityProtocol enum.
const (
	SecurityProtocolPlaintext     = "PLAINTEXT"
	SecurityProtocolSSL           = "SSL"
	SecurityProtocolSASLPlaintext = "SASL_PLAINTEXT"
	SecurityProtocolSASLSSL       = "SASL_SSL"
)

var securityProtocols = []string{
	SecurityProtocolPlaintext, SecurityProtocolSSL, SecurityProtocolSASLPlaintext, SecurityProtocolSASLSSL,
}

// securityProtocol returns the canonical name of protocol, which Kafka matches
// case-insensitively.
func securityProtocol(name string) (string, bool) {
	upper := asciiUpper(name)
	if slices.Contains(securityProtocols, upper) {
		return upper, true
	}
	return "", false
}

// asciiUpper normalises a listener name as Kafka's ListenerName.normalised
// does for the names in practice, and stays idempotent for the rest.
func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	ListenerName     string // upper case, e.g. "PLAINTEXT" or "REPLICATION"
	SecurityProtocol string // one of the SecurityProtocol* names
	Host             string // empty means all interfaces (written as "PLAINTEXT://:9092")
	Port             int32
}

// String is the endpoint as written in "endpoints" and in the listeners
// configs: "PLAINTEXT://b1:9092", "SSL://[::1]:9093", "PLAINTEXT://:9092".
func (e Endpoint) String() string {
	host := e.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return e.ListenerName + "://" + host + ":" + itoa(e.Port)
}

// ParseEndpoint parses "LISTENER://host:port" (the host may be empty or a
// bracketed IPv6 address). The listener name is upper-cased. Its security
// protocol is looked up in protocolMap (listener name → protocol), or, when
// protocolMap is nil, the listener name must itself be a protocol name.
func ParseEndpoint(s string, protocolMap map[string]string) (Endpoint, error) {
	listener, hostPort, ok := cutLast(s, "://")
	if !ok || listener == "" {
		return Endpoint{}, fmt.Errorf("endpoint %q is not of the form LISTENER://host:port", s)
	}
	host, portStr, ok := cutLast(hostPort, ":")
	if !ok {
		return Endpoint{}, fmt.Errorf("endpoint %q has no port", s)
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil || port < 0 || port > 65535 {
		return Endpoint{}, fmt.Errorf("endpoint %q has an invalid port", s)
	}
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") {
		return Endpoint{}, fmt.Errorf("endpoint %q has an unbalanced IPv6 bracket", s)
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if err := validateHost(host); err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: %w", s, err)
	}
	e := Endpoint{ListenerName: asciiUpper(listener), Host: host, Port: int32(port)}
	if protocolMap == nil {
		if e.SecurityProtocol, ok = securityProtocol(e.ListenerName); !ok {
			return Endpoint{}, fmt.Errorf("endpoint %q: listener %s is not a security protocol and no listener_security_protocol_map is given", s, e.ListenerName)
		}
		return e, nil
	}
	if e.SecurityProtocol, ok = protocolMap[e.ListenerName]; !ok {
		return Endpoint{}, fmt.Errorf("endpoint %q: no security protocol defined for listener %s", s, e.ListenerName)
	}
	return e, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// validateHost accepts the characters Kafka's endpoint pattern accepts:
// ASCII alphanumerics and "-%._:" (the colon for IPv6, the percent for zones).
func validateHost(host string) error {
	for _, c := range []byte(host) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-%._:", c) >= 0
		if !ok {
			return fmt.Errorf("host %q contains %q", host, c)
		}
	}
	return nil
}

// FeatureRange is the range of versions of one feature a broker supports.
type FeatureRange struct {
	MinVersion, MaxVersion int16
}

func (r FeatureRange) json() []byte {
	return newObject().int("min_version", int64(r.MinVersion)).int("max_version", int64(r.MaxVersion)).bytes()
}

// BrokerRegistration is the data of the ephemeral /brokers/ids/<id>, written
// as version 5:
//
//	{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://b1:9092"],"jmx_port":-1,"port":9092,"host":"b1","version":5,"timestamp":"1614570663881"}
//
// with "rack":"r1" after the protocol map when a rack is set, and features as
// {"name":{"min_version":1,"max_version":2}}. Older versions decode too:
// v1 (0.8: host and port only, one PLAINTEXT endpoint), v2 (0.9: endpoints,
// whose listener names are protocol names), v3 (0.10.0: rack), v4 (0.10.2:
// listener_security_protocol_map).
type BrokerRegistration struct {
	ID int32 // from the path, not the JSON

	// Host and Port are the top-level fields that pre-0.9 clients read. Decode
	// fills them from the JSON (empty and -1 when null); Encode ignores them
	// and writes the first PLAINTEXT endpoint, or null and -1 without one.
	Host string
	Port int32

	Endpoints []Endpoint
	JmxPort   int32  // -1 when JMX is off; Encode writes a JmxPort <= 0 as -1
	Rack      string // empty when no rack is configured
	Timestamp int64  // registration time, epoch milliseconds
	Features  map[string]FeatureRange
	Version   int // the version decoded; Encode always writes 5
}

// BrokerRegistrationVersion is the version Encode writes.
const BrokerRegistrationVersion = 5

// Endpoint returns the endpoint of the named listener.
func (b BrokerRegistration) Endpoint(listenerName string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.ListenerName == listenerName {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Encode returns the version-5 JSON.
func (b BrokerRegistration) Encode() []byte {
	features := newObject()
	for _, name := range slices.Sorted(maps.Keys(b.Features)) {
		features.raw(name, b.Features[name].json())
	}
	protocols := newObject()
	seen := make(map[string]bool, len(b.Endpoints))
	endpoints := []byte{'['}
	for i, e := range b.Endpoints {
		if !seen[e.ListenerName] {
			seen[e.ListenerName] = true
			protocols.str(e.ListenerName, e.SecurityProtocol)
		}
		if i > 0 {
			endpoints = append(endpoints, ',')
		}
		endpoints = appendString(endpoints, e.String())
	}
	endpoints = append(endpoints, ']')

	o := newObject().
		raw("features", features.bytes()).
		raw("listener_security_protocol_map", protocols.bytes())
	if b.Rack != "" {
		o.str("rack", b.Rack)
	}
	jmx := b.JmxPort
	if jmx <= 0 {
		jmx = -1
	}
	o.raw("endpoints", endpoints).int("jmx_port", int64(jmx))
	if e, ok := b.firstPlaintext(); ok {
		o.int("port", int64(e.Port))
		if e.Host == "" {
			o.raw("host", []byte("null"))
		} else {
			o.str("host", e.Host)
		}
	} else {
		o.int("port", -1).raw("host", []byte("null"))
	}
	return o.int("version", BrokerRegistrationVersion).long("timestamp", b.Timestamp).bytes()
}

func (b BrokerRegistration) firstPlaintext() (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.SecurityProtocol == SecurityProtocolPlaintext {
			return e, true
		}
	}
	return Endpoint{}, false
}

// DecodeBrokerRegistration reads the data of /brokers/ids/<id>, any version.
func DecodeBrokerRegistration(id int32, data []byte) (BrokerRegistration, error) {
	o, err := parseObject(fmt.Sprintf("broker %d registration", id), data)
	if err != nil {
		return BrokerRegistration{}, err
	}
	b := BrokerRegistration{ID: id, Port: -1, JmxPort: -1}
	if b.Version, err = o.version(); err != nil {
		return BrokerRegistration{}, err
	}
	if _, err := o.optional("host", &b.Host); err != nil {
		return BrokerRegistration{}, err
	}
	if _, err := o.optional("port", &b.Port); err != nil {
		return BrokerRegistration{}, err
	}
	if _, err := o.optional("jmx_port", &b.JmxPort); err != nil {
		return BrokerRegistration{}, err
	}
	if _, err := o.optional("rack", &b.Rack); err != nil {
		return BrokerRegistration{}, err
	}
	if b.Timestamp, _, err = o.optionalLong("timestamp"); err != nil {
		return BrokerRegistration{}, err
	}
	if b.Endpoints, err = decodeEndpoints(o, b.Version); err != nil {
		return BrokerRegistration{}, err
	}
	if b.Features, err = decodeBrokerFeatures(o); err != nil {
		return BrokerRegistration{}, err
	}
	return b, nil
}

func decodeEndpoints(o object, version int) ([]Endpoint, error) {
	if version == 1 {
		var host string
		var port int32
		if err := o.required("host", &host); err != nil {
			return nil, err
		}
		if err := o.required("port", &port); err != nil {
			return nil, err
		}
		if port < 0 || port > 65535 {
			return nil, malformed(o.kind, "invalid port %d", port)
		}
		if err := validateHost(host); err != nil {
			return nil, malformed(o.kind, "%v", err)
		}
		return []Endpoint{{
			ListenerName:     SecurityProtocolPlaintext,
			SecurityProtocol: SecurityProtocolPlaintext,
			Host:             host,
			Port:             port,
		}}, nil
	}

	var protocolMap map[string]string
	if _, err := o.optional("listener_security_protocol_map", &protocolMap); err != nil {
		return nil, err
	}
	for listener, protocol := range protocolMap {
		canonical, ok := securityProtocol(protocol)
		if !ok {
			return nil, malformed(o.kind, "listener %s has unknown security protocol %q", listener, protocol)
		}
		protocolMap[listener] = canonical
	}
	var strs []string
	if err := o.required("endpoints", &strs); err != nil {
		return nil, err
	}
	endpoints := make([]Endpoint, 0, len(strs))
	for _, s := range strs {
		e, err := ParseEndpoint(s, protocolMap)
		if err != nil {
			return nil, malformed(o.kind, "%v", err)
		}
		endpoints = append(endpoints, e)
	}
	return endpoints, nil
}

// decodeBrokerFeatures reads "features" (v5) into a never-nil map.
func decodeBrokerFeatures(o object) (map[string]FeatureRange, error) {
	var raw map[string]json.RawMessage
	if _, err := o.optional("features", &raw); err != nil {
		return nil, err
	}
	features := make(map[string]FeatureRange, len(raw))
	for name, data := range raw {
		f, err := parseObject(fmt.Sprintf("%s: feature %q", o.kind, name), data)
		if err != nil {
			return nil, err
		}
		var r FeatureRange
		if err := f.required("min_version", &r.MinVersion); err != nil {
			return nil, err
		}
		if err := f.required("max_version", &r.MaxVersion); err != nil {
			return nil, err
		}
		if r.MinVersion < 1 || r.MaxVersion < r.MinVersion {
			return nil, malformed(f.kind, "invalid version range [%d, %d]", r.MinVersion, r.MaxVersion)
		}
		features[name] = r
	}
	return features, nil
}
