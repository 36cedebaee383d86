package wire

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsgMessage encodes one message with franz-go's kmsg types, an encoder
// independent of this package's: the size and CRC are filled in here.
func kmsgMessage(magic int8, offset int64, attrs int8, ts int64, key, value []byte) []byte {
	var b []byte
	if magic == MagicV0 {
		b = (&kmsg.MessageV0{Offset: offset, Magic: magic, Attributes: attrs, Key: key, Value: value}).AppendTo(nil)
	} else {
		b = (&kmsg.MessageV1{Offset: offset, Magic: magic, Attributes: attrs, Timestamp: ts, Key: key, Value: value}).AppendTo(nil)
	}
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// kmsgMessages reads a message set with kmsg, one level deep.
func kmsgMessages(t *testing.T, magic int8, data []byte) []kmsg.MessageV1 {
	t.Helper()
	var out []kmsg.MessageV1
	for len(data) > 0 {
		var m kmsg.MessageV1
		var err error
		if magic == MagicV0 {
			var m0 kmsg.MessageV0
			err = m0.ReadFrom(data)
			m = kmsg.MessageV1{Offset: m0.Offset, MessageSize: m0.MessageSize, CRC: m0.CRC, Magic: m0.Magic, Attributes: m0.Attributes, Timestamp: -1, Key: m0.Key, Value: m0.Value}
		} else {
			err = m.ReadFrom(data)
		}
		if err != nil {
			t.Fatalf("kmsg cannot read the message set: %v", err)
		}
		if m.Magic != magic {
			t.Fatalf("message at %d has magic %d, want %d", m.Offset, m.Magic, magic)
		}
		size := 12 + int(m.MessageSize)
		if got := crc32.ChecksumIEEE(data[16:size]); got != uint32(m.CRC) {
			t.Fatalf("message at %d: CRC %x, want %x", m.Offset, m.CRC, got)
		}
		out = append(out, m)
		data = data[size:]
	}
	return out
}

func TestUpConvert(t *testing.T) {
	plainV1 := slices.Concat(
		kmsgMessage(MagicV1, 0, 0, 1000, []byte("k1"), []byte("v1")),
		kmsgMessage(MagicV1, 0, 0, 1005, nil, []byte("v2")),
		kmsgMessage(MagicV1, 0, 0, 990, []byte("k3"), nil),
	)
	inner := slices.Concat(
		kmsgMessage(MagicV1, 0, 0, 2000, []byte("a"), []byte("x")),
		kmsgMessage(MagicV1, 1, 0, 2001, []byte("b"), []byte("y")),
	)
	gzipV1 := kmsgMessage(MagicV1, 1, int8(CodecGzip), 2001, nil, CodecGzip.compress(inner))
	innerV0 := slices.Concat(
		kmsgMessage(MagicV0, 0, 0, 0, nil, []byte("old1")),
		kmsgMessage(MagicV0, 1, 0, 0, nil, []byte("old2")),
	)
	snappyV0 := kmsgMessage(MagicV0, 1, int8(CodecSnappy), 0, nil, CodecSnappy.compress(innerV0))
	for _, tc := range []struct {
		name       string
		in         []byte
		codec      Codec
		timestamps []int64
		keys       []string
		values     []string
	}{
		{"v1 plain", plainV1, CodecNone, []int64{1000, 1005, 990}, []string{"k1", "", "k3"}, []string{"v1", "v2", ""}},
		{"v1 gzip wrapper", gzipV1, CodecGzip, []int64{2000, 2001}, []string{"a", "b"}, []string{"x", "y"}},
		{"v0 snappy wrapper", snappyV0, CodecSnappy, []int64{-1, -1}, []string{"", ""}, []string{"old1", "old2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := UpConvert(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			batches, records := readAll(t, out)
			if len(batches) != 1 {
				t.Fatalf("%d batches, want 1", len(batches))
			}
			b := batches[0]
			if b.Attributes.Codec() != tc.codec || b.ProducerID != -1 || b.BaseSequence != -1 || int(b.RecordCount) != len(tc.values) {
				t.Fatalf("batch %+v", b.BatchHeader)
			}
			if want := slices.Max(tc.timestamps); b.MaxTimestamp != want {
				t.Errorf("max timestamp %d, want %d", b.MaxTimestamp, want)
			}
			for i, r := range records[0] {
				if r.OffsetDelta != int32(i) || b.RecordTimestamp(r) != tc.timestamps[i] ||
					string(r.Key) != tc.keys[i] || (r.Key == nil) != (tc.keys[i] == "") ||
					string(r.Value) != tc.values[i] || (r.Value == nil) != (tc.values[i] == "") {
					t.Errorf("record %d: %+v at %d", i, r, b.RecordTimestamp(r))
				}
			}
		})
	}
}

func TestReadMessageSetRefuses(t *testing.T) {
	good := kmsgMessage(MagicV1, 0, 0, 1, nil, []byte("v"))
	badCRC := slices.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	zstd := kmsgMessage(MagicV1, 0, int8(CodecZstd), 1, nil, CodecZstd.compress(good))
	nested := kmsgMessage(MagicV1, 0, int8(CodecGzip), 1, nil, CodecGzip.compress(
		kmsgMessage(MagicV1, 0, int8(CodecGzip), 1, nil, CodecGzip.compress(good))))
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrCorruptRecords},
		{"truncated", good[:len(good)-1], ErrCorruptRecords},
		{"trailing bytes", append(slices.Clone(good), 1, 2, 3), ErrCorruptRecords},
		{"bad CRC", badCRC, ErrCorruptRecords},
		{"mixed magic", slices.Concat(good, kmsgMessage(MagicV0, 1, 0, 0, nil, []byte("v"))), ErrCorruptRecords},
		{"ZSTD", zstd, ErrUnknownCodec},
		{"compressed inside compressed", nested, ErrCorruptRecords},
		{"empty wrapper", kmsgMessage(MagicV1, 0, int8(CodecGzip), 1, nil, CodecGzip.compress(nil)), ErrCorruptRecords},
		{"a v2 batch", AppendBatch(nil, testHeader(CodecNone), testRecords()), ErrCorruptRecords},
	} {
		if _, err := UpConvert(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestDownConvert(t *testing.T) {
	var log []byte
	log = AppendBatch(log, BatchHeader{BaseOffset: 10, LastOffsetDelta: 2, FirstTimestamp: 500, MaxTimestamp: 502, ProducerID: -1, BaseSequence: -1},
		[]Record{{Key: []byte("k0"), Value: []byte("v0")}, {OffsetDelta: 1, TimestampDelta: 1, Value: []byte("v1"), Headers: []Header{{Key: "h"}}}, {OffsetDelta: 2, TimestampDelta: 2, Key: []byte("k2")}})
	marker := AppendEndTxnMarkerBatch(nil, 7, 0, 600, EndTxnMarker{Commit: true})
	SetBaseOffset(marker, 13)
	log = append(log, marker...)
	log = AppendBatch(log, BatchHeader{BaseOffset: 14, LastOffsetDelta: 1, FirstTimestamp: 700, MaxTimestamp: 705, Attributes: Attributes(CodecGzip), ProducerID: -1, BaseSequence: -1},
		[]Record{{Value: []byte("g0")}, {OffsetDelta: 1, TimestampDelta: 5, Value: []byte("g1")}})
	partial := AppendBatch(nil, BatchHeader{BaseOffset: 16, ProducerID: -1, BaseSequence: -1}, []Record{{Value: []byte("cut")}})
	log = append(log, partial[:len(partial)-2]...)

	for _, magic := range []int8{MagicV0, MagicV1} {
		out, err := DownConvert(log, magic, 11)
		if err != nil {
			t.Fatalf("magic %d: %v", magic, err)
		}
		msgs := kmsgMessages(t, magic, out)
		if len(msgs) != 3 {
			t.Fatalf("magic %d: %d messages, want 2 plain (offset 10 skipped, the marker left out) and a wrapper", magic, len(msgs))
		}
		for i, want := range []struct {
			offset     int64
			ts         int64
			key, value string
		}{{11, 501, "", "v1"}, {12, 502, "k2", ""}} {
			m := msgs[i]
			if m.Offset != want.offset || m.Attributes != 0 || string(m.Key) != want.key || string(m.Value) != want.value ||
				magic == MagicV1 && m.Timestamp != want.ts {
				t.Errorf("magic %d message %d: %+v", magic, i, m)
			}
		}
		w := msgs[2]
		if w.Offset != 15 || Codec(w.Attributes&7) != CodecGzip || magic == MagicV1 && w.Timestamp != 705 {
			t.Fatalf("magic %d wrapper: %+v", magic, w)
		}
		plain, err := CodecGzip.decompress(w.Value)
		if err != nil {
			t.Fatal(err)
		}
		innerOffsets := []int64{14, 15} // v0: absolute
		if magic == MagicV1 {
			innerOffsets = []int64{0, 1}
		}
		for i, m := range kmsgMessages(t, magic, plain) {
			if m.Offset != innerOffsets[i] || string(m.Value) != []string{"g0", "g1"}[i] {
				t.Errorf("magic %d inner message %d: %+v", magic, i, m)
			}
		}
		// What down-conversion writes, this package reads back to the same messages.
		set, err := ReadMessageSet(out)
		if err != nil || set.Magic != magic || len(set.Messages) != 4 || set.Messages[3].Offset != 15 || set.Messages[2].Offset != 14 {
			t.Errorf("magic %d read back: %+v, %v", magic, set, err)
		}
	}

	zstd := AppendBatch(nil, testHeader(CodecZstd), testRecords())
	if _, err := DownConvert(zstd, MagicV1, 0); !errors.Is(err, ErrUnknownCodec) {
		t.Errorf("ZSTD batch: %v, want ErrUnknownCodec", err)
	}
}

// FuzzReadMessageSet reads arbitrary bytes as a produce's message set: it
// must not panic, and what it accepts must survive up-conversion and come
// back from down-conversion as the same keys and values.
func FuzzReadMessageSet(f *testing.F) {
	f.Add(kmsgMessage(MagicV1, 0, 0, 1, []byte("k"), []byte("v")))
	f.Add(kmsgMessage(MagicV0, 0, int8(CodecGzip), 0, nil, CodecGzip.compress(kmsgMessage(MagicV0, 0, 0, 0, nil, []byte("v")))))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ReadMessageSet(data)
		if err != nil {
			return
		}
		batch, err := UpConvert(data)
		if err != nil {
			t.Fatalf("read but not up-converted: %v", err)
		}
		down, err := DownConvert(batch, set.Magic, 0)
		if err != nil {
			t.Fatalf("down-conversion: %v", err)
		}
		back, err := ReadMessageSet(down)
		if err != nil || len(back.Messages) != len(set.Messages) {
			t.Fatalf("read back %d messages (%v), want %d", len(back.Messages), err, len(set.Messages))
		}
		for i, m := range back.Messages {
			if m.Offset != int64(i) || !slices.Equal(m.Key, set.Messages[i].Key) || !slices.Equal(m.Value, set.Messages[i].Value) ||
				(m.Key == nil) != (set.Messages[i].Key == nil) || (m.Value == nil) != (set.Messages[i].Value == nil) {
				t.Fatalf("message %d: %+v, want %+v", i, m, set.Messages[i])
			}
		}
	})
}

