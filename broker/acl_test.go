package broker_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

func aclCreation(typ kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = typ, name, pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = "User:ANONYMOUS", "*", op, perm
	return c
}

func createACLs(t *testing.T, addr string, cs ...kmsg.CreateACLsRequestCreation) []kmsg.CreateACLsResponseResult {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = cs
	return raw(t, addr, req, 2).(*kmsg.CreateACLsResponse).Results
}

// TestACLEnforcement runs a two-broker cluster with the AclAuthorizer and
// allow.everyone.if.no.acl.found (so the brokers, User:ANONYMOUS on a
// PLAINTEXT listener as in Kafka, may talk to each other until an ACL names
// the cluster), grants and denies User:ANONYMOUS itself through broker 1's
// CreateAcls and checks broker 2's answers once the change notification
// reached it: deny beats allow, an Allow of READ implies DESCRIBE, prefixed
// and literal patterns, groups, the inter-broker APIs' CLUSTER_ACTION (with
// the replica left in place), and the ACL APIs' own cluster checks.
func TestACLEnforcement(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: map[string]string{
		"authorizer.class.name":          "kafka.security.authorizer.AclAuthorizer",
		"allow.everyone.if.no.acl.found": "true",
	}})
	c.WaitForController()
	b1, b2 := c.Addr(1), c.Addr(2)
	for _, topic := range []string{"t", "secret-x"} {
		if code := createTopicRaw(t, b1, topic, 1); code != 0 {
			t.Fatalf("create %s: %s", topic, kerr.ErrorForCode(code))
		}
		c.WaitForLeader(topic, 0)
	}
	for i, r := range createACLs(t, b1,
		aclCreation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeDeny),
		aclCreation(kmsg.ACLResourceTypeTopic, "secret-", kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeDeny),
		aclCreation(kmsg.ACLResourceTypeGroup, "g", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeDeny),
		aclCreation(kmsg.ACLResourceTypeCluster, "other", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationAlter, kmsg.ACLPermissionTypeAllow),
	) {
		if want := int16(0); i == 3 {
			want = kerr.InvalidRequest.Code
			if r.ErrorCode != want {
				t.Errorf("a Cluster ACL not on kafka-cluster: %s", kerr.ErrorForCode(r.ErrorCode))
			}
		} else if r.ErrorCode != want {
			t.Fatalf("creation %d: %s", i, kerr.ErrorForCode(r.ErrorCode))
		}
	}

	metadataCode := func(addr, topic string) int16 {
		req := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		req.Topics = []kmsg.MetadataRequestTopic{mt}
		return raw(t, addr, req, 9).(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}
	// Only a Deny of READ on t: DESCRIBE has no Allow, so t is hidden.
	wait.For(t, 10*time.Second, "broker 2 to enforce broker 1's ACLs", func() bool {
		return metadataCode(b2, "t") == kerr.TopicAuthorizationFailed.Code
	})
	// A prefixed Deny of WRITE, from the other change store: no Allow of
	// anything implying DESCRIBE either.
	wait.For(t, 10*time.Second, "secret-x hidden by its prefixed ACL", func() bool {
		return metadataCode(b2, "secret-x") == kerr.TopicAuthorizationFailed.Code
	})
	// An Allow of READ implies DESCRIBE, but the Deny of READ still wins.
	createACLs(t, b2, aclCreation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow))
	wait.For(t, 10*time.Second, "broker 1 to see broker 2's ACL", func() bool { return metadataCode(b1, "t") == 0 })

	fetch := kmsg.NewPtrFetchRequest()
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1024
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	if code := raw(t, b1, fetch, 11).(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("Fetch of t with READ denied and allowed: %s", kerr.ErrorForCode(code))
	}

	produce := kmsg.NewPtrProduceRequest()
	produce.Acks, produce.TimeoutMillis = 1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "secret-x"
	pt.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0}}
	produce.Topics = []kmsg.ProduceRequestTopic{pt}
	if code := raw(t, b1, produce, 8).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("Produce to secret-x under a prefixed WRITE deny: %s", kerr.ErrorForCode(code))
	}
	join := rawJoin("g", "", 10000, "consumer", "range")
	if code := raw(t, b1, join, 5).(*kmsg.JoinGroupResponse).ErrorCode; code != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("JoinGroup of g with READ denied: %s", kerr.ErrorForCode(code))
	}

	// The cluster: ANONYMOUS may ALTER (the ACL APIs) but not CLUSTER_ACTION.
	createACLs(t, b1,
		aclCreation(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationAlter, kmsg.ACLPermissionTypeAllow),
		aclCreation(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationClusterAction, kmsg.ACLPermissionTypeDeny))
	leader := c.WaitForLeader("t", 0)
	addr := c.Addr(leader)
	stop := kmsg.NewPtrStopReplicaRequest()
	stop.ControllerID, stop.ControllerEpoch, stop.BrokerEpoch = 1, 1_000_000, -1
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic, st.Partitions = "t", []int32{0}
	st.PartitionStates = []kmsg.StopReplicaRequestTopicPartitionState{{Partition: 0, LeaderEpoch: -2, Delete: true}}
	stop.Topics = []kmsg.StopReplicaRequestTopic{st}
	wait.For(t, 10*time.Second, "StopReplica refused for lack of CLUSTER_ACTION", func() bool {
		return raw(t, addr, stop, 3).(*kmsg.StopReplicaResponse).ErrorCode == kerr.ClusterAuthorizationFailed.Code
	})
	if _, err := os.Stat(filepath.Join(c.Properties(leader)["log.dirs"], "t-0")); err != nil {
		t.Errorf("the refused StopReplica touched the replica: %v", err)
	}
	for key, req := range map[string]kmsg.Request{"LeaderAndIsr": kmsg.NewPtrLeaderAndISRRequest(), "UpdateMetadata": kmsg.NewPtrUpdateMetadataRequest()} {
		resp := raw(t, addr, req, 1)
		var code int16
		switch r := resp.(type) {
		case *kmsg.LeaderAndISRResponse:
			code = r.ErrorCode
		case *kmsg.UpdateMetadataResponse:
			code = r.ErrorCode
		}
		if code != kerr.ClusterAuthorizationFailed.Code {
			t.Errorf("%s without CLUSTER_ACTION: %s", key, kerr.ErrorForCode(code))
		}
	}
	// DescribeAcls needs DESCRIBE on the cluster, which ALTER implies.
	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.ResourceType, describe.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	dr := raw(t, addr, describe, 2).(*kmsg.DescribeACLsResponse)
	if dr.ErrorCode != 0 || len(dr.Resources) != 4 {
		t.Errorf("DescribeAcls: %s, %d resources, want 4", kerr.ErrorForCode(dr.ErrorCode), len(dr.Resources))
	}

	// Lift the deny, so the brokers may shut down in a controlled way.
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeCluster, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationClusterAction, kmsg.ACLPermissionTypeAny
	del.Filters = []kmsg.DeleteACLsRequestFilter{f}
	res := raw(t, b1, del, 2).(*kmsg.DeleteACLsResponse).Results
	if len(res) != 1 || len(res[0].MatchingACLs) != 1 || res[0].MatchingACLs[0].ErrorCode != 0 {
		t.Fatalf("DeleteAcls: %+v", res)
	}
	// The cluster resource now only allows ALTER: DESCRIBE is implied, a
	// DeleteAcls still passes, and CLUSTER_ACTION has no Allow — so grant it.
	createACLs(t, b1, aclCreation(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationClusterAction, kmsg.ACLPermissionTypeAllow))
}

// TestACLAPIsWithoutAuthorizer: without authorizer.class.name the ACL APIs
// answer SECURITY_DISABLED, as Kafka 2.8's.
func TestACLAPIsWithoutAuthorizer(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.WaitForController()
	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.ResourceType, describe.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	if code := raw(t, c.Addr(1), describe, 2).(*kmsg.DescribeACLsResponse).ErrorCode; code != kerr.SecurityDisabled.Code {
		t.Errorf("DescribeAcls: %s", kerr.ErrorForCode(code))
	}
	if r := createACLs(t, c.Addr(1), aclCreation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)); r[0].ErrorCode != kerr.SecurityDisabled.Code {
		t.Errorf("CreateAcls: %s", kerr.ErrorForCode(r[0].ErrorCode))
	}
}
