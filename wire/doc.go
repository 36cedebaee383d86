// Package wire is the one place where Kafka protocol bytes meet the network, and the one reader and
// writer of record batches.
//
// # Requests and responses
//
// It owns framing (a 4-byte big-endian size before every request and response),
// the request header (v0, v1 with client id, v2 with tagged fields) and response
// header (v0, v1 with tagged fields; ApiVersions always answers with v0), and
// decoding of request bodies through franz-go's kmsg. The broker's listener reads
// frames with ReadFrame, turns them into typed requests with ParseRequest and
// writes answers with AppendResponse. The controller's channel to brokers, the
// tools and tests use Client, which dials a broker, negotiates versions with
// ApiVersions and then sends one request at a time. A reader done with each
// frame before the next may read them all into one buffer (ReadFrameBodyInto;
// Client.ReuseResponseFrames), so that a stream of megabyte frames does not
// allocate and clear a megabyte each.
//
// Data flow on the server side:
//
//	conn → ReadFrame (size checked before the body is read) → ParseRequest
//	     → handler → AppendResponse → conn
//
// # Record batches
//
// Records travel and rest as v2 record batches (magic 2, Kafka's DefaultRecordBatch): a 61-byte header
// (base offset, length, partition leader epoch, magic, CRC-32C, attributes, last offset delta, first and
// max timestamps, producer id and epoch, base sequence, record count; the Pos constants give its layout)
// and then the records, compressed as a whole when the attributes name a codec. The same bytes are a
// Produce request's records, a segment file's contents and a Fetch response's records, so one reader
// serves the broker's log, the group coordinator, the consumer and the dump-log tool:
//
//	bytes → Batches / ReadBatch (framing) → Batch (header, Raw, Pos)
//	      → VerifyCRC (CRC-32C of attributes..end)
//	      → Records (decompress with the codec table, then each record's varint fields and headers)
//
// Framing follows Kafka's log input stream: a length below any format's minimum, then a magic that is no
// format's, then a length below the format's header, then data that ends inside the batch; each is a
// *BatchError that unwraps to ErrBatchLength, ErrUnsupportedMagic or ErrTruncatedBatch. A v0 or v1 message
// (a log in an older message.format.version stores them; legacy.go) frames as a Batch with a shallow header
// whose Records reads the message or a compressed wrapper's inner messages. Callers choose what each means
// to them: a consumer treats ErrTruncatedBatch as the end of a fetch response, as Kafka's clients ignore a
// partial batch at the end; the log refuses an append that is not whole batches; dump-log reports trailing
// bytes. ReadBatchHeader frames a header alone, for the log's scans of segment files that read only
// headers. CRC checking is separate because its policy is the caller's: the log checks every appended and
// recovered batch, dump-log prints the result, the consumer and coordinator trust the log.
//
// Records are read as strictly as Kafka's DefaultRecord: each record must fill exactly its length, header
// keys are never null, and a batch holds exactly its record count; errors unwrap to ErrCorruptRecords.
// Uncompressed records share the batch's bytes.
//
// AppendBatch writes a batch: it encodes the records, compresses them with the header's codec, and sets
// the length, record count and CRC; the group coordinator writes its records with it and the log cleaner
// rewrites the batches it compacts. SetBaseOffset and SetPartitionLeaderEpoch rewrite the two fields a
// leader assigns, which lie outside the CRC.
//
// The codec table holds Kafka's codecs: gzip (klauspost/compress), snappy (raw blocks written, raw or the
// Java client's xerial framing read; klauspost/compress/s2), lz4 frames (pierrec/lz4) and zstd
// (klauspost/compress, one shared encoder and decoder, safe for concurrent use and without goroutines).
package wire
