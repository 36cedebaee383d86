package broker

// AlterClientQuotas (key 49), versions 0–1 (v1: flexible). Each entry's
// ops change one user, client-id or user/client-id entity's quotas in
// /config/users or /config/clients, with the change notification every
// broker's config manager applies (adminzk.AlterClientQuotas, Kafka 2.8's
// ZkAdminManager). An entry that fails gets its own error; the others are
// still applied.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/adminzk"
)

var alterClientQuotasAPI = api{
	key: 49, min: 0, max: maxVersion(49),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpAlterConfigs); resp != nil {
			return resp
		}
		return s.handleAlterClientQuotas(r.body.(*kmsg.AlterClientQuotasRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return alterClientQuotasResponse(req.(*kmsg.AlterClientQuotasRequest), func(kmsg.AlterClientQuotasRequestEntry) error {
			return kerr.ErrorForCode(code)
		})
	},
}

// alterClientQuotasResponse answers every entry with fn's error.
func alterClientQuotasResponse(req *kmsg.AlterClientQuotasRequest, fn func(kmsg.AlterClientQuotasRequestEntry) error) *kmsg.AlterClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, e := range req.Entries {
		var re kmsg.AlterClientQuotasResponseEntry
		for _, c := range e.Entity {
			re.Entity = append(re.Entity, kmsg.AlterClientQuotasResponseEntryEntity{Type: c.Type, Name: c.Name})
		}
		if err := fn(e); err != nil {
			re.ErrorCode, re.ErrorMessage = errorCode(err), kmsg.StringPtr(err.Error())
		}
		resp.Entries = append(resp.Entries, re)
	}
	return resp
}

func (s *Server) handleAlterClientQuotas(req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	return alterClientQuotasResponse(req, func(e kmsg.AlterClientQuotasRequestEntry) error {
		components := make([]adminzk.QuotaComponent, len(e.Entity))
		for i, c := range e.Entity {
			components[i] = adminzk.QuotaComponent{Type: c.Type, Name: c.Name}
		}
		entity, err := adminzk.ParseQuotaEntity(components)
		if err != nil {
			return err
		}
		ops := make([]adminzk.QuotaOp, len(e.Ops))
		for i, op := range e.Ops {
			ops[i] = adminzk.QuotaOp{Key: op.Key, Value: op.Value, Remove: op.Remove}
		}
		return s.adminZk().AlterClientQuotas(entity, ops, req.ValidateOnly)
	})
}
