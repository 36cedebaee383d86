package broker

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// finalizedFeatures is what /feature finalizes, with its epoch (the znode's version), as Kafka
// 2.8's FinalizedFeatureCache keeps it for ApiVersions; epoch -1 while the znode is absent or
// disabled.
type finalizedFeatures struct {
	epoch    int64
	features map[string]zkpaths.FinalizedVersionRange
}

var noFinalizedFeatures = &finalizedFeatures{epoch: -1}

// watchFeatures keeps s.features up to date with /feature until the broker stops (Kafka's
// FinalizedFeatureChangeListener). The watch only wakes the loop; the loop alone reads and
// stores.
func (s *Server) watchFeatures() {
	log := s.log.Named("feature-listener")
	for s.ctx.Err() == nil {
		data, stat, ch, err := s.zk.GetW(zkpaths.Feature)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			s.features.Store(noFinalizedFeatures)
			var exists bool
			if exists, _, ch, err = s.zk.ExistsW(zkpaths.Feature); err == nil && exists {
				continue
			}
		case err == nil:
			s.features.Store(decodeFeatures(data, stat, log))
		}
		if err != nil {
			log.Warn("Cannot read the finalized features; retrying", zap.String("path", zkpaths.Feature), zap.Error(err))
			select {
			case <-time.After(time.Second):
			case <-s.ctx.Done():
			}
			continue
		}
		select {
		case <-ch:
		case <-s.ctx.Done():
		}
	}
}

func decodeFeatures(data []byte, stat *zk.Stat, log *zap.Logger) *finalizedFeatures {
	f, err := zkpaths.DecodeFinalizedFeatures(data)
	if err != nil {
		log.Error("Ignoring unreadable finalized features", zap.String("path", zkpaths.Feature), zap.ByteString("data", data), zap.Error(err))
		return noFinalizedFeatures
	}
	if f.Status != zkpaths.FeatureStatusEnabled {
		return noFinalizedFeatures
	}
	return &finalizedFeatures{epoch: int64(stat.Version), features: f.Features}
}

// finalized is the cache's current value.
func (s *Server) finalized() *finalizedFeatures {
	if f := s.features.Load(); f != nil {
		return f
	}
	return noFinalizedFeatures
}
