package controller

import (
	"context"
	"fmt"
	"maps"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// FeatureUpdate is one update of UpdateFeatures (KIP-584): raise a finalized feature's
// max_version_level, lower it with AllowDowngrade, or delete the feature (AllowDowngrade with a
// level below 1).
type FeatureUpdate struct {
	Feature         string
	MaxVersionLevel int16
	AllowDowngrade  bool
}

func (u FeatureUpdate) isDelete() bool { return u.AllowDowngrade && u.MaxVersionLevel < 1 }

// supportedFeatures are the features this broker can finalize: none, as in Kafka 2.8
// (BrokerFeatures.createDefault).
var supportedFeatures = map[string]zkpaths.FinalizedVersionRange{}

// UpdateFeatures validates each update against /feature as Kafka 2.8's controller does and writes
// the features the valid ones leave, if they differ. The result has an entry per feature: nil, or
// an error wrapping kerr.InvalidRequest (with Kafka's message) or kerr.FeatureUpdateFailed.
// Errors: kerr.NotController, then kerr.InvalidRequest when feature versioning is disabled
// (inter.broker.protocol.version below 2.7), in Kafka 2.8's order.
func (c *Controller) UpdateFeatures(ctx context.Context, updates []FeatureUpdate) (map[string]error, error) {
	return call(ctx, c, "UpdateFeatures", func() (map[string]error, error) {
		if !c.cfg.FeatureVersioning {
			return nil, &kafkaError{kind: kerr.InvalidRequest, msg: "Feature versioning system is disabled."}
		}
		return c.doUpdateFeatures(updates)
	})
}

func (c *Controller) doUpdateFeatures(updates []FeatureUpdate) (map[string]error, error) {
	data, stat, err := c.store.Get(zkpaths.Feature)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", zkpaths.Feature, err)
	}
	existing, err := zkpaths.DecodeFinalizedFeatures(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zkpaths.Feature, err)
	}
	target := maps.Clone(existing.Features)
	results := map[string]error{}
	for _, u := range updates {
		current, ok := existing.Features[u.Feature]
		r, del, err := validateFeatureUpdate(u, current, ok)
		results[u.Feature] = err
		switch {
		case err != nil:
		case del:
			delete(target, u.Feature)
		default:
			target[u.Feature] = r
		}
	}
	if maps.Equal(existing.Features, target) {
		return results, nil
	}
	next := zkpaths.FinalizedFeatures{Status: zkpaths.FeatureStatusEnabled, Features: target}
	if _, err := c.store.Multi(&zk.SetDataRequest{Path: zkpaths.Feature, Data: next.Encode(), Version: stat.Version}); err != nil {
		c.log.Warn("Processing of feature updates failed", zap.Error(err))
		for f, e := range results {
			if e == nil {
				results[f] = fmt.Errorf("update %s: %w: %w", zkpaths.Feature, kerr.FeatureUpdateFailed, err)
			}
		}
	}
	return results, nil
}

func invalidFeatureUpdate(format string, args ...any) error {
	return &kafkaError{kind: kerr.InvalidRequest, msg: fmt.Sprintf(format, args...)}
}

// validateFeatureUpdate is Kafka 2.8's validateFeatureUpdate: the feature's new range, or that
// it goes (del), or why not.
func validateFeatureUpdate(u FeatureUpdate, existing zkpaths.FinalizedVersionRange, exists bool) (r zkpaths.FinalizedVersionRange, del bool, err error) {
	switch {
	case u.Feature == "":
		return r, false, invalidFeatureUpdate("Feature name can not be empty.")
	case u.isDelete():
		if !exists {
			return r, false, invalidFeatureUpdate("Can not delete non-existing finalized feature.")
		}
		return r, true, nil
	case u.MaxVersionLevel < 1:
		return r, false, invalidFeatureUpdate("Can not provide maxVersionLevel: %d less than 1 without setting the allowDowngrade flag to true in the request.", u.MaxVersionLevel)
	}
	if exists {
		verb := "upgrade"
		if u.AllowDowngrade {
			verb = "downgrade"
		}
		switch {
		case u.MaxVersionLevel == existing.MaxVersionLevel:
			return r, false, invalidFeatureUpdate("Can not %s a finalized feature from existing maxVersionLevel:%d to the same value.", verb, existing.MaxVersionLevel)
		case u.MaxVersionLevel < existing.MaxVersionLevel && !u.AllowDowngrade:
			return r, false, invalidFeatureUpdate("Can not downgrade finalized feature from existing maxVersionLevel:%d to provided maxVersionLevel:%d without setting the allowDowngrade flag in the request.", existing.MaxVersionLevel, u.MaxVersionLevel)
		case u.AllowDowngrade && u.MaxVersionLevel > existing.MaxVersionLevel:
			return r, false, invalidFeatureUpdate("When the allowDowngrade flag set in the request, the provided maxVersionLevel:%d can not be greater than existing maxVersionLevel:%d.", u.MaxVersionLevel, existing.MaxVersionLevel)
		case u.MaxVersionLevel < existing.MinVersionLevel:
			return r, false, invalidFeatureUpdate("Can not downgrade finalized feature to maxVersionLevel:%d because it's lower than the existing minVersionLevel:%d.", u.MaxVersionLevel, existing.MinVersionLevel)
		}
	}
	supported, ok := supportedFeatures[u.Feature]
	if !ok {
		return r, false, invalidFeatureUpdate("Could not apply finalized feature update because the provided feature is not supported.")
	}
	if u.MaxVersionLevel < supported.MinVersionLevel {
		return r, false, invalidFeatureUpdate("Could not apply finalized feature update because the provided maxVersionLevel:%d is lower than the supported minVersion:%d.", u.MaxVersionLevel, supported.MinVersionLevel)
	}
	return zkpaths.FinalizedVersionRange{MinVersionLevel: supported.MinVersionLevel, MaxVersionLevel: u.MaxVersionLevel}, false, nil
}
