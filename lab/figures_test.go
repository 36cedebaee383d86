package lab

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zkafka/zkafka/consumer"
)

var update = flag.Bool("update", false, "rewrite the golden figures in testdata/")

// edgeLog is a legacy run with the edge cases: m2's first attempt fails on
// an owner conflict and is retried, m3 joins and never gets a partition.
func edgeLog() []Event {
	ev := func(t float64, member, typ string, ps ...int32) Event {
		return Event{T: t, Mode: "x", Member: member, Type: typ, Partitions: ps}
	}
	return []Event{
		{T: 0, Mode: "x", Type: TypeStartOffset, Partitions: []int32{0}, Offset: 0},
		{T: 0, Mode: "x", Type: TypeStartOffset, Partitions: []int32{1}, Offset: 0},
		ev(0, "m1", "registered"),
		ev(0, "m1", "partitions-assigned", 0, 1),
		{T: 0, Mode: "x", Type: TypePhase, Note: PhaseScenario},
		{T: 1, Mode: "x", Type: TypeMarker, Note: MarkJoin, Member: "m2"},
		ev(1, "m1", "rebalance-started"),
		ev(1, "m1", "fetching-paused"),
		ev(1, "m1", "partitions-revoked", 0, 1),
		ev(1.1, "m2", "rebalance-started"),
		ev(1.2, "m1", "partitions-assigned", 0),
		ev(1.2, "m1", "fetching-resumed"),
		ev(1.2, "m1", "rebalance-done"),
		{T: 1.5, Mode: "x", Member: "m2", Type: "rebalance-failed", Conflict: true, Err: "partition ownership conflict"},
		ev(2, "m2", "rebalance-started"),
		ev(2.2, "m2", "partitions-assigned", 1),
		ev(2.2, "m2", "rebalance-done"),
		{T: 3, Mode: "x", Type: TypeMarker, Note: MarkJoin, Member: "m3"},
		ev(3, "m3", "rebalance-started"),
		ev(3.1, "m3", "rebalance-done"),
		{T: 3.2, Mode: "x", Member: "m1", Type: TypeProcessed, Partitions: []int32{0}, Offset: 0},
		{T: 3.3, Mode: "x", Member: "m2", Type: TypeProcessed, Partitions: []int32{1}, Offset: 0},
		{T: 3.4, Mode: "x", Member: "m2", Type: TypeProcessed, Partitions: []int32{1}, Offset: 0},
		{T: 3.5, Mode: "x", Member: "m1", Type: "offsets-committed", Partitions: []int32{0}, Err: "zk: connection closed"},
		{T: 3.9, Mode: "x", Type: TypeEndOffset, Partitions: []int32{0}, Offset: 2},
		{T: 3.9, Mode: "x", Type: TypeEndOffset, Partitions: []int32{1}, Offset: 1},
		{T: 4, Mode: "x", Type: TypePhase, Note: PhaseDone},
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestFiguresOfEdgeCases(t *testing.T) {
	f := Analyze("x", edgeLog()).Figures
	checks := []struct {
		name      string
		got, want float64
	}{
		// p0 waits 1.0→1.2, p1 1.0→2.2 (m2's retry)
		{"unfetched sum", f.UnfetchedPartitionSeconds, 1.4},
		{"unfetched max", f.UnfetchedMaxPartition, 1.2},
		{"paused member-seconds", f.PausedMemberSeconds, 0.2},
		// m1 1.0–1.2 overlaps m2 1.1–1.5; m2's retry 2.0–2.2 and m3's
		// 3.0–3.1 stand alone
		{"rebalances", float64(f.Rebalances), 3},
		{"rounds (legacy attempts)", float64(f.Rounds), 4},
		{"failed attempts", float64(f.FailedAttempts), 1},
		{"owner conflicts", float64(f.OwnerConflicts), 1},
		// join m2 settles at 2.2 (1.2 s), join m3 at 3.1 (0.1 s)
		{"stable p50", f.StableP50, 0.1},
		{"stable max", f.StableMax, 1.2},
		{"duplicates", float64(f.Duplicates), 1},
		{"never", float64(f.Never), 1},
		{"triggers", float64(f.Triggers), 2},
		{"failed commits", float64(f.FailedCommits), 1},
		{"fenced commits", float64(f.FencedCommits), 0},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !f.Legacy || f.Partial {
		t.Errorf("legacy %v partial %v: want true, false", f.Legacy, f.Partial)
	}
}

// TestFiguresOfRecordedLogs computes the figures of real runs' logs and
// compares them with the golden files (go test -update rewrites them).
func TestFiguresOfRecordedLogs(t *testing.T) {
	logs, _ := filepath.Glob("testdata/*.jsonl")
	if len(logs) == 0 {
		t.Fatal("no recorded logs in testdata/")
	}
	for _, path := range logs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			events, err := ReadJSONLines(f)
			if err != nil {
				t.Fatal(err)
			}
			var figs []Figures
			for _, m := range Modes(events) {
				figs = append(figs, Analyze(m, ModeEvents(events, m)).Figures)
			}
			got, err := json.MarshalIndent(figs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := path[:len(path)-len(".jsonl")] + ".figures.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("figures of %s differ from %s:\n%s", path, golden, got)
			}
		})
	}
}

// TestRenderWritesEveryOutput re-renders a recorded log as `lab report`
// does.
func TestRenderWritesEveryOutput(t *testing.T) {
	dir := t.TempDir()
	info := RunInfo{Scenario: "edge", Partitions: 2}
	if _, err := Render(dir, info, edgeLog()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"figures.json", "table.txt", "report.html", "timeline-x.svg", "timeline-x.png", "unfetched.svg", "duplicates.png"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !bytes.Contains(html, []byte(`src="data:image/svg`)) {
		t.Errorf("report.html does not inline its pictures:\n%.600s", html[bytes.Index(html, []byte("<h2>Partition")):])
	}
}

// TestHerdCostPerJoin: each join's cost is the counters' growth from the
// snapshot before it to the one before the next step, a member that joined
// in between counting from zero; a scenario that removes members has none.
func TestHerdCostPerJoin(t *testing.T) {
	stats := func(member, note string, watches, reads int64) Event {
		return Event{Mode: "x", Type: TypeStats, Member: member, Note: note,
			Stats: &consumer.Stats{ZKWatchNotifications: watches, ZKReads: reads}}
	}
	join := func(member string) Event { return Event{Mode: "x", Type: TypeMarker, Note: MarkJoin, Member: member} }
	log := []Event{
		join("m1"),
		stats("m1", "step-1", 5, 50),
		join("m2"),
		stats("m1", "step-2", 6, 60), stats("m2", "step-2", 0, 8),
		join("m3"),
		stats("m1", "step-3", 7, 70), stats("m2", "step-3", 1, 18), stats("m3", "step-3", 0, 9),
	}
	got := Herd(log)
	want := []HerdPoint{{Size: 2, ZKWatchNotifications: 1, ZKReads: 18}, {Size: 3, ZKWatchNotifications: 2, ZKReads: 29}}
	if !slices.Equal(got, want) {
		t.Errorf("herd %+v, want %+v", got, want)
	}
	if h := Herd(append(log, Event{Mode: "x", Type: TypeMarker, Note: MarkLeave, Member: "m2"})); h != nil {
		t.Errorf("herd of a scenario with a leave: %+v, want none", h)
	}
}
