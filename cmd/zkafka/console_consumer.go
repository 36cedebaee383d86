package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	mathrand "math/rand/v2"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/consumer"
	"github.com/zkafka/zkafka/transaction"
)

var consoleConsumerOptions = []optionSpec{
	argOpt("topic", "topic", "The topic id to consume on."),
	argOpt("whitelist", "whitelist", "Regular expression specifying whitelist of topics to include for consumption."),
	argOpt("blacklist", "blacklist", "Blacklist of topics to exclude from consumption (with --zookeeper: the 0.8 consumer)."),
	argOpt("partition", "partition", "The partition to consume from. Consumption starts from the end of the partition unless '--offset' is specified.").typed("Integer"),
	argOpt("offset", "consume offset", "The offset id to consume from (a non-negative number), or 'earliest' which means from beginning, "+
		"or 'latest' which means from end").defaults("latest"),
	argOpt("consumer-property", "consumer_prop", "A mechanism to pass user-defined properties in the form key=value to the consumer."),
	argOpt("consumer.config", "config file", "Consumer config properties file. Note that [consumer-property] takes precedence over this config."),
	argOpt("formatter", "class", "The name of a class to use for formatting kafka messages for display: the default, or "+
		"the transaction log's for __transaction_state.").defaults(defaultFormatterClass),
	argOpt("property", "prop", "The properties to initialize the message formatter. Default properties include:\n"+
		" print.timestamp=true|false\n print.key=true|false\n print.offset=true|false\n print.partition=true|false\n print.headers=true|false\n"+
		" print.value=true|false\n key.separator=<key.separator>\n line.separator=<line.separator>\n headers.separator=<line.separator>\n null.literal=<null.literal>"),
	flagOpt("from-beginning", "If the consumer does not already have an established offset to consume from, start with the earliest message present in the log "+
		"rather than the latest message."),
	argOpt("max-messages", "num_messages", "The maximum number of messages to consume before exiting. If not set, consumption is continual.").typed("Integer"),
	argOpt("timeout-ms", "timeout_ms", "If specified, exit if no message is available for consumption for the specified interval.").typed("Integer"),
	flagOpt("skip-message-on-error", "If there is an error when processing a message, skip it instead of halt."),
	argOpt("bootstrap-server", "server to connect to", "REQUIRED unless --zookeeper is given: The server(s) to connect to."),
	argOpt("zookeeper", "urls", "The connection string for the zookeeper connection in the form host:port, which selects the 0.8 (ZooKeeper-based) consumer. "+
		"Multiple URLS can be given to allow fail-over."),
	argOpt("isolation-level", "", "Set to read_committed in order to filter out transactional messages which are not committed. "+
		"Set to read_uncommitted to read all messages.").defaults("read_uncommitted"),
	argOpt("group", "consumer group id", "The consumer group id of the consumer."),
	flagOpt("print-key", "Print the key before the value, as --property print.key=true does."),
	argOpt("rebalance-protocol", "eager|cooperative|consumer", "With --bootstrap-server: eager uses the range assignor, cooperative the cooperative-sticky one "+
		"(KIP-429), consumer KIP-848's consumer group protocol (group.protocol=consumer: the coordinator assigns).").defaults("eager"),
	argOpt("partition-assignment-strategy", "strategy", "The assignor: range, roundrobin, sticky or cooperative-sticky (range or roundrobin with --zookeeper); "+
		"overrides --rebalance-protocol."),
	argOpt("group-instance-id", "id", "With --bootstrap-server: the static member id (group.instance.id, KIP-345)."),
	flagOpt("print-events", "Print the consumer's rebalance events on stderr as they happen, and its counters on exit. Not with --partition."),
	helpOption,
}

