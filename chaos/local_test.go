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
