package zkpaths

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Feature status values of /feature.
const (
	FeatureStatusDisabled int32 = 0
	FeatureStatusEnabled  int32 = 1 // inter.broker.protocol.version >= 2.7
)

// FinalizedVersionRange is the cluster-wide version range of one feature.
type FinalizedVersionRange struct {
	MinVersionLevel, MaxVersionLevel int16
}

// FinalizedFeatures is the data of /feature (Kafka 2.7+, KIP-584), written by
// the controller at failover:
//
//	{"version":1,"status":1,"features":{}}
//
// with features as {"name":{"min_version_level":1,"max_version_level":2}}.
type FinalizedFeatures struct {
	Status   int32 // FeatureStatusEnabled or FeatureStatusDisabled
	Features map[string]FinalizedVersionRange
}

// Encode returns the version-1 JSON, features in name order.
func (f FinalizedFeatures) Encode() []byte {
	features := newObject()
	for _, name := range slices.Sorted(maps.Keys(f.Features)) {
		r := f.Features[name]
		features.raw(name, newObject().int("min_version_level", int64(r.MinVersionLevel)).
			int("max_version_level", int64(r.MaxVersionLevel)).bytes())
	}
	return newObject().int("version", 1).int("status", int64(f.Status)).raw("features", features.bytes()).bytes()
}

// DecodeFinalizedFeatures reads /feature. The map of the result is never nil.
func DecodeFinalizedFeatures(data []byte) (FinalizedFeatures, error) {
	o, err := parseObject("finalized features", data)
	if err != nil {
		return FinalizedFeatures{}, err
	}
	if _, err := o.version(); err != nil {
		return FinalizedFeatures{}, err
	}
	var f FinalizedFeatures
	if err := o.required("status", &f.Status); err != nil {
		return FinalizedFeatures{}, err
	}
	if f.Status != FeatureStatusDisabled && f.Status != FeatureStatusEnabled {
		return FinalizedFeatures{}, malformed(o.kind, "unknown status %d", f.Status)
	}
	var raw map[string]json.RawMessage
	if err := o.required("features", &raw); err != nil {
		return FinalizedFeatures{}, err
	}
	f.Features = make(map[string]FinalizedVersionRange, len(raw))
	for name, data := range raw {
		e, err := parseObject(fmt.Sprintf("%s: feature %q", o.kind, name), data)
		if err != nil {
			return FinalizedFeatures{}, err
		}
		var r FinalizedVersionRange
		if err := e.required("min_version_level", &r.MinVersionLevel); err != nil {
			return FinalizedFeatures{}, err
		}
		if err := e.required("max_version_level", &r.MaxVersionLevel); err != nil {
			return FinalizedFeatures{}, err
		}
		if r.MinVersionLevel < 1 || r.MaxVersionLevel < r.MinVersionLevel {
			return FinalizedFeatures{}, malformed(e.kind, "invalid version range [%d, %d]", r.MinVersionLevel, r.MaxVersionLevel)
		}
		f.Features[name] = r
	}
	return f, nil
}
