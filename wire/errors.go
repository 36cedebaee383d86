package wire

import (
	"errors"
	"fmt"
)

// ErrFrameTooLarge means a frame's size prefix exceeds the configured maximum
// (socket.request.max.bytes); the body is never read into memory.
var ErrFrameTooLarge = errors.New("frame larger than the maximum request size")

// ErrNegativeSize means a frame's size prefix is negative.
var ErrNegativeSize = errors.New("frame with a negative size")

// ErrTruncatedHeader means a request frame ended inside its header.
var ErrTruncatedHeader = errors.New("request header is truncated")

// ErrUnknownAPIKey means a request named an API key that kmsg does not know.
var ErrUnknownAPIKey = errors.New("unknown API key")

// ErrTruncatedBatch means the data ends inside a record batch. A fetch response may end so: the broker
// sends whole batches up to the fetch size, and clients ignore the partial one after them.
var ErrTruncatedBatch = errors.New("record batch is truncated")

// ErrBatchLength means a batch's length field is below the minimum its format allows.
var ErrBatchLength = errors.New("record batch length is below the minimum")

// ErrUnsupportedMagic means a batch's magic byte is none of the message formats (0, 1 and 2).
var ErrUnsupportedMagic = errors.New("record batch magic is unknown")

// ErrCRCMismatch means a batch's CRC-32C does not match its bytes.
var ErrCRCMismatch = errors.New("record batch CRC mismatch")

// ErrUnknownCodec means a batch's attributes name a compression codec Kafka does not have.
var ErrUnknownCodec = errors.New("unknown compression codec")

// ErrCorruptRecords means a batch's records do not decompress or do not parse.
var ErrCorruptRecords = errors.New("record batch holds corrupt records")

// BatchError says why the data at Pos does not frame a record batch. Err is ErrTruncatedBatch,
// ErrBatchLength or ErrUnsupportedMagic; Length and Magic are -1 when the data ends before them.
type BatchError struct {
	Pos    int   // where the batch starts in the data read
	Avail  int   // bytes from Pos to the end of the data
	Length int32 // the batch's length field: the bytes after it
	Magic  int8  // the batch's magic byte
	Err    error
}

func (e *BatchError) Error() string {
	switch {
	case e.Err == ErrUnsupportedMagic:
		return fmt.Sprintf("batch at position %d has magic %d, which no message format has", e.Pos, e.Magic)
	case e.Err == ErrBatchLength:
		return fmt.Sprintf("batch at position %d has length %d, below the minimum %d", e.Pos, e.Length, minLength(e.Magic))
	case e.Length < 0:
		return fmt.Sprintf("%d trailing bytes at position %d are too short for a batch", e.Avail, e.Pos)
	default:
		return fmt.Sprintf("batch at position %d claims %d bytes but only %d remain", e.Pos, LogOverhead+int64(e.Length), e.Avail)
	}
}

func (e *BatchError) Unwrap() error { return e.Err }

// formatError is a description of bad bytes that unwraps to one of the Err values above, so callers can
// both print what is wrong and classify it.
type formatError struct {
	msg string
	err error
}

func (e *formatError) Error() string { return e.msg }
func (e *formatError) Unwrap() error { return e.err }

func formatErrorf(class error, format string, args ...any) error {
	return &formatError{msg: fmt.Sprintf(format, args...), err: class}
}
