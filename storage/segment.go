package storage

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// File name suffixes of a segment, named by its base offset as %020d.
const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
)

func segmentPath(dir string, baseOffset int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", baseOffset, suffix))
}

// segment is one `.log` file of record batches with its offset and time indexes. The owning Log
// serializes writers; readers run under the Log's read lock and see size, nextOffset and the index
// entries only as published by a completed append.
type segment struct {
	dir        string
	baseOffset int64
	log        *os.File
	index      *offsetIndex
	timeIndex  *timeIndex

	size                 int64 // bytes of complete batches
	nextOffset           int64 // last offset in the segment + 1, or baseOffset when empty
	maxTimestamp         int64 // largest batch max timestamp, -1 if none
	offsetOfMaxTimestamp int64
	// rollingBasedTimestamp is the first batch's max timestamp, from which segment.ms is measured.
	rollingBasedTimestamp    int64
	bytesSinceLastIndexEntry int64
	created                  time.Time
}

// openSegment opens (creating if missing) the three files of the segment at baseOffset and returns the
// raw index contents for load or recover to interpret.
func openSegment(dir string, baseOffset int64) (s *segment, rawIndex, rawTimeIndex []byte, err error) {
	lf, err := os.OpenFile(segmentPath(dir, baseOffset, logSuffix), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := lf.Stat()
	if err != nil {
		lf.Close()
		return nil, nil, nil, err
	}
	idx, rawIndex, err := openOffsetIndex(segmentPath(dir, baseOffset, indexSuffix), baseOffset)
	if err != nil {
		lf.Close()
		return nil, nil, nil, err
	}
	tidx, rawTimeIndex, err := openTimeIndex(segmentPath(dir, baseOffset, timeIndexSuffix), baseOffset)
	if err != nil {
		lf.Close()
		idx.file.f.Close()
		return nil, nil, nil, err
	}
	s = &segment{
		dir:                   dir,
		baseOffset:            baseOffset,
		log:                   lf,
		index:                 idx,
		timeIndex:             tidx,
		size:                  st.Size(),
		nextOffset:            baseOffset,
		maxTimestamp:          -1,
		offsetOfMaxTimestamp:  -1,
		rollingBasedTimestamp: -1,
		created:               time.Now(),
	}
	return s, rawIndex, rawTimeIndex, nil
}

// createSegment starts an empty segment at baseOffset with preallocated indexes. An empty leftover file
// of the same name (a roll that failed half way) is reused; a non-empty one is an error.
func createSegment(dir string, baseOffset int64, maxIndexSize int32) (*segment, error) {
	if st, err := os.Stat(segmentPath(dir, baseOffset, logSuffix)); err == nil && st.Size() > 0 {
		return nil, fmt.Errorf("segment %d already exists with %d bytes", baseOffset, st.Size())
	}
	s, _, _, err := openSegment(dir, baseOffset)
	if err != nil {
		return nil, err
	}
	if err := s.resetIndexes(maxIndexSize); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// resetIndexes empties both indexes and preallocates zeroed files for them.
func (s *segment) resetIndexes(maxIndexSize int32) error {
	s.index.entries = nil
	s.timeIndex.entries = nil
	for _, f := range []*indexFile{s.index.file, s.timeIndex.file} {
		if err := f.f.Truncate(0); err != nil {
			return err
		}
		if err := f.preallocate(0, maxIndexSize); err != nil {
			return err
		}
	}
	return nil
}

// preallocateIndexes readies the indexes of the segment that becomes active, zeroing the space past the
// entries so that a crash never leaves stale entries behind real ones.
func (s *segment) preallocateIndexes(maxIndexSize int32) error {
	if err := s.index.file.trim(len(s.index.entries)); err != nil {
		return err
	}
	if err := s.index.file.preallocate(len(s.index.entries), maxIndexSize); err != nil {
		return err
	}
	if err := s.timeIndex.file.trim(len(s.timeIndex.entries)); err != nil {
		return err
	}
	return s.timeIndex.file.preallocate(len(s.timeIndex.entries), maxIndexSize)
}

// load restores a trusted segment (one below the recovery point) from its index files and the batches
// after the last offset index entry, without verifying CRCs, as Kafka trusts flushed data. An error means
// the indexes or the tail do not fit together and the segment must be recovered instead.
func (s *segment) load(rawIndex, rawTimeIndex []byte) error {
	if err := s.index.load(rawIndex, s.size); err != nil {
		return err
	}
	if err := s.timeIndex.load(rawTimeIndex); err != nil {
		return err
	}
	return s.restoreTail()
}

// restoreTail recomputes nextOffset, the largest timestamp and the first batch's timestamp from the time
// index and a header scan from the last offset index entry to the end of the segment.
func (s *segment) restoreTail() error {
	s.nextOffset = s.baseOffset
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBasedTimestamp = -1, -1, -1
	if ts, off, ok := s.timeIndex.last(); ok {
		s.maxTimestamp, s.offsetOfMaxTimestamp = ts, off
	}
	start := s.index.lastPosition()
	sc := newBatchScanner(s.log, start, s.size)
	for {
		_, h, err := sc.next(false)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := s.checkOffsets(h); err != nil {
			return err
		}
		s.observe(h)
	}
	if n := len(s.index.entries); n > 0 && s.baseOffset+int64(s.index.entries[n-1].relOffset) >= s.nextOffset {
		return fmt.Errorf("offset index refers to offsets past the segment's end %d", s.nextOffset)
	}
	if _, off, ok := s.timeIndex.last(); ok && off >= s.nextOffset {
		return fmt.Errorf("time index refers to offset %d past the segment's end %d", off, s.nextOffset)
	}
	s.bytesSinceLastIndexEntry = s.size - start
	if s.size > 0 {
		h, err := s.readHeader(0)
		if err != nil {
			return err
		}
		s.rollingBasedTimestamp = h.maxTimestamp
	}
	return nil
}

// checkOffsets verifies that a batch read back from the file follows the previous one and fits the
// segment's relative offsets.
func (s *segment) checkOffsets(h batchHeader) error {
	if h.baseOffset < s.nextOffset {
		return &badBatchError{fmt.Sprintf("batch base offset %d is below the expected %d", h.baseOffset, s.nextOffset)}
	}
	if h.lastOffset()-s.baseOffset > math.MaxInt32 {
		return &badBatchError{fmt.Sprintf("batch last offset %d does not fit the segment based at %d", h.lastOffset(), s.baseOffset)}
	}
	return nil
}

// observe advances the in-memory state past batch h.
func (s *segment) observe(h batchHeader) {
	s.nextOffset = h.lastOffset() + 1
	if h.maxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = h.maxTimestamp, h.lastOffset()
	}
}

// recover rebuilds the segment's indexes and state by reading and verifying every batch, as Kafka's
// LogSegment.recover does. At the first torn or corrupt batch it truncates the file, returning how many
// bytes went and why (reason); err reports I/O failures only.
func (s *segment) recover(cfg LogConfig) (truncated int64, reason error, err error) {
	if err := s.resetIndexes(cfg.MaxIndexSize); err != nil {
		return 0, nil, err
	}
	s.nextOffset = s.baseOffset
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBasedTimestamp = -1, -1, -1
	var lastIndexEntry int64
	sc := newBatchScanner(s.log, 0, s.size)
	for {
		pos, h, err := sc.next(true)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = s.checkOffsets(h)
		}
		var bad *badBatchError
		if errors.As(err, &bad) {
			reason = fmt.Errorf("at position %d: %w", pos, err)
			break
		}
		if err != nil {
			return 0, nil, err
		}
		if pos == 0 {
			s.rollingBasedTimestamp = h.maxTimestamp
		}
		s.observe(h)
		if pos-lastIndexEntry > int64(cfg.IndexIntervalBytes) {
			if err := s.index.append(h.lastOffset(), pos); err != nil {
				return 0, nil, err
			}
			if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp); err != nil {
				return 0, nil, err
			}
			lastIndexEntry = pos
		}
	}
	if valid := sc.pos; valid < s.size {
		if err := s.log.Truncate(valid); err != nil {
			return 0, nil, err
		}
		truncated = s.size - valid
		s.size = valid
	}
	s.bytesSinceLastIndexEntry = s.size - lastIndexEntry
	return truncated, reason, nil
}

