package storage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/zkafka/zkafka/wire"
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
	txnIndex   *transactionIndex

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
		return nil, nil, nil, err
	}
	txnIdx, err := openTransactionIndex(txnIndexPath(dir, baseOffset))
	if err != nil {
		lf.Close()
		return nil, nil, nil, err
	}
	s = &segment{
		dir:                   dir,
		baseOffset:            baseOffset,
		log:                   lf,
		index:                 idx,
		timeIndex:             tidx,
		txnIndex:              txnIdx,
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
		if err := f.truncate(0); err != nil {
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
		_, b, err := sc.next(false)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := s.checkOffsets(b.BatchHeader); err != nil {
			return err
		}
		s.observe(b.BatchHeader)
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
		s.rollingBasedTimestamp = h.MaxTimestamp
	}
	return nil
}

// checkOffsets verifies that a batch read back from the file follows the previous one and fits the
// segment's relative offsets.
func (s *segment) checkOffsets(h wire.BatchHeader) error {
	if h.BaseOffset < s.nextOffset {
		return &badBatchError{fmt.Sprintf("batch base offset %d is below the expected %d", h.BaseOffset, s.nextOffset)}
	}
	if h.LastOffset()-s.baseOffset > math.MaxInt32 {
		return &badBatchError{fmt.Sprintf("batch last offset %d does not fit the segment based at %d", h.LastOffset(), s.baseOffset)}
	}
	return nil
}

