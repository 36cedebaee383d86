package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/wire"
)

func TestAppendReadRoundTrip(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	info := mustAppend(t, l, makeBatch(1000, "a", "b", "c"))
	want := AppendInfo{FirstOffset: 0, LastOffset: 2, MaxTimestamp: 1002, OffsetOfMaxTimestamp: 2, LogAppendTime: -1, LogStartOffset: 0, ValidBytes: info.ValidBytes}
	if info != want {
		t.Fatalf("AppendInfo %+v, want %+v", info, want)
	}
	info = mustAppend(t, l, makeBatch(2000, "d"), makeBatch(2001, "e", "f"))
	if info.FirstOffset != 3 || info.LastOffset != 5 || info.MaxTimestamp != 2002 {
		t.Fatalf("second append %+v, want offsets 3..5, max timestamp 2002", info)
	}
	if l.LogEndOffset() != 6 {
		t.Fatalf("LEO %d, want 6", l.LogEndOffset())
	}

	data, err := l.Read(0, 1<<20, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	batches := decodeBatches(t, data)
	if len(batches) != 3 {
		t.Fatalf("read %d batches, want 3", len(batches))
	}
	for i, b := range batches {
		if b.PartitionLeaderEpoch != 7 {
			t.Errorf("batch %d has leader epoch %d, want 7", i, b.PartitionLeaderEpoch)
		}
	}
	if got := offsetsOf(t, data); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("offsets %v", got)
	}
	if got := valuesOf(t, data); !slices.Equal(got, []string{"a", "b", "c", "d", "e", "f"}) {
		t.Fatalf("values %v", got)
	}

	// A read from inside a batch starts at that batch.
	data, err = l.Read(4, 1<<20, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(t, data); !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("read from 4 gave offsets %v, want the batch 4..5", got)
	}
}

func TestAppendStoresBatchesUnchangedButOffsetAndEpoch(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	mustAppend(t, l, makeBatch(1, "x"))
	sent := makeBatch(5, "hello", "world")
	orig := bytes.Clone(sent)
	mustAppend(t, l, sent)
	data, err := l.Read(1, 1<<20, l.LogEndOffset(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data[wire.PosLength:wire.PosPartitionLeaderEpoch], orig[wire.PosLength:wire.PosPartitionLeaderEpoch]) ||
		!bytes.Equal(data[wire.PosMagic:], orig[wire.PosMagic:]) {
		t.Fatal("stored batch differs from the produced one outside baseOffset and partitionLeaderEpoch")
	}
	if h, err := wire.ReadBatchHeader(data); err != nil || h.BaseOffset != 1 || h.PartitionLeaderEpoch != 7 {
		t.Fatalf("stored header %+v, want base offset 1 and epoch 7", h)
	}
}

func TestReadBounds(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	b1 := makeBatch(1, "a", "b") // offsets 0-1
	b2 := makeBatch(2, "c")      // 2
	b3 := makeBatch(3, "d", "e") // 3-4
	mustAppend(t, l, b1)
	mustAppend(t, l, b2)
	mustAppend(t, l, b3)

	tests := []struct {
		name          string
		offset        int64
		maxBytes      int32
		maxOffset     int64
		minOneMessage bool
		want          []int64
	}{
		{"everything", 0, 1 << 20, 5, false, []int64{0, 1, 2, 3, 4}},
		{"high watermark stops before a batch", 0, 1 << 20, 3, false, []int64{0, 1, 2}},
		{"high watermark inside a batch leaves it out", 0, 1 << 20, 4, false, []int64{0, 1, 2}},
		{"offset at high watermark", 3, 1 << 20, 3, false, nil},
		{"maxBytes fits two batches", 0, int32(len(b1) + len(b2) + len(b3) - 1), 5, false, []int64{0, 1, 2}},
		{"maxBytes fits exactly", 0, int32(len(b1) + len(b2) + len(b3)), 5, false, []int64{0, 1, 2, 3, 4}},
		{"first batch too large", 0, int32(len(b1) - 1), 5, false, nil},
		{"first batch too large, minOneMessage", 0, int32(len(b1) - 1), 5, true, []int64{0, 1}},
		{"minOneMessage with zero maxBytes", 2, 0, 5, true, []int64{2}},
		{"minOneMessage still honours the high watermark", 3, 0, 3, true, nil},
		{"read at LEO", 5, 1 << 20, 5, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := l.Read(tt.offset, tt.maxBytes, tt.maxOffset, tt.minOneMessage)
			if err != nil {
				t.Fatal(err)
			}
			if data == nil {
				t.Fatal("Read returned nil instead of empty records")
			}
			if got := offsetsOf(t, data); !slices.Equal(got, tt.want) {
				t.Fatalf("offsets %v, want %v", got, tt.want)
			}
			if len(data) > int(tt.maxBytes) && !tt.minOneMessage {
				t.Fatalf("read %d bytes with maxBytes %d", len(data), tt.maxBytes)
			}
		})
	}

	for _, off := range []int64{-1, 6, 100} {
		if _, err := l.Read(off, 1<<20, 5, true); err == nil {
			t.Fatalf("Read(%d) succeeded", off)
		} else {
			wantKerr(t, err, kerr.OffsetOutOfRange)
		}
	}
}

