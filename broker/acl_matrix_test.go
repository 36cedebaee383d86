package broker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
)

// aclMatrixCase is one request and the ACLs that decide its answer: a
// principal holding grant is served, and each denial's principal gets the
// denial's error.
type aclMatrixCase struct {
	name    string
	req     kmsg.Request
	version int16
	grant   []kmsg.CreateACLsRequestCreation
	denials []aclDenial
	// refused, when set, checks a denied answer instead of "every
	// ErrorCode of the response is the denial's": for the answers that
	// carry no error (DescribeLogDirs, authorized operations) or fields
	// the version does not send.
	refused func(kmsg.Response) error
	// served, when set, checks more of the granted principal's answer than
	// that it carries no authorization error.
	served func(kmsg.Response) error
}

// aclDenial is a principal holding only holds (nothing when empty), which
// gets code.
type aclDenial struct {
	holds []kmsg.CreateACLsRequestCreation
	code  int16
}

// allowACLs are Allows of each op on one resource, for a principal named
// later.
func allowACLs(typ kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, ops ...kmsg.ACLOperation) []kmsg.CreateACLsRequestCreation {
	var cs []kmsg.CreateACLsRequestCreation
	for _, op := range ops {
		cs = append(cs, aclCreation(typ, name, pattern, op, kmsg.ACLPermissionTypeAllow))
	}
	return cs
}

func groupACLs(name string, ops ...kmsg.ACLOperation) []kmsg.CreateACLsRequestCreation {
	return allowACLs(kmsg.ACLResourceTypeGroup, name, kmsg.ACLResourcePatternTypeLiteral, ops...)
}

func txnACLs(id string, ops ...kmsg.ACLOperation) []kmsg.CreateACLsRequestCreation {
	return allowACLs(kmsg.ACLResourceTypeTransactionalId, id, kmsg.ACLResourcePatternTypeLiteral, ops...)
}

func clusterACLs(ops ...kmsg.ACLOperation) []kmsg.CreateACLsRequestCreation {
	return allowACLs(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, ops...)
}

// clusterACLsExcept allows every cluster operation but ops (and ALL).
func clusterACLsExcept(ops ...kmsg.ACLOperation) []kmsg.CreateACLsRequestCreation {
	var rest []kmsg.ACLOperation
	for _, op := range []kmsg.ACLOperation{kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe} {
		if !slices.Contains(ops, op) {
			rest = append(rest, op)
		}
	}
	return clusterACLs(rest...)
}

// aclsString names each Allow of acls as "OPERATION on TYPE:pattern:name".
func aclsString(acls []kmsg.CreateACLsRequestCreation) string {
	if len(acls) == 0 {
		return "nothing"
	}
	var s []string
	for _, a := range acls {
		s = append(s, fmt.Sprintf("%v on %v:%v:%s", a.Operation, a.ResourceType, a.ResourcePatternType, a.ResourceName))
	}
	return strings.Join(s, ", ")
}

// authorizationFailures are the errors of a refused check.
var authorizationFailures = []int16{kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code,
	kerr.TransactionalIDAuthorizationFailed.Code, kerr.DelegationTokenAuthorizationFailed.Code}

// aclMatrixCovered are the APIs the broker serves whose checks other tests
// cover (acl_test.go, TestDelegationTokens) or that Kafka 2.8 does not
// authorize (ApiVersions, the SASL exchange, CreateDelegationToken,
// RenewDelegationToken and ExpireDelegationToken, whose owner or renewer
// checks are not ACLs).
var aclMatrixCovered = []kmsg.Key{
	kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets, kmsg.LeaderAndISR, kmsg.StopReplica, kmsg.UpdateMetadata,
	kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.ListGroups, kmsg.DeleteGroups, kmsg.OffsetDelete,
	kmsg.CreateTopics, kmsg.DeleteTopics, kmsg.DeleteRecords, kmsg.CreatePartitions, kmsg.OffsetForLeaderEpoch,
	kmsg.AddPartitionsToTxn, kmsg.TxnOffsetCommit, kmsg.DescribeProducers,
	kmsg.DescribeACLs, kmsg.CreateACLs, kmsg.DeleteACLs, kmsg.DescribeConfigs, kmsg.AlterConfigs, kmsg.IncrementalAlterConfigs,
	kmsg.CreateDelegationToken, kmsg.RenewDelegationToken, kmsg.ExpireDelegationToken, kmsg.DescribeDelegationToken,
	kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate,
}

