package chaos_test

import (
	"path/filepath"
	"testing"

	"github.com/zkafka/zkafka/chaos"
)

// TestNewLocalTakesTheLastValue: a variable appended to the environment overrides an earlier one,
// as os/exec passes it to cluster.sh, so the tool and the script agree on the cluster.
func TestNewLocalTakesTheLastValue(t *testing.T) {
	l, err := chaos.NewLocal("..", []string{"ZKAFKA_DATA=/elsewhere", "ZKAFKA_ZK_PORT=2181", "ZKAFKA_DATA=/mine", "ZKAFKA_ZK_PORT=12181"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Data != "/mine" || l.ZKPort != 12181 || l.BasePort != 9092 {
		t.Fatalf("data %s, ZooKeeper port %d, base port %d; want /mine, 12181, 9092", l.Data, l.ZKPort, l.BasePort)
	}
	if l, err = chaos.NewLocal("..", nil); err != nil || l.Data != filepath.Join(l.Root, "data") {
		t.Fatalf("defaults: %v, data %s", err, l.Data)
	}
}

// TestNewLocalEnsemble: with ZKAFKA_ZK_SERVERS=3 the tool connects to every server, on the client
// ports cluster.sh gives them, and names them ZKServer(1..3).
func TestNewLocalEnsemble(t *testing.T) {
	l, err := chaos.NewLocal("..", []string{"ZKAFKA_ZK_PORT=12181", "ZKAFKA_ZK_SERVERS=3"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.ZooKeeper(), "127.0.0.1:12181,127.0.0.1:12182,127.0.0.1:12183"; got != want {
		t.Errorf("ZooKeeper() = %q, want %q", got, want)
	}
	if q, e := l.ZKQuorumPorts(2); q != 12185 || e != 12188 {
		t.Errorf("server 2's quorum and election ports %d, %d; want 12185, 12188", q, e)
	}
	if ids := l.ZKServerIDs(); len(ids) != 3 || !l.Ensemble() {
		t.Errorf("server ids %v, ensemble %v", ids, l.Ensemble())
	}
	single, err := chaos.NewLocal("..", nil)
	if err != nil {
		t.Fatal(err)
	}
	if single.Ensemble() || single.ZooKeeper() != "127.0.0.1:2181" || len(single.ZKServerIDs()) != 0 {
		t.Errorf("one server: ensemble %v, %q, ids %v", single.Ensemble(), single.ZooKeeper(), single.ZKServerIDs())
	}
	if _, err := chaos.NewLocal("..", []string{"ZKAFKA_ZK_SERVERS=three"}); err == nil {
		t.Error("ZKAFKA_ZK_SERVERS=three accepted")
	}
}
