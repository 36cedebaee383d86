package consumer

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestUnknownTopicIsSaid: a consumer of a topic that does not exist (on a broker that does not
// create topics) says so, as the Java client's "Error while fetching metadata … {t=UNKNOWN_TOPIC_
// OR_PARTITION}", once, not at every retry.
func TestUnknownTopicIsSaid(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"group.initial.rebalance.delay.ms": "0", "auto.create.topics.enable": "false",
	}})
	core, logs := observer.New(zapcore.InfoLevel)
	cfg, err := ConfigFromProperties(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.GroupID, cfg.Topics, cfg.BootstrapServers, cfg.Logger = "g", []string{"nope"}, c.BootstrapAddrs(), zap.New(core)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cons, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close(context.Background())
	c.WaitFor("the warning", func() bool { return logs.FilterMessage("Error while fetching metadata").Len() > 0 })
	for range 3 {
		if err := cons.cluster.refresh(ctx, []string{"nope"}); err != nil {
			t.Fatal(err)
		}
	}
	got := logs.FilterMessage("Error while fetching metadata").All()
	if len(got) != 1 || !strings.Contains(got[0].ContextMap()["errors"].(string), "nope=UNKNOWN_TOPIC_OR_PARTITION") {
		t.Fatalf("warnings %v: want one naming nope=UNKNOWN_TOPIC_OR_PARTITION", got)
	}
}
