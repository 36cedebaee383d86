package broker

// IncrementalAlterConfigs (key 44), versions 0–1 (Kafka 2.8, KIP-339).
//
//	v0: per config an operation: SET, DELETE, APPEND, SUBTRACT
//	v1: flexible
//
// In ZooKeeper mode every broker serves it. The entity's stored config is
// read, the operations are applied to it (APPEND and SUBTRACT only to list
// configs such as cleanup.policy, starting from Kafka's default when the
// config is not set), and the result is validated and written as
// AlterConfigs does, at the version read: when another writer changed the
// config meanwhile, the operations are applied again to its config.

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/brokerconfig"
)

var incrementalAlterConfigsAPI = api{
	key: 44, min: 0, max: maxVersion(44),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		return s.incrementalAlterConfigsAuthorized(r, r.body.(*kmsg.IncrementalAlterConfigsRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		ir := req.(*kmsg.IncrementalAlterConfigsRequest)
		resp := ir.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, r := range ir.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = r.ResourceType, r.ResourceName, code
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	},
}

func (s *Server) handleIncrementalAlterConfigs(req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if err := s.incrementalAlterConfigs(r, req.ValidateOnly); err != nil {
			rr.ErrorCode, rr.ErrorMessage = s.configErrorCode(err, "incremental alter configs", r.ResourceType, r.ResourceName)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

func (s *Server) incrementalAlterConfigs(r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	seen := map[string]int{}
	var dups, nulls []string
	for _, c := range r.Configs {
		if seen[c.Name]++; seen[c.Name] == 2 {
			dups = append(dups, c.Name)
		}
		if c.Value == nil && c.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, c.Op.String()+":"+c.Name)
		}
	}
	if len(dups) > 0 {
		return topicErr(kerr.InvalidRequest, "Error due to duplicate config keys : %s", configNames(dups))
	}
	if len(nulls) > 0 {
		return topicErr(kerr.InvalidRequest, "Null value not supported for : %s", strings.Join(nulls, ","))
	}
	if int8(r.ResourceType) == configResourceBrokerLogger {
		return s.alterLoggers(r, validateOnly)
	}
	topic := int8(r.ResourceType) == configResourceTopic
	listDefault := func(name string) (string, bool) {
		v, _ := brokerconfig.BrokerDefault(name)
		return v, brokerconfig.BrokerConfigType(name) == brokerconfig.TypeList
	}
	if topic {
		listDefault = func(name string) (string, bool) {
			def, ok := brokerconfig.LookupTopicConfig(name)
			if !ok {
				return "", false
			}
			return def.KafkaDefault, def.Type == brokerconfig.TypeList
		}
	}
	return s.changeEntityConfig(r.ResourceType, r.ResourceName, validateOnly, func(cfg map[string]string) error {
		return applyConfigOps(cfg, r.Configs, topic, listDefault)
	})
}

// applyConfigOps applies incremental operations to a stored config (Kafka's
// prepareIncrementalConfigs). listDefault gives a config's default and
// whether it is a list.
func applyConfigOps(cfg map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, topic bool, listDefault func(string) (string, bool)) error {
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			cfg[op.Name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(cfg, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			verb := "append"
			if op.Op == kmsg.IncrementalAlterConfigOpSubtract {
				verb = "subtract"
			}
			def, isList := listDefault(op.Name)
			if topic {
				if _, known := brokerconfig.LookupTopicConfig(op.Name); !known {
					return topicErr(kerr.InvalidConfig, "Unknown topic config name: %s", op.Name)
				}
			}
			if !isList {
				return topicErr(kerr.InvalidRequest, "Config value %s is not allowed for config key: %s", verb, op.Name)
			}
			old, ok := cfg[op.Name]
			if !ok {
				old = def
			}
			current, _ := brokerconfig.ParseValue(op.Name, brokerconfig.TypeList, old)
			given, _ := brokerconfig.ParseValue(op.Name, brokerconfig.TypeList, *op.Value)
			list := brokerconfig.SplitListValue(current)
			if op.Op == kmsg.IncrementalAlterConfigOpAppend {
				list = append(list, brokerconfig.SplitListValue(given)...)
			} else {
				// A multiset difference: each given element removes one occurrence.
				for _, e := range brokerconfig.SplitListValue(given) {
					if i := slices.Index(list, e); i >= 0 {
						list = slices.Delete(list, i, i+1)
					}
				}
			}
			cfg[op.Name] = strings.Join(list, ",")
		default:
			return topicErr(kerr.InvalidRequest, "Unknown alter config operation %d for config key: %s", op.Op, op.Name)
		}
	}
	return nil
}
