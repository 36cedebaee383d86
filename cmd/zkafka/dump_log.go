package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/transaction"
	"github.com/zkafka/zkafka/wire"
)

var dumpLogOptions = []optionSpec{
	flagOpt("print-data-log", "if set, printing the messages content when dumping data logs. Automatically set if any decoder option is specified."),
	flagOpt("verify-index-only", "if set, just verify the index log without printing its content."),
	flagOpt("index-sanity-check", "if set, just checks the index sanity without printing its content. "+
		"This is the same check that is executed on broker startup to determine if an index needs rebuilding or not."),
	argOpt("files", "file1, file2, ...", "REQUIRED: The comma separated list of data and index log files to be dumped."),
	argOpt("max-message-size", "size", "Size of largest message.").typed("Integer").defaults("5242880"),
	flagOpt("deep-iteration", "if set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled."),
	flagOpt("offsets-decoder", "if set, log data will be parsed as offset data from the __consumer_offsets topic."),
	flagOpt("transaction-log-decoder", "if set, log data will be parsed as transaction metadata from the __transaction_state topic."),
	flagOpt("skip-record-metadata", "whether to skip printing metadata for each record."),
	helpOption,
}

// runDumpLog is kafka-dump-log.sh (Kafka 2.8's DumpLogSegments): the batches
// and records of .log segments, the entries of .index and .timeindex files
// checked against their segment, aborted transactions of .txnindex files and
// the producers of .snapshot files. Problems found in the files go to stderr
// at the end, as Kafka prints them.
func runDumpLog(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, dumpLogOptions)
	if err == nil && helpNeeded(args, opts, "This tool helps to parse a log file and dump its contents to the console, "+
		"useful for debugging a seemingly corrupt log segment.", dumpLogOptions, stderr) {
		return 1
	}
	if err == nil {
		err = opts.checkRequired("files")
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	d := &logDumper{
		out:           bufio.NewWriter(stdout),
		stderr:        stderr,
		printData:     opts.has("print-data-log") || opts.has("offsets-decoder") || opts.has("transaction-log-decoder"),
		offsets:       opts.has("offsets-decoder"),
		txnLog:        opts.has("transaction-log-decoder"),
		skipMetadata:  opts.has("skip-record-metadata"),
		verifyOnly:    opts.has("verify-index-only"),
		sanityOnly:    opts.has("index-sanity-check"),
		maxMessage:    5 * 1024 * 1024,
		problems:      &bytes.Buffer{},
		nonConsec:     map[string][][2]int64{},
		indexMismatch: map[string][][2]int64{},
	}
	d.deep = opts.has("deep-iteration") || d.printData
	if opts.has("max-message-size") {
		if d.maxMessage, err = opts.int32Option("max-message-size"); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	code := 0
	for _, file := range strings.Split(opts.value("files"), ",") {
		if err := d.dump(file); err != nil {
			d.out.Flush()
			fmt.Fprintf(stderr, "Error dumping %s: %v\n", file, err)
			code = 1
			break
		}
	}
	d.out.Flush()
	d.reportProblems(stderr)
	return code
}

// logDumper holds the options of one run and the problems it found.
type logDumper struct {
	out                           *bufio.Writer
	stderr                        io.Writer
	printData, offsets, deep      bool
	txnLog                        bool // --transaction-log-decoder
	skipMetadata                  bool // --skip-record-metadata
	verifyOnly, sanityOnly        bool
	maxMessage                    int32
	problems                      *bytes.Buffer         // time index problems, printed after the mismatches
	nonConsec, indexMismatch      map[string][][2]int64 // by absolute path, newest first as Kafka keeps them
	nonConsecOrder, mismatchOrder []string
}

func (d *logDumper) dump(file string) error {
	fmt.Fprintf(d.out, "Dumping %s\n", file)
	name := filepath.Base(file)
	dot := strings.LastIndexByte(name, '.')
	suffix := ""
	if dot >= 0 {
		suffix = name[dot:]
	}
	switch suffix {
	case ".log":
		return d.dumpLog(file)
	case ".index":
		return d.dumpIndex(file)
	case ".timeindex":
		return d.dumpTimeIndex(file)
	case ".snapshot":
		return d.dumpProducerSnapshot(file)
	case ".txnindex":
		return d.dumpTxnIndex(file)
	}
	d.out.Flush()
	fmt.Fprintf(d.stderr, "Ignoring unknown file %s\n", file)
	return nil
}

// baseOffsetOf is the segment's base offset, the file name's first part.
func baseOffsetOf(file string) (int64, error) {
	name, _, _ := strings.Cut(filepath.Base(file), ".")
	off, err := strconv.ParseInt(name, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("For input string: %q", name)
	}
	return off, nil
}

// siblingFile is the file of the same segment with another suffix.
func siblingFile(file, suffix string) string {
	dir, name := filepath.Split(file)
	base, _, _ := strings.Cut(name, ".")
	return filepath.Join(dir, base+suffix)
}

// timestampType is the name of Kafka's TimestampType of a batch's records.
func timestampType(h wire.BatchHeader) string {
	switch {
	case h.Magic == wire.MagicV0:
		return "NoTimestampType"
	case h.Attributes.LogAppendTime():
		return "LogAppendTime"
	}
	return "CreateTime"
}

// readBatches splits a segment into its batches from position on (v2
// batches, and v0 and v1 messages of a topic in an older
// message.format.version), each with its position in the segment; trailing
// bytes that do not make a whole batch are left over and their count is
// returned.
func readBatches(data []byte, position int64) ([]wire.Batch, int64, error) {
	var batches []wire.Batch
	for b, err := range wire.Batches(data[position:]) {
		var be *wire.BatchError
		if errors.As(err, &be) {
			// Kafka's log input stream rejects a size below the smallest
			// message of any format before it looks at the magic.
			if be.Err == wire.ErrBatchLength && be.Length < 14 {
				return batches, 0, fmt.Errorf("Record size %d is less than the minimum record overhead (14)", be.Length)
			}
			return batches, int64(be.Avail), nil
		}
		b.Pos += int(position)
		batches = append(batches, b)
	}
	return batches, 0, nil
}

// records decodes a batch's records, decompressing them first.
func records(b wire.Batch) ([]wire.Record, error) {
	var out []wire.Record
	for r, err := range b.Records() {
		if err != nil {
			return nil, fmt.Errorf("batch at offset %d: %w", b.BaseOffset, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (d *logDumper) dumpLog(file string) error {
	base, err := baseOffsetOf(file)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "Starting offset: %d\n", base)
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	batches, trailing, err := readBatches(data, 0)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(file)
	last := int64(-1)
	for _, b := range batches {
		if b.Magic >= wire.MagicV2 {
			fmt.Fprintf(d.out, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d "+
				"producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t",
				b.BaseOffset, b.LastOffset(), b.RecordCount, b.BaseSequence, b.LastSequence(),
				b.ProducerID, b.ProducerEpoch, b.PartitionLeaderEpoch, b.Attributes.Transactional(), b.Attributes.Control())
		} else {
			fmt.Fprintf(d.out, "offset: %d", b.LastOffset())
		}
		fmt.Fprintf(d.out, " position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
			b.Pos, timestampType(b.BatchHeader), b.MaxTimestamp, len(b.Raw), b.Magic, b.Attributes.Codec(), b.CRC, b.VerifyCRC() == nil)
		if !d.deep {
			continue
		}
		// A legacy message's records come with their CRCs, which Records leaves out.
		var recs []wire.Record
		var legacy []wire.LegacyMessage
		if b.Magic < wire.MagicV2 {
			if legacy, err = b.LegacyMessages(); err != nil {
				return fmt.Errorf("batch at offset %d: %w", b.LastOffset(), err)
			}
			for _, m := range legacy {
				recs = append(recs, b.LegacyRecord(m))
			}
		} else if recs, err = records(b); err != nil {
			return err
		}
		for i, r := range recs {
			offset := b.RecordOffset(r)
			if last != -1 && offset != last+1 {
				if len(d.nonConsec[abs]) == 0 {
					d.nonConsecOrder = append(d.nonConsecOrder, abs)
				}
				d.nonConsec[abs] = append([][2]int64{{last, offset}}, d.nonConsec[abs]...)
			}
			last = offset
			m := recordMeta{crc: "null", batchBase: b.BaseOffset}
			if legacy != nil {
				m = recordMeta{crc: strconv.FormatUint(uint64(legacy[i].CRC), 10), batchBase: legacy[0].Offset}
			}
			if err := d.printRecord(b, r, offset, m); err != nil {
				return err
			}
		}
	}
	if trailing > 0 {
		fmt.Fprintf(d.out, "Found %d invalid bytes at the end of %s\n", trailing, filepath.Base(file))
	}
	return nil
}

// recordMeta is what a record line says beyond the record and its batch's
// header: the record's CRC (a legacy message's; "null" in v2, as Kafka's
// checksumOrNull) and the batch's base offset (a legacy wrapper's is its
// first record's, which its shallow header does not know).
type recordMeta struct {
	crc       string
	batchBase int64
}

// printRecord prints a record as Kafka 2.8's DumpLogSegments does: its
// metadata and its batch's (unless --skip-record-metadata), then a
// transaction marker or, with --print-data-log, the key and payload. A
// legacy message's record is valid whenever it was read: wire checks each
// message's CRC.
func (d *logDumper) printRecord(b wire.Batch, r wire.Record, offset int64, m recordMeta) error {
	prefix := "| "
	if !d.skipMetadata {
		fmt.Fprintf(d.out, "%soffset: %d isValid: true crc: %s keySize: %d valueSize: %d %s: %d baseOffset: %d lastOffset: %d "+
			"baseSequence: %d lastSequence: %d producerEpoch: %d partitionLeaderEpoch: %d batchSize: %d magic: %d compressType: %s position: %d",
			prefix, offset, m.crc, nullableLen(r.Key), nullableLen(r.Value), timestampType(b.BatchHeader), b.RecordTimestamp(r),
			m.batchBase, b.LastOffset(), b.BaseSequence, b.LastSequence(), b.ProducerEpoch, b.PartitionLeaderEpoch,
			len(b.Raw), b.Magic, b.Attributes.Codec(), b.Pos)
		prefix = " "
		if b.Magic >= wire.MagicV2 {
			keys := make([]string, len(r.Headers))
			for i, h := range r.Headers {
				keys[i] = h.Key
			}
			fmt.Fprintf(d.out, " sequence: %d headerKeys: [%s]", b.Sequence(r.OffsetDelta), strings.Join(keys, ","))
		} else {
			fmt.Fprintf(d.out, " crc: %s isvalid: true", m.crc)
		}
	}
	switch {
	case b.Attributes.Control():
		if !d.skipMetadata {
			d.printControlRecord(r)
		}
	case d.printData && d.txnLog:
		// Kafka's TransactionLogMessageParser: a tombstone prints <DELETE>.
		e, err := transaction.DecodeRecord(r.Key, r.Value)
		if err != nil {
			return err
		}
		key, payload := e.DumpString()
		fmt.Fprintf(d.out, "%skey: %s payload: %s", prefix, key, payload)
	case d.printData && r.Value != nil:
		key, payload, err := d.parseRecord(r)
		if err != nil {
			return err
		}
		if r.Key != nil || d.offsets {
			fmt.Fprintf(d.out, "%skey: %s", prefix, key)
		}
		fmt.Fprintf(d.out, " payload: %s", payload)
	}
	fmt.Fprintln(d.out)
	return nil
}

// printControlRecord prints a transaction marker as DumpLogSegments does,
// or the control type it does not know.
func (d *logDumper) printControlRecord(r wire.Record) {
	if m, err := wire.ParseEndTxnMarker(r); err == nil {
		fmt.Fprintf(d.out, " endTxnMarker: %s coordinatorEpoch: %d", m, m.CoordinatorEpoch)
		return
	}
	typ := int16(-1)
	if len(r.Key) >= 4 {
		typ = int16(binary.BigEndian.Uint16(r.Key[2:]))
	}
	fmt.Fprintf(d.out, " controlType: UNKNOWN(%d)", typ)
}

func nullableLen(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// parseRecord is Kafka's message parser: strings by default, the records of
// __consumer_offsets with --offsets-decoder.
func (d *logDumper) parseRecord(r wire.Record) (key, payload string, err error) {
	if !d.offsets {
		return string(r.Key), string(r.Value), nil
	}
	if r.Key == nil {
		return "", "", errors.New("Failed to decode message using offset topic decoder (message had a missing key)")
	}
	if len(r.Key) < 2 {
		return "", "", errors.New("Failed to decode message using offset topic decoder (message had an invalid key)")
	}
	switch version := int16(binary.BigEndian.Uint16(r.Key)); version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		var v kmsg.OffsetCommitValue
		if err := k.ReadFrom(r.Key); err != nil {
			return "", "", fmt.Errorf("offset commit key: %w", err)
		}
		if err := v.ReadFrom(r.Value); err != nil {
			return "", "", fmt.Errorf("offset commit value: %w", err)
		}
		payload = strconv.FormatInt(v.Offset, 10)
		if v.Metadata != "" {
			payload += ":" + v.Metadata
		}
		return fmt.Sprintf("offset::%s:%s:%d", k.Group, k.Topic, k.Partition), payload, nil
	case 2:
		var k kmsg.GroupMetadataKey
		var v kmsg.GroupMetadataValue
		if err := k.ReadFrom(r.Key); err != nil {
			return "", "", fmt.Errorf("group metadata key: %w", err)
		}
		if err := v.ReadFrom(r.Value); err != nil {
			return "", "", fmt.Errorf("group metadata value: %w", err)
		}
		return groupMetadataJSON(k, v)
	default:
		return "", "", errors.New("Failed to decode message using offset topic decoder (message had an invalid key)")
	}
}

// groupMetadataJSON renders a group record as Kafka's OffsetsMessageParser:
// members' assignments as "member=[t-0, t-1]" for consumer groups.
func groupMetadataJSON(k kmsg.GroupMetadataKey, v kmsg.GroupMetadataValue) (string, string, error) {
	members := make([]string, len(v.Members))
	for i, m := range v.Members {
		if v.ProtocolType != "consumer" {
			members[i] = m.MemberID + "=" + javaHex(m.Assignment)
			continue
		}
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(m.Assignment); err != nil {
			return "", "", fmt.Errorf("member %s assignment: %w", m.MemberID, err)
		}
		var tps []string
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, fmt.Sprintf("%s-%d", t.Topic, p))
			}
		}
		members[i] = m.MemberID + "=[" + strings.Join(tps, ", ") + "]"
		if h := javaHex(a.UserData); h != "" {
			members[i] += ":" + h
		}
	}
	key, _ := json.Marshal(map[string]string{"metadata": k.Group})
	value, _ := json.Marshal(struct {
		ProtocolType string  `json:"protocolType"`
		Protocol     *string `json:"protocol"`
		GenerationID int32   `json:"generationId"`
		Assignment   string  `json:"assignment"`
	}{v.ProtocolType, v.Protocol, v.Generation, "{" + strings.Join(members, ",") + "}"})
	return string(key), string(value), nil
}

// javaHex is Kafka's "%X".format(BigInt(1, bytes)): upper case, no leading
// zeros, empty for no bytes.
func javaHex(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	s := strings.TrimLeft(strings.ToUpper(hex.EncodeToString(b)), "0")
	if s == "" {
		return "0"
	}
	return s
}

// indexEntries reads fixed-size entries; the count is the file length over
// the entry size, as when Kafka maps an existing index read-only.
func indexEntries(file string, size int) ([][]byte, []byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var entries [][]byte
	for i := 0; i+size <= len(data); i += size {
		entries = append(entries, data[i:i+size])
	}
	return entries, data, nil
}

// sanityCheck is AbstractIndex.sanityCheck for an offset (size 8) or time
// (size 12) index.
func sanityCheck(file string, data []byte, size int, base int64) error {
	if len(data)%size != 0 {
		return fmt.Errorf("Index file %s is corrupt, found %d bytes which is neither positive nor a multiple of %d.", file, len(data), size)
	}
	if n := len(data) / size; n > 0 {
		rel := data[(n-1)*size:]
		if size == 12 {
			rel = rel[8:]
		}
		if last := base + int64(int32(binary.BigEndian.Uint32(rel))); last < base {
			return fmt.Errorf("Corrupt index found, index file (%s) has non-zero size but the last offset is %d which is less than the base offset %d.", file, last, base)
		}
	}
	return nil
}

// reportSanity runs --index-sanity-check on an index file's raw entries.
func (d *logDumper) reportSanity(file string, data []byte, entrySize int, base int64) error {
	if err := sanityCheck(file, data, entrySize, base); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "%s passed sanity check.\n", file)
	return nil
}