func TestAppendRejectsBadInput(t *testing.T) {
	good := makeBatch(1, "ok")
	badCRC := makeBatch(1, "bad")
	badCRC[len(badCRC)-1] ^= 0xff
	v1 := makeBatch(1, "old")
	v1[wire.PosMagic] = 1
	countMismatch := makeBatch(1, "a", "b")
	countMismatch[wire.PosRecordCount+3] = 3 // claims 3 records, lastOffsetDelta says 2
	fixCRC(countMismatch)
	noRecords := encodeBatch(nil, 0, 1, 1, 0)
	control := makeBatch(1, "c")
	control[wire.PosAttributes+1] |= wire.AttrControl
	fixCRC(control)
	junkRecords := makeBatch(1, "abc")
	junkRecords[wire.BatchHeaderSize] = 0x7f // record length varint now claims more bytes than there are
	fixCRC(junkRecords)
	tooLarge := makeSizedBatch(1, 4096)

	tests := []struct {
		name    string
		records []byte
		want    *kerr.Error
	}{
		{"bad CRC", badCRC, kerr.CorruptMessage},
		{"magic 1", v1, kerr.UnsupportedForMessageFormat},
		{"truncated batch", good[:len(good)-3], kerr.CorruptMessage},
		{"trailing bytes", append(bytes.Clone(good), 1, 2, 3), kerr.CorruptMessage},
		{"length below header", withLength(good, 10), kerr.CorruptMessage},
		{"record count mismatch", countMismatch, kerr.InvalidRecord},
		{"no records", noRecords, kerr.InvalidRecord},
		{"control batch from a client", control, kerr.InvalidRecord},
		{"malformed records", junkRecords, kerr.InvalidRecord},
		{"too large", tooLarge, kerr.MessageTooLarge},
		{"one bad batch among good ones", bytes.Join([][]byte{good, good, badCRC, good}, nil), kerr.CorruptMessage},
		{"too large after good ones", bytes.Join([][]byte{good, tooLarge}, nil), kerr.MessageTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxMessageBytes = 2048
			l := openTestLog(t, t.TempDir(), cfg)
			mustAppend(t, l, makeBatch(1, "before"))
			sizeBefore := l.Size()
			_, err := l.AppendAsLeader(bytes.Clone(tt.records), 1)
			wantKerr(t, err, tt.want)
			if l.LogEndOffset() != 1 || l.Size() != sizeBefore {
				t.Fatalf("failed append changed the log: LEO %d, size %d (was %d)", l.LogEndOffset(), l.Size(), sizeBefore)
			}
			mustAppend(t, l, makeBatch(1, "after"))
			if got := readAllRecords(t, l); !slices.Equal(got, []string{"before", "after"}) {
				t.Fatalf("log holds %v", got)
			}
		})
	}
}

