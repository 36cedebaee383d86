package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/chaos"
)

// defaultTimeout bounds a whole `zkafka bench` invocation, so that a broker
// that loses records fails the run instead of hanging it.
const defaultTimeout = 10 * time.Minute

// Main is `zkafka bench` (ref nil) and `zkafka-bench` (ref the in-memory
// cluster to compare with, which adds --compare-kfake and --only-kfake): it
// parses args (without the program and subcommand names), runs the load,
// prints a table to stdout and logs to stderr. A first argument produce,
// consume, e2e or partitions picks the mode; without one the load is produced
// and consumed. It returns the exit code: 0 on success, 1 if a run failed, 2
// for bad usage.
func Main(args []string, stdout, stderr io.Writer, ref *Reference) int {
	name := "zkafka bench"
	if ref != nil {
		name = "zkafka-bench"
	}
	mode := ModeAll
	if len(args) > 0 {
		switch args[0] {
		case "partitions":
			return partitionsMain(name+" partitions", args[1:], stdout, stderr)
		case ModeProduce, ModeConsume, ModeE2E:
			mode, name, args = args[0], name+" "+args[0], args[1:]
		}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported on one line below
	var (
		bootstrap   = fs.String("bootstrap-server", "localhost:9092", "comma-separated bootstrap servers of the target cluster")
		topic       = fs.String("topic", "", `topic to produce to (default "zkafka-bench-<unix ms>")`)
		records     = fs.Int("records", DefaultRecords, "number of records to produce and consume")
		recordSize  = fs.Int("record-size", DefaultRecordSize, "bytes per record value (random, incompressible)")
		textValues  = fs.Bool("compressible", false, "values of text (words and numbers: deflate takes them to about a quarter, snappy to a half) instead of random bytes")
		partitions  = fs.Int("partitions", DefaultPartitions, "partitions of the topic, if it is created")
		replication = fs.Int("replication-factor", DefaultReplication, "replication factor of the topic, if it is created")
		acks        = fs.String("acks", DefaultAcks, "required acks: 0, 1 or all")
		compression = fs.String("compression", DefaultCompression, "batch compression: none, snappy, lz4, zstd or gzip")
		idempotent  = fs.Bool("idempotent", false, "use the idempotent producer (needs InitProducerId and acks=all)")
		linger      = fs.Duration("linger", 0, "producer linger (0 keeps kgo's default)")
		rate        = fs.Int("rate", 0, fmt.Sprintf("produce at most this many records a second, to read latency at that throughput (0: as fast as possible; e2e: %d)", DefaultE2ERate))
		txnSize     = fs.Int("transaction-size", 0, "produce in transactions of this many records (acks=all), beside an idempotent run of the same load, and compare them")
		runs        = fs.Int("runs", 1, "run the load this many times (alternating with the reference when comparing) and add the medians")
		showBar     = fs.Bool("progress", terminal(stderr), "draw a progress bar on stderr (default: if it is a terminal)")
		timeout     = fs.Duration("timeout", defaultTimeout, "give up if the whole benchmark takes longer")
		keepTopic   = fs.Bool("keep-topic", false, "keep the topic a run names and creates itself (by default it is deleted once measured; a --topic is never deleted)")
		compare     = new(bool)
		onlyKfake   = new(bool)
	)
	if ref != nil {
		fs.BoolVar(compare, "compare-kfake", false, "also run against an in-process "+ref.Name+" cluster and print the ratio")
		fs.BoolVar(onlyKfake, "only-kfake", false, "run only against an in-process "+ref.Name+" cluster")
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", name, err, name)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: %s [produce|consume|e2e] [flags]\n       %s partitions N [flags]   (scale run on cluster.sh's cluster; partitions -h)\n\n", name, name)
			fmt.Fprintf(stdout, "Without a mode the load is produced, then consumed back; produce and consume report one side\n"+
				"(consume produces the load first, untimed); e2e reads while it writes, at --rate, and reports\n"+
				"each record's latency from the producer's enqueue to the consumer.\n\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return usageErr(err)
	}
	switch {
	case fs.NArg() > 0:
		return usageErr(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case *partitions < 1 || *partitions > math.MaxInt32:
		return usageErr(fmt.Errorf("--partitions must be between 1 and %d, got %d", math.MaxInt32, *partitions))
	case *replication < 1 || *replication > math.MaxInt16:
		return usageErr(fmt.Errorf("--replication-factor must be between 1 and %d, got %d", math.MaxInt16, *replication))
	case *records < 1:
		return usageErr(fmt.Errorf("--records must be positive, got %d", *records))
	case *recordSize < 1:
		return usageErr(fmt.Errorf("--record-size must be positive, got %d", *recordSize))
	case *runs < 1:
		return usageErr(fmt.Errorf("--runs must be positive, got %d", *runs))
	case *timeout <= 0:
		return usageErr(fmt.Errorf("--timeout must be positive, got %v", *timeout))
	case *compare && *onlyKfake:
		return usageErr(errors.New("--compare-kfake and --only-kfake are mutually exclusive"))
	}
	opts, err := Options{
		Mode:         mode,
		Brokers:      splitBrokers(*bootstrap),
		Topic:        *topic,
		Records:      *records,
		RecordSize:   *recordSize,
		Compressible: *textValues,
		Partitions:   int32(*partitions),
		Replication:  int16(*replication),
		Acks:         *acks,
		Compression:  *compression,
		Idempotent:   *idempotent,
		Linger:       *linger,
		Rate:         *rate,
		// Transactions of N records, compared with an idempotent run.
		TransactionSize: *txnSize,
		// Only a topic the run names itself: one given with --topic may be
		// meant for inspection afterwards.
		DeleteTopic: *topic == "" && !*keepTopic,
	}.withDefaults()
	if err != nil {
		return usageErr(err)
	}
	if len(opts.Brokers) == 0 && !*onlyKfake {
		return usageErr(errors.New("--bootstrap-server is empty"))
	}
	if *showBar {
		opts.Progress = stderr
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	// A transactional load runs beside the same load produced idempotently.
	variants := []Options{opts}
	if opts.TransactionSize > 0 {
		idem := opts
		idem.TransactionSize, idem.TransactionalID, idem.Idempotent, idem.Topic = 0, "", true, opts.Topic+"-idempotent"
		variants = []Options{idem, opts}
	}
	var targets []target
	if !*onlyKfake {
		targets = append(targets, target{name: "zkafka", run: Run})
	}
	if *compare || *onlyKfake {
		targets = append(targets, target{name: ref.Name, run: ref.Run})
	}
	rep := &report{opts: opts, runs: *runs, variants: len(variants), targets: targets}
	for r := range *runs {
		for ti, t := range targets {
			for vi, v := range variants {
				if *runs > 1 {
					v.Topic = fmt.Sprintf("%s-%d", v.Topic, r+1)
				}
				res, err := t.run(ctx, v, stderr)
				if err != nil {
					fmt.Fprintf(stderr, "%s: %v\n", name, err)
					return 1
				}
				switch {
				case v.TransactionSize > 0:
					res.Target += fmt.Sprintf("[txn=%d]", v.TransactionSize)
				case len(variants) > 1:
					res.Target += "[idempotent]"
				}
				rep.add(ti, vi, r, res)
			}
		}
	}
	rep.write(stdout)
	return 0
}

func splitBrokers(s string) []string {
	var brokers []string
	for b := range strings.SplitSeq(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	return brokers
}

// partitionsMain is `zkafka bench partitions N`: the scale run (RunScale) on the cluster
// scripts/cluster.sh runs, with the ZKAFKA_* variables of the environment selecting which.
func partitionsMain(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		topics      = fs.Int("topics", 0, "topics the partitions are spread over (default one per 1,000 partitions)")
		replication = fs.Int("replication-factor", 3, "replication factor of the topics")
		root        = fs.String("root", ".", "the repository, whose scripts/cluster.sh runs the cluster")
		stepTimeout = fs.Duration("step-timeout", 10*time.Minute, "give up if one step takes longer")
	)
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", name, err, name)
		return 2
	}
	// The count comes first, as in `zkafka bench partitions 50000 --topics 50`.
	var count string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		count, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: %s N [flags]\n\nCreates N partitions on the cluster scripts/cluster.sh runs, then times a kill -9 of the controller,\nthe killed broker's restart and a controlled shutdown, and reports memory and open files per partition.\n\n", name)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return usageErr(err)
	}
	n, err := strconv.Atoi(count)
	switch {
	case count == "":
		return usageErr(errors.New("the number of partitions is missing"))
	case err != nil || n < 1:
		return usageErr(fmt.Errorf("the number of partitions must be a positive integer, got %q", count))
	case fs.NArg() > 0:
		return usageErr(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case *topics < 0 || *topics > n:
		return usageErr(fmt.Errorf("--topics must be between 1 and the partitions (%d), got %d", n, *topics))
	case *replication < 1 || *replication > math.MaxInt16:
		return usageErr(fmt.Errorf("--replication-factor must be between 1 and %d, got %d", math.MaxInt16, *replication))
	case *stepTimeout <= 0:
		return usageErr(fmt.Errorf("--step-timeout must be positive, got %v", *stepTimeout))
	}
	l, err := chaos.NewLocal(*root, os.Environ())
	if err != nil {
		return usageErr(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := RunScale(ctx, ScaleOptions{Cluster: l, Partitions: n, Topics: *topics, Replication: int16(*replication), StepTimeout: *stepTimeout}, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	WriteScale(stdout, res)
	return 0
}
