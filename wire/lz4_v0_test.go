package wire

import (
	"bytes"
	"testing"
)

func TestXXH32(t *testing.T) {
	for in, want := range map[string]uint32{
		"":    0x02CC5D05,
		"a":   0x550D7456,
		"abc": 0x32D153FF,
		"Nobody inspects the spammish repetition": 0xE2293B2F,
	} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %#08x, want %#08x", in, got, want)
		}
	}
}

// TestLZ4V0HeaderChecksum: a frame with the 0.8 clients' header checksum
// does not read as written; set right it does, and setting it right a frame
// pierrec/lz4 wrote changes nothing (the checksum is computed the same way).
func TestLZ4V0HeaderChecksum(t *testing.T) {
	plain := bytes.Repeat([]byte("zkafka "), 100)
	frame := lz4Compress(plain)
	if fixed := fixLZ4V0HeaderChecksum(frame); !bytes.Equal(fixed, frame) {
		t.Fatal("recomputing the header checksum of a well-formed frame changed it")
	}
	broken := breakLZ4V0HeaderChecksum(append([]byte(nil), frame...))
	if bytes.Equal(broken, frame) {
		t.Fatal("the 0.8 header checksum is the same as the right one for this frame; pick another")
	}
	if _, err := lz4Decompress(broken); err == nil {
		t.Fatal("pierrec/lz4 read a frame with a broken header checksum: the fix-up is not needed")
	}
	got, err := lz4Decompress(fixLZ4V0HeaderChecksum(broken))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("after the fix-up: %v", err)
	}
}
