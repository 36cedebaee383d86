package broker

// AlterConfigs (key 33), versions 0–2 (Kafka 2.8).
//
//	v0: resources with their whole new config, validate_only
//	v1: same as v0 (throttle time on quota violation)
//	v2: flexible
//
// In ZooKeeper mode every broker serves it. The config given replaces the
// entity's whole config: /config/topics/<t>, /config/brokers/<id> (only on
// that broker) or /config/brokers/<default> (empty name); then a
// /config/changes notification tells every broker. An unknown topic config
// name is INVALID_CONFIG, a value that does not parse or is out of range
// INVALID_REQUEST ("Invalid config value for resource ..."), as in Kafka.

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/zkpaths"
)

var alterConfigsAPI = api{
	key: 33, min: 0, max: maxVersion(33),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.AlterConfigsRequest)
		for _, res := range req.Resources {
			if int8(res.ResourceType) == configResourceBrokerLogger {
				// Kafka 2.8 throws while reading the request: every resource
				// gets the error, nothing is changed.
				resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
				for _, res := range req.Resources {
					rr := kmsg.NewAlterConfigsResponseResource()
					rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, kerr.InvalidRequest.Code
					rr.ErrorMessage = kmsg.StringPtr("AlterConfigs is deprecated and does not support the resource type BROKER_LOGGER")
					resp.Resources = append(resp.Resources, rr)
				}
				return resp
			}
		}
		return s.alterConfigsAuthorized(r, req)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		ar := req.(*kmsg.AlterConfigsRequest)
		resp := ar.ResponseKind().(*kmsg.AlterConfigsResponse)
		for _, r := range ar.Resources {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = r.ResourceType, r.ResourceName, code
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	},
}

func (s *Server) handleAlterConfigs(req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if err := s.alterConfigs(r, req.ValidateOnly); err != nil {
			rr.ErrorCode, rr.ErrorMessage = s.configErrorCode(err, "alter configs", r.ResourceType, r.ResourceName)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

func (s *Server) alterConfigs(r kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	var nulls []string
	cfg := make(map[string]string, len(r.Configs))
	for _, c := range r.Configs {
		if c.Value == nil {
			nulls = append(nulls, c.Name)
			continue
		}
		cfg[c.Name] = *c.Value
	}
	if len(nulls) > 0 {
		return topicErr(kerr.InvalidRequest, "Null value not supported for : %s", strings.Join(nulls, ","))
	}
	return s.changeEntityConfig(r.ResourceType, r.ResourceName, validateOnly, func(stored map[string]string) error {
		clear(stored)
		maps.Copy(stored, cfg)
		return nil
	})
}

// changeEntityConfig applies change to the stored config of a topic or
// broker entity, validates the result (Kafka's alterTopicConfigs and
// alterBrokerConfigs) and, unless validateOnly, writes it with its change
// notification through adminzk, which applies change again to a config
// another writer changed meanwhile.
func (s *Server) changeEntityConfig(t kmsg.ConfigResourceType, name string, validateOnly bool, change func(map[string]string) error) error {
	var entityType, entity string
	var validate func(map[string]string) error
	switch int8(t) {
	case configResourceTopic:
		entityType, entity = zkpaths.EntityTopics, name
		validate = func(cfg map[string]string) error {
			if _, _, ok := s.metadata.Topic(name); !ok {
				return topicErr(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", name)
			}
			check := s.defaultLogConfig()
			return brokerconfig.ApplyTopicConfig(&check, cfg)
		}
	case configResourceBroker:
		var err error
		if entity, err = s.brokerEntity(name); err != nil {
			return err
		}
		entityType, validate = zkpaths.EntityBrokers, brokerconfig.ValidateDynamicBrokerConfig
	default:
		return topicErr(kerr.InvalidRequest, "AlterConfigs is only supported for topics and brokers, but resource type is %s", configResourceTypeName(t))
	}
	return s.adminZk().ChangeEntityConfig(entityType, entity, func(cfg map[string]string) (bool, error) {
		if err := change(cfg); err != nil {
			return false, err
		}
		if err := validate(cfg); err != nil {
			return false, err
		}
		return !validateOnly, nil
	})
}

// brokerEntity maps a BROKER resource name to its /config/brokers entity:
// the empty name is the cluster-wide default, anything else must be this
// broker's id.
func (s *Server) brokerEntity(name string) (string, error) {
	if name == "" {
		return zkpaths.DefaultEntity, nil
	}
	if err := s.brokerIDOf(name, ""); err != nil {
		return "", err
	}
	return name, nil
}

// configNames lists names for an error message, sorted and without
// duplicates.
func configNames(names []string) string {
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}
