package testcluster

import (
	"context"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

func splitHostPort(addr string) (string, string, error) { return net.SplitHostPort(addr) }

// metadata asks one broker for all-topic metadata; an empty response on error.
func (c *Cluster) metadata(id int32) *kmsg.MetadataResponse { return metadata(c.Addr(id)) }

func metadata(addr string) *kmsg.MetadataResponse {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	empty := kmsg.NewPtrMetadataResponse()
	cl, err := wire.Dial(ctx, addr, "testcluster")
	if err != nil {
		return empty
	}
	defer cl.Close()
	resp, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return empty
	}
	return resp.(*kmsg.MetadataResponse)
}

// MetadataLeader is the leader of a partition in the metadata of the broker
// at addr; false when that broker does not know it (has not yet had the
// controller's UpdateMetadata for it) or does not answer. A broker learns a
// partition it replicates from UpdateMetadata only after the LeaderAndIsr
// that made it a replica, so a known leader here means that broker is ready.
func MetadataLeader(addr, topic string, partition int32) (int32, bool) {
	for _, t := range metadata(addr).Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition == partition && p.ErrorCode == 0 {
				return p.Leader, true
			}
		}
	}
	return -1, false
}
