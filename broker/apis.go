package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

// api is one Kafka API this broker serves: its supported version range (what
// ApiVersions advertises) and its handler. Each lives in api_NN_name.go.
type api struct {
	key      int16
	min, max int16
	// handle answers a request of a supported version; a nil response means
	// no response is sent (Produce with acks=0).
	handle func(ctx context.Context, s *Server, r *request) kmsg.Response
	// errorResponse answers a request of an unsupported version with code on
	// every entry, in the request's own shape.
	errorResponse func(req kmsg.Request, code int16) kmsg.Response
}

// apiTable lists every API the broker serves, with every version it can
// serve. Minimum versions are those the v2 record-batch format allows
// (Produce from v3, Fetch from v4); maxima are Kafka 2.8's, except
// FindCoordinator v4 and OffsetFetch v8 (Kafka 3.0's batched forms, which
// issue 5 asks for; advertisedAPIs hides them by default), and KIP-848's
// consumer protocol: ConsumerGroupHeartbeat, ConsumerGroupDescribe and
// OffsetCommit v9 (Kafka 4.0's, hidden unless enabled).
func apiTable() map[int16]api {
	apis := []api{
		produceAPI,
		fetchAPI,
		listOffsetsAPI,
		metadataAPI,
		leaderAndIsrAPI,
		stopReplicaAPI,
		updateMetadataAPI,
		controlledShutdownAPI,
		alterIsrAPI,
		apiVersionsAPI,
		saslHandshakeAPI,
		saslAuthenticateAPI,
		createTopicsAPI,
		describeConfigsAPI,
		alterConfigsAPI,
		incrementalAlterConfigsAPI,
		deleteTopicsAPI,
		deleteRecordsAPI,
		alterReplicaLogDirsAPI,
		describeLogDirsAPI,
		describeClientQuotasAPI,
		alterClientQuotasAPI,
		describeUserScramCredentialsAPI,
		alterUserScramCredentialsAPI,
		createDelegationTokenAPI,
		renewDelegationTokenAPI,
		expireDelegationTokenAPI,
		describeDelegationTokenAPI,
		createPartitionsAPI,
		electLeadersAPI,
		alterPartitionReassignmentsAPI,
		listPartitionReassignmentsAPI,
		offsetForLeaderEpochAPI,
		initProducerIDAPI,
		addPartitionsToTxnAPI,
		addOffsetsToTxnAPI,
		endTxnAPI,
		writeTxnMarkersAPI,
		txnOffsetCommitAPI,
		describeProducersAPI,
		describeClusterAPI,
		updateFeaturesAPI,
		describeACLsAPI,
		createACLsAPI,
		deleteACLsAPI,
		offsetCommitAPI,
		offsetFetchAPI,
		findCoordinatorAPI,
		joinGroupAPI,
		heartbeatAPI,
		leaveGroupAPI,
		syncGroupAPI,
		describeGroupsAPI,
		listGroupsAPI,
		deleteGroupsAPI,
		offsetDeleteAPI,
		consumerGroupHeartbeatAPI,
		consumerGroupDescribeAPI,
	}
	m := make(map[int16]api, len(apis))
	for _, a := range apis {
		m[a.key] = a
	}
	return m
}

// advertisedAPIs is apiTable as the broker advertises it: FindCoordinator
// and OffsetFetch stop at Kafka 2.8's maxima unless batched (the
// zkafka.batched.coordinator.apis.enable switch) lets clients use Kafka
// 3.0's batched versions, and the consumer protocol's APIs are left out
// unless consumerProtocol (group.coordinator.rebalance.protocols has
// consumer), OffsetCommit then going to v9, which its members commit with.
func advertisedAPIs(batched, consumerProtocol bool) map[int16]api {
	m := apiTable()
	if !consumerProtocol {
		delete(m, consumerGroupHeartbeatAPI.key)
		delete(m, consumerGroupDescribeAPI.key)
		a := m[offsetCommitAPI.key]
		a.max = maxVersion(offsetCommitAPI.key)
		m[offsetCommitAPI.key] = a
	}
	if !batched {
		for _, key := range []int16{findCoordinatorAPI.key, offsetFetchAPI.key} {
			a := m[key]
			a.max = maxVersion(key)
			m[key] = a
		}
	}
	return m
}

func (s *Server) supported(key, version int16) bool {
	a, ok := s.apis[key]
	return ok && version >= a.min && version <= a.max
}

// unsupportedVersion answers a request whose version this broker does not
// serve with UNSUPPORTED_VERSION. ApiVersions gets Kafka's KIP-511 answer;
// an API the broker does not serve, or a version it cannot even decode, gets
// nil and the caller answers with a bare error code.
func (s *Server) unsupportedVersion(h wire.RequestHeader, req kmsg.Request) kmsg.Response {
	a, ok := s.apis[h.APIKey]
	switch {
	case h.APIKey == apiVersionsAPI.key:
		return s.apiVersionsResponse(0, kerr.UnsupportedVersion.Code)
	case !ok || h.APIVersion > req.MaxVersion():
		return nil
	}
	return a.errorResponse(req, kerr.UnsupportedVersion.Code)
}
