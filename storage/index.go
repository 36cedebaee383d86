package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync/atomic"
)

// Entry sizes of Kafka's index files.
const (
	offsetEntrySize = 8  // int32 relative offset, int32 file position
	timeEntrySize   = 12 // int64 timestamp, int32 relative offset
)

// indexFile is the file under an offset or time index. The active segment's index file is preallocated
// to MaxIndexSize, as Kafka preallocates its memory-mapped indexes, and trimmed to its entries when the
// segment stops being active; entries are written in place with pwrite. The entries themselves live in
// memory, so the file is open only while entries are written to it: from the segment's first index
// entry until it is sealed (rolled, or the log closed). An idle partition then holds one descriptor,
// its log's, as a Kafka broker does (its indexes are memory maps, whose files it closes), instead of
// three: with tens of thousands of partitions per broker, that is what `ulimit -n` must allow.
type indexFile struct {
	// path moves with a directory rename, which holds the log's mu, as do the writes that open f.
	path       string
	f          atomic.Pointer[os.File] // nil while closed; a flush may read it concurrently
	entrySize  int
	maxEntries int
}

// openIndexFile reads (creating if missing) an index file and returns its written contents, leaving it
// closed; a missing file reads as nil, an empty existing one as an empty slice.
func openIndexFile(path string, entrySize int) (*indexFile, []byte, error) {
	_, statErr := os.Stat(path)
	missing := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	raw, size, err := readWritten(f, entrySize)
	if err != nil {
		return nil, nil, err
	}
	if missing {
		raw = nil
	}
	return &indexFile{path: path, entrySize: entrySize, maxEntries: int(size) / entrySize}, raw, nil
}

// readWritten reads an index file up to its first hole, in whole entries, and returns its size. The
// preallocated end of an index that was not trimmed (the active segment's, after a crash) was never
// written, so the file system keeps it as a hole: reading it would cost the whole
// log.index.size.max.bytes (10 MiB by default) of zeros per index, per partition, at every restart
// after kill -9. Where holes are unknown (SEEK_HOLE unsupported) the file is read whole; load skips
// trailing zero entries either way.
func readWritten(f *os.File, entrySize int) ([]byte, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := st.Size()
	n := size
	if hole, err := f.Seek(0, seekHole); err == nil && hole < n {
		// An entry that crossed into the next block would have made it data: the hole starts after
		// the last whole written entry.
		n = hole - hole%int64(entrySize)
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, 0, err
	}
	return buf, size, nil
}

func (x *indexFile) write(slot int, entry []byte) error {
	f := x.f.Load()
	if f == nil {
		var err error
		if f, err = os.OpenFile(x.path, os.O_RDWR, 0); err != nil {
			return err
		}
		x.f.Store(f)
	}
	_, err := f.WriteAt(entry, int64(slot*x.entrySize))
	return err
}

// truncate sets the file's size, through its descriptor when it is open.
func (x *indexFile) truncate(size int64) error {
	if f := x.f.Load(); f != nil {
		return f.Truncate(size)
	}
	return os.Truncate(x.path, size)
}

// sync flushes what was written through the open descriptor; a closed file was synced when closed.
func (x *indexFile) sync() error {
	if f := x.f.Load(); f != nil {
		return f.Sync()
	}
	return nil
}

// close closes the descriptor, if open; the next write opens it again.
func (x *indexFile) close() error {
	if f := x.f.Swap(nil); f != nil {
		return f.Close()
	}
	return nil
}

// preallocate makes room for maxIndexSize bytes of entries (never fewer than the entries already held),
// as Kafka does for the active segment.
func (x *indexFile) preallocate(entries int, maxIndexSize int32) error {
	x.maxEntries = max(int(maxIndexSize)/x.entrySize, entries)
	return x.truncate(int64(x.maxEntries * x.entrySize))
}

// trim cuts the file to its entries, as Kafka does when a segment is rolled or closed.
func (x *indexFile) trim(entries int) error {
	x.maxEntries = entries
	return x.truncate(int64(entries * x.entrySize))
}

