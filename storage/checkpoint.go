package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/kafka"
)

// File names Kafka keeps in every log directory.
const (
	RecoveryPointCheckpointFile     = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpointFile    = "log-start-offset-checkpoint"
	ReplicationOffsetCheckpointFile = "replication-offset-checkpoint" // high watermarks
	CleanerOffsetCheckpointFile     = "cleaner-offset-checkpoint"
	CleanShutdownFile               = ".kafka_cleanshutdown"
)

// offsetCheckpointVersion is the only version of Kafka's OffsetCheckpointFile format.
const offsetCheckpointVersion = 0

// ReadOffsetCheckpoint reads a Kafka offset checkpoint file:
//
//	0
//	<number of entries>
//	<topic> <partition> <offset>
//	...
//
// A missing file reads as empty.
func ReadOffsetCheckpoint(path string) (map[kafka.TopicPartition]int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[kafka.TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("malformed checkpoint %s: %s", path, fmt.Sprintf(format, args...))
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, bad("%v", err)
	}
	if len(lines) < 2 {
		return nil, bad("missing version or count")
	}
	if v, err := strconv.Atoi(strings.TrimSpace(lines[0])); err != nil || v != offsetCheckpointVersion {
		return nil, bad("unsupported version %q", lines[0])
	}
	count, err := strconv.Atoi(strings.TrimSpace(lines[1]))
	if err != nil || count < 0 {
		return nil, bad("bad entry count %q", lines[1])
	}
	entries := lines[2:]
	if len(entries) != count {
		return nil, bad("%d entries, header says %d", len(entries), count)
	}
	out := make(map[kafka.TopicPartition]int64, count)
	for _, line := range entries {
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, bad("line %q is not <topic> <partition> <offset>", line)
		}
		p, perr := strconv.ParseInt(fields[1], 10, 32)
		off, oerr := strconv.ParseInt(fields[2], 10, 64)
		if perr != nil || oerr != nil {
			return nil, bad("line %q is not <topic> <partition> <offset>", line)
		}
		out[kafka.TopicPartition{Topic: fields[0], Partition: int32(p)}] = off
	}
	return out, nil
}

// WriteOffsetCheckpoint replaces the checkpoint file at path atomically: it writes path.tmp, fsyncs it,
// renames it over path and fsyncs the directory, as Kafka's CheckpointFile does. Entries are sorted so
// that equal contents give equal files.
func WriteOffsetCheckpoint(path string, offsets map[kafka.TopicPartition]int64) error {
	tps := make([]kafka.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, kafka.Compare)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%d\n%d\n", offsetCheckpointVersion, len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&buf, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	return writeFileAtomic(path, buf.Bytes())
}

// writeFileAtomic writes data to path through a fsynced temporary file and a rename.
func writeFileAtomic(path string, data []byte) error { return replaceFile(path, data, true) }

// replaceFile writes data to path.tmp and renames it over path, so a reader sees the old content or
// the new, never a part; with sync it fsyncs the file before the rename and the directory after.
func replaceFile(path string, data []byte, sync bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !sync {
		return nil
	}
	if err := syncPath(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
