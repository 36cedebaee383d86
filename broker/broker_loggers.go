package broker

// BROKER_LOGGER configs (KIP-412): DescribeConfigs lists this broker's loggers with their levels,
// and IncrementalAlterConfigs sets or unsets a logger's level while the broker runs, as Kafka 2.8's
// Log4jController does for log4j — here for the zap loggers (internal/loglevels). Nothing is
// stored: a restarted broker starts from its root level again, as Kafka's does.

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/loglevels"
)

// SetLogLevels gives the broker the levels its logger's core consults, before Start; without
// them it answers BROKER_LOGGER requests as an unsupported resource type.
func (s *Server) SetLogLevels(l *loglevels.Levels) { s.levels = l }

func (s *Server) describeLoggers(name string) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	if s.levels == nil {
		return nil, topicErr(kerr.InvalidRequest, "Unsupported resource type: BROKER_LOGGER")
	}
	if name == "" {
		return nil, topicErr(kerr.InvalidRequest, "Broker id must not be empty")
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return nil, topicErr(kerr.InvalidRequest, "Broker id must be an integer, but it is: %s", name)
	}
	if int32(id) != s.brokerID {
		// Kafka's ConfigHelper words it without the comma its AlterConfigs has.
		return nil, topicErr(kerr.InvalidRequest, "Unexpected broker id, expected %d but received %s", s.brokerID, name)
	}
	loggers := s.levels.Loggers()
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range slices.Sorted(maps.Keys(loggers)) {
		out = append(out, newConfigEntry(n, kmsg.StringPtr(loggers[n]), int8(kmsg.ConfigSourceDynamicBrokerLoggerConfig), nil))
	}
	return out, nil
}

func (s *Server) alterLoggers(r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if s.levels == nil {
		return topicErr(kerr.InvalidRequest, "AlterConfigs is only supported for topics and brokers, but resource type is BROKER_LOGGER")
	}
	if r.ResourceName != "" {
		if err := s.brokerIDOf(r.ResourceName, ""); err != nil {
			return err
		}
	}
	invalid := func(format string, args ...any) error {
		return topicErr(kerr.InvalidRequest, "Invalid config value for resource %s: "+format,
			append([]any{configResourceString(r.ResourceType, r.ResourceName)}, args...)...)
	}
	for _, c := range r.Configs {
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if !s.levels.Exists(c.Name) {
				return invalid("Logger %s does not exist!", c.Name)
			}
			if !slices.Contains(loglevels.Valid, *c.Value) {
				return invalid("Cannot set the log level of %s to %s as it is not a supported log level. Valid log levels are %s",
					c.Name, *c.Value, strings.Join(loglevels.Valid, ", "))
			}
		case kmsg.IncrementalAlterConfigOpDelete:
			if !s.levels.Exists(c.Name) {
				return invalid("Logger %s does not exist!", c.Name)
			}
			if c.Name == loglevels.Root {
				return topicErr(kerr.InvalidRequest, "Removing the log level of the %s logger is not allowed", loglevels.Root)
			}
		default:
			return topicErr(kerr.InvalidRequest, "%s operation is not allowed for the BROKER_LOGGER resource", c.Op)
		}
	}
	if validateOnly {
		return nil
	}
	for _, c := range r.Configs {
		if c.Op == kmsg.IncrementalAlterConfigOpSet {
			s.log.Info("Updating the log level", zap.String("logger", c.Name), zap.String("level", *c.Value))
			s.levels.Set(c.Name, *c.Value)
		} else {
			s.log.Info("Unset the log level", zap.String("logger", c.Name))
			s.levels.Unset(c.Name)
		}
	}
	return nil
}
