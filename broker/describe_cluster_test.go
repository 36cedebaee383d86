package broker_test

import (
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestDescribeClusterAndAuthorizedOperations: DescribeCluster names the
// cluster, its controller and its brokers as Metadata does; asked for
// authorized operations, DescribeCluster, Metadata (cluster up to v10,
// topics) and DescribeGroups answer every operation the resource type
// supports, as Kafka 2.8 without an authorizer does, and MinInt32 when not
// asked.
func TestDescribeClusterAndAuthorizedOperations(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	c.WaitForController()
	md := rawMetadata(t, c.Addr(1))

	req := kmsg.NewPtrDescribeClusterRequest()
	dc := raw(t, c.Addr(2), req, 0).(*kmsg.DescribeClusterResponse)
	if dc.ErrorCode != 0 || dc.ClusterID != *md.ClusterID || dc.ControllerID != md.ControllerID || len(dc.Brokers) != 2 {
		t.Fatalf("DescribeCluster: code %d, cluster %q controller %d, %d brokers; Metadata says %q, %d, %d",
			dc.ErrorCode, dc.ClusterID, dc.ControllerID, len(dc.Brokers), *md.ClusterID, md.ControllerID, len(md.Brokers))
	}
	for i, b := range dc.Brokers {
		if m := md.Brokers[i]; b.NodeID != m.NodeID || b.Host != m.Host || b.Port != m.Port {
			t.Errorf("broker %d:%s:%d, Metadata says %d:%s:%d", b.NodeID, b.Host, b.Port, m.NodeID, m.Host, m.Port)
		}
	}
	if dc.ClusterAuthorizedOperations != math.MinInt32 {
		t.Errorf("authorized operations not asked for: %d, want MinInt32", dc.ClusterAuthorizedOperations)
	}
	req.IncludeClusterAuthorizedOperations = true
	// CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE.
	const cluster = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
	if got := raw(t, c.Addr(1), req, 0).(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations; got != cluster {
		t.Errorf("DescribeCluster's cluster operations %d, want %d", got, cluster)
	}

	createTopicWithConfigs(t, c, "ops", 1, nil)
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsgStr("ops")}}
	mreq.IncludeClusterAuthorizedOperations, mreq.IncludeTopicAuthorizedOperations = true, true
	// READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
	const topic = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	for v, wantCluster := range map[int16]int32{8: cluster, 10: cluster, 11: math.MinInt32} {
		m := raw(t, c.Addr(1), mreq, v).(*kmsg.MetadataResponse)
		if m.AuthorizedOperations != wantCluster || len(m.Topics) != 1 || m.Topics[0].AuthorizedOperations != topic {
			t.Errorf("Metadata v%d: cluster operations %d (want %d), topic operations %v (want %d)", v, m.AuthorizedOperations, wantCluster, m.Topics, topic)
		}
	}

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups, dg.IncludeAuthorizedOperations = []string{"nobody"}, true
	waitForCoordinator(t, c, "nobody")
	coordinator := c.Addr(findCoordinator(t, c.Addr(1), "nobody"))
	// READ, DELETE, DESCRIBE.
	if got := raw(t, coordinator, dg, 5).(*kmsg.DescribeGroupsResponse).Groups[0].AuthorizedOperations; got != 1<<3|1<<6|1<<8 {
		t.Errorf("DescribeGroups' group operations %d, want %d", got, 1<<3|1<<6|1<<8)
	}
}
