package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zktest"
)

// TestBrokersLeaveNoGoroutines runs a cluster through elections, topic
// creation, produce and consume, stops it, and checks that every goroutine
// the brokers started (listeners, connections, controller loop and senders,
// log manager, ZooKeeper sessions, the transaction coordinator's marker
// channels) is gone.
func TestBrokersLeaveNoGoroutines(t *testing.T) {
	zktest.SharedServer(t) // the shared ZooKeeper outlives this test
	before := goleak.IgnoreCurrent()
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.BootstrapAddrs()...), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("leaks"))
	if err != nil {
		t.Fatal(err)
	}
	produceAll(t, cl, "leaks", 10)
	cl.Close()
	consumer, err := kgo.NewClient(kgo.SeedBrokers(c.BootstrapAddrs()...), kgo.ConsumeTopics("leaks"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 10; {
		fs := consumer.PollFetches(ctxT(t, 30*time.Second))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
	consumer.Close()
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.BootstrapAddrs()...), kgo.TransactionalID("leaks"), kgo.DefaultProduceTopic("leaks"))
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctxT(t, 30*time.Second), kgo.StringRecord("txn")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctxT(t, 30*time.Second), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	c.Stop()
	goleak.VerifyNone(t, before)
}
