package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Files of a run's directory.
const (
	HistoryFile  = "history.jsonl" // every op, as it happened
	InfoFile     = "run.json"      // the run's settings and whether it finished
	FindingsFile = "findings.json" // the checker's result
	FaultsFile   = "faults.json"   // every fault's timings
	TableFile    = "table.txt"     // the table and the verdict line, as printed
	TimelineName = "timeline"      // timeline.svg and timeline.png
)

// RunInfo is run.json: what was run, and whether it finished.
type RunInfo struct {
	Command          string    `json:"command,omitempty"`
	Faults           []string  `json:"faults"`
	Scenario         string    `json:"scenario,omitempty"`
	Acks             string    `json:"acks"`
	Count            int       `json:"count"`
	DurationSeconds  float64   `json:"duration_seconds"`
	Topic            string    `json:"topic"`
	Group            string    `json:"group"`
	Partitions       int32     `json:"partitions"`
	Producers        int       `json:"producers"` // idempotent acks=all producers
	Rate             int       `json:"rate"`      // records per second per producer
	Members          int       `json:"members"`
	Seed             uint64    `json:"seed"`
	SessionTimeoutMs int64     `json:"zookeeper_session_timeout_ms"`
	ReplicaLagMs     int64     `json:"replica_lag_time_max_ms"`
	Started          time.Time `json:"started"`
	Ended            time.Time `json:"ended"`
	Partial          bool      `json:"partial"`
	Reason           string    `json:"reason,omitempty"`
}

func (i RunInfo) sessionTimeout() time.Duration {
	return time.Duration(i.SessionTimeoutMs) * time.Millisecond
}

// Row is one line of the table: the faults of one kind and variant, and the records sent during them
// (from each fault's start to the next fault's).
type Row struct {
	Fault   string `json:"fault"`
	Faults  int    `json:"faults"`
	Counts  Counts `json:"acks_all"`
	AcksOne Counts `json:"acks_1"`
	// UnavailableP50 and UnavailableMax: the longest wait for an acknowledgement of a record sent
	// during a fault, in seconds (FaultFigures.Unavailable); OverSession counts the faults where that
	// exceeded the ZooKeeper session timeout.
	UnavailableP50 float64 `json:"unavailable_p50_seconds"`
	UnavailableMax float64 `json:"unavailable_max_seconds"`
	OverSession    int     `json:"over_session_timeout"`
	// NoControllerP50 and NoControllerMax: seconds without a live controller per fault.
	NoControllerP50 float64 `json:"no_controller_p50_seconds"`
	NoControllerMax float64 `json:"no_controller_max_seconds"`
}

// Report is a run's analysis.
type Report struct {
	Info      RunInfo          `json:"info"`
	Check     CheckResult      `json:"check"`
	Faults    []FaultFigures   `json:"faults"`
	Rows      []Row            `json:"rows"`
	Total     Row              `json:"total"`
	Incidents []string         `json:"incidents"` // faults that failed, processes found dead, a group that did not drain
	PerSecond map[string][]int `json:"-"`
	Spans     []span           `json:"-"`
	End       float64          `json:"-"`
}

// span is a phase or fault on the timeline.
type span struct {
	name       string
	start, end float64
}