// readHeader reads the batch header at pos.
func (s *segment) readHeader(pos int64) (batchHeader, error) {
	var buf [batchHeaderSize]byte
	if _, err := s.log.ReadAt(buf[:], pos); err != nil {
		return batchHeader{}, err
	}
	return parseBatchHeader(buf[:]), nil
}

// locate finds the first batch whose last offset is at least offset, scanning headers from the offset
// index entry for offset. ok is false when every batch in the segment is below offset.
func (s *segment) locate(offset int64) (pos int64, h batchHeader, ok bool, err error) {
	for pos = s.index.lookup(offset); pos < s.size; pos += h.size() {
		if s.size-pos < batchHeaderSize {
			return 0, h, false, fmt.Errorf("segment %d ends inside a batch header at %d", s.baseOffset, pos)
		}
		if h, err = s.readHeader(pos); err != nil {
			return 0, h, false, err
		}
		if h.batchLength < minBatchLength || pos+h.size() > s.size {
			return 0, h, false, fmt.Errorf("segment %d has a malformed batch at %d", s.baseOffset, pos)
		}
		if h.lastOffset() >= offset {
			return pos, h, true, nil
		}
	}
	return 0, h, false, nil
}

// read returns whole batches starting with the one holding offset; see Log.Read. found is false when the
// segment has nothing at or past offset, so the caller moves on to the next segment.
func (s *segment) read(offset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (data []byte, found bool, err error) {
	pos, h, ok, err := s.locate(offset)
	if err != nil || !ok {
		return nil, ok, err
	}
	if h.lastOffset() >= maxOffset {
		return []byte{}, true, nil
	}
	want := min(int64(max(maxBytes, 0)), s.size-pos)
	if h.size() > want {
		if !minOneMessage {
			return []byte{}, true, nil
		}
		want = h.size() // KIP-74: the first batch is returned whole even past maxBytes
	}
	buf := make([]byte, want)
	if _, err := s.log.ReadAt(buf, pos); err != nil {
		return nil, true, err
	}
	end := 0
	for end+batchHeaderSize <= len(buf) {
		b := buf[end:]
		bh := parseBatchHeader(b)
		if bh.batchLength < minBatchLength || bh.size() > int64(len(b)) || bh.lastOffset() >= maxOffset {
			break
		}
		end += int(bh.size())
	}
	return buf[:end:end], true, nil
}

// findByTimestamp returns the first record at or after startingOffset whose timestamp is at least ts,
// using the time index to skip ahead, as Kafka's LogSegment.findOffsetByTimestamp does.
func (s *segment) findByTimestamp(ts, startingOffset int64) (offset, timestamp int64, ok bool, err error) {
	from := max(s.timeIndex.lookup(ts), startingOffset)
	var h batchHeader
	for pos := s.index.lookup(from); pos < s.size; pos += h.size() {
		if s.size-pos < batchHeaderSize {
			return 0, 0, false, fmt.Errorf("segment %d ends inside a batch header at %d", s.baseOffset, pos)
		}
		if h, err = s.readHeader(pos); err != nil {
			return 0, 0, false, err
		}
		if h.batchLength < minBatchLength || pos+h.size() > s.size {
			return 0, 0, false, fmt.Errorf("segment %d has a malformed batch at %d", s.baseOffset, pos)
		}
		if h.lastOffset() >= startingOffset && h.maxTimestamp >= ts {
			offset, timestamp, err := s.searchBatch(pos, h, ts, startingOffset)
			return offset, timestamp, err == nil, err
		}
	}
	return 0, 0, false, nil
}

// decompressor inflates stored batches for timestamp searches; franz-go's is safe for concurrent use.
var decompressor = kgo.DefaultDecompressor()

// searchBatch finds the first record in the batch at pos with timestamp >= ts and offset >=
// startingOffset. Should the records not parse, it answers with the batch itself, which a consumer
// seeking by time can still start from.
func (s *segment) searchBatch(pos int64, h batchHeader, ts, startingOffset int64) (offset, timestamp int64, err error) {
	fallbackOffset, fallbackTimestamp := max(h.baseOffset, startingOffset), h.maxTimestamp
	b := make([]byte, h.size())
	if _, err := s.log.ReadAt(b, pos); err != nil {
		return 0, 0, err
	}
	records := b[batchHeaderSize:]
	if codec := h.compression(); codec != 0 {
		if records, err = decompressor.Decompress(records, kgo.CompressionCodecType(codec)); err != nil {
			return fallbackOffset, fallbackTimestamp, nil
		}
	}
	found := false
	walkErr := walkRecords(records, h.recordCount, func(tsDelta int64, offDelta int32) bool {
		recTs := h.baseTimestamp + tsDelta
		if h.attributes&attrLogAppendTime != 0 {
			recTs = h.maxTimestamp
		}
		recOffset := h.baseOffset + int64(offDelta)
		if recTs >= ts && recOffset >= startingOffset {
			offset, timestamp, found = recOffset, recTs, true
			return false
		}
		return true
	})
	if walkErr != nil || !found {
		return fallbackOffset, fallbackTimestamp, nil
	}
	return offset, timestamp, nil
}

// truncateTo drops every batch holding an offset at or above offset: the file is cut at the first such
// batch, so an offset inside a batch takes the whole batch. The segment is left ready to be active.
func (s *segment) truncateTo(offset int64, maxIndexSize int32) error {
	pos, h, ok, err := s.locate(offset)
	if err != nil || !ok {
		return err
	}
	if err := s.log.Truncate(pos); err != nil {
		return err
	}
	s.size = pos
	s.index.truncateToPosition(pos)
	s.timeIndex.truncateToOffset(h.baseOffset)
	if err := s.preallocateIndexes(maxIndexSize); err != nil {
		return err
	}
	return s.restoreTail()
}

// largestTimestamp is what time retention compares: the largest record timestamp, or the file's
// modification time when the batches carry none (Kafka's LogSegment.largestTimestamp).
func (s *segment) largestTimestamp() int64 {
	if s.maxTimestamp >= 0 {
		return s.maxTimestamp
	}
	st, err := s.log.Stat()
	if err != nil {
		return -1
	}
	return st.ModTime().UnixMilli()
}

// seal writes the final time index entry and trims both index files, as Kafka does when a segment stops
// being active and when it is closed.
func (s *segment) seal() error {
	if s.maxTimestamp >= 0 {
		if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp); err != nil {
			return err
		}
	}
	if err := s.index.file.trim(len(s.index.entries)); err != nil {
		return err
	}
	return s.timeIndex.file.trim(len(s.timeIndex.entries))
}