func TestAppendEmptyRecords(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	info, err := l.AppendAsLeader(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if info.FirstOffset != -1 || info.LastOffset != -1 || l.LogEndOffset() != 0 {
		t.Fatalf("empty append gave %+v, LEO %d", info, l.LogEndOffset())
	}
}

func TestAppendLargerThanSegment(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	l := openTestLog(t, t.TempDir(), cfg)
	_, err := l.AppendAsLeader(makeSizedBatch(1, 2000), 0)
	wantKerr(t, err, kerr.RecordListTooLarge)
}

// fixCRC recomputes the CRC of a batch edited in place.
func fixCRC(b []byte) {
	sum := castagnoliSum(b[wire.PosAttributes:])
	b[wire.PosCRC], b[wire.PosCRC+1], b[wire.PosCRC+2], b[wire.PosCRC+3] = byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum)
}

func withLength(b []byte, length int32) []byte {
	c := bytes.Clone(b)
	c[wire.PosLength], c[wire.PosLength+1], c[wire.PosLength+2], c[wire.PosLength+3] = byte(length>>24), byte(length>>16), byte(length>>8), byte(length)
	return c
}

func TestSegmentRollAndReadAcrossSegments(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 2048
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg)
	var want []string
	for i := range 40 {
		v := fmt.Sprintf("record-%02d-%s", i, bytes.Repeat([]byte{'p'}, 200))
		want = append(want, v)
		mustAppend(t, l, makeBatch(int64(i), v))
	}
	bases := segmentBases(l)
	if len(bases) < 4 {
		t.Fatalf("only %d segments after 40 appends of ~300 bytes into 2 KiB segments", len(bases))
	}
	for i, base := range bases {
		if i > 0 && base <= bases[i-1] {
			t.Fatalf("segment bases not increasing: %v", bases)
		}
		st, err := os.Stat(segmentPath(dir, base, logSuffix))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > cfg.SegmentBytes {
			t.Fatalf("segment %d is %d bytes, above segment.bytes", base, st.Size())
		}
		if i < len(bases)-1 {
			// Rolled segments have trimmed indexes.
			if st, err := os.Stat(segmentPath(dir, base, indexSuffix)); err != nil || st.Size()%offsetEntrySize != 0 || st.Size() >= int64(cfg.MaxIndexSize) {
				t.Fatalf("rolled segment %d index not trimmed: %v %v", base, st.Size(), err)
			}
		}
	}
	// Each new segment starts at the LEO of the time: its base is the offset of its first batch.
	for _, base := range bases {
		data, err := l.Read(base, 1<<20, l.LogEndOffset(), false)
		if err != nil {
			t.Fatal(err)
		}
		got := offsetsOf(t, data)
		if got[0] != base {
			t.Fatalf("segment %d starts with offset %d", base, got[0])
		}
		// A read never crosses into the next segment.
		if i := slices.Index(bases, base); i < len(bases)-1 && got[len(got)-1] >= bases[i+1] {
			t.Fatalf("read from %d crossed into segment %d", base, bases[i+1])
		}
	}
	if got := readAllRecords(t, l); !slices.Equal(got, want) {
		t.Fatalf("read back %d records, want %d", len(got), len(want))
	}
	// The active segment's index stays preallocated.
	if st, err := os.Stat(segmentPath(dir, bases[len(bases)-1], indexSuffix)); err != nil || st.Size() != int64(cfg.MaxIndexSize) {
		t.Fatalf("active index size %d, want preallocated %d (%v)", st.Size(), cfg.MaxIndexSize, err)
	}
}

func TestRollWhenIndexFull(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 0 // an entry for every append after the first
	cfg.MaxIndexSize = 4 * offsetEntrySize
	l := openTestLog(t, t.TempDir(), cfg)
	for range 12 {
		mustAppend(t, l, makeBatch(1, "v"))
	}
	if n := l.NumSegments(); n < 3 {
		t.Fatalf("%d segments; a 4-entry index should have rolled more", n)
	}
	if got := readAllRecords(t, l); len(got) != 12 {
		t.Fatalf("read %d records, want 12", len(got))
	}
}