// observe advances the in-memory state past batch h.
func (s *segment) observe(h wire.BatchHeader) {
	s.nextOffset = h.LastOffset() + 1
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
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
		pos, b, err := sc.next(true)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = s.checkOffsets(b.BatchHeader)
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
			s.rollingBasedTimestamp = b.MaxTimestamp
		}
		s.observe(b.BatchHeader)
		if pos-lastIndexEntry > int64(cfg.IndexIntervalBytes) {
			if err := s.index.append(b.LastOffset(), pos); err != nil {
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

// readHeader reads and frames the batch header at pos, which the caller has checked lies inside the
// segment; a header or batch that does not fit the segment is malformed. (A legacy message's header is
// shorter than a v2 batch's, and so may be the whole message.)
func (s *segment) readHeader(pos int64) (wire.BatchHeader, error) {
	var arr [wire.BatchHeaderSize]byte
	buf := arr[:min(s.size-pos, wire.BatchHeaderSize)]
	if _, err := s.log.ReadAt(buf, pos); err != nil {
		return wire.BatchHeader{}, err
	}
	h, err := wire.ReadBatchHeader(buf)
	if err == nil && pos+h.Size() > s.size {
		err = fmt.Errorf("batch of %d bytes is torn: only %d bytes remain", h.Size(), s.size-pos)
	}
	if err != nil {
		return h, fmt.Errorf("segment %d has a malformed batch at %d: %w", s.baseOffset, pos, err)
	}
	return h, nil
}

// locate finds the first batch whose last offset is at least offset, scanning headers from the offset
// index entry for offset. ok is false when every batch in the segment is below offset.
func (s *segment) locate(offset int64) (pos int64, h wire.BatchHeader, ok bool, err error) {
	for pos = s.index.lookup(offset); pos < s.size; pos += h.Size() {
		if h, err = s.readHeader(pos); err != nil {
			return 0, h, false, err
		}
		if h.LastOffset() >= offset {
			return pos, h, true, nil
		}
	}
	return 0, h, false, nil
}

// region finds the whole batches a read returns (see Log.Read) without reading them: their position and
// size in the file and the last offset among them (-1 when there are none). found is false when the
// segment has nothing at or past offset, so the caller moves on to the next segment. Only batch headers
// are read: the first batch's, those from an index entry before the end, and the batch holding maxOffset.
func (s *segment) region(offset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (pos, size, lastOffset int64, found bool, err error) {
	pos, h, ok, err := s.locate(offset)
	if err != nil || !ok {
		return 0, 0, -1, ok, err
	}
	if h.LastOffset() >= maxOffset {
		return pos, 0, -1, true, nil
	}
	limit := pos + min(int64(max(maxBytes, 0)), s.size-pos)
	if pos+h.Size() > limit {
		if !minOneMessage {
			return pos, 0, -1, true, nil
		}
		return pos, h.Size(), h.LastOffset(), true, nil // KIP-74: the first batch whole, even past maxBytes
	}
	if maxOffset < s.nextOffset {
		// The batch holding maxOffset and those after it stay out.
		at, _, ok, err := s.locate(maxOffset)
		if err != nil {
			return 0, 0, -1, true, err
		}
		if ok {
			limit = min(limit, at)
		}
	}
	// Only whole batches go out. Every batch between the last two index entries at or below limit ends
	// by limit, so scanning from the earlier of them finds the last whole one.
	end, last := pos+h.Size(), h.LastOffset()
	for p := max(end, s.index.positionBefore(limit, 2)); limit-p >= wire.LogOverhead; {
		bh, err := s.readHeader(p)
		if err != nil {
			return 0, 0, -1, true, err
		}
		if p+bh.Size() > limit {
			break
		}
		p += bh.Size()
		end, last = p, bh.LastOffset()
	}
	return pos, end - pos, last, true, nil
}

// findByTimestamp returns the first record at or after startingOffset whose timestamp is at least ts,
// using the time index to skip ahead, as Kafka's LogSegment.findOffsetByTimestamp does.
func (s *segment) findByTimestamp(ts, startingOffset int64) (offset, timestamp int64, ok bool, err error) {
	from := max(s.timeIndex.lookup(ts), startingOffset)
	var h wire.BatchHeader
	for pos := s.index.lookup(from); pos < s.size; pos += h.Size() {
		if h, err = s.readHeader(pos); err != nil {
			return 0, 0, false, err
		}
		if h.LastOffset() >= startingOffset && h.MaxTimestamp >= ts {
			offset, timestamp, err := s.searchBatch(pos, h, ts, startingOffset)
			return offset, timestamp, err == nil, err
		}
	}
	return 0, 0, false, nil
}

// searchBatch finds the first record in the batch at pos with timestamp >= ts and offset >=
// startingOffset. Should the records not parse, it answers with the batch itself, which a consumer
// seeking by time can still start from.
func (s *segment) searchBatch(pos int64, h wire.BatchHeader, ts, startingOffset int64) (offset, timestamp int64, err error) {
	fallbackOffset, fallbackTimestamp := max(h.BaseOffset, startingOffset), h.MaxTimestamp
	b := wire.Batch{BatchHeader: h, Raw: make([]byte, h.Size())}
	if _, err := s.log.ReadAt(b.Raw, pos); err != nil {
		return 0, 0, err
	}
	for r, err := range b.Records() {
		if err != nil {
			break
		}
		if recTs, recOffset := h.RecordTimestamp(r), h.RecordOffset(r); recTs >= ts && recOffset >= startingOffset {
			return recOffset, recTs, nil
		}
	}
	return fallbackOffset, fallbackTimestamp, nil
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
	if err := s.txnIndex.truncateTo(offset); err != nil {
		return err
	}
	s.size = pos
	s.index.truncateToOffset(h.BaseOffset)
	s.timeIndex.truncateToOffset(h.BaseOffset)
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
// being active and when it is closed, and closes their descriptors: nothing writes them any more (a
// truncation that makes the segment active again reopens them). Their entries are not synced first: an
// index is checked against its log when loaded and rebuilt if it does not match, as Kafka's are.
func (s *segment) seal() error {
	if s.maxTimestamp >= 0 {
		if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp); err != nil {
			return err
		}
	}
	if err := s.index.file.trim(len(s.index.entries)); err != nil {
		return err
	}
	if err := s.timeIndex.file.trim(len(s.timeIndex.entries)); err != nil {
		return err
	}
	return errors.Join(s.index.file.close(), s.timeIndex.file.close())
}

func (s *segment) flush() error {
	if err := s.log.Sync(); err != nil {
		return err
	}
	if err := s.index.file.sync(); err != nil {
		return err
	}
	if err := s.timeIndex.file.sync(); err != nil {
		return err
	}
	return s.txnIndex.flush()
}

// close seals and closes the segment's files.
func (s *segment) close() error {
	err := s.seal()
	return errors.Join(err, s.closeFiles())
}

func (s *segment) closeFiles() error {
	return errors.Join(s.log.Close(), s.index.file.close(), s.timeIndex.file.close(), s.txnIndex.close())
}

// remove closes and deletes the segment's files.
func (s *segment) remove() error {
	err := s.closeFiles()
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix, txnIndexSuffix} {
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
	buf []byte // the last batch read
}

func newBatchScanner(f *os.File, from, to int64) *batchScanner {
	return &batchScanner{r: bufio.NewReaderSize(io.NewSectionReader(f, from, to-from), 64<<10), pos: from, end: to}
}

// next reads the batch at the scanner's position and returns that position with the batch, whose bytes
// are valid until the next call. With verify it also checks the CRC. It returns io.EOF when the data
// ends exactly after a batch, and a *badBatchError for a torn or malformed batch.
func (sc *batchScanner) next(verify bool) (int64, wire.Batch, error) {
	pos := sc.pos
	if pos == sc.end {
		return pos, wire.Batch{}, io.EOF
	}
	// The magic byte says how long the header is (a legacy message's is shorter than a v2 batch's, and
	// may be all of it), so the scanner reads up to the magic first and never past the batch.
	sc.buf = slices.Grow(sc.buf[:0], wire.BatchHeaderSize)[:min(sc.end-pos, wire.PosMagic+1)]
	if _, err := io.ReadFull(sc.r, sc.buf); err != nil {
		return pos, wire.Batch{}, noEOF(err)
	}
	if len(sc.buf) > wire.PosMagic {
		n := min(sc.end-pos, int64(wire.HeaderSize(int8(sc.buf[wire.PosMagic]))))
		if _, err := io.ReadFull(sc.r, sc.buf[len(sc.buf):n]); err != nil {
			return pos, wire.Batch{}, noEOF(err)
		}
		sc.buf = sc.buf[:n]
	}
	h, err := wire.ReadBatchHeader(sc.buf)
	var be *wire.BatchError
	switch {
	case errors.As(err, &be) && be.Err == wire.ErrUnsupportedMagic:
		return pos, wire.Batch{}, &badBatchError{fmt.Sprintf("batch has magic %d", be.Magic)}
	case errors.As(err, &be) && be.Err == wire.ErrBatchLength:
		return pos, wire.Batch{}, &badBatchError{fmt.Sprintf("batch has length %d", be.Length)}
	case err != nil:
		return pos, wire.Batch{}, &badBatchError{fmt.Sprintf("%d bytes are too short for a batch header", sc.end-pos)}
	case pos+h.Size() > sc.end:
		return pos, wire.Batch{}, &badBatchError{fmt.Sprintf("batch of %d bytes is torn: only %d bytes remain", h.Size(), sc.end-pos)}
	case h.LastOffsetDelta < 0:
		return pos, wire.Batch{}, &badBatchError{fmt.Sprintf("batch has negative lastOffsetDelta %d", h.LastOffsetDelta)}
	}
	sc.buf = slices.Grow(sc.buf, int(h.Size())-len(sc.buf))
	if _, err := io.ReadFull(sc.r, sc.buf[len(sc.buf):h.Size()]); err != nil {
		return pos, wire.Batch{}, noEOF(err)
	}
	b := wire.Batch{BatchHeader: h, Raw: sc.buf[:h.Size()]}
	if verify {
		if err := b.VerifyCRC(); err != nil {
			return pos, b, &badBatchError{err.Error()}
		}
	}
	sc.pos += h.Size()
	return pos, b, nil
}

// noEOF turns an early end of file into io.ErrUnexpectedEOF: the scanner's bounds come from the file's
// size, so running out of data means the file shrank underneath it, not a clean end.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
