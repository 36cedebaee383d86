package zkpaths

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeBrokerRegistrationValues(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want BrokerRegistration
	}{
		{
			name: "v1 becomes one PLAINTEXT endpoint",
			in:   `{"jmx_port":-1,"timestamp":"1419960000000","host":"b1","version":1,"port":9092}`,
			want: BrokerRegistration{
				ID: 7, Host: "b1", Port: 9092, JmxPort: -1, Timestamp: 1419960000000, Version: 1,
				Endpoints: []Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "b1", Port: 9092}},
				Features:  map[string]FeatureRange{},
			},
		},
		{
			name: "v2 listener names are protocol names",
			in:   `{"jmx_port":9999,"timestamp":"1449000000000","endpoints":["PLAINTEXT://b1:9092","ssl://b1:9093"],"host":"b1","version":2,"port":9092}`,
			want: BrokerRegistration{
				ID: 7, Host: "b1", Port: 9092, JmxPort: 9999, Timestamp: 1449000000000, Version: 2,
				Endpoints: []Endpoint{
					{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "b1", Port: 9092},
					{ListenerName: "SSL", SecurityProtocol: "SSL", Host: "b1", Port: 9093},
				},
				Features: map[string]FeatureRange{},
			},
		},
		{
			name: "v4 listener map, IPv6, no top-level host",
			in:   `{"listener_security_protocol_map":{"INTERNAL":"sasl_plaintext","EXTERNAL":"SSL"},"endpoints":["INTERNAL://[fe80::1%eth0]:9092","EXTERNAL://kafka.example.com:9093"],"jmx_port":-1,"host":null,"timestamp":"5","port":-1,"version":4}`,
			want: BrokerRegistration{
				ID: 7, Port: -1, JmxPort: -1, Timestamp: 5, Version: 4,
				Endpoints: []Endpoint{
					{ListenerName: "INTERNAL", SecurityProtocol: "SASL_PLAINTEXT", Host: "fe80::1%eth0", Port: 9092},
					{ListenerName: "EXTERNAL", SecurityProtocol: "SSL", Host: "kafka.example.com", Port: 9093},
				},
				Features: map[string]FeatureRange{},
			},
		},
		{
			name: "v5 rack and features",
			in:   `{"features":{"f":{"min_version":1,"max_version":4}},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://b1:9092"],"rack":"r2","jmx_port":-1,"port":9092,"host":"b1","version":5,"timestamp":"1614570663881"}`,
			want: BrokerRegistration{
				ID: 7, Host: "b1", Port: 9092, JmxPort: -1, Rack: "r2", Timestamp: 1614570663881, Version: 5,
				Endpoints: []Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "b1", Port: 9092}},
				Features:  map[string]FeatureRange{"f": {MinVersion: 1, MaxVersion: 4}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeBrokerRegistration(7, []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestBrokerRegistrationEncode(t *testing.T) {
	b := BrokerRegistration{
		ID:   1,
		Host: "ignored", Port: 1, // derived from the endpoints instead
		Endpoints: []Endpoint{
			{ListenerName: "SECURE", SecurityProtocol: SecurityProtocolSSL, Host: "b1", Port: 9093},
			{ListenerName: "INTERNAL", SecurityProtocol: SecurityProtocolPlaintext, Host: "10.0.0.1", Port: 9094},
			{ListenerName: "CLIENT", SecurityProtocol: SecurityProtocolPlaintext, Host: "b1", Port: 9092},
		},
		Timestamp: 42,
	}
	want := `{"features":{},"listener_security_protocol_map":{"SECURE":"SSL","INTERNAL":"PLAINTEXT","CLIENT":"PLAINTEXT"},` +
		`"endpoints":["SECURE://b1:9093","INTERNAL://10.0.0.1:9094","CLIENT://b1:9092"],"jmx_port":-1,"port":9094,"host":"10.0.0.1","version":5,"timestamp":"42"}`
	if got := string(b.Encode()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if e, ok := b.Endpoint("CLIENT"); !ok || e.Port != 9092 {
		t.Fatalf("Endpoint(CLIENT) = %+v, %v", e, ok)
	}
	if _, ok := b.Endpoint("PLAINTEXT"); ok {
		t.Fatal("Endpoint(PLAINTEXT) found a listener that does not exist")
	}
	empty := string(BrokerRegistration{}.Encode())
	if want := `{"features":{},"listener_security_protocol_map":{},"endpoints":[],"jmx_port":-1,"port":-1,"host":null,"version":5,"timestamp":"0"}`; empty != want {
		t.Fatalf("zero value: got %s\nwant %s", empty, want)
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in      string
		protos  map[string]string
		want    Endpoint
		wantErr string
	}{
		{in: "PLAINTEXT://b1:9092", want: Endpoint{"PLAINTEXT", "PLAINTEXT", "b1", 9092}},
		{in: "plaintext://:9092", want: Endpoint{"PLAINTEXT", "PLAINTEXT", "", 9092}},
		{in: "SASL_SSL://[::1]:9094", want: Endpoint{"SASL_SSL", "SASL_SSL", "::1", 9094}},
		{in: "CLIENT://h:1", protos: map[string]string{"CLIENT": "SSL"}, want: Endpoint{"CLIENT", "SSL", "h", 1}},
		{in: "CLIENT://h:1", wantErr: "not a security protocol"},
		{in: "CLIENT://h:1", protos: map[string]string{"OTHER": "SSL"}, wantErr: "no security protocol defined"},
		{in: "b1:9092", wantErr: "LISTENER://host:port"},
		{in: "://b1:9092", wantErr: "LISTENER://host:port"},
		{in: "PLAINTEXT://b1", wantErr: "no port"},
		{in: "PLAINTEXT://b1:x", wantErr: "invalid port"},
		{in: "PLAINTEXT://b1:70000", wantErr: "invalid port"},
		{in: "PLAINTEXT://[::1:9092", wantErr: "bracket"},
		{in: "PLAINTEXT://b 1:9092", wantErr: "contains"},
	}
	for _, tc := range tests {
		got, err := ParseEndpoint(tc.in, tc.protos)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseEndpoint(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if err == nil && asciiUpper(tc.in) != asciiUpper(got.String()) {
			t.Errorf("String() = %q, want %q", got.String(), tc.in)
		}
	}
}

func TestDecodeTopicAssignmentValues(t *testing.T) {
	got, err := DecodeTopicAssignment([]byte(`{"version":2,"partitions":{"1":[2,3,4],"0":[4,5,6,1,2,3]},"adding_replicas":{"0":[4,5,6]},"removing_replicas":{"0":[1,2,3]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := TopicAssignment{
		Partitions:       map[int32][]int32{0: {4, 5, 6, 1, 2, 3}, 1: {2, 3, 4}},
		AddingReplicas:   map[int32][]int32{0: {4, 5, 6}},
		RemovingReplicas: map[int32][]int32{0: {1, 2, 3}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if ids := got.PartitionIDs(); !reflect.DeepEqual(ids, []int32{0, 1}) {
		t.Fatalf("PartitionIDs = %v", ids)
	}

	v1, err := DecodeTopicAssignment([]byte(`{"version":1,"partitions":{"0":[1]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if v1.TopicID != "" || v1.AddingReplicas == nil || v1.RemovingReplicas == nil {
		t.Fatalf("v1 decoded as %+v; want no topic id and empty, non-nil maps", v1)
	}
}

func TestDecodeSmallValues(t *testing.T) {
	state, err := DecodeLeaderAndIsr([]byte(`{"controller_epoch":33,"leader":2,"version":1,"leader_epoch":8,"isr":[2,3]}`))
	if err != nil || !reflect.DeepEqual(state, LeaderAndIsr{Leader: 2, LeaderEpoch: 8, ISR: []int32{2, 3}, ControllerEpoch: 33}) {
		t.Errorf("partition state = %+v, %v", state, err)
	}
	if got := string(LeaderAndIsr{Leader: NoLeader, LeaderEpoch: 1}.Encode()); got != `{"controller_epoch":0,"leader":-1,"version":1,"leader_epoch":1,"isr":[]}` {
		t.Errorf("nil ISR encodes as %s", got)
	}

	ctrl, err := DecodeControllerRegistration([]byte(`{"version":1,"brokerid":3,"timestamp":"1614570663255"}`))
	if err != nil || ctrl != (ControllerRegistration{BrokerID: 3, Timestamp: 1614570663255}) {
		t.Errorf("controller = %+v, %v", ctrl, err)
	}

	change, err := DecodeConfigChangeNotification([]byte(`{"version":2,"entity_path":"users/alice/clients/app"}`))
	if err != nil || change.EntityType() != EntityUsers || change.EntityName() != "alice/clients/app" {
		t.Errorf("config change = %+v (%q, %q), %v", change, change.EntityType(), change.EntityName(), err)
	}

	block, err := DecodeProducerIDBlock([]byte(`{"version":1,"broker":1,"block_start":"1000","block_end":"1999"}`))
	if err != nil || block != (ProducerIDBlock{BrokerID: 1, BlockStart: 1000, BlockEnd: 1999}) {
		t.Errorf("producer id block = %+v, %v", block, err)
	}

	reassign, err := DecodeReassignPartitionsData([]byte(`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[4,5,6]}]}`))
	if err != nil || !reflect.DeepEqual(reassign, ReassignPartitionsData{Partitions: []PartitionReplicas{{Topic: "t", Partition: 0, Replicas: []int32{4, 5, 6}}}}) {
		t.Errorf("reassignment = %+v, %v", reassign, err)
	}

	consumer, err := DecodeConsumerRegistration([]byte(`{"subscription":{"t":2},"pattern":"some_future_pattern"}`))
	if err != nil || !reflect.DeepEqual(consumer, ConsumerRegistration{Subscription: map[string]int32{"t": 2}, Pattern: PatternStatic}) {
		t.Errorf("consumer registration = %+v, %v", consumer, err)
	}

	cfg, err := DecodeEntityConfig(nil)
	if err != nil || cfg.Config == nil || len(cfg.Config) != 0 {
		t.Errorf("empty entity config = %+v, %v", cfg, err)
	}
}

func TestControllerEpoch(t *testing.T) {
	if got := string(EncodeControllerEpoch(17)); got != "17" {
		t.Fatalf("EncodeControllerEpoch(17) = %q", got)
	}
	for in, want := range map[string]int32{"0": 0, "17": 17, "2147483647": 1<<31 - 1} {
		if got, err := DecodeControllerEpoch([]byte(in)); err != nil || got != want {
			t.Errorf("DecodeControllerEpoch(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1", "x", "1.5", " 1", "{\"epoch\":1}", "2147483648"} {
		if _, err := DecodeControllerEpoch([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeControllerEpoch(%q) error = %v, want ErrMalformed", in, err)
		}
	}
}

func TestConsumerOffset(t *testing.T) {
	if got := string(EncodeConsumerOffset(42)); got != "42" {
		t.Fatalf("EncodeConsumerOffset(42) = %q", got)
	}
	if got, err := DecodeConsumerOffset([]byte("42")); err != nil || got != 42 {
		t.Fatalf("DecodeConsumerOffset(42) = %d, %v", got, err)
	}
	for _, in := range []string{"", "4x", "\"42\""} {
		if _, err := DecodeConsumerOffset([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeConsumerOffset(%q) error = %v, want ErrMalformed", in, err)
		}
	}
}

func TestNextProducerIDBlock(t *testing.T) {
	first, err := NextProducerIDBlock(nil, 2)
	if err != nil || first != (ProducerIDBlock{BrokerID: 2, BlockStart: 0, BlockEnd: 999}) {
		t.Fatalf("first block = %+v, %v", first, err)
	}
	next, err := NextProducerIDBlock(first.Encode(), 3)
	if err != nil || next != (ProducerIDBlock{BrokerID: 3, BlockStart: 1000, BlockEnd: 1999}) {
		t.Fatalf("next block = %+v, %v", next, err)
	}
	last := ProducerIDBlock{BrokerID: 1, BlockStart: 0, BlockEnd: 1<<63 - 1000}
	if _, err := NextProducerIDBlock(last.Encode(), 1); !errors.Is(err, ErrProducerIDsExhausted) {
		t.Fatalf("after the last block: error = %v, want ErrProducerIDsExhausted", err)
	}
	if _, err := NextProducerIDBlock([]byte("{"), 1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("bad data: error = %v, want ErrMalformed", err)
	}
}

// TestMalformed: every way data can be unreadable is an error wrapping
// ErrMalformed that says what is wrong.
func TestMalformed(t *testing.T) {
	tests := []struct {
		name    string
		codec   codec
		in      string
		wantErr string
	}{
		{"broker: empty", brokerCodec, ``, "unexpected end of JSON input"},
		{"broker: bad JSON", brokerCodec, `{"version":5,`, "unexpected end of JSON input"},
		{"broker: null", brokerCodec, `null`, "not a JSON object"},
		{"broker: array", brokerCodec, `[1,2]`, "cannot unmarshal array"},
		{"broker: version 0", brokerCodec, `{"version":0,"host":"b1","port":9092}`, "unsupported version 0"},
		{"broker: negative version", brokerCodec, `{"version":-1}`, "unsupported version -1"},
		{"broker: no version", brokerCodec, `{"host":"b1","port":9092}`, `missing field "version"`},
		{"broker: version as string", brokerCodec, `{"version":"5"}`, `field "version"`},
		{"broker: v1 without port", brokerCodec, `{"version":1,"host":"b1"}`, `missing field "port"`},
		{"broker: v1 bad host", brokerCodec, `{"version":1,"host":"b 1","port":9092}`, `contains`},
		{"broker: v2 without endpoints", brokerCodec, `{"version":2,"host":"b1","port":9092}`, `missing field "endpoints"`},
		{"broker: unknown listener", brokerCodec, `{"version":2,"endpoints":["CLIENT://b1:9092"]}`, "not a security protocol"},
		{"broker: unknown protocol", brokerCodec, `{"version":4,"endpoints":["C://b1:9092"],"listener_security_protocol_map":{"C":"TLS"}}`, `unknown security protocol "TLS"`},
		{"broker: bad endpoint", brokerCodec, `{"version":4,"endpoints":["PLAINTEXT//b1:9092"]}`, "LISTENER://host:port"},
		{"broker: port overflow", brokerCodec, `{"version":5,"endpoints":[],"port":3000000000}`, `field "port"`},
		{"broker: timestamp not a number", brokerCodec, `{"version":5,"endpoints":[],"timestamp":"yesterday"}`, `"yesterday" is not a decimal long`},
		{"broker: feature range", brokerCodec, `{"version":5,"endpoints":[],"features":{"f":{"min_version":3,"max_version":2}}}`, "invalid version range [3, 2]"},
		{"broker: feature without max", brokerCodec, `{"version":5,"endpoints":[],"features":{"f":{"min_version":1}}}`, `missing field "max_version"`},
		{"topic: version 0", topicCodec, `{"version":0,"partitions":{}}`, "unsupported version 0"},
		{"topic: no partitions", topicCodec, `{"version":3}`, `missing field "partitions"`},
		{"topic: non-numeric partition", topicCodec, `{"version":1,"partitions":{"a":[1]}}`, `"a" is not a partition id`},
		{"topic: negative partition", topicCodec, `{"version":1,"partitions":{"-1":[1]}}`, `"-1" is not a partition id`},
		{"topic: zero-padded partition", topicCodec, `{"version":1,"partitions":{"01":[1]}}`, `"01" is not a partition id`},
		{"topic: non-numeric adding key", topicCodec, `{"version":2,"partitions":{"0":[1]},"adding_replicas":{"x":[2]}}`, `"x" is not a partition id`},
		{"topic: replicas not ints", topicCodec, `{"version":1,"partitions":{"0":["1"]}}`, `field "partitions"`},
		{"topic: bad topic id", topicCodec, `{"version":3,"topic_id":"not-a-uuid","partitions":{}}`, "not a base64 UUID"},
		{"state: no isr", stateCodec, `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0}`, `missing field "isr"`},
		{"state: no leader", stateCodec, `{"controller_epoch":1,"version":1,"leader_epoch":0,"isr":[]}`, `missing field "leader"`},
		{"state: version 0", stateCodec, `{"controller_epoch":1,"leader":1,"version":0,"leader_epoch":0,"isr":[]}`, "unsupported version 0"},
		{"controller: no broker id", decoderOf(DecodeControllerRegistration), `{"version":1,"timestamp":"1"}`, `missing field "brokerid"`},
		{"cluster id: version \"0\"", decoderOf(DecodeClusterIDData), `{"version":"0","id":"x"}`, "unsupported version 0"},
		{"cluster id: empty id", decoderOf(DecodeClusterIDData), `{"version":"1","id":""}`, "empty id"},
		{"config: non-string value", decoderOf(DecodeEntityConfig), `{"version":1,"config":{"retention.ms":1000}}`, `field "config"`},
		{"config change: v2 without path", decoderOf(DecodeConfigChangeNotification), `{"version":2}`, `missing field "entity_path"`},
		{"config change: v1 without name", decoderOf(DecodeConfigChangeNotification), `{"version":1,"entity_type":"topics"}`, `missing field "entity_name"`},
		{"config change: path without name", decoderOf(DecodeConfigChangeNotification), `{"version":2,"entity_path":"topics"}`, "lacks a type or a name"},
		{"reassign: entry without replicas", decoderOf(DecodeReassignPartitionsData), `{"version":1,"partitions":[{"topic":"t","partition":0}]}`, `partitions[0]: missing field "replicas"`},
		{"preferred: negative partition", decoderOf(DecodePreferredReplicaElectionData), `{"version":1,"partitions":[{"topic":"t","partition":-1}]}`, "invalid partition t--1"},
		{"isr change: entry not an object", decoderOf(DecodeIsrChangeNotificationData), `{"version":1,"partitions":[1]}`, "cannot unmarshal number"},
		{"log dir event: no event", decoderOf(DecodeLogDirEvent), `{"version":1,"broker":1}`, `missing field "event"`},
		{"producer ids: end before start", decoderOf(DecodeProducerIDBlock), `{"version":1,"broker":1,"block_start":"1000","block_end":"999"}`, "invalid block [1000, 999]"},
		{"producer ids: end not a long", decoderOf(DecodeProducerIDBlock), `{"version":1,"broker":1,"block_start":"0","block_end":"9x"}`, `"9x" is not a decimal long`},
		{"features: unknown status", decoderOf(DecodeFinalizedFeatures), `{"version":1,"status":2,"features":{}}`, "unknown status 2"},
		{"consumer: no subscription", decoderOf(DecodeConsumerRegistration), `{"version":1,"pattern":"static"}`, `missing field "subscription"`},
		{"consumer: version 0", decoderOf(DecodeConsumerRegistration), `{"version":0,"subscription":{},"pattern":"static"}`, "unsupported version 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.codec([]byte(tc.in))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("decode %s = %+v, %v; want an ErrMalformed error", tc.in, v, err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
}
