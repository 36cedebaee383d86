package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func TestRequestRoundTrip(t *testing.T) {
	topic := "t"
	cases := []struct {
		name string
		req  kmsg.Request
		v    int16
	}{
		{"produce v7 (header v1)", &kmsg.ProduceRequest{Acks: -1, TimeoutMillis: 1000, Topics: []kmsg.ProduceRequestTopic{{Topic: "t"}}}, 7},
		{"metadata v9 (flexible, header v2)", &kmsg.MetadataRequest{Topics: []kmsg.MetadataRequestTopic{{Topic: &topic}}}, 9},
		{"api versions v3", &kmsg.ApiVersionsRequest{ClientSoftwareName: "x", ClientSoftwareVersion: "1"}, 3},
		{"controlled shutdown v0 (header v0)", &kmsg.ControlledShutdownRequest{BrokerID: 3}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.SetVersion(tc.v)
			frame := AppendRequest(nil, 42, "client-a", tc.req)
			body, err := ReadFrame(bytes.NewReader(frame), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			h, got, err := ParseRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			if h.APIKey != tc.req.Key() || h.APIVersion != tc.v || h.CorrelationID != 42 {
				t.Fatalf("header %+v", h)
			}
			if tc.req.Key() != 7 && (h.ClientID == nil || *h.ClientID != "client-a") {
				t.Fatalf("client id %v", h.ClientID)
			}
			if !bytes.Equal(got.AppendTo(nil), tc.req.AppendTo(nil)) {
				t.Fatal("body did not round trip")
			}
		})
	}
}

func TestReadFrameLimits(t *testing.T) {
	big := binary.BigEndian.AppendUint32(nil, 1<<30)
	if _, err := ReadFrame(bytes.NewReader(big), 100<<20); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("oversized frame: %v", err)
	}
	neg := binary.BigEndian.AppendUint32(nil, 0xffffffff)
	if _, err := ReadFrame(bytes.NewReader(neg), 100); !errors.Is(err, ErrNegativeSize) {
		t.Fatalf("negative frame: %v", err)
	}
	// Read in 1 MiB chunks: a body that ends inside its fourth must come back whole and in order.
	body := make([]byte, 3<<20+17)
	for i := range body {
		body[i] = byte(i * 7 / 5)
	}
	large := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	if got, err := ReadFrame(bytes.NewReader(large), 100<<20); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("large frame: %d bytes (equal: %v), %v", len(got), bytes.Equal(got, body), err)
	}
	if _, err := ReadFrame(bytes.NewReader(large[:2<<20]), 100<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated large frame: %v", err)
	}
	short := append(binary.BigEndian.AppendUint32(nil, 10), 1, 2, 3)
	if _, err := ReadFrame(bytes.NewReader(short), 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated frame: %v", err)
	}
}

// TestReadFrameOverMaxAllocatesNothing: a size prefix above the limit fails
// before a byte of the announced body is allocated, so a peer announcing
// 100 MiB frames costs the broker nothing.
func TestReadFrameOverMaxAllocatesNothing(t *testing.T) {
	prefix := binary.BigEndian.AppendUint32(nil, 100<<20+1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := ReadFrame(bytes.NewReader(prefix), 100<<20); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("100 oversized announcements allocated %d bytes", n)
	}
}

func TestParseRequestErrors(t *testing.T) {
	if _, _, err := ParseRequest([]byte{0, 1}); !errors.Is(err, ErrTruncatedHeader) {
		t.Fatalf("short header: %v", err)
	}
	unknown := []byte{0x7f, 0x00, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff}
	if _, _, err := ParseRequest(unknown); !errors.Is(err, ErrUnknownAPIKey) {
		t.Fatalf("unknown key: %v", err)
	}
	// Produce at a version far beyond the protocol library: header is still read.
	h, req, err := ParseRequest([]byte{0, 0, 0x7f, 0, 0, 0, 0, 9, 0xff, 0xff})
	if err == nil || req == nil || h.CorrelationID != 9 {
		t.Fatalf("unknown version: %v %v %+v", err, req, h)
	}
}

func TestResponseHeaders(t *testing.T) {
	av := kmsg.NewPtrApiVersionsResponse()
	av.SetVersion(3)
	frame := AppendResponse(nil, RequestHeader{CorrelationID: 5}, av)
	// ApiVersions answers with header v0 even when flexible: no tag byte.
	if want := 4 + 4 + len(av.AppendTo(nil)); len(frame) != want {
		t.Fatalf("api versions frame %d bytes, want %d", len(frame), want)
	}
	md := kmsg.NewPtrMetadataResponse()
	md.SetVersion(9)
	frame = AppendResponse(nil, RequestHeader{CorrelationID: 5}, md)
	if want := 4 + 4 + 1 + len(md.AppendTo(nil)); len(frame) != want {
		t.Fatalf("metadata v9 frame %d bytes, want %d", len(frame), want)
	}
}