func TestRollBySegmentMs(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentMs = 1000
	l := openTestLog(t, t.TempDir(), cfg)
	mustAppend(t, l, makeBatch(10_000, "a"))
	mustAppend(t, l, makeBatch(10_900, "b")) // within segment.ms of the first batch
	if n := l.NumSegments(); n != 1 {
		t.Fatalf("%d segments, want 1", n)
	}
	mustAppend(t, l, makeBatch(11_001, "c")) // 1001 ms after the segment's first timestamp
	if bases := segmentBases(l); !slices.Equal(bases, []int64{0, 2}) {
		t.Fatalf("segment bases %v, want [0 2]", bases)
	}
}

func TestIndexLookups(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 100
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg)
	for i := range 50 {
		mustAppend(t, l, makeBatch(int64(i), fmt.Sprintf("value-%03d", i), fmt.Sprintf("second-%03d", i)))
	}
	seg := l.segments[0]
	if len(seg.index.entries) < 10 {
		t.Fatalf("only %d index entries for 50 appends at a 100-byte interval", len(seg.index.entries))
	}
	// Every entry points at the start of the batch whose last offset it names.
	for _, e := range seg.index.entries {
		h, err := seg.readHeader(int64(e.position))
		if err != nil {
			t.Fatal(err)
		}
		if h.LastOffset() != seg.baseOffset+int64(e.relOffset) {
			t.Fatalf("entry (%d, %d) points at batch %d..%d", e.relOffset, e.position, h.BaseOffset, h.LastOffset())
		}
	}
	// Lookup gives the greatest entry at or below the target, and reads from every offset start right.
	for off := range int64(100) {
		pos := seg.index.lookup(off)
		if pos > 0 {
			h, _ := seg.readHeader(pos)
			if h.LastOffset() > off {
				t.Fatalf("lookup(%d) = %d, a batch ending at %d", off, pos, h.LastOffset())
			}
		}
		data, err := l.Read(off, 100, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		got := offsetsOf(t, data)
		if got[0] != off&^1 {
			t.Fatalf("Read(%d) starts at %d, want %d", off, got[0], off&^1)
		}
	}
	// On disk the entries are 8-byte big-endian pairs.
	raw, err := os.ReadFile(segmentPath(dir, 0, indexSuffix))
	if err != nil {
		t.Fatal(err)
	}
	first := seg.index.entries[0]
	if int32(uint32(raw[0])<<24|uint32(raw[1])<<16|uint32(raw[2])<<8|uint32(raw[3])) != first.relOffset ||
		int32(uint32(raw[4])<<24|uint32(raw[5])<<16|uint32(raw[6])<<8|uint32(raw[7])) != first.position {
		t.Fatalf("index file starts % x, want entry %+v", raw[:8], first)
	}
}

func TestFetchOffsetByTimestamp(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	cfg.IndexIntervalBytes = 64
	l := openTestLog(t, t.TempDir(), cfg)
	// Batches of records with timestamps 100, 110, ..., including one compressed batch and one whose
	// timestamps go backwards inside it.
	var ts int64 = 100
	next := func() int64 { ts += 10; return ts - 10 }
	for range 10 {
		mustAppend(t, l, makeTimedBatch(next(), next(), next()))
	}
	mustAppend(t, l, makeGzipBatch(t, next(), next(), next()))
	mustAppend(t, l, makeTimedBatch(1000, 990, 1010))
	if l.NumSegments() < 2 {
		t.Fatalf("want several segments, have %d", l.NumSegments())
	}
	tests := []struct {
		ts, wantOffset, wantTs int64
		ok                     bool
	}{
		{0, 0, 100, true},
		{100, 0, 100, true},
		{101, 1, 110, true},
		{155, 6, 160, true},
		{400, 30, 400, true}, // first record of the gzip batch
		{415, 32, 420, true}, // inside the gzip batch
		{995, 33, 1000, true},
		{1001, 35, 1010, true},
		{1011, 0, 0, false},
		{LatestTimestamp, 36, -1, true},
		{EarliestTimestamp, 0, -1, true},
	}
	for _, tt := range tests {
		off, gotTs, ok := l.FetchOffsetByTimestamp(tt.ts)
		if ok != tt.ok || ok && (off != tt.wantOffset || gotTs != tt.wantTs) {
			t.Errorf("FetchOffsetByTimestamp(%d) = %d, %d, %v; want %d, %d, %v", tt.ts, off, gotTs, ok, tt.wantOffset, tt.wantTs, tt.ok)
		}
	}
}

