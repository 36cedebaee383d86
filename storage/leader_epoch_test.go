package storage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zkafka/zkafka/wire"
)

func TestLeaderEpochCacheFollowsAppendsAndTruncation(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig())
	mustAppendEpoch := func(epoch int32, values ...string) {
		t.Helper()
		if _, err := l.AppendAsLeader(makeBatch(1, values...), epoch); err != nil {
			t.Fatal(err)
		}
	}
	mustAppendEpoch(0, "a", "b")                   // offsets 0-1
	mustAppendEpoch(0, "c")                        // 2
	if err := l.AssignLeaderEpoch(2); err != nil { // a new leader with nothing appended yet
		t.Fatal(err)
	}
	mustAppendEpoch(2, "d", "e") // 3-4
	mustAppendEpoch(5, "f")      // 5
	want := []EpochEntry{{0, 0}, {2, 3}, {5, 5}}
	if got := l.LeaderEpochs(); !slices.Equal(got, want) {
		t.Fatalf("epochs %v, want %v", got, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, LeaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "0\n3\n0 0\n2 3\n5 5\n" {
		t.Fatalf("checkpoint file %q", data)
	}
	for _, c := range []struct {
		epoch     int32
		wantEpoch int32
		wantEnd   int64
	}{
		{5, 5, 6}, // the latest epoch ends at the LEO
		{2, 2, 5}, // ends where epoch 5 starts
		{1, 0, 3}, // unknown epoch: the largest one below it (KIP-279), ending where 2 starts
		{0, 0, 3},
		{6, -1, -1}, // newer than anything known
		{-1, -1, -1},
	} {
		e, end := l.EndOffsetForEpoch(c.epoch)
		if e != c.wantEpoch || end != c.wantEnd {
			t.Errorf("EndOffsetForEpoch(%d) = (%d, %d), want (%d, %d)", c.epoch, e, end, c.wantEpoch, c.wantEnd)
		}
	}

	if err := l.Truncate(4); err != nil {
		t.Fatal(err)
	}
	// Truncation cuts whole batches: the LEO goes back to 3, taking epochs 2 and 5 with it.
	if got, want := l.LeaderEpochs(), []EpochEntry{{0, 0}}; !slices.Equal(got, want) {
		t.Fatalf("after truncate: epochs %v, want %v", got, want)
	}

	// An epoch started at the log end by a leader that appended nothing
	// goes with a truncation to the log end, which cuts nothing else.
	if err := l.AssignLeaderEpoch(6); err != nil {
		t.Fatal(err)
	}
	if err := l.Truncate(l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if got, want := l.LeaderEpochs(), []EpochEntry{{0, 0}}; !slices.Equal(got, want) || l.LogEndOffset() != 3 {
		t.Fatalf("after truncating to the log end: epochs %v, LEO %d; want %v, 3", got, l.LogEndOffset(), want)
	}

	// A follower's append takes the batches' own epochs.
	b := makeBatch(1, "x")
	setBaseOffset(b, 3)
	setLeaderEpoch(b, 7)
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l2 := openTestLog(t, dir, testConfig())
	if got, want := l2.LeaderEpochs(), []EpochEntry{{0, 0}, {7, 3}}; !slices.Equal(got, want) {
		t.Fatalf("after reopen: epochs %v, want %v", got, want)
	}
	if err := l2.TruncateFullyAndStartAt(10); err != nil {
		t.Fatal(err)
	}
	if got := l2.LeaderEpochs(); len(got) != 0 {
		t.Fatalf("after full truncation: epochs %v", got)
	}
}

func TestLeaderEpochCheckpointRejectsGarbage(t *testing.T) {
	for _, data := range []string{"", "1\n0\n", "0\n2\n0 0\n", "0\n1\nx 0\n", "0\n1\n0 -3\n"} {
		if _, err := parseLeaderEpochCheckpoint([]byte(data)); err == nil {
			t.Errorf("parse %q: no error", data)
		}
	}
}

func setLeaderEpoch(b []byte, epoch int32) {
	b[wire.PosPartitionLeaderEpoch] = byte(epoch >> 24)
	b[wire.PosPartitionLeaderEpoch+1] = byte(epoch >> 16)
	b[wire.PosPartitionLeaderEpoch+2] = byte(epoch >> 8)
	b[wire.PosPartitionLeaderEpoch+3] = byte(epoch)
}

// TestLeaderEpochCacheFollowsTheLogStart: when the log start moves (DeleteRecords), the epochs that
// began before it go but the latest of them, which now begins at the log start, as Kafka's
// truncateFromStart does; the checkpoint says so and a reopened log agrees.
func TestLeaderEpochCacheFollowsTheLogStart(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig())
	for epoch, values := range [][]string{{"a", "b"}, {"c", "d"}, {"e"}} { // epochs 0, 1, 2 at 0, 2, 4
		if _, err := l.AppendAsLeader(makeBatch(1, values...), int32(epoch)); err != nil {
			t.Fatal(err)
		}
	}
	l.SetHighWatermark(5)
	for _, c := range []struct {
		start int64
		want  []EpochEntry
	}{
		{1, []EpochEntry{{0, 1}, {1, 2}, {2, 4}}},
		{2, []EpochEntry{{1, 2}, {2, 4}}}, // an epoch starting exactly there stays as it is
		{3, []EpochEntry{{1, 3}, {2, 4}}},
		{5, []EpochEntry{{2, 5}}},
	} {
		if err := l.MaybeIncrementLogStartOffset(c.start, ClientRecordDeletion); err != nil {
			t.Fatal(err)
		}
		if got := l.LeaderEpochs(); !slices.Equal(got, c.want) {
			t.Fatalf("log start %d: epochs %v, want %v", c.start, got, c.want)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, LeaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "0\n1\n2 5\n" {
		t.Fatalf("checkpoint file %q", data)
	}
}

// TestLeaderEpochsRestoredFromBatchesAfterACrash: a leader-epoch change is written but fsynced only
// by the log's flush, so a crash of the machine may leave the file as it was at the last flush, or
// empty; the reopened log takes the epochs back from the batches it recovers.
func TestLeaderEpochsRestoredFromBatchesAfterACrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, testConfig())
	for _, a := range []struct {
		epoch  int32
		values []string
	}{{0, []string{"a", "b"}}, {3, []string{"c"}}, {4, []string{"d"}}} {
		if _, err := l.AppendAsLeader(makeBatch(1, a.values...), a.epoch); err != nil {
			t.Fatal(err)
		}
	}
	want := []EpochEntry{{0, 0}, {3, 2}, {4, 3}}
	if got := l.LeaderEpochs(); !slices.Equal(got, want) {
		t.Fatalf("epochs %v, want %v", got, want)
	}
	if !l.epochs.dirty {
		t.Error("the epoch changes are marked synced before any flush")
	}
	for _, lost := range []string{"0\n1\n0 0\n", ""} {
		crashed := copyDir(t, dir)
		if err := os.WriteFile(filepath.Join(crashed, LeaderEpochCheckpointFile), []byte(lost), 0o644); err != nil {
			t.Fatal(err)
		}
		r := openTestLog(t, crashed, testConfig())
		if got := r.LeaderEpochs(); !slices.Equal(got, want) {
			t.Errorf("reopened with the file %q: epochs %v, want %v", lost, got, want)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.epochs.dirty {
		t.Error("the epoch changes are still marked unsynced after Flush")
	}
}