// aclMatrix lists, for each remaining API, the check of Kafka 2.8.2's
// KafkaApis: the grant is exactly the operation and resource it asks
// for, and each denial a principal without it — with nothing, or with
// the operations next to it (on the resource, or the operation on a
// neighbouring resource) that do not imply it.
func aclMatrix(logDir string) []aclMatrixCase {
	const group, txn = "grp", "tx"
	gaf, taf, caf := kerr.GroupAuthorizationFailed.Code, kerr.TransactionalIDAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code
	// Near a group's READ: DESCRIBE and DELETE on it, READ on a neighbour
	// and on a prefix the name does not start with.
	nearGroupRead := slices.Concat(groupACLs(group, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete), groupACLs(group+"2", kmsg.ACLOperationRead),
		allowACLs(kmsg.ACLResourceTypeGroup, group+"-", kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationRead))
	groupRead := []aclDenial{{nil, gaf}, {nearGroupRead, gaf}}
	nearTxnWrite := slices.Concat(txnACLs(txn, kmsg.ACLOperationDescribe), txnACLs(txn+"2", kmsg.ACLOperationWrite), clusterACLs(kmsg.ACLOperationIdempotentWrite))
	txnWrite := []aclDenial{{nil, taf}, {nearTxnWrite, taf}}
	clusterAction := []aclDenial{{nil, caf}, {clusterACLsExcept(kmsg.ACLOperationClusterAction), caf}}
	clusterAlter := []aclDenial{{nil, caf}, {clusterACLsExcept(kmsg.ACLOperationAlter), caf}}
	clusterDescribe := []aclDenial{{nil, caf}, {clusterACLsExcept(kmsg.ACLOperationDescribe, kmsg.ACLOperationAlter), caf}}
	const describeOp = 1 << kmsg.ACLOperationDescribe

	join := rawJoin(group, "", 10000, "consumer", "range")
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = group, "m", 1
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	syncNoProtocol := kmsg.NewPtrSyncGroupRequest()
	syncNoProtocol.Group, syncNoProtocol.MemberID, syncNoProtocol.Generation = group, "m", 1
	heartbeat := kmsg.NewPtrHeartbeatRequest()
	heartbeat.Group, heartbeat.MemberID, heartbeat.Generation = group, "m", 1
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group, leave.Members = group, []kmsg.LeaveGroupRequestMember{{MemberID: "m"}}
	describeGroups := kmsg.NewPtrDescribeGroupsRequest()
	describeGroups.Groups, describeGroups.IncludeAuthorizedOperations = []string{group}, true

	initTxn := kmsg.NewPtrInitProducerIDRequest()
	initTxn.TransactionalID, initTxn.TransactionTimeoutMillis = kmsg.StringPtr(txn), 60000
	initIdempotent := kmsg.NewPtrInitProducerIDRequest()
	addOffsets := kmsg.NewPtrAddOffsetsToTxnRequest()
	addOffsets.TransactionalID, addOffsets.ProducerID, addOffsets.Group = txn, 1, group
	endTxn := kmsg.NewPtrEndTxnRequest()
	endTxn.TransactionalID, endTxn.ProducerID, endTxn.Commit = txn, 1, true
	markers := kmsg.NewPtrWriteTxnMarkersRequest()
	markers.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: 1, Committed: true,
		Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "t", Partitions: []int32{0, 1}}}}}

	// The controller's APIs, about a broker that does not exist.
	shutdown := kmsg.NewPtrControlledShutdownRequest()
	shutdown.BrokerID, shutdown.BrokerEpoch = 99, -1
	alterIsr := kmsg.NewPtrAlterPartitionRequest()
	alterIsr.BrokerID, alterIsr.BrokerEpoch = 99, -1
	alterIsr.Topics = []kmsg.AlterPartitionRequestTopic{{Topic: "t", Partitions: []kmsg.AlterPartitionRequestTopicPartition{{Partition: 0, NewISR: []int32{99}}}}}

	elect := kmsg.NewPtrElectLeadersRequest()
	elect.TimeoutMillis = 5000
	elect.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	reassign := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	reassign.TimeoutMillis = 5000
	reassign.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "t", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{1}}}}}
	listReassignments := kmsg.NewPtrListPartitionReassignmentsRequest()
	listReassignments.TimeoutMillis = 5000
	alterDirs := kmsg.NewPtrAlterReplicaLogDirsRequest()
	alterDirs.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{{Dir: logDir, Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: "t", Partitions: []int32{0, 1}}}}}
	describeDirs := kmsg.NewPtrDescribeLogDirsRequest()
	describeQuotas := kmsg.NewPtrDescribeClientQuotasRequest()
	alterQuotas := kmsg.NewPtrAlterClientQuotasRequest()
	alterQuotas.ValidateOnly = true
	alterQuotas.Entries = []kmsg.AlterClientQuotasRequestEntry{{
		Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr("q")}},
		Ops:    []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1024}},
	}}
	describeScram := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	alterScram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	alterScram.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "no-such-user", Mechanism: 1}}
	features := kmsg.NewPtrUpdateFeaturesRequest()
	features.TimeoutMillis = 5000
	features.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{{Feature: "no.such.feature", MaxVersionLevel: 1}}
	describeCluster := kmsg.NewPtrDescribeClusterRequest()
	describeCluster.IncludeClusterAuthorizedOperations = true
	metadata := kmsg.NewPtrMetadataRequest()
	metadata.Topics, metadata.IncludeClusterAuthorizedOperations = []kmsg.MetadataRequestTopic{}, true

	// clusterOperations checks the authorized operations of the cluster
	// DescribeCluster and Metadata answer: none without DESCRIBE, exactly
	// DESCRIBE for the principal granted only that.
	clusterOperations := func(want int32) func(kmsg.Response) error {
		return func(resp kmsg.Response) error {
			var got int32
			switch r := resp.(type) {
			case *kmsg.DescribeClusterResponse:
				got = r.ClusterAuthorizedOperations
			case *kmsg.MetadataResponse:
				got = r.AuthorizedOperations
			}
			if got != want {
				return fmt.Errorf("cluster authorized operations %#x, want %#x", got, want)
			}
			return nil
		}
	}

	return []aclMatrixCase{
		{name: "JoinGroup", req: join, version: 7, grant: groupACLs(group, kmsg.ACLOperationRead), denials: groupRead},
		{name: "SyncGroup", req: sync, version: 5, grant: groupACLs(group, kmsg.ACLOperationRead), denials: groupRead},
		// v5's protocol type and name are checked before the group.
		{name: "SyncGroup v5 without protocol", req: syncNoProtocol, version: 5, grant: groupACLs(group, kmsg.ACLOperationRead),
			denials: []aclDenial{{nil, kerr.InconsistentGroupProtocol.Code}}},
		{name: "Heartbeat", req: heartbeat, version: 4, grant: groupACLs(group, kmsg.ACLOperationRead), denials: groupRead},
		{name: "LeaveGroup", req: leave, version: 4, grant: groupACLs(group, kmsg.ACLOperationRead), denials: groupRead},
		{name: "DescribeGroups", req: describeGroups, version: 5, grant: groupACLs(group, kmsg.ACLOperationDescribe),
			denials: []aclDenial{{nil, gaf}, {slices.Concat(groupACLs(group+"2", kmsg.ACLOperationDescribe),
				allowACLs(kmsg.ACLResourceTypeGroup, group+"-", kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationRead)), gaf}},
			served: func(resp kmsg.Response) error {
				if g := resp.(*kmsg.DescribeGroupsResponse).Groups[0]; g.ErrorCode != 0 || g.AuthorizedOperations != describeOp {
					return fmt.Errorf("group described with %v, authorized operations %#x, want %#x", kerr.ErrorForCode(g.ErrorCode), g.AuthorizedOperations, describeOp)
				}
				return nil
			}},

		{name: "InitProducerId transactional", req: initTxn, version: 4, grant: txnACLs(txn, kmsg.ACLOperationWrite), denials: txnWrite},
		// An idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE
		// on any topic; READ on a topic or WRITE on a transactional id is not.
		{name: "InitProducerId idempotent by IDEMPOTENT_WRITE", req: initIdempotent, version: 4, grant: clusterACLs(kmsg.ACLOperationIdempotentWrite),
			denials: []aclDenial{{nil, caf}, {slices.Concat(clusterACLsExcept(kmsg.ACLOperationIdempotentWrite), txnACLs(txn, kmsg.ACLOperationWrite),
				allowACLs(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLOperationDescribe)), caf}}},
		{name: "InitProducerId idempotent by WRITE on a topic", req: initIdempotent, version: 4,
			grant: allowACLs(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationWrite)},
		{name: "AddOffsetsToTxn", req: addOffsets, version: 3, grant: slices.Concat(txnACLs(txn, kmsg.ACLOperationWrite), groupACLs(group, kmsg.ACLOperationRead)),
			denials: []aclDenial{{nil, taf}, {slices.Concat(nearTxnWrite, groupACLs(group, kmsg.ACLOperationRead)), taf},
				{slices.Concat(txnACLs(txn, kmsg.ACLOperationWrite), nearGroupRead), gaf}}},
		{name: "EndTxn", req: endTxn, version: 3, grant: txnACLs(txn, kmsg.ACLOperationWrite), denials: txnWrite},

		{name: "WriteTxnMarkers", req: markers, version: 1, grant: clusterACLs(kmsg.ACLOperationClusterAction), denials: clusterAction},
		{name: "ControlledShutdown", req: shutdown, version: 3, grant: clusterACLs(kmsg.ACLOperationClusterAction), denials: clusterAction},
		{name: "AlterIsr", req: alterIsr, version: 0, grant: clusterACLs(kmsg.ACLOperationClusterAction), denials: clusterAction},

		{name: "ElectLeaders", req: elect, version: 2, grant: clusterACLs(kmsg.ACLOperationAlter), denials: clusterAlter},
		// v0 has no top-level error: each partition asked carries it.
		{name: "ElectLeaders v0", req: elect, version: 0, grant: clusterACLs(kmsg.ACLOperationAlter), denials: clusterAlter,
			refused: func(resp kmsg.Response) error {
				var codes []int16
				for _, rt := range resp.(*kmsg.ElectLeadersResponse).Topics {
					for _, rp := range rt.Partitions {
						codes = append(codes, rp.ErrorCode)
					}
				}
				if !slices.Equal(codes, []int16{caf, caf}) {
					return fmt.Errorf("partition errors %v, want CLUSTER_AUTHORIZATION_FAILED on both", codes)
				}
				return nil
			}},
		// 2.8's getErrorResponse puts the error on every partition asked for too.
		{name: "AlterPartitionReassignments", req: reassign, version: 0, grant: clusterACLs(kmsg.ACLOperationAlter), denials: clusterAlter,
			refused: func(resp kmsg.Response) error {
				r := resp.(*kmsg.AlterPartitionAssignmentsResponse)
				if r.ErrorCode != caf || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].ErrorCode != caf {
					return fmt.Errorf("answer %+v, want %v at the top and on t-0", r, kerr.ErrorForCode(caf))
				}
				return nil
			}},
		{name: "ListPartitionReassignments", req: listReassignments, version: 0, grant: clusterACLs(kmsg.ACLOperationDescribe), denials: clusterDescribe},
		{name: "AlterReplicaLogDirs", req: alterDirs, version: 2, grant: clusterACLs(kmsg.ACLOperationAlter), denials: clusterAlter},
		// Without DESCRIBE, 2.8 describes no directory (and v0-2 have no
		// error code to say why).
		{name: "DescribeLogDirs", req: describeDirs, version: 2, grant: clusterACLs(kmsg.ACLOperationDescribe), denials: clusterDescribe,
			refused: func(resp kmsg.Response) error {
				if dirs := resp.(*kmsg.DescribeLogDirsResponse).Dirs; len(dirs) != 0 {
					return fmt.Errorf("%d log dirs described", len(dirs))
				}
				return nil
			},
			served: func(resp kmsg.Response) error {
				if dirs := resp.(*kmsg.DescribeLogDirsResponse).Dirs; len(dirs) != 1 || dirs[0].Dir != logDir {
					return fmt.Errorf("log dirs %+v, want %s", dirs, logDir)
				}
				return nil
			}},
		{name: "DescribeClientQuotas", req: describeQuotas, version: 1, grant: clusterACLs(kmsg.ACLOperationDescribeConfigs),
			denials: []aclDenial{{nil, caf}, {clusterACLsExcept(kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs), caf}}},
		{name: "AlterClientQuotas", req: alterQuotas, version: 1, grant: clusterACLs(kmsg.ACLOperationAlterConfigs),
			denials: []aclDenial{{nil, caf}, {clusterACLsExcept(kmsg.ACLOperationAlterConfigs), caf}}},
		{name: "DescribeUserScramCredentials", req: describeScram, version: 0, grant: clusterACLs(kmsg.ACLOperationDescribe), denials: clusterDescribe},
		{name: "AlterUserScramCredentials", req: alterScram, version: 0, grant: clusterACLs(kmsg.ACLOperationAlter), denials: clusterAlter},
		{name: "UpdateFeatures", req: features, version: 0, grant: clusterACLs(kmsg.ACLOperationAlter), denials: clusterAlter},
		// Served to anyone; only the cluster's authorized operations need
		// DESCRIBE, and are 0 without it.
		{name: "DescribeCluster", req: describeCluster, version: 0, grant: clusterACLs(kmsg.ACLOperationDescribe), denials: clusterDescribe,
			refused: clusterOperations(0), served: clusterOperations(describeOp)},
		{name: "Metadata v10 cluster operations", req: metadata, version: 10, grant: clusterACLs(kmsg.ACLOperationDescribe), denials: clusterDescribe,
			refused: clusterOperations(0), served: clusterOperations(describeOp)},
	}
}