// runConsoleConsumer is kafka-console-consumer.sh: it prints a topic's
// records, one per line in the DefaultMessageFormatter's layout, either as a
// member of a consumer group (the 0.8 high-level consumer with --zookeeper,
// the group protocol with --bootstrap-server) or, with --partition, from one
// assigned partition and no group. It runs until SIGINT/SIGTERM,
// --max-messages or --timeout-ms, and always ends with Kafka's
// "Processed a total of N messages" on stderr.
func runConsoleConsumer(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, consoleConsumerOptions)
	if err != nil {
		return usageDie(stderr, err.Error())
	}
	if helpNeeded(args, opts, "This tool helps to read data from Kafka topics and outputs it to standard output.", consoleConsumerOptions, stderr) {
		return 1
	}
	zkConnect, bootstrap, topic := opts.value("zookeeper"), opts.value("bootstrap-server"), opts.value("topic")
	// Kafka's own argument checks, with its messages and exit status 1: 2.8's
	// for the Java consumer, 0.8.2's (which knew --blacklist) for --zookeeper.
	switch {
	case zkConnect == "" && bootstrap == "":
		return usageDie(stderr, `Missing required argument "[bootstrap-server]"`)
	case zkConnect != "" && bootstrap != "":
		return usageDie(stderr, `Option "[zookeeper]" can't be used with option "[bootstrap-server]"`)
	case zkConnect != "" && opts.count("topic", "whitelist", "blacklist") != 1:
		return usageDie(stderr, "Exactly one of whitelist/blacklist/topic is required.")
	case bootstrap != "" && opts.has("blacklist"):
		return usageDie(stderr, `Option "[blacklist]" can't be used with option "[bootstrap-server]"`)
	case opts.count("topic", "whitelist") != 1:
		return usageDie(stderr, "Exactly one of whitelist/topic is required.")
	}
	var partition int32
	if opts.has("partition") {
		if partition, err = opts.int32Option("partition"); err != nil {
			return usageDie(stderr, err.Error())
		}
		if partition < 0 {
			fmt.Fprintf(stderr, "zkafka console-consumer: %d is not a partition id\n", partition)
			return 2
		}
		if !opts.has("topic") {
			return usageDie(stderr, "The topic is required when partition is specified.")
		}
	}
	var maxMsgs, timeoutMs int32
	for name, dst := range map[string]*int32{"max-messages": &maxMsgs, "timeout-ms": &timeoutMs} {
		if opts.has(name) {
			if *dst, err = opts.int32Option(name); err != nil {
				return usageDie(stderr, err.Error())
			}
		}
	}
	var start kgo.Offset
	fromStart, offsetArg := opts.has("from-beginning"), opts.value("offset")
	if opts.has("partition") {
		if fromStart && opts.has("offset") {
			return usageDie(stderr, "Options from-beginning and offset cannot be specified together.")
		}
		switch o := strings.ToLower(offsetArg); {
		case o == "earliest" || (o == "" && fromStart):
			start = kgo.NewOffset().AtStart()
		case o == "latest" || o == "":
			start = kgo.NewOffset().AtEnd()
		default:
			n, err := strconv.ParseInt(o, 10, 64)
			if err != nil || n < 0 {
				return usageDie(stderr, fmt.Sprintf("The provided offset value '%s' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.", offsetArg))
			}
			start = kgo.NewOffset().At(n)
		}
	} else if opts.has("offset") {
		return usageDie(stderr, "The partition is required when offset is specified.")
	}
	if opts.has("group") && opts.has("partition") {
		return usageDie(stderr, "Options group and partition cannot be specified together.")
	}
	if opts.has("partition") && opts.has("print-events") {
		fmt.Fprintln(stderr, "zkafka console-consumer: --print-events needs a group, not --partition")
		return 2
	}
	if opts.has("partition") && bootstrap == "" {
		fmt.Fprintln(stderr, "zkafka console-consumer: --partition needs --bootstrap-server")
		return 2
	}
	if opts.has("whitelist") && bootstrap != "" {
		fmt.Fprintln(stderr, "zkafka console-consumer: --whitelist needs --zookeeper: the group consumer subscribes to topics by name")
		return 2
	}
	fmtConf, err := brokerconfig.ParseOverrides(opts.all("property"))
	if err != nil {
		fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
		return 2
	}
	var formatter recordFormatter = newMessageFormatter(fmtConf, opts.has("print-key"))
	switch formatName := cmp.Or(opts.value("formatter"), defaultFormatterClass); formatName {
	case defaultFormatterClass:
	case transactionLogFormatterClass:
		formatter = transactionLogFormatter{}
	default:
		fmt.Fprintf(stderr, "zkafka console-consumer: unknown formatter %q\n", formatName)
		return 2
	}

	props := map[string]string{}
	if file := opts.value("consumer.config"); file != "" {
		if props, err = brokerconfig.ReadPropertiesFile(file); err != nil {
			fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
			return 2
		}
	}
	extra, err := brokerconfig.ParseOverrides(opts.all("consumer-property"))
	if err != nil {
		fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
		return 2
	}
	maps.Copy(props, extra)
	cfg, err := consumer.ConfigFromProperties(props)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
		return 2
	}
	cfg.ZooKeeperConnect = zkConnect
	switch {
	case zkConnect == "":
		cfg.Topics = []string{topic}
	case opts.has("blacklist"):
		cfg.Blacklist = opts.value("blacklist")
	default:
		// 0.8.2's console consumer takes --topic as a whitelist too.
		cfg.Whitelist = cmp.Or(opts.value("whitelist"), topic)
	}
	if opts.has("group") {
		cfg.GroupID = opts.value("group")
	}
	if opts.has("group-instance-id") {
		cfg.GroupInstanceID = opts.value("group-instance-id")
	}
	if opts.has("isolation-level") {
		cfg.IsolationLevel = opts.value("isolation-level")
	}
	consoleConsumerDefaults(&cfg)
	if bootstrap != "" {
		cfg.BootstrapServers = strings.Split(bootstrap, ",")
		switch protocol := cmp.Or(opts.value("rebalance-protocol"), "eager"); {
		case protocol == "consumer":
			cfg.GroupProtocol = protocol
		case strings.EqualFold(cfg.GroupProtocol, "consumer") && opts.has("rebalance-protocol"):
			fmt.Fprintf(stderr, "zkafka console-consumer: --rebalance-protocol %s is a classic protocol; group.protocol=consumer has the coordinator assign\n", protocol)
			return 2
		case strings.EqualFold(cfg.GroupProtocol, "consumer"):
		case protocol == "eager" && cfg.PartitionAssignmentStrategy == nil:
			cfg.PartitionAssignmentStrategy = []string{"range"}
		case protocol == "cooperative":
			cfg.PartitionAssignmentStrategy = []string{"cooperative-sticky"}
		case protocol != "eager":
			fmt.Fprintf(stderr, "zkafka console-consumer: --rebalance-protocol %q is not eager, cooperative or consumer\n", protocol)
			return 2
		}
	} else if cfg.GroupInstanceID != "" {
		fmt.Fprintln(stderr, "zkafka console-consumer: --group-instance-id needs --bootstrap-server")
		return 2
	}
	if opts.has("partition-assignment-strategy") {
		cfg.PartitionAssignmentStrategy = []string{opts.value("partition-assignment-strategy")}
	}
	if fromStart {
		cfg.AutoOffsetReset = "earliest"
	}
	logger, _ := newLogger()
	defer logger.Sync()
	cfg.Logger = logger
	var printer *eventPrinter
	if opts.has("print-events") {
		printer = newEventPrinter(stderr)
		cfg.OnEvent = printer.onEvent
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var src recordSource
	if opts.has("partition") {
		src, err = newAssignedSource(cfg, topic, partition, start, logger)
	} else {
		src, err = newGroupSource(ctx, cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
		if errors.Is(err, consumer.ErrInvalidConfig) {
			return 2
		}
		return 1
	}
	out := bufio.NewWriter(stdout)
	code, n := 0, 0
	idle := time.Duration(timeoutMs) * time.Millisecond
	for maxMsgs <= 0 || n < int(maxMsgs) {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if idle > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, idle)
		}
		records, err := src.poll(pollCtx)
		cancel()
		if err != nil {
			switch {
			case ctx.Err() != nil:
			case pollCtx.Err() != nil:
				// Kafka ends a --timeout-ms run the same way: logged as an
				// error, yet the tool exits 0.
				logger.Error("Error processing message, terminating consumer process", zap.Error(fmt.Errorf("no message for %v: %w", idle, err)))
			default:
				logger.Error("poll failed", zap.Error(err))
				code = 1
			}
			break
		}
		for _, r := range records {
			if maxMsgs > 0 && n == int(maxMsgs) {
				break
			}
			formatter.writeTo(out, r)
			n++
		}
		if err := out.Flush(); err != nil {
			code = 1
			break
		}
	}
	// As with Kafka's console consumer, records Poll returned beyond
	// --max-messages count as consumed: Close commits the positions.
	if err := src.close(); err != nil && !errors.Is(err, context.Canceled) {
		logger.Warn("close", zap.Error(err))
	}
	if g, ok := src.(*groupSource); ok && printer != nil {
		printer.printStats(g.c.Stats())
	}
	fmt.Fprintf(stderr, "Processed a total of %d messages\n", n)
	return code
}