// zeroed reports whether b holds only zero bytes: the unused, preallocated end of an index file.
func zeroed(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

type offsetEntry struct {
	relOffset int32
	position  int32
}

// offsetIndex is a segment's sparse offset index (`.index`): each entry maps the last offset of an append
// to the file position where that append starts.
type offsetIndex struct {
	file       *indexFile
	baseOffset int64
	entries    []offsetEntry
}

func openOffsetIndex(path string, baseOffset int64) (*offsetIndex, []byte, error) {
	f, raw, err := openIndexFile(path, offsetEntrySize)
	if err != nil {
		return nil, nil, err
	}
	return &offsetIndex{file: f, baseOffset: baseOffset}, raw, nil
}

// load parses the file's entries and checks them against a log of logSize bytes. Trailing zero entries
// are the preallocated end of an index that was not trimmed; no real entry is all zero because the first
// batch of a segment (position 0) is never indexed.
func (x *offsetIndex) load(raw []byte, logSize int64) error {
	if raw == nil {
		return errors.New("offset index file is missing")
	}
	if len(raw)%offsetEntrySize != 0 {
		return fmt.Errorf("offset index size %d is not a multiple of %d", len(raw), offsetEntrySize)
	}
	x.entries = x.entries[:0]
	for i := 0; i < len(raw); i += offsetEntrySize {
		e := offsetEntry{
			relOffset: int32(binary.BigEndian.Uint32(raw[i:])),
			position:  int32(binary.BigEndian.Uint32(raw[i+4:])),
		}
		if e == (offsetEntry{}) {
			if !zeroed(raw[i:]) {
				return fmt.Errorf("offset index has entries after an empty slot at byte %d", i)
			}
			break
		}
		if e.relOffset < 0 || e.position <= 0 || int64(e.position) >= logSize {
			return fmt.Errorf("offset index entry %d (%d, %d) is outside the segment", i/offsetEntrySize, e.relOffset, e.position)
		}
		if n := len(x.entries); n > 0 && (e.relOffset <= x.entries[n-1].relOffset || e.position <= x.entries[n-1].position) {
			return fmt.Errorf("offset index entry %d (%d, %d) does not increase", i/offsetEntrySize, e.relOffset, e.position)
		}
		x.entries = append(x.entries, e)
	}
	return nil
}

func (x *offsetIndex) full() bool { return len(x.entries) >= x.file.maxEntries }

// append records that the append ending at offset starts at position.
func (x *offsetIndex) append(offset, position int64) error {
	e := offsetEntry{relOffset: int32(offset - x.baseOffset), position: int32(position)}
	var b [offsetEntrySize]byte
	binary.BigEndian.PutUint32(b[0:], uint32(e.relOffset))
	binary.BigEndian.PutUint32(b[4:], uint32(e.position))
	if err := x.file.write(len(x.entries), b[:]); err != nil {
		return err
	}
	x.entries = append(x.entries, e)
	return nil
}

// lookup returns the position to start scanning from for offset: that of the last entry at or below it,
// or 0.
func (x *offsetIndex) lookup(offset int64) int64 {
	rel := offset - x.baseOffset
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].relOffset) > rel })
	if i == 0 {
		return 0
	}
	return int64(x.entries[i-1].position)
}

// positionBefore is the position of the nth-last entry at or below position, or 0.
func (x *offsetIndex) positionBefore(position int64, nth int) int64 {
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].position) > position })
	if i < nth {
		return 0
	}
	return int64(x.entries[i-nth].position)
}

// lastPosition is the position of the last entry, or 0.
func (x *offsetIndex) lastPosition() int64 {
	if len(x.entries) == 0 {
		return 0
	}
	return int64(x.entries[len(x.entries)-1].position)
}

// truncateToOffset drops the entries for offsets at or above offset, as Kafka's OffsetIndex.truncateTo
// does. By offset, not position: an append of several batches has one entry, its last offset at its
// first batch's position, which truncating inside the append must drop. The file keeps stale bytes
// past the last entry until they are overwritten or trimmed; only the entry count matters.
func (x *offsetIndex) truncateToOffset(offset int64) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.baseOffset+int64(x.entries[i].relOffset) >= offset })
	x.entries = x.entries[:i]
}

