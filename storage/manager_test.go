package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/kafka"
)

func newTestManager(t *testing.T, dirs []string, cfg LogConfig) *Manager {
	t.Helper()
	m, err := NewManager(dirs, cfg, 1, testLogger(t))
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// waitTimeout bounds every wait.For of these tests.
const waitTimeout = 5 * time.Second

func TestManagerReopenKeepsData(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "d1"), filepath.Join(root, "d2")}
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	m := newTestManager(t, dirs, cfg)

	partitions := []kafka.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}, {Topic: "my-dashed-topic", Partition: 2}, {Topic: "t", Partition: 0}}
	want := map[kafka.TopicPartition][]string{}
	for i, tp := range partitions {
		l, err := m.GetOrCreate(tp.Topic, tp.Partition, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 10 * (i + 1) {
			v := fmt.Sprintf("%s/%d/%s", tp, j, "............................................................")
			want[tp] = append(want[tp], v)
			mustAppend(t, l, makeBatch(int64(j), v))
		}
		l.SetHighWatermark(l.LogEndOffset() - 1)
	}
	// New partitions go to the directory with the fewest logs: two in each.
	perDir := map[string]int{}
	for _, l := range m.All() {
		perDir[filepath.Dir(l.Dir())]++
	}
	if perDir[dirs[0]] != 2 || perDir[dirs[1]] != 2 {
		t.Fatalf("logs per dir %v", perDir)
	}
	l, _ := m.Get("orders", 1)
	if err := l.MaybeIncrementLogStartOffset(5, ClientRecordDeletion); err != nil {
		t.Fatal(err)
	}
	want[kafka.TopicPartition{Topic: "orders", Partition: 1}] = want[kafka.TopicPartition{Topic: "orders", Partition: 1}][5:]
	topicCfg := cfg
	topicCfg.RetentionMs = 1234
	if again, err := m.GetOrCreate("orders", 1, topicCfg); err != nil || again != l {
		t.Fatalf("GetOrCreate of an existing log gave %p, %v; want %p", again, err, l)
	}
	if l.Config() != topicCfg {
		t.Fatalf("GetOrCreate did not apply the topic config: %+v", l.Config())
	}
	if _, ok := m.Get("orders", 9); ok {
		t.Fatal("Get found a log never created")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, CleanShutdownFile)); err != nil {
			t.Fatalf("no clean shutdown marker in %s: %v", dir, err)
		}
		rps, err := ReadOffsetCheckpoint(filepath.Join(dir, RecoveryPointCheckpointFile))
		if err != nil || len(rps) != 2 {
			t.Fatalf("recovery points in %s: %v, %v", dir, rps, err)
		}
	}

	core, logs := observer.New(zapcore.InfoLevel)
	m2, err := NewManager(dirs, cfg, 1, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m2.Close() })
	if n := logs.FilterMessage("Recovering unflushed segment").Len(); n != 0 {
		t.Fatalf("a clean restart recovered %d segments; it should trust them all", n)
	}
	if got := len(m2.All()); got != len(partitions) {
		t.Fatalf("reopened manager has %d logs, want %d", got, len(partitions))
	}
	for _, tp := range partitions {
		l, ok := m2.Get(tp.Topic, tp.Partition)
		if !ok {
			t.Fatalf("%v not loaded", tp)
		}
		if got := readAllRecords(t, l); !slices.Equal(got, want[tp]) {
			t.Fatalf("%v holds %d records, want %d", tp, len(got), len(want[tp]))
		}
		if l.HighWatermark() != l.LogEndOffset()-1 {
			t.Fatalf("%v high watermark %d, want %d", tp, l.HighWatermark(), l.LogEndOffset()-1)
		}
		if l.RecoveryPoint() != l.LogEndOffset() {
			t.Fatalf("%v recovery point %d, want the LEO %d", tp, l.RecoveryPoint(), l.LogEndOffset())
		}
	}
	if l, _ := m2.Get("orders", 1); l.LogStartOffset() != 5 {
		t.Fatalf("log start offset %d after reopen, want 5", l.LogStartOffset())
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, CleanShutdownFile)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("clean shutdown marker not removed at start: %v", err)
		}
	}
}

func TestManagerUncleanRestartRecoversFromCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	m := newTestManager(t, []string{dir}, cfg)
	l, err := m.GetOrCreate("t", 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustAppend(t, l, makeBatch(int64(i), fmt.Sprint(i)))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Simulate a crash: no marker, and the last write torn.
	os.Remove(filepath.Join(dir, CleanShutdownFile))
	seg := filepath.Join(dir, "t-0", "00000000000000000000.log")
	st, _ := os.Stat(seg)
	os.Truncate(seg, st.Size()-5)

	m2 := newTestManager(t, []string{dir}, cfg)
	l2, ok := m2.Get("t", 0)
	if !ok {
		t.Fatal("log not loaded")
	}
	if l2.LogEndOffset() != 9 {
		t.Fatalf("LEO %d after a torn last batch, want 9", l2.LogEndOffset())
	}
}

func TestManagerLocksDirectories(t *testing.T) {
	dir := t.TempDir()
	newTestManager(t, []string{dir}, testConfig())
	if m, err := NewManager([]string{dir}, testConfig(), 1, testLogger(t)); err == nil {
		m.Close()
		t.Fatal("second manager on the same directory started")
	}
}

func TestManagerSkipsForeignDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"not_a_partition", "t-0.0123abcd-delete", "lost+found"} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
	}
	m := newTestManager(t, []string{dir}, testConfig())
	if n := len(m.All()); n != 0 {
		t.Fatalf("loaded %d logs from foreign directories", n)
	}
}

