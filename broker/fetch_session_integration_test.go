package broker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/wire"
)

// sessionClient sends Fetch v12 requests of one session over one connection.
type sessionClient struct {
	t  *testing.T
	cl *wire.Client
}

func (s sessionClient) fetch(id, epoch int32, topics []kmsg.FetchRequestTopic, forget []kmsg.FetchRequestForgottenTopic) *kmsg.FetchResponse {
	s.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.SessionID, req.SessionEpoch = -1, 1<<20, id, epoch
	req.Topics, req.ForgottenTopics = topics, forget
	resp, err := s.cl.RequestVersion(ctxT(s.t, 10*time.Second), req, 12)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.(*kmsg.FetchResponse)
}

func fetchTopic(topic string, offsets ...int64) kmsg.FetchRequestTopic {
	ft := kmsg.FetchRequestTopic{Topic: topic}
	for p, o := range offsets {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = int32(p), o, 1<<20
		ft.Partitions = append(ft.Partitions, fp)
	}
	return ft
}

// answered lists a response's partitions as "topic-partition".
func answered(resp *kmsg.FetchResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, t.Topic+"-"+string(rune('0'+p.Partition)))
		}
	}
	return out
}

// TestFetchSessions is KIP-227 on the wire, as 2.8 answers it: a full fetch gets a session; an
// incremental one names only what changed and hears only about partitions with news; a partition
// forgotten is no longer read; epochs must follow; FINAL closes the session; Fetch v6 has none.
func TestFetchSessions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	if code := createTopicRaw(t, addr, "sessions", 3); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	for p := range int32(3) {
		c.WaitForLeader("sessions", p)
	}
	cl, err := wire.Dial(ctxT(t, 10*time.Second), addr, "session-test")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s := sessionClient{t, cl}

	full := s.fetch(0, 0, []kmsg.FetchRequestTopic{fetchTopic("sessions", 0, 0, 0)}, nil)
	id := full.SessionID
	if full.ErrorCode != 0 || id == 0 || len(answered(full)) != 3 {
		t.Fatalf("full fetch: error %v, session %d, partitions %v", kerr.ErrorForCode(full.ErrorCode), id, answered(full))
	}
	if resp := s.fetch(id, 1, nil, nil); resp.ErrorCode != 0 || resp.SessionID != id || len(resp.Topics) != 0 {
		t.Fatalf("nothing new: error %v, session %d, partitions %v", kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, answered(resp))
	}

	if code, _ := produceCode(t, c, addr, produceReq("sessions", 1, recordBatch([]byte("news")))); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	resp := s.fetch(id, 2, nil, nil)
	if got := answered(resp); !slices.Equal(got, []string{"sessions-1"}) || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 ||
		resp.Topics[0].Partitions[0].HighWatermark != 1 {
		t.Fatalf("after a produce to partition 1: %v (%+v), want partition 1's record from the cached offset 0", got, resp.Topics)
	}
	// The consumer moves partition 1 on; nothing else is new.
	moved := fetchTopic("sessions", 0, 1)
	moved.Partitions = moved.Partitions[1:]
	if resp := s.fetch(id, 3, []kmsg.FetchRequestTopic{moved}, nil); len(resp.Topics) != 0 {
		t.Fatalf("partition 1 at its end: answered %v", answered(resp))
	}

	// Forget partition 0: its news no longer comes.
	if resp := s.fetch(id, 4, nil, []kmsg.FetchRequestForgottenTopic{{Topic: "sessions", Partitions: []int32{0}}}); len(resp.Topics) != 0 {
		t.Fatalf("forgetting: answered %v", answered(resp))
	}
	for _, p := range []int32{0, 2} {
		if code, _ := produceCode(t, c, addr, produceReq("sessions", p, recordBatch([]byte("more")))); code != 0 {
			t.Fatal(kerr.ErrorForCode(code))
		}
	}
	if got := answered(s.fetch(id, 5, nil, nil)); !slices.Equal(got, []string{"sessions-2"}) {
		t.Fatalf("after produces to partitions 0 (forgotten) and 2: answered %v, want only partition 2", got)
	}

	// An unknown partition joins: its error is answered each time.
	unknown := fetchTopic("no-such-topic", 0)
	for epoch := int32(6); epoch <= 7; epoch++ {
		var add []kmsg.FetchRequestTopic
		if epoch == 6 {
			add = []kmsg.FetchRequestTopic{unknown}
		}
		resp := s.fetch(id, epoch, add, nil)
		if got := answered(resp); !slices.Contains(got, "no-such-topic-0") {
			t.Fatalf("epoch %d: answered %v, want the unknown partition's error", epoch, got)
		}
	}

	for _, c := range []struct {
		name      string
		id, epoch int32
		want      error
	}{
		{"a replayed epoch", id, 7, kerr.InvalidFetchSessionEpoch},
		{"an epoch ahead", id, 9, kerr.InvalidFetchSessionEpoch},
		{"an unknown session", id + 1, 1, kerr.FetchSessionIDNotFound},
	} {
		resp := s.fetch(c.id, c.epoch, nil, nil)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != c.want || resp.SessionID != 0 || len(resp.Topics) != 0 {
			t.Errorf("%s: error %v, session %d, partitions %v; want %v, no session, no partitions", c.name, err, resp.SessionID, answered(resp), c.want)
		}
	}

	// FINAL: a sessionless full fetch that closes the session.
	if resp := s.fetch(id, -1, []kmsg.FetchRequestTopic{fetchTopic("sessions", 0)}, nil); resp.SessionID != 0 || len(answered(resp)) != 1 {
		t.Fatalf("FINAL: session %d, partitions %v", resp.SessionID, answered(resp))
	}
	if resp := s.fetch(id, 8, nil, nil); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	// Fetch v6 knows no sessions.
	v6 := raw(t, addr, fetchReq("sessions", 0, 0, 1), 6).(*kmsg.FetchResponse)
	if len(v6.Topics) != 1 || v6.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("Fetch v6: %+v", v6)
	}
}

// TestFollowersFetchInSessions: followers replicate through incremental fetch sessions, and a
// consumer's (franz-go's) session is granted beside them.
func TestFollowersFetchInSessions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	createTopic(t, c, "replicated", 3, 3)
	cl := c.Client(kgo.DefaultProduceTopic("replicated"), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 30 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 3), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// acks=all of every record was answered, so every follower fetched it; every leader's followers
	// fetch in sessions that moved past their first, full, fetch.
	c.WaitFor("incremental follower sessions on every broker", func() bool {
		for id := int32(1); id <= 3; id++ {
			followers := 0
			for _, s := range broker.FetchSessions(c.Broker(id)) {
				if s.Follower && s.Epoch > 2 {
					followers++
				}
			}
			if followers < 2 {
				return false
			}
		}
		return true
	})
	consumer := c.Client(kgo.ConsumeTopics("replicated"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 30 {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	c.WaitFor("a consumer session", func() bool {
		for id := int32(1); id <= 3; id++ {
			for _, s := range broker.FetchSessions(c.Broker(id)) {
				if !s.Follower && s.Epoch > 1 {
					return true
				}
			}
		}
		return false
	})
}