// TestACLMatrix checks, on one broker with the AclAuthorizer (and no
// allow.everyone.if.no.acl.found), the authorization of every API
// TestACLEnforcement and TestACLEnforcementTopicAPIs leave out, as Kafka
// 2.8.2's KafkaApis: each case's principals log in with SASL/PLAIN, one
// holding exactly the operation the API checks, served, and the others
// holding nothing or only neighbouring operations, answered the API's
// authorization error in its own shape. Every API ApiVersions advertises
// is in the matrix or covered elsewhere.
func TestACLMatrix(t *testing.T) {
	logDir := t.TempDir()
	cases := aclMatrix(logDir)

	// A user per granted and per denied principal, "nobody" for those
	// holding nothing.
	jaas := []string{`org.apache.kafka.common.security.plain.PlainLoginModule required user_nobody="nobody-secret"`}
	var acls []kmsg.CreateACLsRequestCreation
	user := func(name string, holds []kmsg.CreateACLsRequestCreation) string {
		if len(holds) == 0 {
			return "nobody"
		}
		jaas = append(jaas, fmt.Sprintf("user_%s=%q", name, name+"-secret"))
		for _, a := range holds {
			a.Principal = "User:" + name
			acls = append(acls, a)
		}
		return name
	}
	granted := make([]string, len(cases))
	denied := make([][]string, len(cases))
	for i, tc := range cases {
		granted[i] = user(fmt.Sprintf("granted%d", i), tc.grant)
		for j, d := range tc.denials {
			denied[i] = append(denied[i], user(fmt.Sprintf("denied%d_%d", i, j), d.holds))
		}
	}
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": strings.Join(jaas, " ") + ";",
		"log.dirs":                                 logDir,
		"authorizer.class.name":                    "kafka.security.authorizer.AclAuthorizer",
		"super.users":                              "User:ANONYMOUS", // the harness and the broker itself, on PLAINTEXT
		"offsets.topic.num.partitions":             "1",
		"transaction.state.log.num.partitions":     "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
	}})
	// The coordinators of the group and the transactional id, loaded, so
	// the granted principals' requests reach them.
	c.WaitFor("the group and transaction coordinators", func() bool {
		for typ, key := range []string{"grp", "tx"} {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.CoordinatorKey, fc.CoordinatorType = key, int8(typ)
			if raw(t, c.Addr(1), fc, 3).(*kmsg.FindCoordinatorResponse).ErrorCode != 0 {
				return false
			}
		}
		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups = []string{"grp"}
		return raw(t, c.Addr(1), dg, 5).(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode == 0
	})
	addr, _ := c.Broker(1).ListenerAddr("SASL_PLAINTEXT")
	for i, r := range createACLs(t, c.Addr(1), acls...) {
		if r.ErrorCode != 0 {
			t.Fatalf("ACL %d (%+v): %s", i, acls[i], kerr.ErrorForCode(r.ErrorCode))
		}
	}

	advertised := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range raw(t, c.Addr(1), kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse).ApiKeys {
		advertised[k.ApiKey] = k
	}
	inMatrix := map[int16]bool{}
	for _, tc := range cases {
		if k, ok := advertised[tc.req.Key()]; !ok || tc.version < k.MinVersion || tc.version > k.MaxVersion {
			t.Errorf("%s: v%d is not advertised", tc.name, tc.version)
		}
		inMatrix[tc.req.Key()] = true
	}
	for k := range advertised {
		if !inMatrix[k] && !slices.Contains(aclMatrixCovered, kmsg.Key(k)) {
			t.Errorf("%s (%d) is served but neither in the matrix nor covered elsewhere", kmsg.NameForKey(k), k)
		}
	}

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for j, d := range tc.denials {
				name := denied[i][j]
				resp := saslRaw(t, addr, mechanism("PLAIN", name, name+"-secret"), tc.req, tc.version)
				if tc.refused != nil {
					if err := tc.refused(resp); err != nil {
						t.Errorf("%s holding %s: %v", name, aclsString(d.holds), err)
					}
					continue
				}
				codes := broker.ErrorCodes(resp)
				if len(codes) == 0 || slices.ContainsFunc(codes, func(c int16) bool { return c != d.code }) {
					t.Errorf("%s holding %s: errors %v, want %v everywhere", name, aclsString(d.holds), codes, kerr.ErrorForCode(d.code))
				}
			}
			resp := saslRaw(t, addr, mechanism("PLAIN", granted[i], granted[i]+"-secret"), tc.req, tc.version)
			if codes := broker.ErrorCodes(resp); slices.ContainsFunc(codes, func(c int16) bool { return slices.Contains(authorizationFailures, c) }) {
				t.Errorf("%s holding %s: refused, errors %v", granted[i], aclsString(tc.grant), codes)
			}
			if tc.served != nil {
				if err := tc.served(resp); err != nil {
					t.Errorf("%s holding %s: %v", granted[i], aclsString(tc.grant), err)
				}
			}
		})
	}
}
