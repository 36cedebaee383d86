package controller

import (
	"errors"
	"fmt"
	"maps"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// maybeSetupFeatureVersioning is the first step of Kafka 2.8's failover (KIP-584): /feature says
// whether the cluster's feature versioning is on, which it is from inter.broker.protocol.version
// 2.7 (Config.FeatureVersioning). Kafka 2.8 finalizes no feature, so a new znode holds none; an
// enabled one keeps what it holds. The znode is written, unfenced as Kafka writes it, only when it
// differs.
func (c *Controller) maybeSetupFeatureVersioning() error {
	want := zkpaths.FinalizedFeatures{Status: zkpaths.FeatureStatusDisabled, Features: map[string]zkpaths.FinalizedVersionRange{}}
	if c.cfg.FeatureVersioning {
		want.Status = zkpaths.FeatureStatusEnabled
	}
	data, _, err := c.store.Get(zkpaths.Feature)
	if errors.Is(err, zk.ErrNoNode) {
		if _, err := c.store.Create(zkpaths.Feature, want.Encode(), 0, nil); err != nil {
			return fmt.Errorf("create %s: %w", zkpaths.Feature, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", zkpaths.Feature, err)
	}
	existing, err := zkpaths.DecodeFinalizedFeatures(data)
	if err != nil {
		return fmt.Errorf("%s: %w", zkpaths.Feature, err)
	}
	switch {
	case existing.Status == zkpaths.FeatureStatusEnabled && c.cfg.FeatureVersioning:
		want.Features = existing.Features
	case existing.Status == zkpaths.FeatureStatusDisabled && len(existing.Features) > 0:
		c.log.Warn("The feature znode is disabled but lists features", zap.String("path", zkpaths.Feature), zap.ByteString("data", data))
	}
	if existing.Status == want.Status && maps.Equal(existing.Features, want.Features) {
		return nil
	}
	if _, err := c.store.Multi(&zk.SetDataRequest{Path: zkpaths.Feature, Data: want.Encode(), Version: -1}); err != nil {
		return fmt.Errorf("update %s: %w", zkpaths.Feature, err)
	}
	return nil
}
