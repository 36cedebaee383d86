package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/zkafka/zkafka/lab"
)

const labUsage = `usage:
  zkafka lab list                       scenarios and modes, with what each teaches
  zkafka lab run [flags]                run a scenario under each mode; --help for flags
  zkafka lab report DIR                 re-render a past run from DIR/events.jsonl
`

// runLab is `zkafka lab`: the rebalance lab (package lab).
func runLab(args []string, stdout, stderr io.Writer) int {
	return listRunReport{name: "lab", usage: labUsage, list: labList, run: labRun, report: labReport}.main(args, stdout, stderr)
}

func labList(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tTEACHES")
	for _, s := range lab.AllScenarios {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Teaches)
	}
	fmt.Fprintln(tw, "\t")
	fmt.Fprintln(tw, "MODE\tTEACHES")
	for _, m := range lab.AllModes {
		fmt.Fprintf(tw, "%s\t%s\n", m.Name, m.Teaches)
	}
	tw.Flush()
}

func labRun(args []string, stdout, stderr io.Writer) int {
	d := lab.DefaultOptions()
	fs := flag.NewFlagSet("lab run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		scenario   = fs.String("scenario", d.Scenario, "scenario (zkafka lab list)")
		modes      = fs.String("modes", "all", "comma-separated modes, or all")
		members    = fs.Int("members", d.Members, "group size (scale-out grows to it, scale-in shrinks from it)")
		partitions = fs.Int("partitions", d.Partitions, "partitions of the lab's topic")
		rate       = fs.Int("rate", d.Rate, "records produced per second")
		processing = fs.Duration("processing", d.Processing, "mean processing time per record (each takes between none and twice this)")
		maxRecords = fs.Int("max-poll-records", d.MaxPollRecords, "max.poll.records: a batch takes at most this many times --processing")
		session    = fs.Duration("session-timeout", d.SessionTimeout, "session.timeout.ms")
		heartbeat  = fs.Duration("heartbeat-interval", d.HeartbeatInterval, "heartbeat.interval.ms")
		maxPoll    = fs.Duration("max-poll-interval", d.MaxPollInterval, "max.poll.interval.ms")
		zkSession  = fs.Duration("zookeeper-session-timeout", d.ZKSessionTimeout, "zookeeper.session.timeout.ms (legacy modes)")
		autoCommit = fs.Duration("auto-commit-interval", d.AutoCommitInterval, "auto.commit.interval.ms")
		step       = fs.Duration("step", d.Step, "time between the scenario's actions")
		topic      = fs.String("topic", "", "the lab's topic (default lab-<time>, created)")
		bootstrap  = fs.String("bootstrap-server", strings.Join(d.Bootstrap, ","), "brokers")
		zookeeper  = fs.String("zookeeper", d.ZooKeeper, "ZooKeeper, for the legacy modes")
		client     = fs.String("client", d.Client, "the members' client: zkafka, or kgo (franz-go's consumer; coordinator modes only)")
		kill       = fs.String("kill-command", "", "shell command that kills broker {broker} with SIGKILL (broker-failure), e.g. './scripts/cluster.sh kill {broker}'")
		restart    = fs.String("restart-command", "", "shell command that starts broker {broker} again (broker-failure), e.g. './scripts/cluster.sh restart {broker}'")
		out        = fs.String("out", "", "output directory (default ./data/lab/<scenario>-<time>)")
		quiet      = fs.Bool("quiet", false, "no live progress line")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zkafka lab run: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	sc, err := lab.FindScenario(*scenario)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka lab run: %v\n", err)
		return 2
	}
	ms, err := lab.ParseModes(*modes)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka lab run: %v\n", err)
		return 2
	}
	if *modes == "all" {
		coordinatorOnly := sc.CoordinatorOnly || *client == lab.ClientKgo
		ms = slices.DeleteFunc(slices.Clone(ms), func(m lab.Mode) bool {
			return sc.LegacyOnly && !m.Legacy || coordinatorOnly && m.Legacy
		})
	}
	if (*kill == "") != (*restart == "") {
		fmt.Fprintln(stderr, "zkafka lab run: give both --kill-command and --restart-command, or neither")
		return 2
	}
	stamp := time.Now().Format("20060102-150405")
	o := d
	o.Scenario, o.Modes, o.Members, o.Partitions, o.Rate, o.Processing = *scenario, ms, *members, *partitions, *rate, *processing
	o.SessionTimeout, o.HeartbeatInterval, o.MaxPollInterval, o.ZKSessionTimeout = *session, *heartbeat, *maxPoll, *zkSession
	o.AutoCommitInterval, o.Step, o.MaxPollRecords = *autoCommit, *step, *maxRecords
	o.Topic, o.Bootstrap, o.ZooKeeper, o.Client = *topic, strings.Split(*bootstrap, ","), *zookeeper, *client
	if *kill != "" {
		o.Brokers = lab.CommandBrokers{Kill: *kill, Restart: *restart}
	}
	if o.Topic == "" {
		o.Topic = "lab-" + stamp
	}
	if !*quiet {
		o.Progress = stderr
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("data", "lab", *scenario+"-"+stamp)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	res, runErr := lab.Run(ctx, o)
	if res == nil {
		fmt.Fprintf(stderr, "zkafka lab run: %v\n", runErr)
		return 1
	}
	if _, err := lab.Save(dir, res); err != nil {
		fmt.Fprintf(stderr, "zkafka lab run: save the report: %v\n", err)
		return 1
	}
	if err := printTable(dir, stdout); err != nil {
		fmt.Fprintf(stderr, "zkafka lab run: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(dir, "report.html"))
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			fmt.Fprintf(stderr, "zkafka lab run: interrupted; the partial report says so (the topic %s remains)\n", o.Topic)
		} else {
			fmt.Fprintf(stderr, "zkafka lab run: %v\n", runErr)
		}
		return 1
	}
	return 0
}

func printTable(dir string, w io.Writer) error {
	info, events, err := lab.Load(dir)
	if err != nil {
		return err
	}
	var figs []lab.Figures
	for _, m := range info.Modes {
		if me := lab.ModeEvents(events, m); len(me) > 0 {
			figs = append(figs, lab.Analyze(m, me).Figures)
		}
	}
	return lab.WriteTable(w, info, figs)
}

func labReport(dir string, stdout, stderr io.Writer) int {
	info, events, err := lab.Load(dir)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka lab report: %v\n", err)
		return 1
	}
	if _, err := lab.Render(dir, info, events); err != nil {
		fmt.Fprintf(stderr, "zkafka lab report: %v\n", err)
		return 1
	}
	if err := printTable(dir, stdout); err != nil {
		fmt.Fprintf(stderr, "zkafka lab report: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(dir, "report.html"))
	return 0
}