// TestLegacyLZ4Framing: magic 0 LZ4 wrappers carry the 0.8 clients' header
// checksum both ways, as Kafka reads and writes them; magic 1 wrappers the
// LZ4 format's.
func TestLegacyLZ4Framing(t *testing.T) {
	log := AppendBatch(nil, BatchHeader{LastOffsetDelta: 1, FirstTimestamp: 700, MaxTimestamp: 701, Attributes: Attributes(CodecLZ4), ProducerID: -1, BaseSequence: -1},
		[]Record{{Value: []byte("l0")}, {OffsetDelta: 1, TimestampDelta: 1, Value: []byte("l1")}})
	for _, magic := range []int8{MagicV0, MagicV1} {
		out, err := DownConvert(log, magic, 0)
		if err != nil {
			t.Fatal(err)
		}
		wrapper := kmsgMessages(t, magic, out)[0].Value
		_, strictErr := lz4Decompress(wrapper)
		if broken := strictErr != nil; broken != (magic == MagicV0) {
			t.Errorf("magic %d wrapper read by the LZ4 frame format: %v; want a broken header checksum only for magic 0", magic, strictErr)
		}
		set, err := ReadMessageSet(out)
		if err != nil || len(set.Messages) != 2 || string(set.Messages[1].Value) != "l1" {
			t.Errorf("magic %d: read back %+v, %v", magic, set, err)
		}
	}
}

