package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchResponseFrameMatchesKmsg fills the gaps of AppendFetchResponseFrame with the left-out records
// and compares the frame with AppendResponse's (kmsg's encoding), for every Fetch version a 2.8 broker
// answers and random responses: several topics and partitions, errors, aborted transactions (nil, empty
// and some), diverging epochs, current leaders and snapshot ids, empty, nil and non-empty records, each
// left out or not.
func TestFetchResponseFrameMatchesKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for version := int16(0); version <= 12; version++ {
		for round := range 200 {
			resp := randomFetchResponse(rng, version)
			h := RequestHeader{CorrelationID: rng.Int32()}
			want := AppendResponse(nil, h, resp)
			left := map[[2]int]bool{}
			prefix := []byte("kept")
			frame, gaps := AppendFetchResponseFrame(prefix, h, resp, func(ti, pi int) int {
				p := resp.Topics[ti].Partitions[pi]
				if p.RecordBatches == nil || rng.IntN(2) == 0 {
					return -1
				}
				left[[2]int{ti, pi}] = true
				return len(p.RecordBatches)
			})
			if !bytes.HasPrefix(frame, prefix) {
				t.Fatalf("v%d: the frame did not append to dst", version)
			}
			frame = frame[len(prefix):]
			if len(gaps) != len(left) {
				t.Fatalf("v%d round %d: %d gaps for %d partitions left out", version, round, len(gaps), len(left))
			}
			var got []byte
			at := 0
			for _, g := range gaps {
				if !left[[2]int{g.Topic, g.Partition}] || g.At < at {
					t.Fatalf("v%d round %d: gap %+v out of order or not asked for", version, round, g)
				}
				records := resp.Topics[g.Topic].Partitions[g.Partition].RecordBatches
				if g.Len != len(records) {
					t.Fatalf("v%d: gap of %d bytes for %d bytes of records", version, g.Len, len(records))
				}
				got = append(append(got, frame[at:g.At]...), records...)
				at = g.At
			}
			got = append(got, frame[at:]...)
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d round %d: the frame with its gaps filled differs from kmsg's encoding\n got %x\nwant %x", version, round, got, want)
			}
		}
	}
}

func randomFetchResponse(rng *rand.Rand, version int16) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	resp.ThrottleMillis, resp.ErrorCode, resp.SessionID = rng.Int32N(1000), int16(rng.IntN(3)), rng.Int32()
	for ti := range rng.IntN(4) {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = fmt.Sprintf("topic-%d-%s", ti, string(make([]byte, rng.IntN(200))))
		for pi := range rng.IntN(5) {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode = int32(pi), int16(rng.IntN(2))
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = rng.Int64(), rng.Int64(), rng.Int64()
			switch rng.IntN(3) {
			case 1:
				rp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			case 2:
				for range 1 + rng.IntN(3) {
					a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
					a.ProducerID, a.FirstOffset = rng.Int64(), rng.Int64()
					rp.AbortedTransactions = append(rp.AbortedTransactions, a)
				}
			}
			rp.PreferredReadReplica = rng.Int32N(3) - 1
			if rng.IntN(3) == 0 {
				rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = rng.Int32(), rng.Int64()
			}
			if rng.IntN(3) == 0 {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = rng.Int32(), rng.Int32()
			}
			if rng.IntN(4) == 0 {
				rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = rng.Int64(), rng.Int32()
			}
			switch rng.IntN(4) {
			case 0:
			case 1:
				rp.RecordBatches = []byte{}
			default:
				// Long enough that a compact length takes two and three bytes.
				rp.RecordBatches = make([]byte, rng.IntN(20000))
				for i := range rp.RecordBatches {
					rp.RecordBatches[i] = byte(rng.IntN(256))
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
