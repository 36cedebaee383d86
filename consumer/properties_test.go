package consumer

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestConfigFromProperties(t *testing.T) {
	cfg, err := ConfigFromProperties(map[string]string{
		"group.id": "g", "zookeeper.connect": "zk:2181/kafka", "auto.commit.enable": "false",
		"auto.offset.reset": "smallest", "rebalance.max.retries": "6", "rebalance.backoff.ms": "500",
		"partition.assignment.strategy": "roundrobin",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Topics = []string{"t"}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	if !cfg.legacy() || !cfg.DisableAutoCommit || cfg.AutoOffsetReset != resetEarliest || cfg.RebalanceMaxRetries != 6 ||
		cfg.RebalanceBackoff != 500*time.Millisecond || cfg.AutoCommitInterval != time.Minute ||
		!slices.Equal(cfg.PartitionAssignmentStrategy, []string{"roundrobin"}) {
		t.Errorf("legacy config %+v", cfg)
	}

	cfg, err = ConfigFromProperties(map[string]string{
		"group.id": "g", "bootstrap.servers": "a:9092,b:9092", "group.instance.id": "i",
		"partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor, range",
		"session.timeout.ms":            "45000",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Topics = []string{"t"}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.legacy() || !cfg.cooperative() || len(cfg.BootstrapServers) != 2 || cfg.SessionTimeout != 45*time.Second ||
		cfg.AutoCommitInterval != 5*time.Second || cfg.AutoOffsetReset != resetLatest {
		t.Errorf("coordinator config %+v", cfg)
	}

	for _, bad := range []map[string]string{
		{"session.timeout.ms": "soon"}, {"enable.auto.commit": "maybe"}, {"fetch.frobs": "1"},
	} {
		if _, err := ConfigFromProperties(bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
