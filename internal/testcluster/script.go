package testcluster

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/zkafka/zkafka/chaos"
)

// StartScripted runs `scripts/cluster.sh up` for a cluster of the test's own (ports, data dir, the
// test binary's zkafka) with settings that make faults cheap: 4 s ZooKeeper sessions and replica lag,
// 5 offsets partitions and small indexes so a restart loads quickly; env adds to or overrides them.
// It is torn down (`down`) when the test ends; its data dir is kept, for the brokers' logs, when the
// test fails.
func StartScripted(t *testing.T, env ...string) *chaos.Local {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	env = append(append(os.Environ(),
		"ZKAFKA_DATA="+KeepOnFailure(t, "data"),
		"ZKAFKA_BASE_PORT="+strconv.Itoa(FreePortRun(t, 3)),
		// Room for an ensemble's client, quorum and election ports.
		"ZKAFKA_ZK_PORT="+strconv.Itoa(FreePortRun(t, 9)),
		"ZKAFKA_BIN="+Binary(t),
		"KAFKA_ZOOKEEPER_SESSION_TIMEOUT_MS=4000",
		"KAFKA_REPLICA_LAG_TIME_MAX_MS=4000",
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS=5",
		"KAFKA_LOG_INDEX_SIZE_MAX_BYTES=65536",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0",
	), env...)
	l, err := chaos.NewLocal(root, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := l.Script(ctx, "down"); err != nil {
			t.Errorf("cluster.sh down: %v\n%s", err, out)
		}
	})
	if out, err := l.Script(ctx, "up"); err != nil {
		t.Fatalf("cluster.sh up: %v\n%s", err, out)
	}
	return l
}

// KeepOnFailure makes a directory that is removed when the test passes and kept, for its history
// and the brokers' logs, when it fails.
func KeepOnFailure(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zkafka-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}
