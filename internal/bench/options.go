package bench

import (
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults applied to zero-valued Options fields.
const (
	DefaultRecords     = 100000
	DefaultRecordSize  = 100
	DefaultPartitions  = 6
	DefaultReplication = 1
	DefaultAcks        = "all"
	DefaultCompression = "none"
	DefaultMode        = ModeAll
	// DefaultE2ERate paces an end-to-end run that names no rate: latency
	// measured at full speed would mostly be the time records queue.
	DefaultE2ERate = 1000
)

// Modes of a run: what it measures and reports.
const (
	ModeAll     = "all"     // produce, then consume the records back; both timed
	ModeProduce = "produce" // produce only: throughput and produce latency
	ModeConsume = "consume" // produce the load (untimed), then time its consumption
	ModeE2E     = "e2e"     // a consumer reads while the producer writes: enqueue-to-consume latency
)

// e2eStampSize is the prefix of an end-to-end run's values that holds the
// record's send time.
const e2eStampSize = 8

// Options describes one benchmark load. Zero values take the defaults above;
// Topic defaults to "zkafka-bench-<unix ms>".
type Options struct {
	Mode       string   // ModeAll (default), ModeProduce, ModeConsume or ModeE2E
	Brokers    []string // bootstrap servers of the target cluster
	Topic      string   // default "zkafka-bench-<unix ms>"
	Records    int      // default 100000
	RecordSize int      // bytes per value, default 100; random (incompressible) payload
	// Compressible makes values of text (words and numbers) instead of
	// random bytes, for a codec to work on.
	Compressible bool
	Partitions   int32         // default 6
	Replication  int16         // default 1
	Acks         string        // "0", "1", "all" (default "all")
	Compression  string        // "none" (default), "snappy", "lz4", "zstd", "gzip"
	Idempotent   bool          // default false
	Linger       time.Duration // kgo's default if 0
	// Rate paces the producer at this many records a second (0: as fast as
	// it goes; DefaultE2ERate in ModeE2E), so latency can be read at a
	// chosen throughput.
	Rate int
	// Progress, if not nil, is where each phase draws its progress bar (a
	// terminal).
	Progress io.Writer
	// TransactionSize, when positive, makes the producer transactional:
	// records go in transactions of this many, each committed before the
	// next begins, and the consumer reads committed records only.
	TransactionSize int
	// TransactionalID is the transactional id of a transactional run;
	// default "zkafka-bench-<unix ms>".
	TransactionalID string
	// DeleteTopic deletes the topic once the run is measured, if the run
	// created it (a topic that existed is left as it was), so that repeated
	// runs do not fill the cluster's disks.
	DeleteTopic bool
}

// withDefaults fills zero fields and rejects values no run could use.
func (o Options) withDefaults() (Options, error) {
	if o.Topic == "" {
		o.Topic = fmt.Sprintf("zkafka-bench-%d", time.Now().UnixMilli())
	}
	if o.Records == 0 {
		o.Records = DefaultRecords
	}
	if o.RecordSize == 0 {
		o.RecordSize = DefaultRecordSize
	}
	if o.Partitions == 0 {
		o.Partitions = DefaultPartitions
	}
	if o.Replication == 0 {
		o.Replication = DefaultReplication
	}
	if o.Acks == "" {
		o.Acks = DefaultAcks
	}
	if o.Compression == "" {
		o.Compression = DefaultCompression
	}
	if o.Mode == "" {
		o.Mode = DefaultMode
	}
	if o.Mode == ModeE2E && o.Rate == 0 {
		o.Rate = DefaultE2ERate
	}
	switch {
	case o.Records < 0:
		return o, fmt.Errorf("records must be positive, got %d", o.Records)
	case o.RecordSize < 0:
		return o, fmt.Errorf("record size must be positive, got %d", o.RecordSize)
	case o.Partitions < 0:
		return o, fmt.Errorf("partitions must be positive, got %d", o.Partitions)
	case o.Replication < 0:
		return o, fmt.Errorf("replication factor must be positive, got %d", o.Replication)
	case o.Linger < 0:
		return o, fmt.Errorf("linger must not be negative, got %v", o.Linger)
	case o.Rate < 0:
		return o, fmt.Errorf("rate must not be negative, got %d", o.Rate)
	case o.Rate > 0 && o.TransactionSize > 0:
		return o, fmt.Errorf("rate and transaction size cannot be combined")
	case o.TransactionSize < 0:
		return o, fmt.Errorf("transaction size must not be negative, got %d", o.TransactionSize)
	case o.Mode != ModeAll && o.Mode != ModeProduce && o.Mode != ModeConsume && o.Mode != ModeE2E:
		return o, fmt.Errorf("mode must be %s, %s, %s or %s, got %q", ModeAll, ModeProduce, ModeConsume, ModeE2E, o.Mode)
	case o.Mode == ModeE2E && o.RecordSize < e2eStampSize:
		return o, fmt.Errorf("an end-to-end run stamps each value with its send time: record size must be at least %d, got %d", e2eStampSize, o.RecordSize)
	case o.Mode == ModeE2E && o.TransactionSize > 0:
		return o, fmt.Errorf("an end-to-end run cannot be transactional")
	}
	if o.TransactionSize > 0 && o.TransactionalID == "" {
		o.TransactionalID = fmt.Sprintf("zkafka-bench-%d", time.Now().UnixNano())
	}
	if _, err := o.requiredAcks(); err != nil {
		return o, err
	}
	if _, err := o.codec(); err != nil {
		return o, err
	}
	// kgo refuses idempotence without acks=all; say so before dialing.
	if o.Idempotent && o.Acks != "all" {
		return o, fmt.Errorf("idempotent produce requires acks=all, got acks=%s", o.Acks)
	}
	if o.TransactionSize > 0 && o.Acks != "all" {
		return o, fmt.Errorf("transactional produce requires acks=all, got acks=%s", o.Acks)
	}
	return o, nil
}

func (o Options) requiredAcks() (kgo.Acks, error) {
	switch o.Acks {
	case "0":
		return kgo.NoAck(), nil
	case "1":
		return kgo.LeaderAck(), nil
	case "all":
		return kgo.AllISRAcks(), nil
	}
	return kgo.Acks{}, fmt.Errorf("acks must be 0, 1 or all, got %q", o.Acks)
}

func (o Options) codec() (kgo.CompressionCodec, error) {
	switch o.Compression {
	case "none":
		return kgo.NoCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("compression must be none, snappy, lz4, zstd or gzip, got %q", o.Compression)
}

// producerOpts are the kgo options for the benchmark producer.
func (o Options) producerOpts() ([]kgo.Opt, error) {
	acks, err := o.requiredAcks()
	if err != nil {
		return nil, err
	}
	codec, err := o.codec()
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.ClientID("zkafka-bench-producer"),
		kgo.RequiredAcks(acks),
		// kgo compresses with snappy unless told otherwise; "none" must be explicit.
		kgo.ProducerBatchCompression(codec),
	}
	switch {
	case o.TransactionSize > 0:
		opts = append(opts, kgo.TransactionalID(o.TransactionalID))
	case !o.Idempotent:
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	if o.Linger > 0 {
		opts = append(opts, kgo.ProducerLinger(o.Linger))
	}
	return opts, nil
}
