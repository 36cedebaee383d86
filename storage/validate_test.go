package storage

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/wire"
)

// TestCompactedLogRefusesKeylessRecords: a compacted log's producer records
// need keys, compressed ones too (Kafka's LogValidator.validateKey), and the
// refused append stores nothing; a delete log takes them, and so does a
// compacted log from its coordinator or a leader (replication).
func TestCompactedLogRefusesKeylessRecords(t *testing.T) {
	cfg := testConfig()
	cfg.CleanupPolicy = "compact"
	l := openTestLog(t, t.TempDir(), cfg)
	keyless := func(codec wire.Codec) []byte {
		return keyedBatchOf(plainHeader(1000, codec), []byte("k"), []byte("v"), nil, []byte("no key"))
	}
	for _, codec := range []wire.Codec{wire.CodecNone, wire.CodecGzip} {
		_, err := l.AppendAsLeader(keyless(codec), 0)
		wantKerr(t, err, kerr.InvalidRecord)
	}
	if leo := l.LogEndOffset(); leo != 0 {
		t.Fatalf("a refused append moved the log end to %d", leo)
	}
	mustAppend(t, l, keyedBatch(1000, kvs("k", "v")...))
	coordinatorAppend(t, l, keyless(wire.CodecNone))
	replicated := keyless(wire.CodecGzip)
	wire.SetBaseOffset(replicated, l.LogEndOffset())
	if _, err := l.AppendAsFollower(replicated); err != nil {
		t.Fatalf("replicating a keyless record: %v", err)
	}

	deletes := openTestLog(t, t.TempDir(), testConfig())
	mustAppend(t, deletes, keyless(wire.CodecGzip))
}