// usageDie reports a bad combination of arguments as Kafka's
// CommandLineUtils.printUsageAndDie does: the message and exit status 1.
func usageDie(stderr io.Writer, msg string) int {
	fmt.Fprintln(stderr, msg)
	return 1
}

// consoleRecord is one record as the formatter sees it, whichever consumer
// fetched it.
type consoleRecord struct {
	consumer.Record
	timestampType int8 // 0 CreateTime, 1 LogAppendTime, -1 none (pre-0.10 message)
}

// recordSource is where the console consumer's records come from: a group
// member or a directly assigned partition.
type recordSource interface {
	// poll blocks until records arrive or ctx ends (then it returns an error).
	poll(ctx context.Context) ([]consoleRecord, error)
	close() error
}

// groupSource consumes as a group member through the consumer package.
type groupSource struct{ c *consumer.Consumer }

func newGroupSource(ctx context.Context, cfg consumer.Config) (*groupSource, error) {
	c, err := consumer.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &groupSource{c}, nil
}

func (g *groupSource) poll(ctx context.Context) ([]consoleRecord, error) {
	for {
		records, err := g.c.Poll(ctx)
		if err != nil {
			return nil, err
		}
		if len(records) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		out := make([]consoleRecord, len(records))
		for i, r := range records {
			// The consumer package does not keep the batch's timestamp
			// type; CreateTime is the broker default.
			out[i] = consoleRecord{Record: r}
		}
		return out, nil
	}
}

