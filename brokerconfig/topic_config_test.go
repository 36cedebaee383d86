package brokerconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestValidateTopicConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg       map[string]string
		code      *kerr.Error // nil: a value error (INVALID_REQUEST on the wire), unless wantError is empty
		wantError string
	}{
		{map[string]string{"retention.ms": "-1", "cleanup.policy": "", "min.cleanable.dirty.ratio": "1"}, nil, ""},
		{map[string]string{"leader.replication.throttled.replicas": "0:1, 1:2"}, nil, ""},
		{map[string]string{"message.format.version": "2.8.1"}, nil, ""},
		{map[string]string{"message.format.version": "0.10.2-IV0"}, nil, ""},
		{map[string]string{"no.such": "1"}, kerr.InvalidConfig, "Unknown topic config name: no.such"},
		{map[string]string{"retention.ms": "-2"}, nil, "Invalid value -2 for configuration retention.ms: Value must be at least -1"},
		{map[string]string{"min.cleanable.dirty.ratio": "1.5"}, nil, "Value must be no more than 1"},
		{map[string]string{"compression.type": "zip"}, nil, "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"},
		{map[string]string{"message.timestamp.type": "Now"}, nil, "String must be one of: CreateTime, LogAppendTime"},
		{map[string]string{"follower.replication.throttled.replicas": "x"}, nil, "must be the literal '*'"},
		{map[string]string{"message.format.version": "3.0"}, nil, "Version `3.0` is not a valid version"},
		{map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, kerr.InvalidConfig,
			"conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"},
	} {
		_, err := ValidateTopicConfig(tc.cfg)
		if tc.wantError == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.cfg, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantError) {
			t.Errorf("%v: error %v, want %q", tc.cfg, err, tc.wantError)
			continue
		}
		var ie *InvalidConfigError
		var ve *ValueError
		if tc.code != nil && (!errors.As(err, &ie) || !errors.Is(err, tc.code)) {
			t.Errorf("%v: %v is not %v", tc.cfg, err, tc.code)
		}
		if tc.code == nil && !errors.As(err, &ve) {
			t.Errorf("%v: %v is not a value error", tc.cfg, err)
		}
	}
}