func TestManagerDelete(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	m := newTestManager(t, []string{dir}, cfg)
	for p := range int32(2) {
		l, err := m.GetOrCreate("t", p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, makeBatch(1, "a"))
	}
	if err := m.Delete("t", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "t-0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("t-0 still on disk: %v", err)
	}
	if _, ok := m.Get("t", 0); ok {
		t.Fatal("deleted log still returned")
	}
	rps, err := ReadOffsetCheckpoint(filepath.Join(dir, RecoveryPointCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rps[kafka.TopicPartition{Topic: "t", Partition: 0}]; ok || len(rps) != 1 {
		t.Fatalf("checkpoint after delete: %v", rps)
	}
	if err := m.Delete("t", 0); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
}

func TestManagerRunAppliesRetentionAndCheckpoints(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	cfg.RetentionBytes = 0
	m := newTestManager(t, []string{dir}, cfg)
	l, err := m.GetOrCreate("t", 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		mustAppend(t, l, makeSizedBatch(time.Now().UnixMilli(), 300))
	}
	l.SetHighWatermark(l.LogEndOffset())
	if l.NumSegments() < 3 {
		t.Fatalf("%d segments", l.NumSegments())
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx, time.Now, 10*time.Millisecond, 10*time.Millisecond, ProducerExpiration{})
	}()
	wait.For(t, waitTimeout, "retention to leave only the active segment", func() bool { return l.NumSegments() == 1 })
	wait.For(t, waitTimeout, "a log start offset checkpoint", func() bool {
		starts, err := ReadOffsetCheckpoint(filepath.Join(dir, LogStartOffsetCheckpointFile))
		return err == nil && starts[kafka.TopicPartition{Topic: "t", Partition: 0}] == l.LogStartOffset()
	})
	cancel()
	<-done
}

func TestManagerRejectsBadInput(t *testing.T) {
	if _, err := NewManager(nil, testConfig(), 1, nil); err == nil {
		t.Fatal("no dirs accepted")
	}
	bad := testConfig()
	bad.SegmentBytes = 0
	if _, err := NewManager([]string{t.TempDir()}, bad, 1, nil); err == nil {
		t.Fatal("invalid config accepted")
	}
	m := newTestManager(t, []string{t.TempDir()}, testConfig())
	for _, tp := range []kafka.TopicPartition{{Topic: "", Partition: 0}, {Topic: "..", Partition: 0}, {Topic: "a/b", Partition: 0}, {Topic: "t", Partition: -1}} {
		if _, err := m.GetOrCreate(tp.Topic, tp.Partition, testConfig()); err == nil {
			t.Errorf("GetOrCreate(%q, %d) accepted", tp.Topic, tp.Partition)
		}
	}
	m.Close()
	if _, err := m.GetOrCreate("t", 0, testConfig()); !errors.Is(err, ErrManagerClosed) {
		t.Fatalf("GetOrCreate after Close: %v", err)
	}
}

// A failed write takes its log directory offline, once (Kafka's LogDirFailureChannel): the
// directory comes out of OfflineDirs a single time however many writes fail, and the other
// directory stays online.
func TestFailedAppendTakesTheLogDirOffline(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	m := newTestManager(t, dirs, testConfig())
	l, err := m.GetOrCreate("t", 0, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(makeBatch(1, "a"), 0); err != nil {
		t.Fatal(err)
	}
	// The segment's file goes away under the log, as a disk that fails does.
	l.active().log.Close()
	for range 2 {
		if _, err := l.AppendAsLeader(makeBatch(2, "b"), 0); !errors.Is(err, kerr.KafkaStorageError) {
			t.Fatalf("append on a failed disk: %v, want KAFKA_STORAGE_ERROR", err)
		}
	}
	select {
	case dir := <-m.OfflineDirs():
		if dir != filepath.Dir(l.Dir()) {
			t.Fatalf("offline dir %s, want %s", dir, filepath.Dir(l.Dir()))
		}
	default:
		t.Fatal("the failed append took no log dir offline")
	}
	select {
	case dir := <-m.OfflineDirs():
		t.Fatalf("%s reported offline twice", dir)
	default:
	}
}

// TestManagerRunExpiresProducers: Run's producer expiration check forgets idle producers on every
// log.
func TestManagerRunExpiresProducers(t *testing.T) {
	m := newTestManager(t, []string{t.TempDir()}, testConfig())
	l, err := m.GetOrCreate("t", 0, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, producerBatchAt(1, 7, 0, 0, "long ago"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx, time.Now, 0, 0, ProducerExpiration{After: time.Hour, CheckInterval: 10 * time.Millisecond})
	}()
	wait.For(t, waitTimeout, "the idle producer to expire", func() bool { return len(l.ProducerStates()) == 0 })
	cancel()
	<-done
}

// TestManagerRecoveryThreads: with num.recovery.threads.per.data.dir workers a dir's logs are opened
// after a crash (each recovered) and flushed and closed at Close side by side, and every log comes
// back whole, from the recovery point the clean shutdown checkpointed.
func TestManagerRecoveryThreads(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "d1"), filepath.Join(root, "d2")}
	cfg := testConfig()
	m, err := NewManager(dirs, cfg, 4, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[kafka.TopicPartition][]string{}
	for p := range int32(24) {
		l, err := m.GetOrCreate("t", p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for j := range int(p%5) + 1 {
			v := fmt.Sprintf("t-%d/%d", p, j)
			want[kafka.TopicPartition{Topic: "t", Partition: p}] = append(want[kafka.TopicPartition{Topic: "t", Partition: p}], v)
			mustAppend(t, l, makeBatch(int64(j), v))
		}
	}
	// A crash: the files as they are, no checkpoint, no clean-shutdown marker.
	var crashed []string
	for _, d := range dirs {
		c := filepath.Join(t.TempDir(), filepath.Base(d))
		if err := os.CopyFS(c, os.DirFS(d)); err != nil {
			t.Fatal(err)
		}
		crashed = append(crashed, c)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		dirs []string
	}{{"after a crash", crashed}, {"after Close", dirs}} {
		m2, err := NewManager(c.dirs, cfg, 4, testLogger(t))
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if got := len(m2.All()); got != len(want) {
			t.Errorf("%s: %d logs, want %d", c.what, got, len(want))
		}
		for tp, values := range want {
			l, ok := m2.Get(tp.Topic, tp.Partition)
			if !ok {
				t.Errorf("%s: %s missing", c.what, tp)
				continue
			}
			if got := readAllRecords(t, l); !slices.Equal(got, values) {
				t.Errorf("%s: %s holds %v, want %v", c.what, tp, got, values)
			}
			if c.what == "after Close" && l.RecoveryPoint() != l.LogEndOffset() {
				t.Errorf("%s: %s recovery point %d, want the log end %d", c.what, tp, l.RecoveryPoint(), l.LogEndOffset())
			}
		}
		if err := m2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewManager([]string{filepath.Join(root, "d3")}, cfg, 0, nil); err == nil {
		t.Error("NewManager with 0 recovery threads: no error")
	}
}
