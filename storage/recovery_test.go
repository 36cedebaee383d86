package storage

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkafka/zkafka/wire"
)

// writeLog fills a log in dir with n batches of two records and closes it, returning the values
// written and the position at which each batch starts in the last segment.
func writeLog(t *testing.T, dir string, cfg LogConfig, n int) (values []string, lastSegment int64, positions []int64) {
	t.Helper()
	l, err := Open(dir, cfg, 0, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		a, b := fmt.Sprintf("a%03d", i), fmt.Sprintf("b%03d-%s", i, bytes.Repeat([]byte{'q'}, 40))
		values = append(values, a, b)
		seg, pos := l.active(), l.active().size
		mustAppend(t, l, makeBatch(int64(i), a, b))
		if l.active() != seg {
			positions, pos = nil, 0
		}
		positions = append(positions, pos)
	}
	lastSegment = l.active().baseOffset
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return values, lastSegment, positions
}

func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.WarnLevel)
	return zap.New(core), logs
}

func TestRecoveryTornTail(t *testing.T) {
	for _, rp := range []struct {
		name          string
		recoveryPoint int64
	}{{"from zero", 0}, {"recovery point at the old LEO", 1 << 40}} {
		t.Run(rp.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.SegmentBytes = 1024
			dir := t.TempDir()
			values, last, positions := writeLog(t, dir, cfg, 30)
			segFile := segmentPath(dir, last, logSuffix)
			st, _ := os.Stat(segFile)
			// Cut the last batch in half: a crash in the middle of a write.
			lastPos := positions[len(positions)-1]
			cut := lastPos + (st.Size()-lastPos)/2
			if err := os.Truncate(segFile, cut); err != nil {
				t.Fatal(err)
			}

			logger, logs := observedLogger()
			l, err := Open(dir, cfg, rp.recoveryPoint, logger)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.LogEndOffset() != 58 {
				t.Fatalf("LEO %d after losing the last batch (offsets 58-59), want 58", l.LogEndOffset())
			}
			if st, _ := os.Stat(segFile); st.Size() != lastPos {
				t.Fatalf("segment is %d bytes, want it cut to the last valid batch end %d", st.Size(), lastPos)
			}
			warned := logs.FilterMessage("Truncated invalid bytes at the end of segment").All()
			if len(warned) != 1 || warned[0].ContextMap()["truncated-bytes"] != cut-lastPos {
				t.Fatalf("warnings %v, want one naming %d truncated bytes", warned, cut-lastPos)
			}
			if got := readAllRecords(t, l); !slices.Equal(got, values[:58]) {
				t.Fatalf("recovered %d records, want %d", len(got), 58)
			}
			info := mustAppend(t, l, makeBatch(1, "after"))
			if info.FirstOffset != 58 {
				t.Fatalf("append after recovery at %d, want 58", info.FirstOffset)
			}
		})
	}
}

