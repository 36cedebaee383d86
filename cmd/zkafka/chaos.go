package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/zkafka/zkafka/chaos"
)

const chaosUsage = `usage:
  zkafka chaos list                     fault kinds and their variants
  zkafka chaos run [flags]              inject faults into ./scripts/cluster.sh's cluster (--docker: the compose one); --help for flags
  zkafka chaos report DIR               re-check a past run from DIR/history.jsonl
  zkafka chaos fuzz [flags]             valid, corrupted and random requests against the brokers; --help for flags
`

// runChaos is `zkafka chaos`: faults against the local cluster and the checker (package chaos).
func runChaos(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "fuzz" {
		return chaosFuzz(args[1:], stdout, stderr)
	}
	return listRunReport{name: "chaos", usage: chaosUsage, list: chaosList, run: chaosRun, report: chaosReport}.main(args, stdout, stderr)
}

func chaosList(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tVARIANTS\tWHAT")
	for _, k := range chaos.Kinds {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, strings.Join(k.Variants, ","), k.Teaches)
	}
	fmt.Fprintf(tw, "\t\t\nscenario %s\t\t%s\n", chaos.ScenarioIsolatedLeader, "partition/isolated-leader only, again and again: with --acks 1 the loss Kafka's design allows")
	tw.Flush()
}

// chaosReport analyses a past run's directory again, rewrites its report and prints the table.
func chaosReport(dir string, stdout, stderr io.Writer) int {
	rep, err := chaos.Analyze(dir)
	if err == nil {
		err = rep.Save(dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "zkafka chaos report: %v\n", err)
		return 1
	}
	rep.WriteTable(stdout)
	return verdictCode(rep)
}

// verdictCode is 0 for PASS and 1 for FAIL, so scripts can use the exit status.
func verdictCode(rep *chaos.Report) int {
	if rep.Check.Verdict() == "PASS" {
		return 0
	}
	return 1
}

func chaosRun(args []string, stdout, stderr io.Writer) int {
	d := chaos.DefaultOptions()
	fs := flag.NewFlagSet("chaos run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		faults     = fs.String("faults", "kill,pause,zk-pause,zk-restart,rolling", "comma-separated fault kinds (zkafka chaos list)")
		scenario   = fs.String("scenario", "", "a scenario instead of --faults: "+chaos.ScenarioIsolatedLeader)
		acks       = fs.String("acks", d.Acks, "producers: all (idempotent acks=all), 1 (the acks=1 producer), both")
		count      = fs.Int("count", 0, "faults to inject (with --duration, whichever comes first)")
		duration   = fs.Duration("duration", 0, "inject faults for this long")
		out        = fs.String("out", "", "output directory (default ./data/chaos/<time>)")
		root       = fs.String("root", ".", "the repository whose scripts/cluster.sh (or docker-compose.yml) runs the cluster")
		onDocker   = fs.Bool("docker", false, "break the Docker cluster (docker compose up -d in --root; COMPOSE_PROJECT_NAME, COMPOSE_FILE and the ZKAFKA_*_PORT variables as for compose) instead of cluster.sh's")
		partitions = fs.Int("partitions", int(d.Partitions), "partitions of the run's topic (replication factor 3, min.insync.replicas 2)")
		producers  = fs.Int("producers", d.Producers, "idempotent acks=all producers")
		rate       = fs.Int("rate", d.Rate, "records per second, per producer")
		members    = fs.Int("members", d.Members, "members of the cooperative consumer group")
		warmUp     = fs.Duration("warm-up", d.WarmUp, "producing before the first fault")
		downMin    = fs.Duration("down-min", d.DownMin, "shortest time a killed process stays down")
		downMax    = fs.Duration("down-max", d.DownMax, "longest time a killed process stays down")
		heal       = fs.Duration("heal-timeout", d.HealTimeout, "longest wait for the cluster to be whole after a fault")
		diskSize   = fs.Int64("disk-size", d.DiskSize>>20, "MiB of the tmpfs a disk-full fault fills")
		clockJump  = fs.Duration("clock-jump", d.ClockJump, "how far a clock fault moves a broker's wall clock")
		latency    = fs.Duration("latency", d.Latency, "a slow/latency fault's delay, each way")
		loss       = fs.Float64("loss", d.Loss, "a slow/loss fault's chance that a chunk is lost (then retransmitted)")
		seed       = fs.Uint64("seed", 0, "random seed (default: the time; the report states it)")
		quiet      = fs.Bool("quiet", false, "no live progress line")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zkafka chaos run: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	o := d
	if *scenario == "" {
		kinds, err := chaos.ParseFaults(*faults)
		if err != nil {
			fmt.Fprintf(stderr, "zkafka chaos run: %v\n", err)
			return 2
		}
		o.Faults = kinds
	}
	if *count <= 0 && *duration <= 0 {
		fmt.Fprintln(stderr, "zkafka chaos run: give --count, --duration or both")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var outDir string
	if *onDocker {
		d, err := chaos.NewDocker(ctx, *root, os.Environ())
		if err != nil {
			fmt.Fprintf(stderr, "zkafka chaos run: the Docker cluster: %v\n", err)
			return 2
		}
		o.Cluster, outDir = d, filepath.Join(*root, "data", "chaos")
	} else {
		l, err := chaos.NewLocal(*root, os.Environ())
		if err != nil {
			fmt.Fprintf(stderr, "zkafka chaos run: %v\n", err)
			return 2
		}
		o.Cluster, outDir = l, filepath.Join(l.Data, "chaos")
	}
	o.Scenario, o.Acks, o.Count, o.Duration = *scenario, *acks, *count, *duration
	o.Partitions, o.Producers, o.Rate, o.Members = int32(*partitions), *producers, *rate, *members
	o.WarmUp, o.DownMin, o.DownMax, o.HealTimeout = *warmUp, *downMin, *downMax, *heal
	o.DiskSize, o.Seed, o.ClockJump, o.Latency, o.Loss = *diskSize<<20, *seed, *clockJump, *latency, *loss
	o.Command = "zkafka chaos run " + strings.Join(args, " ")
	if !*quiet {
		o.Progress = stderr
	}
	o.Out = *out
	if o.Out == "" {
		o.Out = filepath.Join(outDir, time.Now().Format("20060102-150405"))
	}
	rep, runErr := chaos.Run(ctx, o)
	if rep == nil {
		fmt.Fprintf(stderr, "zkafka chaos run: %v\n", runErr)
		return 1
	}
	rep.WriteTable(stdout)
	fmt.Fprintf(stderr, "run: %s (history.jsonl, findings.json, faults.json, table.txt, timeline.svg)\n", o.Out)
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			fmt.Fprintln(stderr, "zkafka chaos run: interrupted; the cluster was restored and the report says what ran")
		} else {
			fmt.Fprintf(stderr, "zkafka chaos run: %v\n", runErr)
		}
		return 1
	}
	return verdictCode(rep)
}

