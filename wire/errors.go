package wire

import "errors"

// ErrFrameTooLarge means a frame's size prefix exceeds the configured maximum
// (socket.request.max.bytes); the body is never read into memory.
var ErrFrameTooLarge = errors.New("frame larger than the maximum request size")

// ErrNegativeSize means a frame's size prefix is negative.
var ErrNegativeSize = errors.New("frame with a negative size")

// ErrTruncatedHeader means a request frame ended inside its header.
var ErrTruncatedHeader = errors.New("request header is truncated")

// ErrUnknownAPIKey means a request named an API key that kmsg does not know.
var ErrUnknownAPIKey = errors.New("unknown API key")