// Analyze reads a run's directory and analyses its history.
func Analyze(dir string) (*Report, error) {
	var info RunInfo
	b, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if err != nil {
		return nil, fmt.Errorf("not a chaos run directory: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, InfoFile), err)
	}
	f, err := os.Open(filepath.Join(dir, HistoryFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, a := NewChecker(), NewAvailability()
	var incidents []string
	err = ScanHistory(f, func(op Op) {
		c.Add(op)
		a.Add(op)
		if op.Type == OpNote && op.Err != "" {
			s := fmt.Sprintf("%.1fs: %s", op.T, op.Err)
			if op.Fault != "" {
				s = fmt.Sprintf("%.1fs: fault %d (%s): %s", op.T, op.Seq, op.Fault, op.Err)
			}
			incidents = append(incidents, s)
		}
	})
	if err != nil {
		return nil, err
	}
	rep := &Report{Info: info, Check: c.Result(), Faults: a.Faults(), Incidents: incidents, PerSecond: a.PerSecond(), End: a.End()}
	if info.Partial {
		rep.Incidents = append(rep.Incidents, "the run did not finish: "+info.Reason)
		rep.Check.Failures = append(rep.Check.Failures, "the run did not finish")
	}
	rep.rows()
	for _, f := range rep.Faults {
		end := f.Heal
		if end == 0 {
			end = a.End()
		}
		rep.Spans = append(rep.Spans, span{name: f.Fault, start: f.Start, end: end})
	}
	return rep, nil
}

// rows groups the faults by kind and variant, in the order of Kinds.
func (rep *Report) rows() {
	byCounts := rep.Check.ByFault
	byFault := map[string][]FaultFigures{}
	for _, f := range rep.Faults {
		byFault[f.Fault] = append(byFault[f.Fault], f)
	}
	var names []string
	for _, k := range Kinds {
		for _, v := range k.Variants {
			if n := k.Name + "/" + v; len(byFault[n]) > 0 || byCounts[n] != (FaultCounts{}) {
				names = append(names, n)
			}
		}
	}
	session := rep.Info.sessionTimeout().Seconds()
	row := func(name string, fs []FaultFigures) Row {
		r := Row{Fault: name, Faults: len(fs), Counts: byCounts[name].AcksAll, AcksOne: byCounts[name].AcksOne}
		var un, nc []float64
		for _, f := range fs {
			un = append(un, f.Unavailable)
			nc = append(nc, f.NoController)
			if session > 0 && f.Unavailable > session {
				r.OverSession++
			}
		}
		r.UnavailableP50, r.UnavailableMax = p50(un), maxOf(un)
		r.NoControllerP50, r.NoControllerMax = p50(nc), maxOf(nc)
		return r
	}
	if byCounts["none"] != (FaultCounts{}) {
		rep.Rows = append(rep.Rows, row("none", nil))
	}
	for _, n := range names {
		rep.Rows = append(rep.Rows, row(n, byFault[n]))
	}
	rep.Total = row("all", rep.Faults)
	rep.Total.Counts, rep.Total.AcksOne = rep.Check.AcksAll, rep.Check.AcksOne
}

func p50(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// Verdict is the last line of a run: the acks=all producers' figures (the acks=1 producer's when it
// ran alone) and PASS or FAIL.
func (rep *Report) Verdict() string {
	c := rep.Check.AcksAll
	if rep.Info.Producers == 0 {
		c = rep.Check.AcksOne
	}
	return fmt.Sprintf("faults=%d acked=%d lost=%d duplicated=%d reordered=%d verdict=%s",
		len(rep.Faults), c.Acked, c.Lost, c.Duplicated, c.Reordered, rep.Check.Verdict())
}

// WriteTable writes the table per fault, the findings in short and the verdict line last.
func (rep *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "FAULT\tFAULTS\tACKED\tLOST\tDUPLICATED\tREORDERED\tACKS=1 ACKED\tACKS=1 LOST\tUNAVAILABLE P50\tUNAVAILABLE MAX\t> SESSION\tNO CONTROLLER P50\tNO CONTROLLER MAX\t")
	line := func(r Row) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1fs\t%.1fs\t%d\t%.1fs\t%.1fs\t\n", r.Fault, r.Faults,
			r.Counts.Acked, r.Counts.Lost, r.Counts.Duplicated, r.Counts.Reordered, r.AcksOne.Acked, r.AcksOne.Lost,
			r.UnavailableP50, r.UnavailableMax, r.OverSession, r.NoControllerP50, r.NoControllerMax)
	}
	for _, r := range rep.Rows {
		line(r)
	}
	line(rep.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nZooKeeper session timeout %.1fs. UNAVAILABLE: the longest a record sent during a fault waited for its acknowledgement\n", rep.Info.sessionTimeout().Seconds())
	fmt.Fprintln(w, "(from the fault, about the time until its slowest partition took records again; a wait counts up to the next fault);")
	fmt.Fprintln(w, "NO CONTROLLER: time without a live controller (none, or /controller held by a dead, paused or cut-off broker's session).")
	c := rep.Check
	if a := c.AcksOne; a.Sent > 0 {
		fmt.Fprintf(w, "acks=1 (reported, not failed): sent=%d acked=%d lost=%d duplicated=%d reordered=%d\n", a.Sent, a.Acked, a.Lost, a.Duplicated, a.Reordered)
	}
	if a := c.AcksAll; a.Sent > 0 {
		fmt.Fprintf(w, "acks=all: sent=%d acked=%d failed=%d (not acknowledged; may or may not be in the log)\n", a.Sent, a.Acked, a.Failed)
	}
	fmt.Fprintf(w, "group: never processed=%d, committed offsets going backwards=%d (reported: stale answers of a deposed coordinator %d, answers of an unacknowledged commit %d); never sent=%d, unverified=%d\n",
		c.NeverProcessed, c.CommittedBackwards, c.StaleCommitted, c.UnackedCommitted, c.NeverSent, c.Unverified)
	if len(rep.Incidents) > 0 {
		fmt.Fprintf(w, "incidents (%d):\n", len(rep.Incidents))
		for _, s := range rep.Incidents {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if len(c.Findings) > 0 {
		fmt.Fprintln(w, "findings (examples; all in findings.json):")
		for _, f := range c.Findings {
			acks := ""
			if f.Acks != "" {
				acks = " acks=" + f.Acks
			}
			fmt.Fprintf(w, "  %s%s during %s: %s\n", f.Kind, acks, f.Fault, f.Text)
		}
	}
	for _, fl := range c.Failures {
		fmt.Fprintf(w, "FAIL: %s\n", fl)
	}
	_, err := fmt.Fprintln(w, rep.Verdict())
	return err
}

// Save writes the report's files to dir: findings.json, faults.json, table.txt and the timeline.
func (rep *Report) Save(dir string) error {
	if err := writeJSON(filepath.Join(dir, FindingsFile), rep.Check); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, FaultsFile), struct {
		Rows   []Row          `json:"rows"`
		Total  Row            `json:"total"`
		Faults []FaultFigures `json:"faults"`
	}{rep.Rows, rep.Total, rep.Faults}); err != nil {
		return err
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, TableFile), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return rep.DrawTimeline(dir)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
