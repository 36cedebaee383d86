package broker

// DescribeConfigs (key 32), versions 0–4 (Kafka 2.8).
//
//	v0: names, values, read_only, is_default, is_sensitive
//	v1: include_synonyms; config_source replaces is_default; synonyms
//	v2: same as v1
//	v3: include_documentation; config_type and documentation
//	v4: flexible
//
// In ZooKeeper mode every broker serves it. TOPIC resources show every topic
// config with its effective value: the /config/topics/<t> override
// (DYNAMIC_TOPIC_CONFIG) or the broker default it falls back to, whose
// synonyms say where that comes from. BROKER resources show this broker's
// configs (name = its id) or the cluster-wide dynamic defaults (empty name).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/zkpaths"
)

var describeConfigsAPI = api{
	key: 32, min: 0, max: maxVersion(32),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		return s.describeConfigsAuthorized(r, r.body.(*kmsg.DescribeConfigsRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		dr := req.(*kmsg.DescribeConfigsRequest)
		resp := dr.ResponseKind().(*kmsg.DescribeConfigsResponse)
		for _, r := range dr.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = r.ResourceType, r.ResourceName, code
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	},
}

// configResourceString is Kafka's ConfigResource.toString, which its error
// messages carry.
func configResourceString(t kmsg.ConfigResourceType, name string) string {
	return fmt.Sprintf("ConfigResource(type=%s, name='%s')", configResourceTypeName(t), name)
}

func configResourceTypeName(t kmsg.ConfigResourceType) string {
	switch int8(t) {
	case configResourceTopic:
		return "TOPIC"
	case configResourceBroker:
		return "BROKER"
	case configResourceBrokerLogger:
		return "BROKER_LOGGER"
	}
	return "UNKNOWN"
}

func (s *Server) handleDescribeConfigs(req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		configs, err := s.describeResource(r, req.IncludeSynonyms && req.Version >= 1, req.IncludeDocumentation && req.Version >= 3)
		if err != nil {
			rr.ErrorCode, rr.ErrorMessage = s.configErrorCode(err, "describe configs", r.ResourceType, r.ResourceName)
		} else {
			rr.Configs = configs
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// configErrorCode turns an error from a config request into Kafka's code and
// message; anything that is not a Kafka error is logged.
func (s *Server) configErrorCode(err error, what string, t kmsg.ConfigResourceType, name string) (int16, *string) {
	var te *topicError
	var ve *brokerconfig.ValueError
	var ie *brokerconfig.InvalidConfigError
	switch {
	case errors.As(err, &ve):
		return kerr.InvalidRequest.Code, kmsg.StringPtr(fmt.Sprintf("Invalid config value for resource %s: %s", configResourceString(t, name), ve.Error()))
	case errors.As(err, &ie):
		return kerr.InvalidConfig.Code, kmsg.StringPtr(ie.Error())
	case errors.As(err, &te):
		return te.code.Code, kmsg.StringPtr(te.msg)
	}
	s.log.Error("Cannot process a "+what+" request", zap.String("resource", configResourceString(t, name)), zap.Error(err))
	return kerr.UnknownServerError.Code, kmsg.StringPtr(err.Error())
}

func (s *Server) describeResource(r kmsg.DescribeConfigsRequestResource, synonyms, docs bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	var entries []kmsg.DescribeConfigsResponseResourceConfig
	var err error
	switch int8(r.ResourceType) {
	case configResourceTopic:
		entries, err = s.describeTopicConfigs(r.ResourceName, synonyms, docs)
	case configResourceBroker:
		entries, err = s.describeBrokerConfigs(r.ResourceName, synonyms, docs)
	case configResourceBrokerLogger:
		entries, err = s.describeLoggers(r.ResourceName)
	default:
		return nil, topicErr(kerr.InvalidRequest, "Unsupported resource type: %s", configResourceTypeName(r.ResourceType))
	}
	if err != nil {
		return nil, err
	}
	if r.ConfigNames != nil {
		entries = slices.DeleteFunc(entries, func(e kmsg.DescribeConfigsResponseResourceConfig) bool {
			return !slices.Contains(r.ConfigNames, e.Name)
		})
	}
	return entries, nil
}

func newConfigEntry(name string, value *string, source int8, synonyms []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym) kmsg.DescribeConfigsResponseResourceConfig {
	e := kmsg.NewDescribeConfigsResponseResourceConfig()
	e.Name, e.Value = name, value
	e.Source = kmsg.ConfigSource(source)
	// v0 has is_default instead of the source.
	e.IsDefault = source == sourceDefaultConfig
	e.ConfigSynonyms = synonyms
	return e
}

// describeTopicConfigs lists every topic config with its effective value, as
// Kafka's createTopicConfigEntry: the source is the first synonym's (the
// override, else the broker layer the default comes from), DEFAULT_CONFIG
// when there is none.
func (s *Server) describeTopicConfigs(topic string, withSynonyms, docs bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	if err := zkpaths.ValidateTopicName(topic); err != nil {
		return nil, topicErr(kerr.InvalidTopicException, "%v", err)
	}
	if _, _, ok := s.metadata.Topic(topic); !ok {
		return nil, topicErr(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", topic)
	}
	overrides, err := s.adminZk().FetchEntityConfig(zkpaths.EntityTopics, topic)
	if err != nil {
		return nil, err
	}
	return s.topicConfigEntries(overrides, withSynonyms, docs), nil
}

// topicConfigEntries lists every topic config for a topic with the given
// overrides, as describeTopicConfigs does.
func (s *Server) topicConfigEntries(overrides map[string]string, withSynonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	defs := brokerconfig.TopicConfigs()
	entries := make([]kmsg.DescribeConfigsResponseResourceConfig, 0, len(defs))
	for _, def := range defs {
		raw, overridden := overrides[def.Name]
		if !overridden {
			raw = s.configs.topicDefault(def.Name)
		}
		value, err := brokerconfig.ParseValue(def.Name, def.Type, raw)
		if err != nil {
			value = raw // a tool stored something Kafka would not accept: show it as it is
		}
		var synonyms []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
		if def.BrokerSynonym != "" {
			synonyms = s.configs.synonyms(def.BrokerSynonym, brokerconfig.BrokerConfigSynonyms(def.BrokerSynonym))
		}
		if overridden {
			top := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			top.Name, top.Value, top.Source = def.Name, kmsg.StringPtr(value), kmsg.ConfigSource(sourceTopicConfig)
			synonyms = append([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{top}, synonyms...)
		}
		source := sourceDefaultConfig
		if len(synonyms) > 0 {
			source = int8(synonyms[0].Source)
		}
		if !withSynonyms {
			synonyms = nil
		}
		e := newConfigEntry(def.Name, kmsg.StringPtr(value), source, synonyms)
		e.ConfigType = kmsg.ConfigType(def.Type)
		if docs {
			e.Documentation = kmsg.StringPtr(def.Doc)
		}
		entries = append(entries, e)
	}
	return entries
}

// brokerIDOf parses a BROKER resource name, which must be this broker's id
// (Kafka's resourceNameToBrokerId and its check).
func (s *Server) brokerIDOf(name, expected string) error {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return topicErr(kerr.InvalidRequest, "Broker id must be an integer, but it is: %s", name)
	}
	if int32(id) != s.brokerID {
		return topicErr(kerr.InvalidRequest, "Unexpected broker id, expected %d%s, but received %s", s.brokerID, expected, name)
	}
	return nil
}

// describeBrokerConfigs lists this broker's configs (name = its id) or the
// cluster-wide dynamic defaults (empty name), as Kafka's
// createBrokerConfigEntry: every config Kafka 2.8 defines, with 2.8's default
// where this broker does not act on it, read-only unless dynamically
// changeable, names the broker does not know sensitive with their value
// hidden.
func (s *Server) describeBrokerConfigs(name string, withSynonyms, docs bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	perBroker := name != ""
	var names []string
	if perBroker {
		if err := s.brokerIDOf(name, " or empty string"); err != nil {
			return nil, err
		}
		set := map[string]bool{}
		for _, k := range brokerconfig.BrokerConfigNames() {
			set[k] = true
		}
		for k := range s.configs.static {
			set[k] = true
		}
		for _, perBrokerLayer := range []bool{false, true} {
			for k := range s.configs.dynamicLayer(perBrokerLayer) {
				set[k] = true
			}
		}
		for k := range set {
			names = append(names, k)
		}
	} else {
		for k := range s.configs.dynamicLayer(false) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	entries := make([]kmsg.DescribeConfigsResponseResourceConfig, 0, len(names))
	for _, n := range names {
		typ := brokerconfig.BrokerConfigType(n)
		sensitive := typ == brokerconfig.TypeUnknown || typ == brokerconfig.TypePassword
		synonyms := s.configs.synonyms(n, brokerconfig.BrokerConfigSynonyms(n))
		if !perBroker {
			synonyms = slices.DeleteFunc(synonyms, func(syn kmsg.DescribeConfigsResponseResourceConfigConfigSynonym) bool {
				return int8(syn.Source) != sourceDynamicDefault
			})
		}
		var value *string
		if perBroker {
			if v, _, ok := s.configs.lookup(n); ok {
				value = kmsg.StringPtr(v)
			}
		} else {
			value = kmsg.StringPtr(s.configs.dynamicLayer(false)[n])
		}
		if value != nil && typ != brokerconfig.TypeUnknown {
			// Kafka shows the parsed value (" 0.50" as 0.5); its
			// synonyms keep the values as given.
			if v, err := brokerconfig.ParseValue(n, typ, *value); err == nil {
				value = kmsg.StringPtr(v)
			}
		}
		source := sourceDefaultConfig
		if len(synonyms) > 0 {
			source = int8(synonyms[0].Source)
		}
		if sensitive {
			value = nil
			for i := range synonyms {
				synonyms[i].Value = nil
			}
		}
		if !withSynonyms {
			synonyms = nil
		}
		e := newConfigEntry(n, value, source, synonyms)
		e.ReadOnly = !brokerconfig.IsDynamicBrokerConfig(n)
		e.IsSensitive = sensitive
		e.ConfigType = kmsg.ConfigType(typ)
		if docs {
			e.Documentation = brokerconfig.BrokerConfigDoc(n)
		}
		entries = append(entries, e)
	}
	return entries, nil
}
