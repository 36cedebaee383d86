package lab

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// RunInfo is DIR/run.json: what was run, and whether it finished.
type RunInfo struct {
	Scenario           string   `json:"scenario"`
	Modes              []string `json:"modes"`
	Members            int      `json:"members"`
	Partitions         int      `json:"partitions"`
	Topic              string   `json:"topic"`
	RecordsPerSecond   int      `json:"records_per_second"`
	ProcessingMs       float64  `json:"processing_ms_per_record"`
	MaxPollRecords     int      `json:"max_poll_records"`
	SessionTimeoutMs   int64    `json:"session_timeout_ms"`
	HeartbeatMs        int64    `json:"heartbeat_interval_ms"`
	MaxPollIntervalMs  int64    `json:"max_poll_interval_ms"`
	ZKSessionTimeoutMs int64    `json:"zookeeper_session_timeout_ms"`
	AutoCommitMs       int64    `json:"auto_commit_interval_ms"`
	StepMs             int64    `json:"step_ms"`
	Client             string   `json:"client,omitempty"` // the members' client when not zkafka's
	// The brokers' group.consumer.session.timeout.ms and
	// group.consumer.heartbeat.interval.ms, when a consumer-protocol mode ran.
	ConsumerSessionTimeoutMs int64     `json:"group_consumer_session_timeout_ms,omitempty"`
	ConsumerHeartbeatMs      int64     `json:"group_consumer_heartbeat_interval_ms,omitempty"`
	Started                  time.Time `json:"started"`
	Partial                  bool      `json:"partial"`
	Reason                   string    `json:"reason,omitempty"`
}

func runInfo(res *Result) RunInfo {
	o := res.Options
	info := RunInfo{
		Scenario: o.Scenario, Members: o.Members, Partitions: o.Partitions, Topic: o.Topic,
		RecordsPerSecond: o.Rate, ProcessingMs: float64(o.Processing) / float64(time.Millisecond),
		MaxPollRecords:   o.MaxPollRecords,
		SessionTimeoutMs: o.SessionTimeout.Milliseconds(), HeartbeatMs: o.HeartbeatInterval.Milliseconds(),
		MaxPollIntervalMs: o.MaxPollInterval.Milliseconds(), ZKSessionTimeoutMs: o.ZKSessionTimeout.Milliseconds(),
		AutoCommitMs: o.AutoCommitInterval.Milliseconds(), StepMs: o.Step.Milliseconds(),
		Started: res.Started, Partial: res.Partial, Reason: res.Reason,
		ConsumerSessionTimeoutMs: res.ConsumerSessionTimeout.Milliseconds(), ConsumerHeartbeatMs: res.ConsumerHeartbeatInterval.Milliseconds(),
	}
	if o.Client != ClientZkafka {
		info.Client = o.Client
	}
	for _, m := range o.Modes {
		info.Modes = append(info.Modes, m.Name)
	}
	return info
}

// Save writes a run to dir: run.json, events.jsonl, events.csv, then the
// rendered report (see Render).
func Save(dir string, res *Result) ([]Analysis, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	info := runInfo(res)
	if err := writeJSON(filepath.Join(dir, "run.json"), info); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "events.jsonl"), func(w io.Writer) error { return WriteJSONLines(w, res.Events) }); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "events.csv"), func(w io.Writer) error { return WriteCSV(w, res.Events) }); err != nil {
		return nil, err
	}
	return Render(dir, info, res.Events)
}

// Load reads a saved run.
func Load(dir string) (RunInfo, []Event, error) {
	var info RunInfo
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return info, nil, fmt.Errorf("not a lab run directory: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
	}
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return info, nil, err
	}
	defer f.Close()
	events, err := ReadJSONLines(f)
	return info, events, err
}

// Render computes every mode's figures from events and writes
// figures.json, table.txt, the pictures and report.html to dir.
func Render(dir string, info RunInfo, events []Event) ([]Analysis, error) {
	modes := info.Modes
	if len(modes) == 0 {
		modes = Modes(events)
	}
	var as []Analysis
	var figs []Figures
	for _, m := range modes {
		me := ModeEvents(events, m)
		if len(me) == 0 {
			continue // not reached before the run ended
		}
		a := Analyze(m, me)
		as = append(as, a)
		figs = append(figs, a.Figures)
	}
	if err := writeJSON(filepath.Join(dir, "figures.json"), figs); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "table.txt"), func(w io.Writer) error { return WriteTable(w, info, figs) }); err != nil {
		return nil, err
	}
	pics, err := DrawPictures(dir, as)
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "report.html"), func(w io.Writer) error { return writeHTML(w, dir, info, figs, pics) }); err != nil {
		return nil, err
	}
	return as, nil
}

