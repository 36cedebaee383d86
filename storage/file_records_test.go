package storage

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/zkafka/zkafka/wire"
)

// TestReadMatchesAWholeScan checks Read and ReadFileRecords, which read only batch headers to find
// what to return, against the rule applied to every batch of the segment read whole: the batches from
// the one holding offset, below maxOffset, within maxBytes (the first whole with minOneMessage), never
// across a segment. Batches of random sizes fill several segments with a dense index, and reads start
// at random offsets with random limits, high watermarks among them.
func TestReadMatchesAWholeScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cfg := testConfig()
	cfg.SegmentBytes = 16 << 10
	cfg.IndexIntervalBytes = 700
	l := openTestLog(t, t.TempDir(), cfg)
	for range 400 {
		var values []string
		for range 1 + rng.IntN(6) {
			values = append(values, string(bytes.Repeat([]byte{'v'}, rng.IntN(300))))
		}
		mustAppend(t, l, makeBatch(1, values...))
	}
	if l.NumSegments() < 5 {
		t.Fatalf("%d segments: the test needs several", l.NumSegments())
	}
	leo := l.LogEndOffset()
	for range 3000 {
		offset := rng.Int64N(leo + 1)
		maxOffset := offset + rng.Int64N(leo-offset+1)
		if rng.IntN(3) == 0 {
			maxOffset = leo
		}
		maxBytes := int32(rng.IntN(6000))
		minOne := rng.IntN(2) == 0
		want := wholeScanRead(t, l, offset, maxBytes, maxOffset, minOne)
		got, err := l.Read(offset, maxBytes, maxOffset, minOne)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Read(%d, %d, %d, %v): %v, want %v", offset, maxBytes, maxOffset, minOne, offsetsOf(t, got), offsetsOf(t, want))
		}
		fr, err := l.ReadFileRecords(offset, maxBytes, maxOffset, minOne)
		if err != nil {
			t.Fatal(err)
		}
		fromFile, err := fr.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		wantLast := int64(-1)
		if offs := offsetsOf(t, want); len(offs) > 0 {
			wantLast = offs[len(offs)-1]
		}
		if !bytes.Equal(fromFile, want) || fr.Len() != len(want) || fr.LastOffset() != wantLast {
			t.Fatalf("ReadFileRecords(%d, %d, %d, %v): %d bytes ending at %d, want %d ending at %d", offset, maxBytes, maxOffset, minOne, fr.Len(), fr.LastOffset(), len(want), wantLast)
		}
		fr.Close()
	}
}

// wholeScanRead is Read's rule applied to the segment file read whole.
func wholeScanRead(t *testing.T, l *Log, offset int64, maxBytes int32, maxOffset int64, minOne bool) []byte {
	t.Helper()
	for _, s := range l.segments {
		data, err := os.ReadFile(s.log.Name())
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		found := false
		for b, err := range wire.Batches(data) {
			if err != nil {
				t.Fatal(err)
			}
			if b.LastOffset() < offset {
				continue
			}
			found = true
			if b.LastOffset() >= maxOffset || (len(out)+len(b.Raw) > int(maxBytes) && !(minOne && out == nil)) {
				break
			}
			out = append(out, b.Raw...)
			if minOne && len(out) > int(maxBytes) {
				break
			}
		}
		if found {
			return append([]byte{}, out...)
		}
	}
	return []byte{}
}

// TestFileRecordsOutliveTheirSegment reads FileRecords after retention deleted their segment: the
// descriptor they hold keeps the data, as Kafka's sendfile of a deleted segment still sends it.
func TestFileRecordsOutliveTheirSegment(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 10
	l := openTestLog(t, t.TempDir(), cfg)
	for range 10 {
		mustAppend(t, l, makeSizedBatch(1, 400))
	}
	want, err := l.Read(0, 1<<20, l.LogEndOffset(), false)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := l.ReadFileRecords(0, 1<<20, l.LogEndOffset(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	f, _ := fr.File()
	name := f.Name()
	l.SetHighWatermark(l.LogEndOffset())
	if err := l.MaybeIncrementLogStartOffset(l.LogEndOffset()-1, ClientRecordDeletion); err != nil {
		t.Fatal(err)
	}
	if n, err := l.DeleteOldSegments(time.Now().UnixMilli()); n == 0 || err != nil {
		t.Fatalf("DeleteOldSegments: %d, %v", n, err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("segment %s still there (%v): the test must delete it", name, err)
	}
	got, err := fr.Bytes()
	if err != nil || !bytes.Equal(got, want) || len(want) == 0 {
		t.Fatalf("after the segment was deleted: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
}