func (s *segment) flush() error {
	for _, f := range []*os.File{s.log, s.index.file.f, s.timeIndex.file.f} {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// close seals and closes the segment's files.
func (s *segment) close() error {
	err := s.seal()
	return errors.Join(err, s.closeFiles())
}

func (s *segment) closeFiles() error {
	return errors.Join(s.log.Close(), s.index.file.f.Close(), s.timeIndex.file.f.Close())
}

// remove closes and deletes the segment's files.
func (s *segment) remove() error {
	err := s.closeFiles()
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		if rmErr := os.Remove(segmentPath(s.dir, s.baseOffset, suffix)); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			err = errors.Join(err, rmErr)
		}
	}
	return err
}

// badBatchError describes a torn or malformed batch found while scanning a segment file.
type badBatchError struct{ msg string }

func (e *badBatchError) Error() string { return e.msg }

// batchScanner reads a segment's batches in order through a buffer.
type batchScanner struct {
	r   *bufio.Reader
	pos int64 // position of the next batch
	end int64
	hdr [batchHeaderSize]byte
	buf []byte
}

func newBatchScanner(f *os.File, from, to int64) *batchScanner {
	return &batchScanner{r: bufio.NewReaderSize(io.NewSectionReader(f, from, to-from), 64<<10), pos: from, end: to}
}