func TestRecoveryCorruptLastBatch(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	dir := t.TempDir()
	values, last, positions := writeLog(t, dir, cfg, 30)
	segFile := segmentPath(dir, last, logSuffix)
	f, err := os.OpenFile(segFile, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	var b [1]byte
	f.ReadAt(b[:], st.Size()-3) // inside the last record's value
	b[0] ^= 0x01
	f.WriteAt(b[:], st.Size()-3)
	f.Close()

	logger, logs := observedLogger()
	l, err := Open(dir, cfg, 0, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.LogEndOffset() != 58 {
		t.Fatalf("LEO %d, want 58", l.LogEndOffset())
	}
	if got := logs.FilterMessage("Truncated invalid bytes at the end of segment").Len(); got != 1 {
		t.Fatalf("%d truncation warnings, want 1", got)
	}
	if size := l.active().size; size != positions[len(positions)-1] {
		t.Fatalf("active segment size %d, want %d", size, positions[len(positions)-1])
	}
	if got := readAllRecords(t, l); !slices.Equal(got, values[:58]) {
		t.Fatalf("recovered %d records, want 58", len(got))
	}
	mustAppend(t, l, makeBatch(1, "after"))
	if got := readAllRecords(t, l); len(got) != 59 || got[58] != "after" {
		t.Fatalf("after append: %d records", len(got))
	}
}

func TestRecoveryDropsSegmentsAfterCorruption(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	dir := t.TempDir()
	writeLog(t, dir, cfg, 40)
	l := openTestLog(t, dir, cfg)
	bases := segmentBases(l)
	l.Close()
	if len(bases) < 4 {
		t.Fatalf("want 4+ segments, have %v", bases)
	}
	// Corrupt the first batch of the second segment; recover everything from 0.
	victim := segmentPath(dir, bases[1], logSuffix)
	data, _ := os.ReadFile(victim)
	data[wire.BatchHeaderSize+2] ^= 0xff
	os.WriteFile(victim, data, 0o644)

	l2 := openTestLog(t, dir, cfg)
	if got := segmentBases(l2); !slices.Equal(got, bases[:2]) {
		t.Fatalf("segments %v, want %v", got, bases[:2])
	}
	if l2.LogEndOffset() != bases[1] {
		t.Fatalf("LEO %d, want %d", l2.LogEndOffset(), bases[1])
	}
	for _, base := range bases[2:] {
		if _, err := os.Stat(segmentPath(dir, base, logSuffix)); !os.IsNotExist(err) {
			t.Fatalf("segment %d not deleted: %v", base, err)
		}
	}
}

func TestRecoveryTrustsSegmentsBelowRecoveryPoint(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	dir := t.TempDir()
	writeLog(t, dir, cfg, 40)
	l := openTestLog(t, dir, cfg)
	bases := segmentBases(l)
	leo := l.LogEndOffset()
	l.Close()
	// A corrupt CRC in a trusted segment goes unnoticed: only data past the recovery point is verified.
	victim := segmentPath(dir, bases[0], logSuffix)
	data, _ := os.ReadFile(victim)
	data[wire.BatchHeaderSize+2] ^= 0xff
	os.WriteFile(victim, data, 0o644)

	l2, err := Open(dir, cfg, bases[2], testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.LogEndOffset() != leo || !slices.Equal(segmentBases(l2), bases) {
		t.Fatalf("LEO %d, segments %v; want %d, %v", l2.LogEndOffset(), segmentBases(l2), leo, bases)
	}
}

func TestRecoveryRebuildsMissingOrCorruptIndex(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 2048
	cfg.IndexIntervalBytes = 128
	dir := t.TempDir()
	values, _, _ := writeLog(t, dir, cfg, 60)
	l := openTestLog(t, dir, cfg)
	bases := segmentBases(l)
	leo := l.LogEndOffset()
	l.Close()

	wantIndex, _ := os.ReadFile(segmentPath(dir, bases[0], indexSuffix))
	wantTimeIndex, _ := os.ReadFile(segmentPath(dir, bases[0], timeIndexSuffix))
	if len(wantIndex) == 0 || len(wantTimeIndex) == 0 {
		t.Fatal("first segment has empty indexes")
	}
	os.Remove(segmentPath(dir, bases[0], indexSuffix))
	os.WriteFile(segmentPath(dir, bases[1], timeIndexSuffix), []byte("garbage, not 12-byte entries"), 0o644)

	logger, logs := observedLogger()
	l2, err := Open(dir, cfg, leo, logger)
	if err != nil {
		t.Fatal(err)
	}
	if got := logs.FilterMessage("Found a missing or corrupt index, rebuilding it").Len(); got != 2 {
		t.Fatalf("%d index rebuild warnings, want 2", got)
	}
	if got := readAllRecords(t, l2); !slices.Equal(got, values) {
		t.Fatalf("read %d records after rebuild, want %d", len(got), len(values))
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	gotIndex, _ := os.ReadFile(segmentPath(dir, bases[0], indexSuffix))
	if !bytes.Equal(gotIndex, wantIndex) {
		t.Fatalf("rebuilt index (%d bytes) differs from the original (%d bytes)", len(gotIndex), len(wantIndex))
	}
	gotTime, _ := os.ReadFile(segmentPath(dir, bases[1], timeIndexSuffix))
	if len(gotTime) == 0 || len(gotTime)%timeEntrySize != 0 {
		t.Fatalf("rebuilt time index is %d bytes", len(gotTime))
	}
}

// copyDir copies the regular files of src into a new directory: a crash image of an open log.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
	return dst
}

func TestRecoveryAfterCrashWithPreallocatedIndexes(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 64
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, cfg)
	for i := range 50 {
		mustAppend(t, l, makeBatch(int64(1000+i), fmt.Sprint(i)))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed := l.RecoveryPoint()
	mustAppend(t, l, makeBatch(2000, "unflushed"))
	want := readAllRecords(t, l)
	image := copyDir(t, dir) // indexes still preallocated, as after a crash

	for _, tc := range []struct {
		recoveryPoint int64
		recovers      bool
	}{{0, true}, {flushed, true}, {l.LogEndOffset(), false}} {
		t.Run(fmt.Sprint("recovery point ", tc.recoveryPoint), func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			l2, err := Open(copyDir(t, image), cfg, tc.recoveryPoint, zap.New(core))
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			if got := logs.FilterMessage("Recovering unflushed segment").Len() > 0; got != tc.recovers {
				t.Fatalf("recovered: %v, want %v", got, tc.recovers)
			}
			if got := readAllRecords(t, l2); !slices.Equal(got, want) {
				t.Fatalf("read %d records, want %d", len(got), len(want))
			}
			if off, ts, ok := l2.FetchOffsetByTimestamp(1025); !ok || off != 25 || ts != 1025 {
				t.Fatalf("timestamp lookup gave %d, %d, %v", off, ts, ok)
			}
			if len(l2.active().index.entries) == 0 {
				t.Fatal("no index entries after loading")
			}
		})
	}
}

func TestRecoveryRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, testConfig(), 3)
	for _, name := range []string{"00000000000000000100.index", "00000000000000000100.timeindex", "00000000000000000007.log.deleted", "00000000000000000000.log.cleaned"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	keep := filepath.Join(dir, "leader-epoch-checkpoint")
	os.WriteFile(keep, []byte("0\n0\n"), 0o644)
	l := openTestLog(t, dir, testConfig())
	if l.LogEndOffset() != 6 {
		t.Fatalf("LEO %d, want 6", l.LogEndOffset())
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The producer snapshot at the LEO was written when writeLog closed the log.
	want := []string{"00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
		"00000000000000000006.snapshot", "leader-epoch-checkpoint"}
	if !slices.Equal(names, want) {
		t.Fatalf("directory holds %v, want %v", names, want)
	}
}

// BenchmarkOpenAfterCrash opens a log left as kill -9 leaves one: its active segment's indexes still
// preallocated to Kafka's default log.index.size.max.bytes (10 MiB each, sparse, a few entries
// written), and recovered from the start. A broker restarting after kill -9 does this once per
// partition.
func BenchmarkOpenAfterCrash(b *testing.B) {
	cfg := DefaultLogConfig()
	cfg.IndexIntervalBytes = 64
	dir := filepath.Join(b.TempDir(), "t-0")
	l, err := Open(dir, cfg, 0, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for i := range 50 {
		mustAppend(b, l, makeBatch(int64(1000+i), fmt.Sprint(i)))
	}
	b.ReportAllocs()
	for b.Loop() {
		// The first log stays open, untrimmed: the files are as a crash leaves them.
		l2, err := Open(dir, cfg, 0, zap.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		if l2.LogEndOffset() != 50 {
			b.Fatalf("log end offset %d after recovery, want 50", l2.LogEndOffset())
		}
		for _, s := range l2.segments {
			s.closeFiles() // not Close, which would trim the indexes
		}
	}
}

// TestIndexReadStopsAtTheHole: an index preallocated to 10 MiB with a few entries written, as the
// active segment's is after a crash, is read as its written entries, not 10 MiB of zeros, and a
// log on such files recovers with its index whole.
func TestIndexReadStopsAtTheHole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00000000000000000000.timeindex")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 10 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	// 400 time index entries (12 bytes each): the second block's start is written too.
	entries := make([]byte, 400*timeEntrySize)
	for i := range entries {
		entries[i] = byte(i%251 + 1)
	}
	if _, err := f.WriteAt(entries, 0); err != nil {
		t.Fatal(err)
	}
	raw, gotSize, err := readWritten(f, timeEntrySize)
	if err != nil {
		t.Fatal(err)
	}
	if gotSize != size || len(raw) > 8192 || len(raw) < len(entries) || len(raw)%timeEntrySize != 0 || !bytes.Equal(raw[:len(entries)], entries) {
		t.Fatalf("read %d bytes of a %d-byte file (size %d), want the %d written bytes in whole entries, at most two blocks",
			len(raw), size, gotSize, len(entries))
	}

	cfg := DefaultLogConfig()
	cfg.IndexIntervalBytes = 64
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, cfg)
	for i := range 50 {
		mustAppend(t, l, makeBatch(int64(1000+i), fmt.Sprint(i)))
	}
	crashed, err := Open(dir, cfg, 0, testLogger(t)) // l stays open, its indexes untrimmed
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, s := range crashed.segments {
			s.closeFiles()
		}
	}()
	if got, want := len(crashed.active().index.entries), len(l.active().index.entries); got != want || want == 0 {
		t.Fatalf("recovered index has %d entries, the live one %d", got, want)
	}
	if off, ts, ok := crashed.FetchOffsetByTimestamp(1025); !ok || off != 25 || ts != 1025 {
		t.Fatalf("timestamp lookup gave %d, %d, %v", off, ts, ok)
	}
}

// openFiles counts this process's open descriptors of files in dir (not of dir itself, which a
// background flush opens for a moment to sync it).
func openFiles(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

// TestIndexFilesOpenOnlyWhileWritten: a log holds one descriptor per segment, its log file's, as
// Kafka does; the active segment's two index files are open only once an entry is written to them,
// and a rolled segment's are closed.
func TestIndexFilesOpenOnlyWhileWritten(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 64
	cfg.SegmentBytes = 1 << 10
	dir := filepath.Join(t.TempDir(), "t-0")
	l, err := Open(dir, cfg, 0, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := openFiles(t, dir); got != 1 {
		t.Fatalf("a new log holds %d descriptors, want 1 (its segment's log file)", got)
	}
	for i := range 40 {
		mustAppend(t, l, makeBatch(int64(1000+i), fmt.Sprint(i)))
	}
	segments := len(l.segments)
	if segments < 3 {
		t.Fatalf("%d segments, want several", segments)
	}
	active := l.active()
	written := 0
	if len(active.index.entries) > 0 {
		written++
	}
	if len(active.timeIndex.entries) > 0 {
		written++
	}
	if got := openFiles(t, dir); got != segments+written {
		t.Fatalf("%d descriptors for %d segments with %d index files of the active one written, want %d", got, segments, written, segments+written)
	}
	want := readAllRecords(t, l)
	end := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := openFiles(t, dir); got != 0 {
		t.Fatalf("%d descriptors left after Close", got)
	}
	// Reopened as after a clean shutdown: the recovery point at the log end, nothing rebuilt.
	l, err = Open(dir, cfg, end, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if got := openFiles(t, dir); got != segments {
		t.Fatalf("reopened: %d descriptors for %d segments, want one each", got, segments)
	}
	if got := readAllRecords(t, l); !slices.Equal(got, want) {
		t.Fatalf("read %d records after reopening, want %d", len(got), len(want))
	}
	if off, ts, ok := l.FetchOffsetByTimestamp(1025); !ok || off != 25 || ts != 1025 {
		t.Fatalf("timestamp lookup gave %d, %d, %v", off, ts, ok)
	}
}
