package broker_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/zkpaths"
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

// TestACLEnforcementTopicAPIs checks 2.8's topic checks of the admin and
// offset APIs on one broker with allow.everyone.if.no.acl.found: the cluster
// allows only CLUSTER_ACTION (what the broker itself needs), a prefixed Deny
// of ALL covers locked*, and each refused entry gets Kafka's error while
// the request's other entries are served and the refused ones left alone.
func TestACLEnforcementTopicAPIs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{
		"authorizer.class.name":                  "kafka.security.authorizer.AclAuthorizer",
		"allow.everyone.if.no.acl.found":         "true",
		"zkafka.batched.coordinator.apis.enable": "true",
	}})
	c.WaitForController()
	addr := c.Addr(1)
	for _, topic := range []string{"open", "locked"} {
		if code := createTopicRaw(t, addr, topic, 1); code != 0 {
			t.Fatalf("create %s: %s", topic, kerr.ErrorForCode(code))
		}
		c.WaitForLeader(topic, 0)
	}
	for i, r := range createACLs(t, addr,
		aclCreation(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationClusterAction, kmsg.ACLPermissionTypeAllow),
		aclCreation(kmsg.ACLResourceTypeTopic, "locked", kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationAll, kmsg.ACLPermissionTypeDeny),
		aclCreation(kmsg.ACLResourceTypeTopic, "new-denied", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationCreate, kmsg.ACLPermissionTypeDeny),
		aclCreation(kmsg.ACLResourceTypeTopic, "new-noconf", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationCreate, kmsg.ACLPermissionTypeAllow),
		aclCreation(kmsg.ACLResourceTypeGroup, "g-locked", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		aclCreation(kmsg.ACLResourceTypeGroup, "g-locked", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeDeny),
	) {
		if r.ErrorCode != 0 {
			t.Fatalf("creation %d: %s", i, kerr.ErrorForCode(r.ErrorCode))
		}
	}
	taf := kerr.TopicAuthorizationFailed.Code
	check := func(what string, got, want int16) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %s, want %s", what, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
		}
	}
	topicExists := func(topic string) bool {
		ok, _, err := c.ZooKeeper().Exists(zkpaths.TopicPath(topic))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	// CreateTopics: the cluster has ACLs but no CREATE, so each topic's own
	// decides; new-noconf may be created but not have its configs described.
	create := kmsg.NewPtrCreateTopicsRequest()
	create.TimeoutMillis = 10000
	for _, name := range []string{"new-denied", "new-ok", "new-noconf"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		create.Topics = append(create.Topics, rt)
	}
	ct := raw(t, addr, create, 7).(*kmsg.CreateTopicsResponse).Topics
	if len(ct) != 3 || ct[0].Topic != "new-denied" || ct[1].Topic != "new-ok" || ct[2].Topic != "new-noconf" {
		t.Fatalf("CreateTopics answers out of the request's order: %+v", ct)
	}
	check("CreateTopics new-denied", ct[0].ErrorCode, taf)
	if derefStr(ct[0].ErrorMessage) != "Authorization failed." || topicExists("new-denied") {
		t.Errorf("CreateTopics new-denied: message %q, exists %v", derefStr(ct[0].ErrorMessage), topicExists("new-denied"))
	}
	check("CreateTopics new-ok", ct[1].ErrorCode, 0)
	if ct[1].NumPartitions != 1 || ct[1].ConfigErrorCode != 0 {
		t.Errorf("CreateTopics new-ok: %d partitions, config error %d", ct[1].NumPartitions, ct[1].ConfigErrorCode)
	}
	check("CreateTopics new-noconf", ct[2].ErrorCode, 0)
	check("CreateTopics new-noconf's configs", ct[2].ConfigErrorCode, taf)
	if ct[2].NumPartitions != -1 || ct[2].ReplicationFactor != -1 || len(ct[2].Configs) != 0 || !topicExists("new-noconf") {
		t.Errorf("CreateTopics new-noconf shows its metadata without DESCRIBE_CONFIGS: %+v", ct[2])
	}

	// DeleteTopics: unauthorized before unknown.
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis, del.TopicNames = 10000, []string{"locked", "locked-missing", "missing"}
	dt := raw(t, addr, del, 4).(*kmsg.DeleteTopicsResponse).Topics
	codes := map[string]int16{}
	for _, r := range dt {
		codes[derefStr(r.Topic)] = r.ErrorCode
	}
	check("DeleteTopics locked", codes["locked"], taf)
	check("DeleteTopics locked-missing", codes["locked-missing"], taf)
	check("DeleteTopics missing", codes["missing"], kerr.UnknownTopicOrPartition.Code)
	if !topicExists("locked") {
		t.Error("the refused DeleteTopics deleted locked")
	}

	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.TimeoutMillis = 10000
	for _, name := range []string{"locked", "open"} {
		cp.Topics = append(cp.Topics, kmsg.CreatePartitionsRequestTopic{Topic: name, Count: 2})
	}
	for _, r := range raw(t, addr, cp, 2).(*kmsg.CreatePartitionsResponse).Topics {
		want := int16(0)
		if r.Topic == "locked" {
			want = taf
		}
		check("CreatePartitions "+r.Topic, r.ErrorCode, want)
	}
	if data, _, err := c.ZooKeeper().Get(zkpaths.TopicPath("locked")); err != nil || strings.Contains(string(data), `"1":`) {
		t.Errorf("the refused CreatePartitions grew locked: %s %v", data, err)
	}

	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.TimeoutMillis = 5000
	dr.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "locked", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 0}}}}
	check("DeleteRecords locked", raw(t, addr, dr, 1).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode, taf)

	listOffsets := kmsg.NewPtrListOffsetsRequest()
	listOffsets.ReplicaID = -1
	for _, name := range []string{"locked", "open"} {
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = name
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Timestamp = -1
		lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{lp}
		listOffsets.Topics = append(listOffsets.Topics, lt)
	}
	lo := raw(t, addr, listOffsets, 5).(*kmsg.ListOffsetsResponse).Topics
	check("ListOffsets locked", lo[0].Partitions[0].ErrorCode, taf)
	check("ListOffsets open", lo[1].Partitions[0].ErrorCode, 0)

	// OffsetForLeaderEpoch: this client is User:ANONYMOUS, which has
	// CLUSTER_ACTION like a follower, so locked is answered too.
	ofle := kmsg.NewPtrOffsetForLeaderEpochRequest()
	ofle.ReplicaID = -1
	ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
	ot.Topic = "locked"
	op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	op.CurrentLeaderEpoch, op.LeaderEpoch = -1, 0
	ot.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{op}
	ofle.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{ot}
	check("OffsetForLeaderEpoch locked with CLUSTER_ACTION", raw(t, addr, ofle, 3).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode, 0)

	dp := kmsg.NewPtrDescribeProducersRequest()
	dp.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "locked", Partitions: []int32{0}}, {Topic: "open", Partitions: []int32{0}}}
	dpr := raw(t, addr, dp, 0).(*kmsg.DescribeProducersResponse).Topics
	check("DescribeProducers locked", dpr[0].Partitions[0].ErrorCode, taf)
	check("DescribeProducers open", dpr[1].Partitions[0].ErrorCode, 0)

	// Configs: a topic needs the operation on itself, a broker on the cluster.
	dc := kmsg.NewPtrDescribeConfigsRequest()
	for _, res := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "locked"}, {kmsg.ConfigResourceTypeTopic, "open"}, {kmsg.ConfigResourceTypeBroker, "1"}} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = res.typ, res.name
		dc.Resources = append(dc.Resources, r)
	}
	described := map[string]kmsg.DescribeConfigsResponseResource{}
	for _, r := range raw(t, addr, dc, 3).(*kmsg.DescribeConfigsResponse).Resources {
		described[r.ResourceName] = r
	}
	check("DescribeConfigs locked", described["locked"].ErrorCode, taf)
	if derefStr(described["locked"].ErrorMessage) != "Topic authorization failed." || len(described["locked"].Configs) != 0 {
		t.Errorf("DescribeConfigs locked: %q, %d configs", derefStr(described["locked"].ErrorMessage), len(described["locked"].Configs))
	}
	check("DescribeConfigs open", described["open"].ErrorCode, 0)
	check("DescribeConfigs broker 1", described["1"].ErrorCode, kerr.ClusterAuthorizationFailed.Code)

	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, name := range []string{"locked", "open"} {
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
		r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr("60000")}}
		iac.Resources = append(iac.Resources, r)
	}
	for _, r := range raw(t, addr, iac, 1).(*kmsg.IncrementalAlterConfigsResponse).Resources {
		want := int16(0)
		if r.ResourceName == "locked" {
			want = taf
		}
		check("IncrementalAlterConfigs "+r.ResourceName, r.ErrorCode, want)
	}
	ac := kmsg.NewPtrAlterConfigsRequest()
	acr := kmsg.NewAlterConfigsRequestResource()
	acr.ResourceType, acr.ResourceName = kmsg.ConfigResourceTypeTopic, "locked"
	acr.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("60000")}}
	ac.Resources = []kmsg.AlterConfigsRequestResource{acr}
	check("AlterConfigs locked", raw(t, addr, ac, 1).(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode, taf)
	if data, _, err := c.ZooKeeper().Get(zkpaths.EntityConfigPath("topics", "locked")); err == nil && strings.Contains(string(data), "retention.ms") {
		t.Errorf("a refused config change reached locked: %s", data)
	}

	// Offsets: READ on each committed topic, DESCRIBE on each fetched one.
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "g", -1
	for _, name := range []string{"locked", "open"} {
		commit.Topics = append(commit.Topics, kmsg.OffsetCommitRequestTopic{Topic: name, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 0}}})
	}
	var oc []kmsg.OffsetCommitResponseTopic
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKey = "g"
	wait.For(t, 20*time.Second, "the offsets coordinator", func() bool {
		if raw(t, addr, find, 3).(*kmsg.FindCoordinatorResponse).ErrorCode != 0 {
			return false
		}
		oc = raw(t, addr, commit, 7).(*kmsg.OffsetCommitResponse).Topics
		return oc[1].Partitions[0].ErrorCode == 0
	})
	check("OffsetCommit locked", oc[0].Partitions[0].ErrorCode, taf)
	commit.Group = "g-locked"
	check("OffsetCommit to g-locked (READ allowed)", raw(t, addr, commit, 7).(*kmsg.OffsetCommitResponse).Topics[1].Partitions[0].ErrorCode, 0)

	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = "g"
	for _, name := range []string{"locked", "open"} {
		fetch.Topics = append(fetch.Topics, kmsg.OffsetFetchRequestTopic{Topic: name, Partitions: []int32{0}})
	}
	of := raw(t, addr, fetch, 7).(*kmsg.OffsetFetchResponse)
	if len(of.Topics) != 2 {
		t.Fatalf("OffsetFetch: %+v", of)
	}
	for _, rt := range of.Topics {
		want := int16(0)
		if rt.Topic == "locked" {
			want = taf
		}
		check("OffsetFetch "+rt.Topic, rt.Partitions[0].ErrorCode, want)
	}
	fetchAll := kmsg.NewPtrOffsetFetchRequest()
	fetchAll.Group = "g"
	if all := raw(t, addr, fetchAll, 7).(*kmsg.OffsetFetchResponse).Topics; len(all) != 1 || all[0].Topic != "open" {
		t.Errorf("OffsetFetch of every partition shows topics the principal may not describe: %+v", all)
	}
	batched := kmsg.NewPtrOffsetFetchRequest()
	for _, g := range []string{"g", "g-locked"} {
		batched.Groups = append(batched.Groups, kmsg.OffsetFetchRequestGroup{Group: g, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "locked", Partitions: []int32{0}}}})
	}
	bg := raw(t, addr, batched, 8).(*kmsg.OffsetFetchResponse).Groups
	check("OffsetFetch v8 g", bg[0].ErrorCode, 0)
	if len(bg[0].Topics) != 1 || bg[0].Topics[0].Partitions[0].ErrorCode != taf {
		t.Errorf("OffsetFetch v8 g's locked: %+v", bg[0].Topics)
	}
	check("OffsetFetch v8 g-locked", bg[1].ErrorCode, kerr.GroupAuthorizationFailed.Code)
	// v1 has no top-level error: each partition asked carries it.
	v1 := kmsg.NewPtrOffsetFetchRequest()
	v1.Group, v1.Topics = "g-locked", []kmsg.OffsetFetchRequestTopic{{Topic: "open", Partitions: []int32{0}}}
	if rt := raw(t, addr, v1, 1).(*kmsg.OffsetFetchResponse).Topics; len(rt) != 1 || len(rt[0].Partitions) != 1 || rt[0].Partitions[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("OffsetFetch v1 of g-locked: %+v, want GROUP_AUTHORIZATION_FAILED on the partition", rt)
	}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g", "g-locked"}
	fcr := raw(t, addr, fc, 4).(*kmsg.FindCoordinatorResponse).Coordinators
	check("FindCoordinator v4 g", fcr[0].ErrorCode, 0)
	check("FindCoordinator v4 g-locked", fcr[1].ErrorCode, kerr.GroupAuthorizationFailed.Code)

	// ListGroups: no DESCRIBE on the cluster, so only the groups described.
	lg := raw(t, addr, kmsg.NewPtrListGroupsRequest(), 4).(*kmsg.ListGroupsResponse)
	var listed []string
	for _, g := range lg.Groups {
		listed = append(listed, g.Group)
	}
	if !slices.Contains(listed, "g") || slices.Contains(listed, "g-locked") {
		t.Errorf("ListGroups: %v", listed)
	}

	odel := kmsg.NewPtrOffsetDeleteRequest()
	odel.Group = "g"
	for _, name := range []string{"locked", "open"} {
		odel.Topics = append(odel.Topics, kmsg.OffsetDeleteRequestTopic{Topic: name, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}})
	}
	odr := raw(t, addr, odel, 0).(*kmsg.OffsetDeleteResponse)
	check("OffsetDelete", odr.ErrorCode, 0)
	for _, rt := range odr.Topics {
		want := int16(0)
		if rt.Topic == "locked" {
			want = taf
		}
		check("OffsetDelete "+rt.Topic, rt.Partitions[0].ErrorCode, want)
	}

	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{"g-locked"}
	check("DeleteGroups g-locked", raw(t, addr, dg, 2).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, kerr.GroupAuthorizationFailed.Code)
	commit.Group, commit.Topics = "g-locked", commit.Topics[1:]
	check("g-locked still takes commits after the refused delete", raw(t, addr, commit, 7).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, 0)

	// Transactions: the topic checks come before the coordinator's.
	apt := kmsg.NewPtrAddPartitionsToTxnRequest()
	apt.TransactionalID, apt.ProducerID, apt.ProducerEpoch = "tx", 1, 0
	apt.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "locked", Partitions: []int32{0}}, {Topic: "open", Partitions: []int32{0}}}
	at := raw(t, addr, apt, 1).(*kmsg.AddPartitionsToTxnResponse).Topics
	check("AddPartitionsToTxn locked", at[0].Partitions[0].ErrorCode, taf)
	check("AddPartitionsToTxn open", at[1].Partitions[0].ErrorCode, kerr.OperationNotAttempted.Code)
	toc := kmsg.NewPtrTxnOffsetCommitRequest()
	toc.TransactionalID, toc.Group, toc.ProducerID, toc.ProducerEpoch = "tx", "g", 1, 0
	toc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "locked", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 0}}}}
	check("TxnOffsetCommit locked", raw(t, addr, toc, 2).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, taf)
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
