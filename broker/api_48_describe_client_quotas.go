package broker

// DescribeClientQuotas (key 48), versions 0–1 (v1: flexible). The quotas
// of users and client ids matching the filter, read from /config/users and
// /config/clients (adminzk.DescribeClientQuotas, Kafka 2.8's
// ZkAdminManager). A malformed filter is INVALID_REQUEST for the whole
// request.

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/adminzk"
)

var describeClientQuotasAPI = api{
	key: 48, min: 0, max: maxVersion(48),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpDescribeConfigs); resp != nil {
			return resp
		}
		return s.handleDescribeClientQuotas(r.body.(*kmsg.DescribeClientQuotasRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleDescribeClientQuotas(req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(err error) *kmsg.DescribeClientQuotasResponse {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), kmsg.StringPtr(err.Error())
		return resp
	}
	filter, err := adminzk.QuotaFilterOf(req.Components, req.Strict)
	if err != nil {
		return fail(err)
	}
	described, err := s.adminZk().DescribeClientQuotas(filter)
	if err != nil {
		return fail(err)
	}
	// Empty, never null, when nothing matches: Java's admin client reads
	// the list whenever there is no error.
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, d := range described {
		var e kmsg.DescribeClientQuotasResponseEntry
		if d.Entity.HasUser {
			e.Entity = append(e.Entity, kmsg.DescribeClientQuotasResponseEntryEntity{Type: adminzk.QuotaUser, Name: d.Entity.User})
		}
		if d.Entity.HasClientID {
			e.Entity = append(e.Entity, kmsg.DescribeClientQuotasResponseEntryEntity{Type: adminzk.QuotaClientID, Name: d.Entity.ClientID})
		}
		if d.Entity.HasIP {
			e.Entity = append(e.Entity, kmsg.DescribeClientQuotasResponseEntryEntity{Type: adminzk.QuotaIP, Name: d.Entity.IP})
		}
		for _, k := range slices.Sorted(maps.Keys(d.Values)) {
			e.Values = append(e.Values, kmsg.DescribeClientQuotasResponseEntryValue{Key: k, Value: d.Values[k]})
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp
}
