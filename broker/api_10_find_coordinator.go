package broker

// FindCoordinator (key 10), versions 0–4. This API and OffsetFetch go one
// version past Kafka 2.8 because issue 5 asks for batched coordinator lookups
// (KIP-699, Kafka 3.0); every other API stays at Kafka 2.8's maximum. The
// broker advertises v4 only with zkafka.batched.coordinator.apis.enable=true;
// by default it stops at 2.8's v3.
//
//	v0: the group's coordinator: node id, host, port
//	v1: coordinator type (0 group, 1 transaction), throttle time, error message
//	v2: same as v1
//	v3: flexible
//	v4: batched (KIP-699): many keys of one type, each answered on its own
//	    with its key, coordinator and error
//
// A group's coordinator is the leader of its __consumer_offsets partition,
// abs(javaHashCode(group)) % offsets.topic.num.partitions. The first request
// creates the topic; until its leaders are elected the answer is
// COORDINATOR_NOT_AVAILABLE and clients retry. A key whose partition has no
// live leader gets COORDINATOR_NOT_AVAILABLE while the other keys of the batch
// are answered. As in Kafka, the empty group id is a valid key (the offset
// APIs accept it). A transactional id (key type 1) works the same way over
// __transaction_state, abs(javaHashCode(id)) %
// transaction.state.log.num.partitions, created on first use.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchedFindCoordinatorVersion is the first version carrying many keys.
const batchedFindCoordinatorVersion = 4

var findCoordinatorAPI = api{
	key: 10, min: 0, max: batchedFindCoordinatorVersion,
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.findCoordinatorDenied(r, r.body.(*kmsg.FindCoordinatorRequest)); resp != nil {
			return resp
		}
		return s.handleFindCoordinator(r, r.body.(*kmsg.FindCoordinatorRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		fc := req.(*kmsg.FindCoordinatorRequest)
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		if fc.Version >= batchedFindCoordinatorVersion {
			for _, key := range fc.CoordinatorKeys {
				resp.Coordinators = append(resp.Coordinators, coordinatorEntry(key, -1, "", -1, code))
			}
			return resp
		}
		resp.ErrorCode, resp.NodeID, resp.Port = code, -1, -1
		return resp
	},
}

// handleFindCoordinator answers each key of a batched (v4) request with
// GROUP_AUTHORIZATION_FAILED or TRANSACTIONAL_ID_AUTHORIZATION_FAILED when
// the principal may not DESCRIBE it, as Kafka 3.0; findCoordinatorDenied
// checks the one key of older versions.
func (s *Server) handleFindCoordinator(r *request, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	listener := r.listener
	if req.Version >= batchedFindCoordinatorVersion {
		for _, key := range req.CoordinatorKeys {
			if code := s.coordinatorKeyDenied(r, req.CoordinatorType, key); code != 0 {
				resp.Coordinators = append(resp.Coordinators, coordinatorEntry(key, -1, "", -1, code))
				continue
			}
			id, host, port, err := s.findCoordinator(req.CoordinatorType, key, listener)
			resp.Coordinators = append(resp.Coordinators, coordinatorEntry(key, id, host, port, errorCode(err)))
		}
		return resp
	}
	var err error
	resp.NodeID, resp.Host, resp.Port, err = s.findCoordinator(req.CoordinatorType, req.CoordinatorKey, listener)
	resp.ErrorCode = errorCode(err)
	if req.Version >= 1 {
		resp.ErrorMessage = groupErrorString(resp.ErrorCode)
	}
	return resp
}

// findCoordinator returns the coordinator of one key of the given type.
func (s *Server) findCoordinator(keyType int8, key, listener string) (id int32, host string, port int32, err error) {
	switch keyType {
	case 0:
		return s.coordinatorNode(s.offsetsTopicSpec(), s.groupCoordinator.PartitionFor(key), listener)
	case 1:
		return s.coordinatorNode(s.transactionTopicSpec(), s.txnCoordinator.PartitionFor(key), listener)
	default:
		return -1, "", -1, kerr.InvalidRequest
	}
}

func coordinatorEntry(key string, id int32, host string, port int32, code int16) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Host, c.Port = key, id, host, port
	c.ErrorCode, c.ErrorMessage = code, groupErrorString(code)
	return c
}