func TestAppendAsFollower(t *testing.T) {
	leader := openTestLog(t, t.TempDir(), testConfig())
	for i := range 5 {
		mustAppend(t, leader, makeBatch(int64(i), fmt.Sprint(i), "x"))
	}
	fetched, err := leader.Read(0, 1<<20, leader.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}

	follower := openTestLog(t, t.TempDir(), testConfig())
	info, err := follower.AppendAsFollower(bytes.Clone(fetched))
	if err != nil {
		t.Fatal(err)
	}
	if info.FirstOffset != 0 || info.LastOffset != 9 || follower.LogEndOffset() != 10 {
		t.Fatalf("follower append %+v, LEO %d", info, follower.LogEndOffset())
	}
	got, err := follower.Read(0, 1<<20, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, fetched) {
		t.Fatal("follower stores different bytes than the leader sent")
	}

	// Appending the same batches again starts below the LEO.
	if _, err := follower.AppendAsFollower(bytes.Clone(fetched)); !errors.Is(err, ErrUnexpectedAppendOffset) {
		t.Fatalf("re-append: %v, want ErrUnexpectedAppendOffset", err)
	}
	// Batches out of order.
	first, err := wire.ReadBatch(fetched)
	if err != nil {
		t.Fatal(err)
	}
	second := fetched[len(first.Raw):]
	if _, err := follower.AppendAsFollower(bytes.Join([][]byte{second, first.Raw}, nil)); !errors.Is(err, ErrOffsetsOutOfOrder) {
		t.Fatalf("out-of-order append: %v, want ErrOffsetsOutOfOrder", err)
	}
	// A gap (as compaction leaves) is accepted; the LEO follows the last batch.
	gap := makeBatch(1, "later")
	setBaseOffset(gap, 20)
	if _, err := follower.AppendAsFollower(gap); err != nil {
		t.Fatal(err)
	}
	if follower.LogEndOffset() != 21 {
		t.Fatalf("LEO %d after a batch at 20, want 21", follower.LogEndOffset())
	}
	if data, err := follower.Read(12, 1<<20, 21, true); err != nil || !slices.Equal(offsetsOf(t, data), []int64{20}) {
		t.Fatalf("read inside the gap: %v %v", offsetsOf(t, data), err)
	}
}

func setBaseOffset(b []byte, offset int64) {
	for i := range 8 {
		b[wire.PosBaseOffset+i] = byte(offset >> (56 - 8*i))
	}
}