func (g *groupSource) close() error { return g.c.Close(context.Background()) }

// assignedSource reads one partition from a chosen offset with no group,
// as Kafka's console consumer does with --partition (consumer.assign).
type assignedSource struct {
	cl     *kgo.Client
	logger *zap.Logger
}

func newAssignedSource(cfg consumer.Config, topic string, partition int32, start kgo.Offset, logger *zap.Logger) (*assignedSource, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(cfg.BootstrapServers...),
		kgo.ClientID(cfg.ClientID),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: start}}),
	)
	if err != nil {
		return nil, fmt.Errorf("assign %s-%d: %w", topic, partition, err)
	}
	return &assignedSource{cl: cl, logger: logger.Named("assign")}, nil
}

func (a *assignedSource) poll(ctx context.Context) ([]consoleRecord, error) {
	for {
		fetches := a.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Other fetch errors (a leader moving, a topic not yet known) are
		// retried inside kgo; they are worth a line, not an exit.
		fetches.EachError(func(topic string, p int32, err error) {
			a.logger.Warn("fetch", zap.String("topic", topic), zap.Int32("partition", p), zap.Error(err))
		})
		var out []consoleRecord
		fetches.EachRecord(func(r *kgo.Record) {
			rec := consoleRecord{Record: consumer.Record{
				Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, LeaderEpoch: r.LeaderEpoch,
				Timestamp: r.Timestamp, Key: r.Key, Value: r.Value,
			}, timestampType: r.Attrs.TimestampType()}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, consumer.Header{Key: h.Key, Value: h.Value})
			}
			out = append(out, rec)
		})
		if len(out) > 0 {
			return out, nil
		}
	}
}

func (a *assignedSource) close() error {
	a.cl.Close()
	return nil
}

// The formatters --formatter names, by Kafka's class names.
const (
	defaultFormatterClass        = "kafka.tools.DefaultMessageFormatter"
	transactionLogFormatterClass = "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter"
)

// recordFormatter writes one record.
type recordFormatter interface {
	writeTo(w *bufio.Writer, r consoleRecord)
}

// transactionLogFormatter is Kafka's TransactionLogMessageFormatter: a
// __transaction_state record as "<transactional id>::<TransactionMetadata>"
// (NULL for a tombstone); records without a key are skipped.
type transactionLogFormatter struct{}

func (transactionLogFormatter) writeTo(w *bufio.Writer, r consoleRecord) {
	if r.Key == nil {
		return
	}
	e, err := transaction.DecodeRecord(r.Key, r.Value)
	if err != nil {
		fmt.Fprintf(w, "ERROR: offset %d: %v\n", r.Offset, err)
		return
	}
	w.WriteString(e.String() + "\n")
}

