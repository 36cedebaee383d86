package broker

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/wire"
)

// servePanicking starts a listener whose API table has Metadata and Produce
// handlers that panic, and returns its address and the broker's log.
func servePanicking(t *testing.T) (string, *observer.ObservedLogs) {
	t.Helper()
	cfg, err := brokerconfig.New(map[string]string{"zookeeper.connect": "localhost:2181"})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	quotas, err := newConnectionQuotas(cfg, quota.NewConnectionRates(quota.Config{Samples: 11, Window: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: cfg, log: zap.New(core), apis: apiTable(), quotas: quotas, clientQuotas: quota.New(quota.Config{Samples: 11, Window: time.Second})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, key := range []int16{metadataAPI.key, produceAPI.key} {
		a := s.apis[key]
		a.handle = func(context.Context, *Server, *request) kmsg.Response { panic("forced by the test") }
		s.apis[key] = a
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newListener(s, "PLAINTEXT", ln, &listenerSecurity{protocol: "PLAINTEXT"})
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.serve()
	}()
	t.Cleanup(func() {
		l.close()
		<-done
		s.cancel()
	})
	return ln.Addr().String(), logs
}

func dialT(t *testing.T, addr, clientID string) *wire.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := wire.Dial(ctx, addr, clientID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func requestT(cl *wire.Client, req kmsg.Request, v int16) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.RequestVersion(ctx, req, v)
}

// TestHandlerPanicAnswersAndClosesTheConnection: a handler that panics costs
// its client an UNKNOWN_SERVER_ERROR and the connection; the panic is logged
// with the API and the client, and other connections are served as before.
func TestHandlerPanicAnswersAndClosesTheConnection(t *testing.T) {
	addr, logs := servePanicking(t)
	bystander := dialT(t, addr, "bystander")
	if _, err := requestT(bystander, kmsg.NewPtrApiVersionsRequest(), 3); err != nil {
		t.Fatalf("ApiVersions before the panic: %v", err)
	}

	victim := dialT(t, addr, "victim")
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("t")
	req.Topics = append(req.Topics, rt)
	resp, err := requestT(victim, req, 9)
	if err != nil {
		t.Fatalf("Metadata to a panicking handler: %v, want an answer", err)
	}
	if topics := resp.(*kmsg.MetadataResponse).Topics; len(topics) != 1 || topics[0].ErrorCode != kerr.UnknownServerError.Code {
		t.Errorf("Metadata topics %+v, want t with UNKNOWN_SERVER_ERROR", topics)
	}
	if _, err := requestT(victim, kmsg.NewPtrApiVersionsRequest(), 3); err == nil {
		t.Error("the connection of the panicking request still serves requests")
	}

	// An answer with no place for the error (Metadata for all topics): the
	// connection is closed without one.
	silent := dialT(t, addr, "silent")
	if resp, err := requestT(silent, kmsg.NewPtrMetadataRequest(), 9); err == nil {
		t.Errorf("Metadata for all topics from a panicking handler answered %+v, want the connection closed", resp)
	}

	produce := func(acks int16) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = acks, 1000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rt.Partitions = append(rt.Partitions, kmsg.ProduceRequestTopicPartition{Partition: 0})
		req.Topics = append(req.Topics, rt)
		return req
	}
	resp, err = requestT(dialT(t, addr, "producer"), produce(1), 8)
	if err != nil {
		t.Fatalf("Produce acks=1 to a panicking handler: %v, want an answer", err)
	}
	if p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownServerError.Code {
		t.Errorf("Produce acks=1 partition error %d, want UNKNOWN_SERVER_ERROR", p.ErrorCode)
	}
	// acks=0 is never answered: the client learns of the failure from the
	// closed connection.
	if resp, err := requestT(dialT(t, addr, "fire-and-forget"), produce(0), 8); err == nil {
		t.Errorf("Produce acks=0 from a panicking handler answered %+v, want the connection closed", resp)
	}

	for _, cl := range []*wire.Client{bystander, dialT(t, addr, "newcomer")} {
		if resp, err := requestT(cl, kmsg.NewPtrApiVersionsRequest(), 3); err != nil || resp.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
			t.Errorf("ApiVersions after the panics: %v %+v", err, resp)
		}
	}

	entries := logs.FilterMessage("Request handler panicked; closing the connection").All()
	if len(entries) != 4 {
		t.Fatalf("%d panic log entries, want 4: %+v", len(entries), logs.All())
	}
	fields := entries[0].ContextMap()
	for k, want := range map[string]string{"api-key": "3", "api": "Metadata", "client-id": "victim", "panic": "forced by the test"} {
		if got := fmt.Sprint(fields[k]); got != want {
			t.Errorf("log field %s = %s, want %s", k, got, want)
		}
	}
	if remote, _ := fields["remote"].(string); remote == "" {
		t.Errorf("panic log lacks the client's address: %+v", fields)
	}
	if stack, _ := fields["stack"].(string); !strings.Contains(stack, "servePanicking") {
		t.Errorf("panic log stack does not name the panicking handler:\n%s", stack)
	}
}
