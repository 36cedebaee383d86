package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// ReadFrame reads one size-prefixed frame. A size above maxSize fails with
// ErrFrameTooLarge before any of the body is read, so a hostile size prefix
// cannot make the caller allocate.
func ReadFrame(r io.Reader, maxSize int32) ([]byte, error) {
	size, err := ReadFrameSize(r, maxSize)
	if err != nil {
		return nil, err
	}
	return ReadFrameBody(r, size)
}

// ReadFrameSize reads a frame's size prefix and checks it against maxSize,
// so a caller can account for the body's memory before ReadFrameBody reads
// it, as Kafka's memory pool does (queued.max.request.bytes).
func ReadFrameSize(r io.Reader, maxSize int32) (int32, error) {
	var sizeBuf [4]byte
	if _, err := io.ReadFull(r, sizeBuf[:]); err != nil {
		return 0, err
	}
	size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
	switch {
	case size < 0:
		return 0, fmt.Errorf("size %d: %w", size, ErrNegativeSize)
	case size > maxSize:
		return 0, fmt.Errorf("size %d over %d: %w", size, maxSize, ErrFrameTooLarge)
	}
	return size, nil
}

// ReadFrameBody reads a frame body of the size ReadFrameSize returned.
func ReadFrameBody(r io.Reader, size int32) ([]byte, error) {
	if size <= eagerAllocation {
		return ReadFrameBodyInto(r, size, make([]byte, size))
	}
	// A large size is only a claim: the body is read in pooled chunks as bytes
	// really arrive, so a peer that sends a size and stalls pins no more than
	// it sent, and the frame is allocated once, whole, when it is all here.
	// (Growing one buffer cleared and copied each doubling: a fifth of a
	// leader's CPU under produce load.)
	var chunks []*[]byte
	defer func() {
		for _, c := range chunks {
			chunkPool.Put(c)
		}
	}()
	for read := 0; read < int(size); {
		c := chunkPool.Get().(*[]byte)
		chunks = append(chunks, c)
		n, err := io.ReadFull(r, (*c)[:min(int(size)-read, len(*c))])
		read += n
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	buf := make([]byte, 0, size)
	for _, c := range chunks {
		buf = append(buf, (*c)[:min(int(size)-len(buf), len(*c))]...)
	}
	return buf, nil
}

// ReadFrameBodyInto is ReadFrameBody into spare when the body fits in it,
// so that a reader done with each frame before it reads the next can read
// them all into one buffer; a larger body is read as ReadFrameBody reads it.
func ReadFrameBodyInto(r io.Reader, size int32, spare []byte) ([]byte, error) {
	if int(size) > cap(spare) {
		return ReadFrameBody(r, size)
	}
	buf := spare[:size]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// chunkPool holds the buffers ReadFrameBody reads large frames into.
var chunkPool = sync.Pool{New: func() any {
	c := make([]byte, eagerAllocation)
	return &c
}}

// eagerAllocation is the largest frame body allocated before it is read.
const eagerAllocation = 1 << 20

// appendSize writes the final frame size into the 4 bytes reserved at start.
func appendSize(buf []byte, start int) []byte {
	binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-4))
	return buf
}