func (d *logDumper) dumpIndex(file string) error {
	base, err := baseOffsetOf(file)
	if err != nil {
		return err
	}
	logData, err := os.ReadFile(siblingFile(file, ".log"))
	if err != nil {
		return err
	}
	entries, data, err := indexEntries(file, 8)
	if err != nil {
		return err
	}
	if d.sanityOnly {
		return d.reportSanity(file, data, 8, base)
	}
	abs, _ := filepath.Abs(file)
	for i, e := range entries {
		offset := base + int64(int32(binary.BigEndian.Uint32(e)))
		position := int64(int32(binary.BigEndian.Uint32(e[4:])))
		// The active segment's index is preallocated: zero entries after
		// the first end it.
		if offset == base && i > 0 {
			return nil
		}
		end := min(position+int64(d.maxMessage), int64(len(logData)))
		if position <= end {
			if batches, _, err := readBatches(logData[:end], position); err == nil && len(batches) > 0 && batches[0].LastOffset() != offset {
				if len(d.indexMismatch[abs]) == 0 {
					d.mismatchOrder = append(d.mismatchOrder, abs)
				}
				d.indexMismatch[abs] = append([][2]int64{{offset, batches[0].LastOffset()}}, d.indexMismatch[abs]...)
			}
		}
		if !d.verifyOnly {
			fmt.Fprintf(d.out, "offset: %d position: %d\n", offset, position)
		}
	}
	return nil
}

