// Package storage is the broker's on-disk partition log, laid out and behaving as Kafka 2.8's.
//
// # What it owns
//
// A Log is one partition's directory, `<log.dirs entry>/<topic>-<partition>`, holding segments named by
// their base offset:
//
//	00000000000000000000.log        record batches (v2, magic 2), exactly as produced except for the
//	                                baseOffset and partitionLeaderEpoch the leader assigns (v0 or v1
//	                                messages below message.format.version 0.11: legacy.go)
//	00000000000000000000.index      sparse offset index: int32 relative offset, int32 file position
//	00000000000000000000.timeindex  time index: int64 timestamp, int32 relative offset
//	00000000000000000000.txnindex   aborted transactions whose ABORT marker is in the segment (only once
//	                                there is one): producer id, first, last and last stable offsets
//	00000000000000004096.log        ... the next segment, starting at offset 4096
//
// A Manager owns every log in the broker's log.dirs, the checkpoint files beside them
// (recovery-point-offset-checkpoint, log-start-offset-checkpoint, replication-offset-checkpoint), the
// `.kafka_cleanshutdown` marker and the `.lock` file. meta.properties is read and written here for the
// broker, which decides what it means.
//
// # How data flows
//
// Produce: the broker hands a request's records to Log.AppendAsLeader. Every batch is validated (length,
// magic, CRC-32C, size, record count) before any is written; offsets are assigned from the log end offset
// (LEO) by rewriting each batch's baseOffset; the bytes are written to the active segment with one
// pwrite. Each append after IndexIntervalBytes of data adds an offset index entry (its last offset → its
// position) and a time index entry (largest timestamp so far → its offset). An append that would
// overflow SegmentBytes, a segment older than SegmentMs, or a full index rolls a new segment at the LEO;
// the old one is flushed in the background, which moves the recovery point. Appends never fsync. The
// index entries live in memory; their files are open only while entries are written (from a segment's
// first entry until it is sealed), so an idle partition holds one descriptor, its log file's, and a log
// loaded after a crash reads its preallocated indexes only up to their first hole.
//
// Replication: followers append the leader's batches unchanged with Log.AppendAsFollower, and cut their
// log back with Truncate or TruncateFullyAndStartAt when the leader changes. Each log keeps Kafka's
// leader-epoch cache (the start offset of every leader epoch, in `leader-epoch-checkpoint`, written on
// appends and truncation and fsynced by the log's flush, as Kafka 3.7 does; the replay at open restores
// from the batches what a crash kept from the file; EndOffsetForEpoch answers OffsetForLeaderEpoch) and
// the producers' state (the last five batches' sequences per producer id, its open transaction and its
// last marker's coordinator epoch, checked on leader appends, rebuilt from `<offset>.snapshot` files
// and the log on open and after truncation).
//
// Transactions (producer_state.go, txn_index.go): a transactional batch opens its producer's transaction;
// the COMMIT or ABORT control batch a coordinator has the leader append (Log.AppendAsCoordinator, which
// also takes the group coordinator's records) closes it, and an aborted one is written to the segment's
// `.txnindex`. The last stable offset (LastStableOffset) is the first offset of the earliest transaction
// still open or whose marker is not yet below the high watermark, capped at the high watermark; a
// read_committed fetch reads below it and gets AbortedTransactions for the range it read. Recovery empties
// the transaction index of every segment it recovers and the producer state's replay, which starts at or
// before the first of them, writes it again: the same entries, byte for byte (in a segment the log cleaner
// rewrote, without those whose records it removed, which name nothing left to skip).
//
// Fetch: Log.Read finds the segment holding an offset, looks up the offset index for a nearby position,
// scans batch headers from there, and returns whole batches bounded by maxBytes and by maxOffset (the high
// watermark for consumers); it finds their end from headers too (segment.region), so Log.ReadFileRecords
// can leave the same bytes in the file, with a descriptor of its own, for the broker to sendfile to the
// socket. Reads share a read lock with each other and only wait for appends while those publish their
// new size; they see exactly the batches below the LEO they observed.
//
// ListOffsets: Log.FetchOffsetByTimestamp uses the time index to skip ahead, then scans batches and, in
// the first batch recent enough, the records (decompressing if needed).
//
// Retention: Manager.Run calls Log.DeleteOldSegments, which deletes the oldest segments past retention.ms
// or retention.bytes, or below the log start offset, but never the active segment nor data at or above
// the high watermark.
//
// Compaction: for a log whose cleanup.policy includes compact, Log.Clean (cleaner.go) rewrites the segments
// below the active one and the last stable offset, keeping the latest record of each key, as Kafka's
// LogCleaner: a compressed batch that loses records is recompressed in its codec, aborted transactions'
// records go, tombstones and markers left without data go after delete.retention.ms, and each producer's
// last batch stays, empty if need be.
//
// Recovery: Open trusts segments below the recovery point and rescans the rest batch by batch, verifying
// each CRC; the log is cut at the first torn or corrupt batch.
//
// Batch framing, CRCs, records and compression are package wire's (its reader and writer): appends are
// validated, segments scanned and compacted batches rewritten with it.
//
// # Errors
//
// Failures that Kafka reports on the wire wrap kerr values (CorruptMessage, MessageTooLarge, InvalidRecord,
// UnsupportedForMessageFormat, RecordListTooLarge, OffsetOutOfRange, KafkaStorageError); find them with
// errors.As into *kerr.Error. A failed write leaves the log refusing further writes, as Kafka takes a log
// directory offline on an I/O error.
package storage