// tableRows are the comparison table's rows: a label and the figure per mode.
var tableRows = []struct {
	label string
	value func(f Figures) string
}{
	{"rebalances", func(f Figures) string { return fmt.Sprint(f.Rebalances) }},
	{"rounds (generations; legacy: attempts)", func(f Figures) string { return fmt.Sprint(f.Rounds) }},
	{"trigger → stable, p50 (s)", func(f Figures) string { return fmt.Sprintf("%.2f", f.StableP50) }},
	{"trigger → stable, max (s)", func(f Figures) string { return fmt.Sprintf("%.2f", f.StableMax) }},
	{"member-seconds paused", func(f Figures) string { return fmt.Sprintf("%.2f", f.PausedMemberSeconds) }},
	{"partition-seconds unfetched, sum", func(f Figures) string { return fmt.Sprintf("%.2f", f.UnfetchedPartitionSeconds) }},
	{"partition-seconds unfetched, max/partition", func(f Figures) string { return fmt.Sprintf("%.2f", f.UnfetchedMaxPartition) }},
	{"records processed", func(f Figures) string { return fmt.Sprint(f.Processed) }},
	{"records processed more than once", func(f Figures) string { return fmt.Sprint(f.Duplicates) }},
	{"records never processed", func(f Figures) string { return fmt.Sprint(f.Never) }},
	{"ZooKeeper watch notifications", func(f Figures) string { return fmt.Sprint(f.ZKWatchNotifications) }},
	{"ZooKeeper reads", func(f Figures) string { return fmt.Sprint(f.ZKReads) }},
	{"ZooKeeper writes", func(f Figures) string { return fmt.Sprint(f.ZKWrites) }},
	{"JoinGroup requests", func(f Figures) string { return fmt.Sprint(f.JoinGroups) }},
	{"SyncGroup requests", func(f Figures) string { return fmt.Sprint(f.SyncGroups) }},
	{"Heartbeat requests", func(f Figures) string { return fmt.Sprint(f.Heartbeats) }},
	{"failed rebalance attempts (retried)", func(f Figures) string { return fmt.Sprint(f.FailedAttempts) }},
	{"failed owner claims (legacy)", func(f Figures) string { return fmt.Sprint(f.OwnerConflicts) }},
	{"fenced commits", func(f Figures) string { return fmt.Sprint(f.FencedCommits) }},
	{"other failed commits", func(f Figures) string { return fmt.Sprint(f.FailedCommits) }},
}

// WriteTable writes the comparison table: one column per mode.
func WriteTable(w io.Writer, info RunInfo, figs []Figures) error {
	fmt.Fprintf(w, "scenario %s: %d members, %d partitions, %d records/s, %.1f ms/record, max.poll.records=%d; session.timeout.ms=%d heartbeat.interval.ms=%d max.poll.interval.ms=%d zookeeper.session.timeout.ms=%d auto.commit.interval.ms=%d\n",
		info.Scenario, info.Members, info.Partitions, info.RecordsPerSecond, info.ProcessingMs, info.MaxPollRecords,
		info.SessionTimeoutMs, info.HeartbeatMs, info.MaxPollIntervalMs, info.ZKSessionTimeoutMs, info.AutoCommitMs)
	if info.ConsumerSessionTimeoutMs > 0 {
		fmt.Fprintf(w, "consumer-protocol modes: the brokers' group.consumer.session.timeout.ms=%d group.consumer.heartbeat.interval.ms=%d\n",
			info.ConsumerSessionTimeoutMs, info.ConsumerHeartbeatMs)
	}
	if info.Client != "" {
		fmt.Fprintf(w, "members run with the %s client\n", info.Client)
	}
	if info.Partial {
		fmt.Fprintf(w, "PARTIAL RUN: %s\n", info.Reason)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"figure"}
	for _, f := range figs {
		name := f.Mode
		if f.Partial {
			name += " (partial)"
		}
		head = append(head, name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, row := range tableRows {
		cells := []string{row.label}
		for _, f := range figs {
			cells = append(cells, row.value(f))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	return tw.Flush()
}

func writeJSON(path string, v any) error {
	return writeFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
