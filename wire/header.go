package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestHeader is the decoded Kafka request header.
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      *string
	// Flexible reports whether the header used v2 (tagged fields). It follows
	// from the key and version, and decides the response header version.
	Flexible bool
}

// requestHeaderVersion returns 0, 1 or 2. ControlledShutdown v0 is the one API
// that still sends header v0 (no client id).
func requestHeaderVersion(key, version int16, flexible bool) int {
	switch {
	case key == 7 && version == 0:
		return 0
	case flexible:
		return 2
	default:
		return 1
	}
}

// ParseRequest decodes the header and body of one request frame. For an API key
// kmsg does not know it returns the header and ErrUnknownAPIKey; for a version
// kmsg cannot decode it returns the header, a request of that key with the
// version set, and an error, so the caller can answer UNSUPPORTED_VERSION.
func ParseRequest(frame []byte) (RequestHeader, kmsg.Request, error) {
	var h RequestHeader
	if len(frame) < 8 {
		return h, nil, ErrTruncatedHeader
	}
	h.APIKey = int16(binary.BigEndian.Uint16(frame[0:]))
	h.APIVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	req := kmsg.RequestForKey(h.APIKey)
	if req == nil {
		// A best-effort client id read keeps logs useful; the header shape of
		// an unknown key is assumed to be v1.
		h.ClientID, _ = readClientID(frame[8:])
		return h, nil, fmt.Errorf("key %d: %w", h.APIKey, ErrUnknownAPIKey)
	}
	req.SetVersion(h.APIVersion)
	h.Flexible = req.IsFlexible()
	body := frame[8:]
	if requestHeaderVersion(h.APIKey, h.APIVersion, h.Flexible) >= 1 {
		id, rest := readClientID(body)
		if rest == nil {
			return h, req, ErrTruncatedHeader
		}
		h.ClientID, body = id, rest
	}
	if h.APIVersion < 0 || h.APIVersion > req.MaxVersion() {
		return h, req, fmt.Errorf("%s v%d: version unknown to the protocol library", kmsg.NameForKey(h.APIKey), h.APIVersion)
	}
	if h.Flexible {
		rest, err := skipTags(body)
		if err != nil {
			return h, req, err
		}
		body = rest
	}
	if err := req.ReadFrom(body); err != nil {
		return h, req, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(h.APIKey), h.APIVersion, err)
	}
	return h, req, nil
}

// readClientID reads a nullable int16-length string; rest is nil when the
// input is too short.
func readClientID(b []byte) (*string, []byte) {
	if len(b) < 2 {
		return nil, nil
	}
	n := int16(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n < 0 {
		return nil, b
	}
	if int(n) > len(b) {
		return nil, nil
	}
	s := string(b[:n])
	return &s, b[n:]
}

// skipTags skips a tagged-field section (uvarint count, then per field a
// uvarint tag, uvarint size and the bytes).
func skipTags(b []byte) ([]byte, error) {
	n, used := binary.Uvarint(b)
	if used <= 0 {
		return nil, ErrTruncatedHeader
	}
	b = b[used:]
	for range n {
		if _, used = binary.Uvarint(b); used <= 0 {
			return nil, ErrTruncatedHeader
		}
		b = b[used:]
		size, used := binary.Uvarint(b)
		if used <= 0 || uint64(len(b)-used) < size {
			return nil, ErrTruncatedHeader
		}
		b = b[used+int(size):]
	}
	return b, nil
}

// AppendResponse appends a size-prefixed response frame: the response header
// (v1 with an empty tagged-field section for flexible versions, except for
// ApiVersions, which always answers with header v0) and the body.
func AppendResponse(dst []byte, h RequestHeader, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.CorrelationID))
	if resp.IsFlexible() && resp.Key() != 18 {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	return appendSize(dst, start)
}

// AppendErrorOnly answers a request the server cannot decode into any response
// type (an unknown API key) with the correlation id and a bare error code, the
// shape of an ApiVersions v0 error, so a client at least reads a failure.
func AppendErrorOnly(dst []byte, correlationID int32, code int16) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(code))
	return appendSize(dst, start)
}

// AppendRequest appends a size-prefixed request frame for req at its current
// version.
func AppendRequest(dst []byte, correlationID int32, clientID string, req kmsg.Request) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	hv := requestHeaderVersion(req.Key(), req.GetVersion(), req.IsFlexible())
	if hv >= 1 {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(clientID)))
		dst = append(dst, clientID...)
	}
	if hv == 2 {
		dst = append(dst, 0)
	}
	dst = req.AppendTo(dst)
	return appendSize(dst, start)
}