// chaosFuzz is `zkafka chaos fuzz`: the network fuzzer against the local cluster (or any brokers).
func chaosFuzz(args []string, stdout, stderr io.Writer) int {
	d := chaos.DefaultFuzzOptions()
	fs := flag.NewFlagSet("chaos fuzz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		bootstrap   = fs.String("bootstrap-server", "", "brokers to fuzz (default: the local cluster.sh cluster's, whose processes' memory and logs are then read too)")
		root        = fs.String("root", ".", "the repository whose scripts/cluster.sh runs the local cluster")
		connections = fs.Int("connections", d.Connections, "connections to open in all")
		concurrency = fs.Int("concurrency", d.Concurrency, "connections open at once")
		perConn     = fs.Int("requests-per-connection", d.PerConn, "requests a connection sends before it is closed")
		readTimeout = fs.Duration("read-timeout", d.ReadTimeout, "how long a connection waits for each answer")
		rate        = fs.Int("rate", d.Rate, "records per second the producer writes meanwhile (acks=all, idempotent)")
		topic       = fs.String("topic", "", "the producer's topic (default chaos-fuzz-<time>, created)")
		seed        = fs.Uint64("seed", 0, "random seed (default: the time; the report states it)")
		quiet       = fs.Bool("quiet", false, "no live progress line")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zkafka chaos fuzz: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	o := d
	o.Connections, o.Concurrency, o.PerConn, o.ReadTimeout, o.Rate, o.Seed = *connections, *concurrency, *perConn, *readTimeout, *rate, *seed
	o.Topic = *topic
	if o.Topic == "" {
		o.Topic = "chaos-fuzz-" + time.Now().Format("20060102-150405")
	}
	if *bootstrap != "" {
		o.Bootstrap = strings.Split(*bootstrap, ",")
	} else {
		l, err := chaos.NewLocal(*root, os.Environ())
		if err != nil {
			fmt.Fprintf(stderr, "zkafka chaos fuzz: %v\n", err)
			return 2
		}
		for _, b := range l.Brokers() {
			o.Bootstrap = append(o.Bootstrap, l.Addr(b))
			if pid, err := l.Pid(b); err == nil {
				o.PIDs = append(o.PIDs, pid)
			}
			o.Logs = append(o.Logs, l.LogFile(b))
		}
	}
	if !*quiet {
		o.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rep, err := chaos.Fuzz(ctx, o)
	if rep == nil {
		fmt.Fprintf(stderr, "zkafka chaos fuzz: %v\n", err)
		return 1
	}
	rep.WriteTable(stdout)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka chaos fuzz: %v\n", err)
		return 1
	}
	if rep.Verdict() != "PASS" {
		return 1
	}
	return 0
}
