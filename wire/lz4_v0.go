package wire

import "encoding/binary"

// Clients of Kafka 0.8 and 0.9 wrote the LZ4 frame's header checksum (HC)
// over the frame's magic number as well as its descriptor, against the LZ4
// frame format. Kafka reads a magic 0 message set's LZ4 frames without
// checking that byte and writes it the broken way for magic 0
// (KafkaLZ4BlockInputStream/OutputStream); these functions set it right
// before pierrec/lz4 reads a frame, and wrong again after it writes one.

const lz4FrameMagic = 0x184D2204

// lz4DescriptorEnd is the offset of the frame's HC byte: after the magic,
// FLG, BD and the optional content size and dictionary id; false when data
// is not an LZ4 frame.
func lz4DescriptorEnd(data []byte) (int, bool) {
	if len(data) < 7 || binary.LittleEndian.Uint32(data) != lz4FrameMagic {
		return 0, false
	}
	end := 6
	flg := data[4]
	if flg&0x08 != 0 { // content size
		end += 8
	}
	if flg&0x01 != 0 { // dictionary id
		end += 4
	}
	return end, len(data) > end
}

// fixLZ4V0HeaderChecksum returns data with the HC computed over the
// descriptor only, as the LZ4 frame format has it.
func fixLZ4V0HeaderChecksum(data []byte) []byte {
	end, ok := lz4DescriptorEnd(data)
	if !ok {
		return data
	}
	fixed := append([]byte(nil), data...)
	fixed[end] = byte(xxh32(fixed[4:end]) >> 8)
	return fixed
}

// breakLZ4V0HeaderChecksum sets a frame's HC the way 0.8 clients compute
// it, over the magic number and the descriptor, in place.
func breakLZ4V0HeaderChecksum(data []byte) []byte {
	if end, ok := lz4DescriptorEnd(data); ok {
		data[end] = byte(xxh32(data[:end]) >> 8)
	}
	return data
}

// xxh32 is the 32-bit xxHash of data with seed 0, the LZ4 frame's checksum.
func xxh32(data []byte) uint32 {
	// Variables, not constants: the seeds wrap around as uint32s.
	var p1, p2, p3, p4, p5 uint32 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
	rotl := func(x uint32, r uint) uint32 { return x<<r | x>>(32-r) }
	round := func(v, lane uint32) uint32 { return rotl(v+lane*p2, 13) * p1 }
	n := uint32(len(data))
	var h uint32
	if len(data) >= 16 {
		v1, v2, v3, v4 := p1+p2, p2, uint32(0), -p1
		for ; len(data) >= 16; data = data[16:] {
			v1 = round(v1, binary.LittleEndian.Uint32(data))
			v2 = round(v2, binary.LittleEndian.Uint32(data[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(data[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(data[12:]))
		}
		h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
	} else {
		h = p5
	}
	h += n
	for ; len(data) >= 4; data = data[4:] {
		h = rotl(h+binary.LittleEndian.Uint32(data)*p3, 17) * p4
	}
	for _, b := range data {
		h = rotl(h+uint32(b)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