// messageFormatter is Kafka's DefaultMessageFormatter: for each record the
// enabled fields in the order timestamp, partition, offset, headers, key,
// value, with key.separator between fields and line.separator at the end.
type messageFormatter struct {
	printTimestamp, printPartition, printOffset, printHeaders, printKey, printValue bool
	keySeparator, lineSeparator, headersSeparator, nullLiteral                      string
}

// newMessageFormatter reads the formatter's --property settings as Kafka
// does: a print.* flag is on only when its value is "true" (any case), and
// properties it does not know are ignored. printKey is the --print-key flag.
func newMessageFormatter(props map[string]string, printKey bool) messageFormatter {
	f := messageFormatter{printKey: printKey, printValue: true, keySeparator: "\t", lineSeparator: "\n", headersSeparator: ",", nullLiteral: "null"}
	for name, dst := range map[string]*bool{
		"print.timestamp": &f.printTimestamp, "print.partition": &f.printPartition, "print.offset": &f.printOffset,
		"print.headers": &f.printHeaders, "print.key": &f.printKey, "print.value": &f.printValue,
	} {
		if v, ok := props[name]; ok {
			*dst = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	for name, dst := range map[string]*string{
		"key.separator": &f.keySeparator, "line.separator": &f.lineSeparator, "headers.separator": &f.headersSeparator,
		"null.literal": &f.nullLiteral,
	} {
		if v, ok := props[name]; ok {
			*dst = v
		}
	}
	return f
}

// writeTo writes one record. As in Kafka, a missing key, value or header
// value prints as null.literal ("null" unless set), and a record without
// headers as "NO_HEADERS".
func (f messageFormatter) writeTo(w *bufio.Writer, r consoleRecord) {
	// sep ends a field: key.separator when another field follows, else
	// line.separator.
	sep := func(more bool) {
		if more {
			w.WriteString(f.keySeparator)
		} else {
			w.WriteString(f.lineSeparator)
		}
	}
	bytesOrNull := func(b []byte) {
		if b == nil {
			w.WriteString(f.nullLiteral)
		} else {
			w.Write(b)
		}
	}
	if f.printTimestamp {
		switch r.timestampType {
		case 0:
			fmt.Fprintf(w, "CreateTime:%d", r.Timestamp.UnixMilli())
		case 1:
			fmt.Fprintf(w, "LogAppendTime:%d", r.Timestamp.UnixMilli())
		default:
			w.WriteString("NO_TIMESTAMP")
		}
		sep(f.printPartition || f.printOffset || f.printHeaders || f.printKey || f.printValue)
	}
	if f.printPartition {
		fmt.Fprintf(w, "Partition:%d", r.Partition)
		sep(f.printOffset || f.printHeaders || f.printKey || f.printValue)
	}
	if f.printOffset {
		fmt.Fprintf(w, "Offset:%d", r.Offset)
		sep(f.printHeaders || f.printKey || f.printValue)
	}
	if f.printHeaders {
		if len(r.Headers) == 0 {
			w.WriteString("NO_HEADERS")
		}
		for i, h := range r.Headers {
			if i > 0 {
				w.WriteString(f.headersSeparator)
			}
			w.WriteString(h.Key)
			w.WriteByte(':')
			bytesOrNull(h.Value)
		}
		sep(f.printKey || f.printValue)
	}
	if f.printKey {
		bytesOrNull(r.Key)
		sep(f.printValue)
	}
	if f.printValue {
		bytesOrNull(r.Value)
		w.WriteString(f.lineSeparator)
	}
}

// consumerClientIDs numbers the consumers this process makes, as the Java consumer's
// CONSUMER_CLIENT_ID_SEQUENCE does.
var consumerClientIDs atomic.Int32

// consoleConsumerDefaults fills what Kafka 2.8's console consumer leaves to defaults: a random
// group console-consumer-<0..99999>, and the client id of the consumer generation in use — the
// Java consumer's consumer-<group>-<n>, or the 0.8 consumer's group id.
func consoleConsumerDefaults(cfg *consumer.Config) {
	if cfg.GroupID == "" {
		cfg.GroupID = fmt.Sprintf("console-consumer-%d", mathrand.IntN(100000))
	}
	if cfg.ClientID != "" {
		return
	}
	if cfg.ZooKeeperConnect != "" {
		cfg.ClientID = cfg.GroupID
		return
	}
	cfg.ClientID = fmt.Sprintf("consumer-%s-%d", cfg.GroupID, consumerClientIDs.Add(1))
}
