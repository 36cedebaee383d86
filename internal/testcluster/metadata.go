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
func (c *Cluster) metadata(id int32) *kmsg.MetadataResponse {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	empty := kmsg.NewPtrMetadataResponse()
	cl, err := wire.Dial(ctx, c.Addr(id), "testcluster")
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

func (c *Cluster) metadataLeader(id int32, topic string, partition int32) (int32, bool) {
	for _, t := range c.metadata(id).Topics {
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
