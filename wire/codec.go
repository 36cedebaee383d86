package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec is a batch's compression codec, the low three bits of its attributes.
type Codec int8

// The codecs of Kafka 2.8.
const (
	CodecNone Codec = iota
	CodecGzip
	CodecSnappy
	CodecLZ4
	CodecZstd
)

// codecs is the one table of compression codecs: Kafka's name for each and how its records are
// compressed and decompressed.
var codecs = [...]struct {
	name       string
	compress   func([]byte) []byte
	decompress func([]byte) ([]byte, error)
}{
	CodecNone:   {"NONE", nil, nil},
	CodecGzip:   {"GZIP", gzipCompress, gzipDecompress},
	CodecSnappy: {"SNAPPY", snappyCompress, snappyDecompress},
	CodecLZ4:    {"LZ4", lz4Compress, lz4Decompress},
	CodecZstd:   {"ZSTD", zstdCompress, zstdDecompress},
}

// Known reports whether Kafka has the codec.
func (c Codec) Known() bool { return c >= 0 && int(c) < len(codecs) }

// String is Kafka's name of the codec (CompressionType), UNKNOWN for one it does not have.
func (c Codec) String() string {
	if !c.Known() {
		return "UNKNOWN"
	}
	return codecs[c].name
}

func (c Codec) compress(data []byte) []byte {
	switch {
	case !c.Known():
		panic(fmt.Sprintf("wire: no compression codec %d", c))
	case c == CodecNone:
		return data
	}
	return codecs[c].compress(data)
}

func (c Codec) decompress(data []byte) ([]byte, error) {
	switch {
	case !c.Known():
		return nil, formatErrorf(ErrUnknownCodec, "batch has unknown compression codec %d", c)
	case c == CodecNone:
		return data, nil
	}
	out, err := codecs[c].decompress(data)
	if err != nil {
		return nil, formatErrorf(ErrCorruptRecords, "decompress %s: %v", c, err)
	}
	return out, nil
}

// The compressors write to a bytes.Buffer, which never fails, so neither do they.

func gzipCompress(data []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(data)
	_ = w.Close()
	return buf.Bytes()
}

func gzipDecompress(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// snappyCompress writes a raw snappy block, as franz-go does; Kafka's reader accepts it as well as the
// xerial framing of the Java client.
func snappyCompress(data []byte) []byte { return s2.EncodeSnappy(nil, data) }

// xerialMagic starts snappy data framed by the Java client's snappy-java.
var xerialMagic = []byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// xerialHeaderSize is the magic, a version and a compatible version.
const xerialHeaderSize = 16

// snappyDecompress reads raw snappy or the xerial framing: a 16-byte header, then blocks each prefixed
// by a big-endian length.
func snappyDecompress(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialMagic) {
		return s2.Decode(nil, data)
	}
	if len(data) < xerialHeaderSize {
		return nil, errors.New("short xerial header")
	}
	var out []byte
	for in := data[xerialHeaderSize:]; len(in) > 0; {
		if len(in) < 4 {
			return nil, errors.New("short xerial block length")
		}
		n := int(binary.BigEndian.Uint32(in))
		if n > len(in)-4 || n < 0 {
			return nil, errors.New("xerial block past the end")
		}
		block, err := s2.Decode(nil, in[4:4+n])
		if err != nil {
			return nil, err
		}
		out = append(out, block...)
		in = in[4+n:]
	}
	return out, nil
}

func lz4Compress(data []byte) []byte {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	_, _ = w.Write(data)
	_ = w.Close()
	return buf.Bytes()
}

func lz4Decompress(data []byte) ([]byte, error) {
	return io.ReadAll(lz4.NewReader(bytes.NewReader(data)))
}

// The zstd coder is shared: EncodeAll and DecodeAll are safe for concurrent use and start no
// goroutines.
var (
	zstdEncoder = mustZstd(zstd.NewWriter(nil, zstd.WithZeroFrames(true)))
	zstdDecoder = mustZstd(zstd.NewReader(nil))
)

// mustZstd unwraps a zstd constructor, which fails only for invalid options.
func mustZstd[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("zstd: %v", err))
	}
	return v
}

func zstdCompress(data []byte) []byte { return zstdEncoder.EncodeAll(data, nil) }

func zstdDecompress(data []byte) ([]byte, error) { return zstdDecoder.DecodeAll(data, nil) }