// TestLegacyBatches: stored v0 and v1 messages, as AppendLegacy writes them, read back through Batches
// as shallow batches (one per message, a wrapper's offset its last record's) whose Records give every
// record its own offset and timestamp; kmsg, an independent decoder, reads the same messages.
func TestLegacyBatches(t *testing.T) {
	msgs := []LegacyMessage{
		{Offset: 40, Timestamp: 1000, Key: []byte("a"), Value: []byte("x")},
		{Offset: 41, Timestamp: 1003, Value: []byte("y")},
		{Offset: 43, Timestamp: 1001, Key: []byte("c")}, // a gap, as compaction leaves
	}
	type rec struct {
		offset, ts int64
		key, value string
	}
	for _, magic := range []int8{MagicV0, MagicV1} {
		for _, codec := range []Codec{CodecNone, CodecGzip, CodecLZ4} {
			data := AppendLegacy(nil, magic, codec, false, msgs)
			var shallow []int64
			var got []rec
			for b, err := range Batches(data) {
				if err != nil {
					t.Fatalf("magic %d %s: %v", magic, codec, err)
				}
				if err := b.VerifyCRC(); err != nil {
					t.Errorf("magic %d %s: %v", magic, codec, err)
				}
				if b.Magic != magic || b.Attributes.Codec() != codec || b.ProducerID != -1 || b.PartitionLeaderEpoch != -1 || b.LastOffsetDelta != 0 {
					t.Errorf("magic %d %s: header %+v", magic, codec, b.BatchHeader)
				}
				shallow = append(shallow, b.BaseOffset)
				for r, err := range b.Records() {
					if err != nil {
						t.Fatalf("magic %d %s: %v", magic, codec, err)
					}
					got = append(got, rec{b.RecordOffset(r), b.RecordTimestamp(r), string(r.Key), string(r.Value)})
				}
			}
			want := []rec{{40, 1000, "a", "x"}, {41, 1003, "", "y"}, {43, 1001, "c", ""}}
			wantShallow := []int64{40, 41, 43}
			if codec != CodecNone {
				wantShallow = []int64{43}
			}
			for i := range want {
				if magic == MagicV0 {
					want[i].ts = -1
				}
			}
			if !slices.Equal(got, want) || !slices.Equal(shallow, wantShallow) {
				t.Errorf("magic %d %s: batches at %v with records %v, want %v and %v", magic, codec, shallow, got, wantShallow, want)
			}
			if n := len(kmsgMessages(t, magic, data)); n != len(wantShallow) {
				t.Errorf("magic %d %s: kmsg reads %d messages", magic, codec, n)
			}
			corrupt := slices.Clone(data)
			corrupt[len(corrupt)-1] ^= 1
			for b, err := range Batches(corrupt) {
				if err == nil && b.Pos == len(corrupt)-len(b.Raw) && !errors.Is(b.VerifyCRC(), ErrCRCMismatch) {
					t.Errorf("magic %d %s: a flipped byte passes the CRC", magic, codec)
				}
			}
		}
	}
}

