package storage

import (
	"bytes"
	"os"
	"testing"

	"github.com/zkafka/zkafka/wire"
)

// FuzzAppendAsLeader feeds arbitrary bytes to AppendAsLeader after a known batch. Whatever the input,
// the append must not panic; a rejected append must leave the log as it was; an accepted one must leave
// only valid, contiguous batches that survive a reopen with full recovery. With fixCRCs set the CRCs of
// the input's batches are made valid first, so that the fuzzer reaches the checks behind the CRC. With
// legacy set the log stores message format v1 (message.format.version 0.10), converting what it takes.
func FuzzAppendAsLeader(f *testing.F) {
	good := makeBatch(10, "k", "v")
	for _, legacy := range []bool{false, true} {
		f.Add(good, false, legacy)
		f.Add(bytes.Join([][]byte{good, makeTimedBatch(5, 3, 9)}, nil), false, legacy)
		f.Add(good[:40], false, legacy)
		f.Add(makeGzipBatch(f, 1, 2), true, legacy)
		f.Add(encodeBatch([]byte{0x02, 0x00}, 1, 0, 0, 0), true, legacy)
		f.Add([]byte{}, false, legacy)
	}

	f.Fuzz(func(t *testing.T, data []byte, fixCRCs, legacy bool) {
		if fixCRCs {
			fixAllCRCs(data)
		}
		cfg := testConfig()
		cfg.MaxMessageBytes = 1 << 16
		if legacy {
			cfg.MessageFormat = wire.MagicV1
		}
		dir := memoryDir(t)
		l, err := Open(dir, cfg, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		mustAppend(t, l, makeBatch(1, "first"))
		size := l.Size()

		info, err := l.AppendAsLeader(data, 3)
		if err != nil {
			if l.LogEndOffset() != 1 || l.Size() != size {
				t.Fatalf("rejected append (%v) changed the log: LEO %d, size %d -> %d", err, l.LogEndOffset(), size, l.Size())
			}
			return
		}
		if len(data) > 0 && (info.FirstOffset != 1 || l.LogEndOffset() != info.LastOffset+1) {
			t.Fatalf("append info %+v with LEO %d", info, l.LogEndOffset())
		}
		leo := l.LogEndOffset()
		checkLog(t, l, leo)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := Open(dir, cfg, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l2.Close()
		if l2.LogEndOffset() != leo {
			t.Fatalf("recovery changed the LEO from %d to %d", leo, l2.LogEndOffset())
		}
		checkLog(t, l2, leo)
	})
}

// fixAllCRCs recomputes the CRC of every complete batch in data, stopping at the first that does not fit.
func fixAllCRCs(data []byte) {
	for p := 0; p < len(data); {
		b, err := wire.ReadBatch(data[p:])
		if err != nil {
			return
		}
		fixCRC(b.Raw)
		p += len(b.Raw)
	}
}

// checkLog reads the log batch by batch and checks framing, CRCs and contiguous offsets up to leo.
func checkLog(t *testing.T, l *Log, leo int64) {
	t.Helper()
	for off := int64(0); off < leo; {
		data, err := l.Read(off, 1, leo, true)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		if len(data) == 0 {
			t.Fatalf("Read(%d) empty below LEO %d", off, leo)
		}
		b, err := wire.ReadBatch(data)
		first := b.BaseOffset
		if err == nil && b.Magic < wire.MagicV2 {
			// A legacy wrapper's header has its last offset: the first is its first record's.
			for r, rerr := range b.Records() {
				first, err = b.RecordOffset(r), rerr
				break
			}
		}
		if err != nil || len(b.Raw) != len(data) || first != off || checkFraming(b) != nil {
			t.Fatalf("batch at %d: header %+v, %d bytes, %v", off, b.BatchHeader, len(data), err)
		}
		off = b.LastOffset() + 1
	}
}

// memoryDir is a temporary directory in memory (/dev/shm) where there is
// one, else on disk: a fuzz target opens, syncs and closes a log per input,
// and what it checks is the log's logic, not the disk's fsync latency.
func memoryDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "zkafka-fuzz-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