// dialKfake starts a one-broker kfake cluster (Kafka 2.8's versions) with
// topic t of the given partitions, and dials it; both end with the test.
func dialKfake(t *testing.T, partitions int32) (context.Context, *Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"), kfake.MaxVersions(kversion.V2_8_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	cl, err := Dial(ctx, c.ListenAddrs()[0], "wire-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return ctx, cl
}

func TestClientAgainstKfake(t *testing.T) {
	ctx, cl := dialKfake(t, 2)
	if v, ok := cl.MaxVersion(3); !ok || v != 11 {
		t.Fatalf("metadata max version %d %v, want 11 (Kafka 2.8)", v, ok)
	}
	resp, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		t.Fatal(err)
	}
	md := resp.(*kmsg.MetadataResponse)
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
		t.Fatalf("metadata %+v", md.Topics)
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, req := range []kmsg.Request{
		&kmsg.ProduceRequest{Version: 7, Topics: []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: []byte{1, 2}}}}}},
		&kmsg.FetchRequest{Version: 11},
		&kmsg.MetadataRequest{Version: 9},
		&kmsg.ApiVersionsRequest{Version: 3},
		&kmsg.CreateTopicsRequest{Version: 5},
	} {
		frame := AppendRequest(nil, 1, "seed", req)
		f.Add(frame[4:])
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, req, err := ParseRequest(frame)
		if err == nil && (req == nil || req.Key() != h.APIKey) {
			t.Fatalf("parsed without error but request is %v", req)
		}
	})
}

// TestReadFrameBodyInto reads a body that fits into the spare buffer itself,
// and a larger one into a new buffer, leaving the spare as it was.
func TestReadFrameBodyInto(t *testing.T) {
	spare := make([]byte, 8, 64)
	small := []byte("fits in the spare")
	got, err := ReadFrameBodyInto(bytes.NewReader(small), int32(len(small)), spare)
	if err != nil || !bytes.Equal(got, small) || &got[0] != &spare[:1][0] {
		t.Fatalf("small body: %q, %v; want it read into the spare", got, err)
	}
	large := bytes.Repeat([]byte("x"), 100)
	got, err = ReadFrameBodyInto(bytes.NewReader(large), int32(len(large)), spare)
	if err != nil || !bytes.Equal(got, large) || &got[0] == &spare[:1][0] {
		t.Fatalf("large body: %d bytes, %v; want a new buffer", len(got), err)
	}
	if !bytes.Equal(spare[:len(small)], small) {
		t.Errorf("the spare changed under a body too large for it: %q", spare[:len(small)])
	}
	if _, err := ReadFrameBodyInto(bytes.NewReader(small[:3]), int32(len(small)), spare); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated body: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadFrameBodyInto(bytes.NewReader(nil), int32(len(small)), spare); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("missing body: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestClientReusesResponseFrames: with ReuseResponseFrames a response is read
// into the previous one's frame, so two equal Fetch responses hold their
// records at the same address; without it each has its own.
func TestClientReusesResponseFrames(t *testing.T) {
	ctx, cl := dialKfake(t, 1)
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks, produce.TimeoutMillis = 1, 5000
	batch := AppendBatch(nil, BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, []Record{{Value: []byte("reused")}})
	produce.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: batch}}}}
	if _, err := cl.RequestVersion(ctx, produce, 8); err != nil {
		t.Fatal(err)
	}
	fetch := func() []byte {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxBytes = -1, 1<<20
		req.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20, LogStartOffset: -1}}}}
		resp, err := cl.RequestVersion(ctx, req, 11)
		if err != nil {
			t.Fatal(err)
		}
		records := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches
		if len(records) == 0 {
			t.Fatal("the fetch returned no records")
		}
		return records
	}
	a, b := fetch(), fetch()
	if &a[0] == &b[0] {
		t.Fatal("two responses share a frame without ReuseResponseFrames")
	}
	cl.ReuseResponseFrames()
	a, b = fetch(), fetch()
	if &a[0] != &b[0] {
		t.Errorf("with ReuseResponseFrames the second response's records are at %p, the first's at %p; want one frame", &b[0], &a[0])
	}
}