// TestDownConvertLegacy: messages already in the fetch's format or older go out as stored; v1 messages
// for a v0 reader are rewritten (timestamps dropped, a wrapper's inner offsets made absolute).
func TestDownConvertLegacy(t *testing.T) {
	msgs := []LegacyMessage{{Offset: 7, Timestamp: 70, Value: []byte("p")}, {Offset: 8, Timestamp: 80, Value: []byte("q")}}
	v0 := AppendLegacy(nil, MagicV0, CodecGzip, false, msgs)
	v1 := AppendLegacy(nil, MagicV1, CodecGzip, false, msgs)
	for _, tc := range []struct {
		in    []byte
		magic int8
		want  []byte
	}{{v0, MagicV1, v0}, {v0, MagicV0, v0}, {v1, MagicV1, v1}} {
		if out, err := DownConvert(tc.in, tc.magic, 0); err != nil || !slices.Equal(out, tc.want) {
			t.Errorf("to magic %d: %x, %v; want the stored bytes", tc.magic, out, err)
		}
	}
	out, err := DownConvert(v1, MagicV0, 0)
	if err != nil {
		t.Fatal(err)
	}
	set, err := ReadMessageSet(out)
	if err != nil || set.Magic != MagicV0 || set.Codec != CodecGzip || len(set.Messages) != 2 ||
		set.Messages[0].Offset != 7 || set.Messages[1].Offset != 8 || set.Messages[1].Timestamp != -1 {
		t.Errorf("v1 to v0: %+v, %v", set, err)
	}
}
