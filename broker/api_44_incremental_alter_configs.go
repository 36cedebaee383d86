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
// AlterConfigs does.

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/zkpaths"
)

var incrementalAlterConfigsAPI = api{
	key: 44, min: 0, max: maxVersion(44),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		return s.handleIncrementalAlterConfigs(r.body.(*kmsg.IncrementalAlterConfigsRequest))
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
	var path string
	var listDefault func(name string) (string, bool)
	switch int8(r.ResourceType) {
	case configResourceTopic:
		path = zkpaths.TopicConfigPath(r.ResourceName)
		listDefault = func(name string) (string, bool) {
			def, ok := topicConfigByName[name]
			if !ok {
				return "", false
			}
			return def.kafkaDefault, def.typ == configTypeList
		}
	case configResourceBroker:
		entity, err := s.brokerEntity(r.ResourceName)
		if err != nil {
			return err
		}
		path = zkpaths.BrokerConfigPath(entity)
		listDefault = func(name string) (string, bool) {
			v, _ := defaultValue(name)
			return v, brokerConfigType(name) == configTypeList
		}
	default:
		return topicErr(kerr.InvalidRequest, "AlterConfigs is only supported for topics and brokers, but resource type is %s", configResourceTypeName(r.ResourceType))
	}
	cfg, err := s.readEntityConfig(path)
	if err != nil {
		return err
	}
	if err := applyConfigOps(cfg, r.Configs, int8(r.ResourceType) == configResourceTopic, listDefault); err != nil {
		return err
	}
	return s.replaceEntityConfig(r.ResourceType, r.ResourceName, cfg, validateOnly)
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
				if _, known := topicConfigByName[op.Name]; !known {
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
			current, _ := parseConfigValue(op.Name, configTypeList, old)
			given, _ := parseConfigValue(op.Name, configTypeList, *op.Value)
			list := splitListValue(current)
			if op.Op == kmsg.IncrementalAlterConfigOpAppend {
				list = append(list, splitListValue(given)...)
			} else {
				// A multiset difference: each given element removes one occurrence.
				for _, e := range splitListValue(given) {
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