type timeEntry struct {
	timestamp int64
	relOffset int32
}

// timeIndex is a segment's time index (`.timeindex`): each entry says that the largest timestamp among the
// offsets up to and including the entry's offset is the entry's timestamp. Timestamps strictly increase.
type timeIndex struct {
	file       *indexFile
	baseOffset int64
	entries    []timeEntry
}

func openTimeIndex(path string, baseOffset int64) (*timeIndex, []byte, error) {
	f, raw, err := openIndexFile(path, timeEntrySize)
	if err != nil {
		return nil, nil, err
	}
	return &timeIndex{file: f, baseOffset: baseOffset}, raw, nil
}

// load parses the file's entries. An all-zero entry ends the list (see offsetIndex.load); it only loses a
// genuine first entry of timestamp 0 at the base offset, which costs a slightly longer scan.
func (x *timeIndex) load(raw []byte) error {
	if raw == nil {
		return errors.New("time index file is missing")
	}
	if len(raw)%timeEntrySize != 0 {
		return fmt.Errorf("time index size %d is not a multiple of %d", len(raw), timeEntrySize)
	}
	x.entries = x.entries[:0]
	for i := 0; i < len(raw); i += timeEntrySize {
		e := timeEntry{
			timestamp: int64(binary.BigEndian.Uint64(raw[i:])),
			relOffset: int32(binary.BigEndian.Uint32(raw[i+8:])),
		}
		if e == (timeEntry{}) {
			if !zeroed(raw[i:]) {
				return fmt.Errorf("time index has entries after an empty slot at byte %d", i)
			}
			break
		}
		if e.relOffset < 0 {
			return fmt.Errorf("time index entry %d has negative offset %d", i/timeEntrySize, e.relOffset)
		}
		if n := len(x.entries); n > 0 && (e.timestamp <= x.entries[n-1].timestamp || e.relOffset < x.entries[n-1].relOffset) {
			return fmt.Errorf("time index entry %d (%d, %d) does not increase", i/timeEntrySize, e.timestamp, e.relOffset)
		}
		x.entries = append(x.entries, e)
	}
	return nil
}

// full keeps one slot free for the entry written when the segment stops being active, as Kafka does.
func (x *timeIndex) full() bool { return len(x.entries) >= x.file.maxEntries-1 }

// last returns the last entry's timestamp and absolute offset, or ok=false.
func (x *timeIndex) last() (timestamp, offset int64, ok bool) {
	if len(x.entries) == 0 {
		return 0, 0, false
	}
	e := x.entries[len(x.entries)-1]
	return e.timestamp, x.baseOffset + int64(e.relOffset), true
}

// maybeAppend adds an entry when timestamp is above the last one; entries stay strictly increasing.
func (x *timeIndex) maybeAppend(timestamp, offset int64) error {
	if n := len(x.entries); n > 0 && timestamp <= x.entries[n-1].timestamp {
		return nil
	}
	if timestamp < 0 || timestamp == 0 && offset == x.baseOffset {
		// No timestamp to index; and an all-zero entry would read back as preallocated space.
		return nil
	}
	e := timeEntry{timestamp: timestamp, relOffset: int32(offset - x.baseOffset)}
	var b [timeEntrySize]byte
	binary.BigEndian.PutUint64(b[0:], uint64(e.timestamp))
	binary.BigEndian.PutUint32(b[8:], uint32(e.relOffset))
	if err := x.file.write(len(x.entries), b[:]); err != nil {
		return err
	}
	x.entries = append(x.entries, e)
	return nil
}

// lookup returns an offset below which every record's timestamp is under ts: that of the last entry with
// a smaller timestamp, or the base offset.
func (x *timeIndex) lookup(ts int64) int64 {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].timestamp >= ts })
	if i == 0 {
		return x.baseOffset
	}
	return x.baseOffset + int64(x.entries[i-1].relOffset)
}

// truncateToOffset drops the entries for offsets at or above offset.
func (x *timeIndex) truncateToOffset(offset int64) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.baseOffset+int64(x.entries[i].relOffset) >= offset })
	x.entries = x.entries[:i]
}
