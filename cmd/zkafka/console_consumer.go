package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/consumer"
)

// runConsoleConsumer is kafka-console-consumer.sh: it prints the values of a
// topic's records, one per line, as a member of a consumer group — the 0.8
// high-level consumer with --zookeeper, the group protocol with
// --bootstrap-server. It runs until SIGINT/SIGTERM or --max-messages.
func runConsoleConsumer(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("console-consumer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		zkConnect  = fs.String("zookeeper", "", "ZooKeeper connect string: legacy (0.8) consumer")
		bootstrap  = fs.String("bootstrap-server", "", "comma-separated brokers: group coordinator consumer")
		topic      = fs.String("topic", "", "topic to consume")
		group      = fs.String("group", "", "consumer group id (default console-consumer-<random>)")
		protocol   = fs.String("rebalance-protocol", "eager", "eager (range) or cooperative (cooperative-sticky); bootstrap mode only")
		strategy   = fs.String("partition-assignment-strategy", "", "range, roundrobin, sticky or cooperative-sticky (overrides --rebalance-protocol)")
		instanceID = fs.String("group-instance-id", "", "static membership id (group.instance.id); bootstrap mode only")
		fromStart  = fs.Bool("from-beginning", false, "start at the earliest offset when the group has none")
		maxMsgs    = fs.Int("max-messages", 0, "exit after this many records (0: run until interrupted)")
		printKey   = fs.Bool("print-key", false, "print key<TAB>value")
		props      overrides
	)
	fs.Var(&props, "consumer-property", "key=value consumer property, e.g. rebalance.backoff.ms=500 (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zkafka console-consumer: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *topic == "" || (*zkConnect == "") == (*bootstrap == "") {
		fmt.Fprintln(stderr, "USAGE: zkafka console-consumer (--zookeeper host:2181 | --bootstrap-server host:9092) --topic t [--group g]")
		return 2
	}
	extra, err := broker.ParseOverrides(props)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
		return 2
	}
	cfg, err := consumer.ConfigFromProperties(extra)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
		return 2
	}
	cfg.Topics, cfg.ZooKeeperConnect = []string{*topic}, *zkConnect
	if cfg.ClientID == "" {
		cfg.ClientID = "console-consumer"
	}
	if *group != "" {
		cfg.GroupID = *group
	}
	if *instanceID != "" {
		cfg.GroupInstanceID = *instanceID
	}
	if cfg.GroupID == "" {
		var b [4]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		cfg.GroupID = "console-consumer-" + hex.EncodeToString(b[:])
	}
	if *bootstrap != "" {
		cfg.BootstrapServers = strings.Split(*bootstrap, ",")
		switch {
		case *protocol == "eager" && cfg.PartitionAssignmentStrategy == nil:
			cfg.PartitionAssignmentStrategy = []string{"range"}
		case *protocol == "cooperative":
			cfg.PartitionAssignmentStrategy = []string{"cooperative-sticky"}
		case *protocol != "eager":
			fmt.Fprintf(stderr, "zkafka console-consumer: --rebalance-protocol %q is not eager or cooperative\n", *protocol)
			return 2
		}
	} else if cfg.GroupInstanceID != "" {
		fmt.Fprintln(stderr, "zkafka console-consumer: --group-instance-id needs --bootstrap-server")
		return 2
	}
	if *strategy != "" {
		cfg.PartitionAssignmentStrategy = []string{*strategy}
	}
	if *fromStart {
		cfg.AutoOffsetReset = "earliest"
	}
	logger := newLogger()
	defer logger.Sync()
	cfg.Logger = logger

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	c, err := consumer.New(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka console-consumer: %v\n", err)
		if errors.Is(err, consumer.ErrInvalidConfig) {
			return 2
		}
		return 1
	}
	out := bufio.NewWriter(stdout)
	code, n := 0, 0
	for *maxMsgs == 0 || n < *maxMsgs {
		records, err := c.Poll(ctx)
		if err != nil {
			if ctx.Err() == nil {
				logger.Error("poll failed", zap.Error(err))
				code = 1
			}
			break
		}
		for _, r := range records {
			if *maxMsgs > 0 && n == *maxMsgs {
				break
			}
			if *printKey {
				fmt.Fprintf(out, "%s\t", r.Key)
			}
			fmt.Fprintf(out, "%s\n", r.Value)
			n++
		}
		if err := out.Flush(); err != nil {
			code = 1
			break
		}
	}
	// As with Kafka's console consumer, records Poll returned beyond
	// --max-messages count as consumed: Close commits the positions.
	if err := c.Close(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		logger.Warn("close", zap.Error(err))
	}
	fmt.Fprintf(stderr, "Processed a total of %d messages\n", n)
	return code
}
