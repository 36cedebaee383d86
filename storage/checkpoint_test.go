package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kafka"
)

func TestOffsetCheckpointRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecoveryPointCheckpointFile)
	offsets := map[kafka.TopicPartition]int64{
		{Topic: "orders", Partition: 0}:             42,
		{Topic: "orders", Partition: 10}:            7,
		{Topic: "my-dashed-topic", Partition: 3}:    0,
		{Topic: "__consumer_offsets", Partition: 1}: 1 << 40,
	}
	if err := WriteOffsetCheckpoint(path, offsets); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	want := "0\n4\n__consumer_offsets 1 1099511627776\nmy-dashed-topic 3 0\norders 0 42\norders 10 7\n"
	if string(raw) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", raw, want)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	got, err := ReadOffsetCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(offsets) {
		t.Fatalf("read %v", got)
	}
	for tp, off := range offsets {
		if got[tp] != off {
			t.Fatalf("%v: %d, want %d", tp, got[tp], off)
		}
	}
	// Overwriting replaces the content.
	if err := WriteOffsetCheckpoint(path, map[kafka.TopicPartition]int64{}); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "0\n0\n" {
		t.Fatalf("empty checkpoint %q", raw)
	}
}

func TestReadOffsetCheckpointErrors(t *testing.T) {
	dir := t.TempDir()
	got, err := ReadOffsetCheckpoint(filepath.Join(dir, "missing"))
	if err != nil || len(got) != 0 {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	for name, content := range map[string]string{
		"empty":         "",
		"wrong version": "1\n0\n",
		"count too big": "0\n2\nt 0 1\n",
		"count small":   "0\n0\nt 0 1\n",
		"bad line":      "0\n1\nt 0\n",
		"bad offset":    "0\n1\nt 0 x\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := ReadOffsetCheckpoint(path); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMetaPropertiesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadMetaProperties(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want os.ErrNotExist", err)
	}
	want := MetaProperties{BrokerID: 3, ClusterID: "3XPxd8lCSW2yPhAFxGP0Ig"}
	if err := WriteMetaProperties(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMetaProperties(dir)
	if err != nil || got != want {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, MetaPropertiesFile))
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 5 || lines[0] != "#" || lines[2] != "cluster.id=3XPxd8lCSW2yPhAFxGP0Ig" || lines[3] != "version=0" || lines[4] != "broker.id=3" {
		t.Fatalf("file:\n%s", raw)
	}
	if _, err := time.Parse("Mon Jan 02 15:04:05 MST 2006", strings.TrimPrefix(lines[1], "#")); err != nil {
		t.Fatalf("date line %q is not in java.util.Date format: %v", lines[1], err)
	}
}

func TestReadMetaPropertiesWrittenByKafka(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, MetaPropertiesFile)
	os.WriteFile(path, []byte("#\n#Thu Jun 10 10:48:04 UTC 2021\nbroker.id=1001\nversion=0\ncluster.id=a\\:b-c_d\n"), 0o644)
	got, err := ReadMetaProperties(dir)
	if err != nil || got != (MetaProperties{BrokerID: 1001, ClusterID: "a:b-c_d"}) {
		t.Fatalf("read %+v, %v", got, err)
	}
	// Written by Kafka before 0.10.1: no cluster id.
	os.WriteFile(path, []byte("version=0\nbroker.id=0\n"), 0o644)
	if got, err := ReadMetaProperties(dir); err != nil || got != (MetaProperties{}) {
		t.Fatalf("read %+v, %v", got, err)
	}
	// KRaft's version 1 is not for a ZooKeeper-mode broker.
	os.WriteFile(path, []byte("version=1\nnode.id=1\ncluster.id=x\n"), 0o644)
	if _, err := ReadMetaProperties(dir); err == nil {
		t.Fatal("version 1 accepted")
	}
	os.WriteFile(path, []byte("version=0\nbroker.id=abc\n"), 0o644)
	if _, err := ReadMetaProperties(dir); err == nil {
		t.Fatal("non-numeric broker.id accepted")
	}
}