func (d *logDumper) dumpTimeIndex(file string) error {
	base, err := baseOffsetOf(file)
	if err != nil {
		return err
	}
	logData, err := os.ReadFile(siblingFile(file, ".log"))
	if err != nil {
		return err
	}
	offsetEntries, _, err := indexEntries(siblingFile(file, ".index"), 8)
	if err != nil {
		return err
	}
	entries, data, err := indexEntries(file, 12)
	if err != nil {
		return err
	}
	if d.sanityOnly {
		return d.reportSanity(file, data, 12, base)
	}
	abs, _ := filepath.Abs(file)
	prev := int64(-1)
	var mismatches, outOfOrder, notFound []string
	for i, e := range entries {
		ts := int64(binary.BigEndian.Uint64(e))
		offset := base + int64(int32(binary.BigEndian.Uint32(e[8:])))
		if offset == base && i > 0 {
			break
		}
		// The offset index's floor entry says where to start looking.
		var position int64
		for j, oe := range offsetEntries {
			o := base + int64(int32(binary.BigEndian.Uint32(oe)))
			if o > offset || (j > 0 && o == base) {
				break
			}
			position = int64(int32(binary.BigEndian.Uint32(oe[4:])))
		}
		batches, _, err := readBatches(logData, min(position, int64(len(logData))))
		if err != nil {
			return err
		}
		found := -1
		for j := range batches {
			if batches[j].LastOffset() >= offset {
				found = j
				break
			}
		}
		switch {
		case found < 0:
			notFound = append(notFound, fmt.Sprintf("Indexed offset: %d, found log offset: -1", offset))
		case batches[found].LastOffset() != offset:
			notFound = append(notFound, fmt.Sprintf("Indexed offset: %d, found log offset: %d", offset, batches[found].LastOffset()))
		default:
			b := batches[found]
			recs, err := records(b)
			if err != nil {
				return err
			}
			maxTS := int64(-1)
			for _, r := range recs {
				maxTS = max(maxTS, b.RecordTimestamp(r))
			}
			if b.Attributes.LogAppendTime() {
				maxTS = b.MaxTimestamp
			}
			if maxTS != ts {
				mismatches = append(mismatches, fmt.Sprintf("  Index timestamp: %d, log timestamp: %d", ts, maxTS))
			}
			if prev >= ts {
				outOfOrder = append(outOfOrder, fmt.Sprintf("  Index timestamp: %d, Previously indexed timestamp: %d", ts, prev))
			}
		}
		if !d.verifyOnly {
			fmt.Fprintf(d.out, "timestamp: %d offset: %d\n", ts, offset)
		}
		prev = ts
	}
	if len(mismatches) > 0 {
		fmt.Fprintf(d.problems, "Found timestamp mismatch in :%s\n%s\n", abs, strings.Join(mismatches, "\n"))
	}
	if len(outOfOrder) > 0 {
		fmt.Fprintf(d.problems, "Found out of order timestamp in :%s\n%s\n", abs, strings.Join(outOfOrder, "\n"))
	}
	if len(notFound) > 0 {
		fmt.Fprintf(d.problems, "The following indexed offsets are not found in the log.\n%s\n", strings.Join(notFound, "\n"))
	}
	return nil
}

