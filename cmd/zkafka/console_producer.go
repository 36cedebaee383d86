package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/security"
)

var consoleProducerOptions = []optionSpec{
	argOpt("topic", "topic", "REQUIRED: The topic id to produce messages to."),
	argOpt("broker-list", "broker-list", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.  "+
		"The broker list string in the form HOST1:PORT1,HOST2:PORT2."),
	argOpt("bootstrap-server", "server to connect to", "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to. "+
		"The broker list string in the form HOST1:PORT1,HOST2:PORT2."),
	flagOpt("sync", "If set message send requests to the brokers are synchronously, one at a time as they arrive."),
	argOpt("compression-codec", "compression-codec", "The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'."+
		"If specified without value, then it defaults to 'gzip'").optional(),
	argOpt("batch-size", "size", "Number of messages to send in a single batch if they are not being sent synchronously.").typed("Integer"),
	argOpt("message-send-max-retries", "", "Brokers can fail receiving the message for multiple reasons, and being unavailable transiently is just one of them. "+
		"This property specifies the number of retries before the producer give up and drop this message.").typed("Integer").defaults("3"),
	argOpt("timeout", "timeout_ms", "If set and the producer is running in asynchronous mode, this gives the maximum amount of time a message will queue "+
		"awaiting sufficient batch size. The value is given in ms.").typed("Integer").defaults("1000"),
	argOpt("request-required-acks", "request required acks", "The required acks of the producer requests").defaults("1"),
	argOpt("request-timeout-ms", "request timeout ms", "The ack timeout of the producer requests. Value must be non-negative and non-zero").typed("Integer").defaults("1500"),
	argOpt("max-block-ms", "max block on send", "The max time that the producer will block for during a send request").typed("Long").defaults("60000"),
	argOpt("property", "prop", "A mechanism to pass user-defined properties in the form key=value to the message reader. "+
		"This allows custom configuration for a user-defined message reader. Default properties include:\n"+
		"\tparse.key=true|false\n\tkey.separator=<key.separator>\n\tignore.error=true|false"),
	argOpt("producer-property", "producer_prop", "A mechanism to pass user-defined properties in the form key=value to the producer. "),
	argOpt("producer.config", "config file", "Producer config properties file. Note that [producer-property] takes precedence over this config."),
	helpOption,
}

// consoleProducerStdin is the input; tests replace it.
var consoleProducerStdin io.Reader = os.Stdin

