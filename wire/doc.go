// Package wire is the one place where Kafka protocol bytes meet the network.
//
// It owns framing (a 4-byte big-endian size before every request and response),
// the request header (v0, v1 with client id, v2 with tagged fields) and response
// header (v0, v1 with tagged fields; ApiVersions always answers with v0), and
// decoding of request bodies through franz-go's kmsg. The broker's listener reads
// frames with ReadFrame, turns them into typed requests with ParseRequest and
// writes answers with AppendResponse. The controller's channel to brokers, the
// tools and tests use Client, which dials a broker, negotiates versions with
// ApiVersions and then sends one request at a time.
//
// Data flow on the server side:
//
//	conn → ReadFrame (size checked before the body is read) → ParseRequest
//	     → handler → AppendResponse → conn
package wire