// dumpTxnIndex prints the aborted transactions of a .txnindex file.
func (d *logDumper) dumpTxnIndex(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	entries, err := storage.ParseTransactionIndex(data)
	if err != nil {
		return err
	}
	for _, a := range entries {
		fmt.Fprintf(d.out, "version: 0 producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
			a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset)
	}
	return nil
}

// dumpProducerSnapshot prints a producer snapshot as Kafka does, one line
// per producer, by producer id, with its newest batch (Kafka's snapshots
// keep only that one). The file is this broker's format
// (storage/producer_state.go).
func (d *logDumper) dumpProducerSnapshot(file string) error {
	entries, err := storage.ReadProducerSnapshot(file)
	if err != nil {
		return err
	}
	for _, pid := range slices.Sorted(maps.Keys(entries)) {
		e := entries[pid]
		txn := "None"
		if e.CurrentTxnFirstOffset >= 0 {
			txn = fmt.Sprintf("Some(%d)", e.CurrentTxnFirstOffset)
		}
		fmt.Fprintf(d.out, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s ",
			pid, e.Epoch, e.CoordinatorEpoch, txn)
		if n := len(e.Batches); n > 0 {
			b := e.Batches[n-1]
			fmt.Fprintf(d.out, "firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
				b.FirstSeq, b.LastSeq, b.LastOffset, b.LastOffset-b.FirstOffset, b.MaxTimestamp)
		}
		fmt.Fprintln(d.out)
	}
	return nil
}

// reportProblems prints what the checks found, as DumpLogSegments does
// after dumping every file.
func (d *logDumper) reportProblems(stderr io.Writer) {
	for _, abs := range d.mismatchOrder {
		fmt.Fprintf(stderr, "Mismatches in :%s\n", abs)
		for _, m := range d.indexMismatch[abs] {
			fmt.Fprintf(stderr, "  Index offset: %d, log offset: %d\n", m[0], m[1])
		}
	}
	_, _ = io.Copy(stderr, d.problems) // best effort, like the lines around it
	for _, abs := range d.nonConsecOrder {
		fmt.Fprintf(stderr, "Non-consecutive offsets in %s\n", abs)
		for _, p := range d.nonConsec[abs] {
			fmt.Fprintf(stderr, "  %d is followed by %d\n", p[0], p[1])
		}
	}
}
