package zkpaths

import (
	"bytes"
	"testing"
)

// fuzzRoundTrip checks what must hold for any input: decoding never panics,
// and whatever decodes re-encodes to bytes that decode and re-encode to the
// very same bytes.
func fuzzRoundTrip(t *testing.T, c codec, data []byte) {
	v, err := c(data)
	if err != nil {
		return
	}
	first := v.Encode()
	again, err := c(first)
	if err != nil {
		t.Fatalf("own encoding %s of %q does not decode: %v", first, data, err)
	}
	if second := again.Encode(); !bytes.Equal(first, second) {
		t.Fatalf("encoding not stable for %q:\n first %s\nsecond %s", data, first, second)
	}
}

func addSeeds(f *testing.F, c codec) {
	for _, tc := range goldenCases {
		if _, err := c([]byte(tc.in)); err == nil {
			f.Add([]byte(tc.in))
		}
	}
	f.Add([]byte(`{"version":1,"partitions":{"a":[1]}}`))
	f.Add([]byte(`{"version":2,"endpoints":["X://[::1:1"]}`))
}

func FuzzDecodeBrokerRegistration(f *testing.F) {
	addSeeds(f, brokerCodec)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip(t, brokerCodec, data) })
}

func FuzzDecodeTopicAssignment(f *testing.F) {
	addSeeds(f, topicCodec)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip(t, topicCodec, data) })
}

// FuzzDecodeOthers runs every other decoder on the same input.
func FuzzDecodeOthers(f *testing.F) {
	others := []codec{
		stateCodec,
		decoderOf(DecodeControllerRegistration),
		decoderOf(DecodeClusterIDData),
		decoderOf(DecodeEntityConfig),
		decoderOf(DecodeConfigChangeNotification),
		decoderOf(DecodeReassignPartitionsData),
		decoderOf(DecodePreferredReplicaElectionData),
		decoderOf(DecodeIsrChangeNotificationData),
		decoderOf(DecodeLogDirEvent),
		decoderOf(DecodeProducerIDBlock),
		decoderOf(DecodeFinalizedFeatures),
		decoderOf(DecodeConsumerRegistration),
	}
	for _, tc := range goldenCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range others {
			fuzzRoundTrip(t, c, data)
		}
	})
}
