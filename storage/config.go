package storage

import (
	"fmt"
	"math"
	"strings"

	"github.com/zkafka/zkafka/wire"
)

// LogConfig holds the settings of one partition log. Each field is the Kafka topic config named in its
// comment, with the broker default that DefaultLogConfig returns.
type LogConfig struct {
	// SegmentBytes (segment.bytes, 1 GiB) bounds a segment: an append that would take the active segment
	// past it rolls a new segment first.
	SegmentBytes int64
	// SegmentMs (segment.ms, 7 days) rolls a segment once its data spans this long, measured on record
	// timestamps as Kafka does (or on the segment's creation time when the batches carry none).
	SegmentMs int64
	// RetentionMs (retention.ms, 7 days) deletes a segment whose largest timestamp is older than this;
	// -1 keeps data forever.
	RetentionMs int64
	// RetentionBytes (retention.bytes, -1) deletes the oldest segments while the log is larger than this;
	// -1 means no limit.
	RetentionBytes int64
	// IndexIntervalBytes (index.interval.bytes, 4096) is how many appended bytes pass between entries of
	// the sparse offset and time indexes.
	IndexIntervalBytes int32
	// MaxIndexSize (segment.index.bytes, 10 MiB) is the size an active segment's index files are
	// preallocated to; a full index rolls the segment.
	MaxIndexSize int32
	// MaxMessageBytes (max.message.bytes, 1048588) is the largest record batch an append accepts.
	MaxMessageBytes int32
	// CleanupPolicy (cleanup.policy, "delete") is "delete", "compact" or "compact,delete". Time and size
	// retention apply only with "delete"; the log cleaner (cleaner.go) compacts logs with "compact".
	CleanupPolicy string
	// MinCleanableDirtyRatio (min.cleanable.dirty.ratio, 0.5) is the share of a compacted log's
	// cleanable bytes that must be dirty (written since it was last cleaned) before the cleaner takes
	// it; MaxCompactionLagMs (max.compaction.lag.ms, no limit) takes it anyway once its oldest dirty
	// record is that old. MinCompactionLagMs (min.compaction.lag.ms, 0) keeps a segment with a record
	// younger than it out of cleaning.
	MinCleanableDirtyRatio float64
	MinCompactionLagMs     int64
	MaxCompactionLagMs     int64
	// MessageDownconversionEnable (message.downconversion.enable, true) lets a fetch of an old version
	// (Fetch v0–v3) have the log's batches converted to the v0 or v1 message format it reads when they
	// are newer; with false such a fetch gets UNSUPPORTED_VERSION.
	MessageDownconversionEnable bool
	// MessageFormat is the magic of message.format.version (2.8-IV1): 2 (record batches) from 0.11.0
	// on, 1 for 0.10.x, 0 before. Below 2 the log stores what producers and coordinators send in that
	// older format (see legacy.go) and keeps no leader-epoch cache, as Kafka 2.8 does.
	MessageFormat int8
}

// DefaultLogConfig returns Kafka 2.8's broker defaults.
func DefaultLogConfig() LogConfig {
	return LogConfig{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * 24 * 60 * 60 * 1000,
		RetentionMs:        7 * 24 * 60 * 60 * 1000,
		RetentionBytes:     -1,
		IndexIntervalBytes: 4096,
		MaxIndexSize:       10 << 20,
		MaxMessageBytes:    1048588,
		CleanupPolicy:      "delete",

		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLagMs:     math.MaxInt64,

		MessageDownconversionEnable: true,
		MessageFormat:               wire.MagicV2,
	}
}

// Validate reports the first setting outside the range Kafka accepts for it.
func (c LogConfig) Validate() error {
	switch {
	case c.SegmentBytes < wire.BatchHeaderSize || c.SegmentBytes > math.MaxInt32:
		// Positions in the offset index are int32, so a segment cannot pass 2 GiB.
		return fmt.Errorf("segment.bytes %d is outside [%d, %d]", c.SegmentBytes, wire.BatchHeaderSize, math.MaxInt32)
	case c.SegmentMs < 1:
		return fmt.Errorf("segment.ms %d must be at least 1", c.SegmentMs)
	case c.RetentionMs < -1:
		return fmt.Errorf("retention.ms %d must be -1 or more", c.RetentionMs)
	case c.RetentionBytes < -1:
		return fmt.Errorf("retention.bytes %d must be -1 or more", c.RetentionBytes)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("index.interval.bytes %d must not be negative", c.IndexIntervalBytes)
	case c.MaxIndexSize < timeEntrySize:
		// Smaller than one time index entry, no index could hold anything.
		return fmt.Errorf("segment.index.bytes %d must be at least %d", c.MaxIndexSize, timeEntrySize)
	case c.MaxMessageBytes < 0:
		return fmt.Errorf("max.message.bytes %d must not be negative", c.MaxMessageBytes)
	case c.MessageFormat < wire.MagicV0 || c.MessageFormat > wire.MagicV2:
		return fmt.Errorf("message format magic %d is not 0, 1 or 2", c.MessageFormat)
	}
	switch c.CleanupPolicy {
	case "delete", "compact", "compact,delete", "delete,compact":
	default:
		return fmt.Errorf("cleanup.policy %q is not delete, compact or both", c.CleanupPolicy)
	}
	return nil
}

// legacyFormat reports whether the log stores a format older than record batches.
func (c LogConfig) legacyFormat() bool { return c.MessageFormat < wire.MagicV2 }

// Deletes reports whether time and size retention apply (cleanup.policy has "delete").
func (c LogConfig) Deletes() bool { return strings.Contains(c.CleanupPolicy, "delete") }