func TestTruncate(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	cfg.IndexIntervalBytes = 64
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg)
	for i := range 30 {
		mustAppend(t, l, makeBatch(int64(i), fmt.Sprintf("%02d-%s", i, bytes.Repeat([]byte{'z'}, 60)), "second"))
	}
	l.SetHighWatermark(60)
	before := segmentBases(l)
	if len(before) < 3 {
		t.Fatalf("want 3+ segments, have %v", before)
	}

	// Truncate into the middle of the second segment, on a batch boundary.
	to := before[1] + 4
	if err := l.Truncate(to); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != to || l.HighWatermark() != to || l.RecoveryPoint() > to {
		t.Fatalf("after Truncate(%d): LEO %d, HW %d, recovery point %d", to, l.LogEndOffset(), l.HighWatermark(), l.RecoveryPoint())
	}
	if got := segmentBases(l); !slices.Equal(got, before[:2]) {
		t.Fatalf("segments %v, want %v", got, before[:2])
	}
	for _, base := range before[2:] {
		if _, err := os.Stat(segmentPath(dir, base, logSuffix)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("segment %d still on disk: %v", base, err)
		}
	}
	for _, e := range l.segments[1].index.entries {
		if int64(e.position) >= l.segments[1].size {
			t.Fatalf("index entry %+v past the truncated size %d", e, l.segments[1].size)
		}
	}
	if _, err := l.Read(to, 1<<20, to, true); err != nil {
		t.Fatalf("read at new LEO: %v", err)
	}
	if _, err := l.Read(to+1, 1<<20, to, true); err == nil {
		t.Fatal("read past the new LEO succeeded")
	}

	// Inside a batch: the whole batch goes.
	if err := l.Truncate(to - 1); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != to-2 {
		t.Fatalf("LEO %d after truncating inside the batch %d..%d", l.LogEndOffset(), to-2, to-1)
	}

	// Appends continue from the new LEO, and the log reopens the same.
	info := mustAppend(t, l, makeBatch(1, "new"))
	if info.FirstOffset != to-2 {
		t.Fatalf("append after truncation at %d, want %d", info.FirstOffset, to-2)
	}
	want := readAllRecords(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, cfg)
	if got := readAllRecords(t, l2); !slices.Equal(got, want) {
		t.Fatalf("reopened log holds %d records, want %d", len(got), len(want))
	}

	// Below the first segment: the log restarts there.
	if err := l2.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if l2.LogEndOffset() != 0 || l2.NumSegments() != 1 || l2.Size() != 0 {
		t.Fatalf("after Truncate(0): LEO %d, %d segments, %d bytes", l2.LogEndOffset(), l2.NumSegments(), l2.Size())
	}
}

func TestTruncateFullyAndStartAt(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig())
	mustAppend(t, l, makeBatch(1, "a", "b"))
	if err := l.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 100 || l.LogEndOffset() != 100 {
		t.Fatalf("start %d, end %d, want 100, 100", l.LogStartOffset(), l.LogEndOffset())
	}
	if _, err := os.Stat(segmentPath(dir, 0, logSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old segment still on disk: %v", err)
	}
	info := mustAppend(t, l, makeBatch(1, "c"))
	if info.FirstOffset != 100 {
		t.Fatalf("append at %d, want 100", info.FirstOffset)
	}
	if _, err := l.Read(99, 100, 101, true); err == nil {
		t.Fatal("read below the new start succeeded")
	}
}