// runConsoleProducer is kafka-console-producer.sh (Kafka 2.8's
// ConsoleProducer with its LineMessageReader): every line of stdin becomes
// one record, keyed when parse.key=true, until EOF. A failed send is logged
// as Kafka's ErrorLoggingCallback does; unlike Kafka the exit status is then 1.
func runConsoleProducer(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, consoleProducerOptions)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if helpNeeded(args, opts, "This tool helps to read data from standard input and publish it to Kafka.", consoleProducerOptions, stderr) {
		return 1
	}
	p, err := newConsoleProducer(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cl, err := kgo.NewClient(p.kgoOpts...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer cl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return p.produce(ctx, cl, consoleProducerStdin, stderr)
}

type consoleProducer struct {
	topic     string
	parseKey  bool
	separator string
	// ignoreError sends a line without a separator as a value without key.
	ignoreError bool
	sync        bool
	kgoOpts     []kgo.Opt
}

func newConsoleProducer(opts toolOptions) (*consoleProducer, error) {
	if err := opts.checkRequired("topic"); err != nil {
		return nil, err
	}
	servers := opts.value("bootstrap-server")
	if servers == "" {
		if err := opts.checkRequired("broker-list"); err != nil {
			return nil, err
		}
		servers = opts.value("broker-list")
	}
	reader, err := brokerconfig.ParseOverrides(opts.all("property"))
	if err != nil {
		return nil, err
	}
	p := &consoleProducer{topic: opts.value("topic"), separator: "\t", sync: opts.has("sync")}
	if v, ok := reader["parse.key"]; ok {
		p.parseKey = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	if v, ok := reader["key.separator"]; ok {
		p.separator = v
	}
	if v, ok := reader["ignore.error"]; ok {
		p.ignoreError = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	props := map[string]string{}
	if file := opts.value("producer.config"); file != "" {
		if props, err = brokerconfig.ReadPropertiesFile(file); err != nil {
			return nil, err
		}
	}
	extra, err := brokerconfig.ParseOverrides(opts.all("producer-property"))
	if err != nil {
		return nil, err
	}
	for k, v := range extra {
		props[k] = v
	}
	// As 2.8's maybeMergeOptions: an option given on the command line wins,
	// and its default fills a property the config file and
	// --producer-property left unset.
	props["compression.type"] = "none"
	if opts.has("compression-codec") {
		props["compression.type"] = cmp.Or(opts.value("compression-codec"), "gzip")
	}
	for _, m := range consoleProducerMergedOptions {
		if opts.has(m.option) {
			props[m.property] = opts.value(m.option)
		} else if _, set := props[m.property]; !set {
			props[m.property] = m.fallback
		}
	}
	if opts.has("batch-size") {
		props["batch.size"] = opts.value("batch-size")
	}
	p.kgoOpts, err = producerOpts(servers, props)
	return p, err
}

// consoleProducerMergedOptions are the console producer's options that set a
// producer property, with 2.8's defaults: three retries of a request that
// times out after 1.5 s, so a produce the cluster cannot take (acks=all below
// min.insync.replicas) fails within seconds with the broker's error.
var consoleProducerMergedOptions = []struct{ option, property, fallback string }{
	{"timeout", "linger.ms", "1000"},
	{"request-required-acks", "acks", "1"},
	{"request-timeout-ms", "request.timeout.ms", "1500"},
	{"message-send-max-retries", "retries", "3"},
	{"max-block-ms", "max.block.ms", "60000"},
}

// producerOpts maps the producer properties the console producer uses onto
// kgo options, the security configs (security.protocol, ssl.*, sasl.*)
// included; an unknown property is refused rather than ignored.
func producerOpts(servers string, props map[string]string) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(servers, ",")...), kgo.ClientID("console-producer"),
		kgo.DefaultProduceTopic(""), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		// The Java producer's Metadata requests ask the broker to create a
		// missing topic (auto.create.topics.enable decides).
		kgo.AllowAutoTopicCreation()}
	sec, err := securityOpts(props)
	if err != nil {
		return nil, err
	}
	opts = append(opts, sec...)
	for k, v := range props {
		if security.IsClientSecurityConfig(k) {
			continue
		}
		bad := fmt.Errorf("Invalid value %s for configuration %s", v, k)
		switch k {
		case "acks":
			switch v {
			case "0":
				opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
			case "1":
				opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			case "-1", "all":
				opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
			default:
				return nil, fmt.Errorf("Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1", v)
			}
		case "linger.ms", "request.timeout.ms", "max.block.ms", "delivery.timeout.ms":
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ms < 0 {
				return nil, bad
			}
			d := time.Duration(ms) * time.Millisecond
			switch k {
			case "linger.ms":
				opts = append(opts, kgo.ProducerLinger(d))
			case "request.timeout.ms":
				opts = append(opts, kgo.ProduceRequestTimeout(d))
			case "delivery.timeout.ms":
				opts = append(opts, kgo.RecordDeliveryTimeout(d))
			default: // max.block.ms: kgo's one record timeout, unless delivery.timeout.ms sets it
				if _, ok := props["delivery.timeout.ms"]; !ok {
					opts = append(opts, kgo.RecordDeliveryTimeout(d))
				}
			}
		case "batch.size":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n <= 0 {
				return nil, bad
			}
			opts = append(opts, kgo.ProducerBatchMaxBytes(int32(n)))
		case "retries":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, bad
			}
			opts = append(opts, kgo.RecordRetries(n))
		case "compression.type":
			codec, ok := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
				"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}[v]
			if !ok {
				return nil, fmt.Errorf("Invalid value %s for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd", v)
			}
			opts = append(opts, kgo.ProducerBatchCompression(codec))
		case "client.id":
			opts = append(opts, kgo.ClientID(v))
		case "enable.idempotence":
			if v == "false" {
				opts = append(opts, kgo.DisableIdempotentWrite())
			}
		case "bootstrap.servers":
			opts = append(opts, kgo.SeedBrokers(strings.Split(v, ",")...))
		default:
			return nil, fmt.Errorf("unsupported producer property %q", k)
		}
	}
	return opts, nil
}

// produce sends every line of in; it returns the exit status.
func (p *consoleProducer) produce(ctx context.Context, cl *kgo.Client, in io.Reader, stderr io.Writer) int {
	var (
		mu     sync.Mutex
		failed bool
	)
	logFailure := func(r *kgo.Record, err error) {
		key := "null"
		if r.Key != nil {
			key = fmt.Sprintf("%d bytes", len(r.Key))
		}
		mu.Lock()
		failed = true
		fmt.Fprintf(stderr, "ERROR Error when sending message to topic %s with key: %s, value: %d bytes with error: %v\n",
			r.Topic, key, len(r.Value), err)
		mu.Unlock()
	}
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), 16<<20)
	line := 0
	for scanner.Scan() && ctx.Err() == nil {
		line++
		text := scanner.Text()
		r := &kgo.Record{Topic: p.topic, Value: []byte(text)}
		if p.parseKey {
			key, value, ok := strings.Cut(text, p.separator)
			switch {
			case ok:
				r.Key, r.Value = []byte(key), []byte(value)
			case !p.ignoreError:
				fmt.Fprintf(stderr, "No key found on line %d: %s\n", line, text)
				cl.Flush(context.Background())
				return 1
			}
		}
		if p.sync {
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				logFailure(r, err)
			}
			continue
		}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil && !errors.Is(err, context.Canceled) {
				logFailure(r, err)
			}
		})
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintf(stderr, "reading standard input: %v\n", err)
		failed = true
	}
	if err := cl.Flush(ctx); err != nil {
		return 1
	}
	mu.Lock()
	defer mu.Unlock()
	if failed {
		return 1
	}
	return 0
}
