package storage

import (
	"fmt"
	"io"
	"os"
)

// FileRecords is a stretch of whole record batches left in a segment file (Kafka's FileRecords slice):
// what Log.ReadFileRecords found, sent from the file to a socket or read into memory. It holds its own
// descriptor of the file, so retention or truncation closing the segment cannot pull it away; Close
// releases it. The zero value is empty.
type FileRecords struct {
	f          *os.File
	pos        int64
	size       int
	lastOffset int64
}

// Len is the size of the batches in bytes.
func (r *FileRecords) Len() int { return r.size }

// LastOffset is the last offset in the batches, or -1 when there are none.
func (r *FileRecords) LastOffset() int64 { return r.lastOffset }

// File is the segment file and the position of the batches in it.
func (r *FileRecords) File() (*os.File, int64) { return r.f, r.pos }

// Bytes reads the batches into memory.
func (r *FileRecords) Bytes() ([]byte, error) {
	buf := make([]byte, r.size)
	if r.size == 0 {
		return buf, nil
	}
	if n, err := r.f.ReadAt(buf, r.pos); n < r.size {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // truncated since it was found
		}
		return nil, fmt.Errorf("read %d bytes at %d of %s: %w", r.size, r.pos, r.f.Name(), err)
	}
	return buf, nil
}

// Close releases the descriptor.
func (r *FileRecords) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
