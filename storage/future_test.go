package storage

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/kafka"
)

// copyInto appends to the future log what the current log has past the future's end, as the
// broker's alter-log-dirs fetcher does.
func copyInto(t *testing.T, cur, fut *Log) {
	t.Helper()
	for fut.LogEndOffset() < cur.LogEndOffset() {
		data, err := cur.Read(fut.LogEndOffset(), math.MaxInt32, math.MaxInt64, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fut.AppendAsFollower(data); err != nil {
			t.Fatal(err)
		}
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestFutureLogMoveBetweenDirs creates a future log, reloads it from disk mid-copy, and swaps it
// in: the `-future` directory takes the partition's name, the old one goes, and the *Log the
// broker holds serves the moved data.
func TestFutureLogMoveBetweenDirs(t *testing.T) {
	root := t.TempDir()
	src, dest := filepath.Join(root, "a"), filepath.Join(root, "b")
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	tp := kafka.TopicPartition{Topic: "moving.topic", Partition: 3}

	m, err := NewManager([]string{src, dest}, cfg, 1, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	m.MaybeUpdatePreferredLogDir(tp.Topic, tp.Partition, src)
	cur, err := m.GetOrCreate(tp.Topic, tp.Partition, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Dir(cur.Dir()); got != src {
		t.Fatalf("log created in %s, want the preferred %s", got, src)
	}
	var want []string
	for i := range 40 {
		v := fmt.Sprintf("record-%02d-%s", i, strings.Repeat(".", 60))
		want = append(want, v)
		mustAppend(t, cur, makeBatch(int64(i), v))
	}
	cur.SetHighWatermark(cur.LogEndOffset())

	if _, err := m.GetOrCreateFuture(tp.Topic, tp.Partition, src, cfg); err == nil {
		t.Fatal("a future log in the current log's dir was created")
	}
	fut, err := m.GetOrCreateFuture(tp.Topic, tp.Partition, dest, cfg)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(fut.Dir())
	if !regexp.MustCompile(`^moving\.topic-3\.[0-9a-f]{32}-future$`).MatchString(name) || filepath.Dir(fut.Dir()) != dest {
		t.Fatalf("future log dir %s, want %s/moving.topic-3.<32 hex>-future", fut.Dir(), dest)
	}
	if again, err := m.GetOrCreateFuture(tp.Topic, tp.Partition, dest, cfg); err != nil || again != fut {
		t.Fatalf("GetOrCreateFuture again: %v, %v", again, err)
	}
	if swapped, err := m.ReplaceCurrentWithFuture(tp.Topic, tp.Partition); err != nil || swapped {
		t.Fatalf("swap of an empty future log: %v, %v", swapped, err)
	}
	// Half the copy, then a restart: the future log is loaded as the future log again.
	data, err := cur.Read(0, 500, math.MaxInt64, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fut.AppendAsFollower(data); err != nil {
		t.Fatal(err)
	}
	copied := fut.LogEndOffset()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, []string{src, dest}, cfg)
	fut, ok := m.Future(tp.Topic, tp.Partition)
	if !ok || filepath.Base(fut.Dir()) != name || fut.LogEndOffset() != copied {
		t.Fatalf("after restart: future %v (%v), want %s at %d", fut, ok, name, copied)
	}
	cur, _ = m.Get(tp.Topic, tp.Partition)
	if got := filepath.Dir(cur.Dir()); got != src {
		t.Fatalf("current log loaded from %s", got)
	}

	copyInto(t, cur, fut)
	hw := cur.HighWatermark()
	swapped, err := m.ReplaceCurrentWithFuture(tp.Topic, tp.Partition)
	if err != nil || !swapped {
		t.Fatalf("swap: %v, %v", swapped, err)
	}
	if _, ok := m.Future(tp.Topic, tp.Partition); ok {
		t.Error("the future log is still there after the swap")
	}
	if got, want := cur.Dir(), filepath.Join(dest, tp.String()); got != want {
		t.Errorf("current log in %s after the swap, want %s", got, want)
	}
	if got := dirNames(t, src); len(got) != 0 {
		t.Errorf("%s still holds %v", src, got)
	}
	if got := dirNames(t, dest); !slices.Equal(got, []string{tp.String()}) {
		t.Errorf("%s holds %v, want only %s", dest, got, tp)
	}
	if cur.HighWatermark() != hw {
		t.Errorf("high watermark %d after the swap, want %d", cur.HighWatermark(), hw)
	}
	mustAppend(t, cur, makeBatch(100, "after the move"))
	want = append(want, "after the move")
	if got := readAllRecords(t, cur); !slices.Equal(got, want) {
		t.Fatalf("records after the swap: %d, want %d", len(got), len(want))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, []string{src, dest}, cfg)
	l, ok := m.Get(tp.Topic, tp.Partition)
	if !ok || filepath.Dir(l.Dir()) != dest {
		t.Fatalf("after restart the log is %v", l)
	}
	if got := readAllRecords(t, l); !slices.Equal(got, want) {
		t.Fatalf("records after restart: %d, want %d", len(got), len(want))
	}
}

// TestLoadRemovesDeleteDirsAndRefusesDuplicates: a `-delete` directory left by a crash goes at
// load, and a partition whose future log was renamed but whose current log was not is refused.
func TestLoadRemovesDeleteDirsAndRefusesDuplicates(t *testing.T) {
	root := t.TempDir()
	src, dest := filepath.Join(root, "a"), filepath.Join(root, "b")
	leftover := filepath.Join(src, "t-0.0123456789abcdef0123456789abcdef-delete")
	for _, d := range []string{leftover, filepath.Join(src, "t-0"), filepath.Join(dest, "t-0")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewManager([]string{src, dest}, testConfig(), 1, testLogger(t)); err == nil || !strings.Contains(err.Error(), "duplicate log directories for t-0") {
		t.Fatalf("NewManager with t-0 in both dirs: %v", err)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("%s was not deleted: %v", leftover, err)
	}
}
