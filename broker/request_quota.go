package broker

// Request quotas (Kafka's ClientRequestQuotaManager): request_percentage is
// a share of one handler thread's time, in percent. Each request's handler
// time — its work, without the waits (reqclock) — is recorded against the
// quota that applies to the client as percent-seconds, when its response is
// made; above the quota the response's throttle_time_ms is the larger of
// this throttle and any byte-rate one, and the listener mutes the
// connection for it. A consumer fetch records its time before it answers,
// so a throttled one gets an empty response as in Kafka. Requests between
// brokers (the cluster actions, a follower's fetch) and an acks=0 produce,
// which gets no response, are exempt, as 2.8's sendResponseExemptThrottle.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/quota"
)

// exemptFromRequestQuota reports whether Kafka 2.8 answers r without
// recording it against the request quota.
func exemptFromRequestQuota(r *request) bool {
	switch req := r.body.(type) {
	case *kmsg.LeaderAndISRRequest, *kmsg.StopReplicaRequest, *kmsg.UpdateMetadataRequest,
		*kmsg.ControlledShutdownRequest, *kmsg.WriteTxnMarkersRequest, *kmsg.AlterPartitionRequest:
		return true
	case *kmsg.FetchRequest:
		return req.ReplicaID >= 0
	case *kmsg.ProduceRequest:
		return req.Acks == 0
	}
	return false
}

// recordRequestTime records the request's handler time so far against the
// client's request_percentage quota, once per request, and returns how
// long the client is throttled for it.
func (s *Server) recordRequestTime(r *request) time.Duration {
	if r.clock == nil || r.requestTimeRecorded || exemptFromRequestQuota(r) {
		return 0
	}
	r.requestTimeRecorded = true
	q, ok := s.clientQuotas.Lookup(quota.Request, r.principal().Name, r.clientID())
	if !ok {
		return 0
	}
	d := q.Record(r.clock.Busy().Seconds() * 100)
	r.throttle(d)
	return d
}

// applyRequestQuota records a handled request's time (unless its handler
// did) and puts the resulting throttle in its response when it is longer
// than the one there.
func (s *Server) applyRequestQuota(r *request, resp kmsg.Response) {
	d := s.recordRequestTime(r)
	tr, ok := resp.(kmsg.ThrottleResponse)
	if d == 0 || !ok {
		return
	}
	if ms, _ := tr.Throttle(); throttleMillis(d) > ms {
		resp.(kmsg.SetThrottleResponse).SetThrottle(throttleMillis(d))
	}
}