func TestFlushAdvancesRecoveryPoint(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	l := openTestLog(t, t.TempDir(), cfg)
	mustAppend(t, l, makeBatch(1, "a"))
	if l.RecoveryPoint() != 0 {
		t.Fatalf("recovery point %d before any flush", l.RecoveryPoint())
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPoint() != 1 {
		t.Fatalf("recovery point %d after Flush, want 1", l.RecoveryPoint())
	}
	// A roll flushes the old segment in the background up to the new segment's base.
	for range 10 {
		mustAppend(t, l, makeSizedBatch(1, 300))
	}
	l.flushes.Wait()
	bases := segmentBases(l)
	if len(bases) < 2 || l.RecoveryPoint() != bases[len(bases)-1] {
		t.Fatalf("recovery point %d, segments %v: want the active segment's base", l.RecoveryPoint(), bases)
	}
}

func TestConcurrentReadsDuringAppends(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	l := openTestLog(t, t.TempDir(), cfg)
	const appends = 300
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 3 {
		wg.Go(func() {
			var off int64
			for {
				select {
				case <-done:
					return
				default:
				}
				leo := l.LogEndOffset()
				if off >= leo {
					continue
				}
				data, err := l.Read(off, 4096, leo, true)
				if err != nil {
					errs <- err
					return
				}
				if len(data) == 0 {
					continue
				}
				// Whatever a reader sees is whole, valid batches in offset order up to the LEO it saw.
				for p := 0; p < len(data); {
					b, err := wire.ReadBatch(data[p:])
					if err != nil || b.BaseOffset != off || b.LastOffset() >= leo || checkFraming(b) != nil {
						errs <- fmt.Errorf("reader at %d (LEO %d) got batch %d..%d (%v)", off, leo, b.BaseOffset, b.LastOffset(), err)
						return
					}
					off = b.LastOffset() + 1
					p += len(b.Raw)
				}
			}
		})
	}
	for i := range appends {
		mustAppend(t, l, makeBatch(int64(i), fmt.Sprintf("v%d", i), "w"))
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestClosedLog(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	mustAppend(t, l, makeBatch(1, "a"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(makeBatch(1, "b"), 0); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if _, err := l.Read(0, 100, 1, true); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("read after close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestDeleteRemovesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, testConfig())
	mustAppend(t, l, makeBatch(1, "a"))
	if err := l.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("log dir still exists: %v", err)
	}
}

func TestMaybeIncrementLogStartOffset(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	mustAppend(t, l, makeBatch(1, "a", "b", "c"))
	wantKerr(t, l.MaybeIncrementLogStartOffset(2, ClientRecordDeletion), kerr.OffsetOutOfRange) // above the high watermark (0)
	l.SetHighWatermark(3)
	if err := l.MaybeIncrementLogStartOffset(2, ClientRecordDeletion); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 2 {
		t.Fatalf("log start offset %d, want 2", l.LogStartOffset())
	}
	if _, err := l.Read(1, 100, 3, true); err == nil {
		t.Fatal("read below the log start offset succeeded")
	}
	// A read at the start offset returns the batch that holds it.
	data, err := l.Read(2, 1000, 3, true)
	if err != nil || !slices.Equal(offsetsOf(t, data), []int64{0, 1, 2}) {
		t.Fatalf("read at start offset: %v %v", offsetsOf(t, data), err)
	}
}

func segmentBases(l *Log) []int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	bases := make([]int64, len(l.segments))
	for i, s := range l.segments {
		bases[i] = s.baseOffset
	}
	return bases
}

// One append of several batches (a follower's fetch, a producer's request) gets one offset index
// entry: its last offset at the position of its first batch. Truncating into the middle of such an
// append must drop that entry, as Kafka's OffsetIndex.truncateTo drops entries by offset; dropping
// entries by position kept it, and the truncation failed with "offset index refers to offsets past
// the segment's end" (found by `zkafka chaos`: a follower asked to truncate took its log dir offline).
func TestTruncateIntoAMultiBatchAppend(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 64
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg)
	pad := string(bytes.Repeat([]byte{'p'}, 80))
	mustAppend(t, l, makeBatch(1, "first-"+pad))
	info := mustAppend(t, l, makeBatch(2, "a-"+pad), makeBatch(3, "b-"+pad), makeBatch(4, "c-"+pad))
	if info.FirstOffset != 1 || info.LastOffset != 3 {
		t.Fatalf("append of three batches at %d..%d", info.FirstOffset, info.LastOffset)
	}
	if n := len(l.active().index.entries); n == 0 {
		t.Fatal("the append of three batches has no index entry: the test needs one")
	}
	if err := l.Truncate(2); err != nil {
		t.Fatalf("Truncate(2) into the append of 1..3: %v", err)
	}
	if l.LogEndOffset() != 2 {
		t.Fatalf("LEO %d after Truncate(2)", l.LogEndOffset())
	}
	mustAppend(t, l, makeBatch(5, "after-"+pad))
	want := readAllRecords(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readAllRecords(t, openTestLog(t, dir, cfg)); !slices.Equal(got, want) {
		t.Fatalf("reopened log holds %v, want %v", got, want)
	}
}
