package broker

// ApiVersions (key 18), versions 0–3.
//
//	v0: the list of API keys with min and max versions
//	v1: throttle time
//	v2: same as v1
//	v3: flexible (KIP-482); the request carries the client software name and
//	    version (KIP-511); the answer's tagged fields carry the finalized
//	    features of /feature and their epoch (KIP-584; -1 while none are), and
//	    no supported feature, as a 2.8 broker has none. The response header
//	    stays v0 at every version.
//
// A request of a version this broker lacks is answered in the v0 shape with
// UNSUPPORTED_VERSION and the full list of ranges, so the client can retry
// with a version both support (KIP-511); librdkafka and kgo rely on it.

import (
	"context"
	"maps"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

var apiVersionsAPI = api{
	key: 18, min: 0, max: maxVersion(18),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.apiVersionsResponse(r.hdr.APIVersion, 0)
	},
}

func (s *Server) apiVersionsResponse(version, errorCode int16) kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(version)
	resp.ErrorCode = errorCode
	for _, a := range s.apis {
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: a.key, MinVersion: a.min, MaxVersion: a.max})
	}
	sort.Slice(resp.ApiKeys, func(i, j int) bool { return resp.ApiKeys[i].ApiKey < resp.ApiKeys[j].ApiKey })
	f := s.finalized()
	resp.FinalizedFeaturesEpoch = f.epoch
	for _, name := range slices.Sorted(maps.Keys(f.features)) {
		r := f.features[name]
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, kmsg.ApiVersionsResponseFinalizedFeature{Name: name, MinVersionLevel: r.MinVersionLevel, MaxVersionLevel: r.MaxVersionLevel})
	}
	return resp
}

// maxVersion returns Kafka 2.8's highest version of an API.
func maxVersion(key int16) int16 {
	v, ok := kversion.V2_8_0().LookupMaxKeyVersion(key)
	if !ok {
		return -1
	}
	return v
}