// next reads the batch at the scanner's position and returns that position with the header. With verify
// it also reads the records and checks the CRC. It returns io.EOF when the data ends exactly after a
// batch, and a *badBatchError for a torn or malformed batch.
func (sc *batchScanner) next(verify bool) (int64, batchHeader, error) {
	pos := sc.pos
	if pos == sc.end {
		return pos, batchHeader{}, io.EOF
	}
	if sc.end-pos < batchHeaderSize {
		return pos, batchHeader{}, &badBatchError{fmt.Sprintf("%d bytes are too short for a batch header", sc.end-pos)}
	}
	if _, err := io.ReadFull(sc.r, sc.hdr[:]); err != nil {
		return pos, batchHeader{}, noEOF(err)
	}
	h := parseBatchHeader(sc.hdr[:])
	switch {
	case h.magic != magicV2:
		return pos, h, &badBatchError{fmt.Sprintf("batch has magic %d", h.magic)}
	case h.batchLength < minBatchLength:
		return pos, h, &badBatchError{fmt.Sprintf("batch has length %d", h.batchLength)}
	case pos+h.size() > sc.end:
		return pos, h, &badBatchError{fmt.Sprintf("batch of %d bytes is torn: only %d bytes remain", h.size(), sc.end-pos)}
	case h.lastOffsetDelta < 0:
		return pos, h, &badBatchError{fmt.Sprintf("batch has negative lastOffsetDelta %d", h.lastOffsetDelta)}
	}
	body := h.size() - batchHeaderSize
	if verify {
		if sc.buf == nil {
			sc.buf = make([]byte, 32<<10)
		}
		crc := crc32.New(castagnoli)
		crc.Write(sc.hdr[offAttributes:])
		if n, err := io.CopyBuffer(crc, io.LimitReader(sc.r, body), sc.buf); err != nil || n != body {
			return pos, h, noEOF(errors.Join(err, io.ErrUnexpectedEOF))
		}
		if got := crc.Sum32(); got != h.crc {
			return pos, h, &badBatchError{fmt.Sprintf("batch CRC is %#08x, computed %#08x", h.crc, got)}
		}
	} else if _, err := sc.r.Discard(int(body)); err != nil {
		return pos, h, noEOF(err)
	}
	sc.pos += h.size()
	return pos, h, nil
}

// noEOF turns an early end of file into io.ErrUnexpectedEOF: the scanner's bounds come from the file's
// size, so running out of data means the file shrank underneath it, not a clean end.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
