package broker_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestBrokerLoggers works `kafka-configs --entity-type broker-loggers` through the broker:
// DescribeConfigs lists its loggers with their levels, IncrementalAlterConfigs sets a logger's
// level (its children follow) and unsets it, and every request Kafka 2.8 refuses is refused with
// its message.
func TestBrokerLoggers(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.WaitForController()
	addr := c.Addr(1)
	describe := func(name string) kmsg.DescribeConfigsResponseResource {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: name}}
		return raw(t, addr, req, 3).(*kmsg.DescribeConfigsResponse).Resources[0]
	}
	levels := func() map[string]string {
		r := describe("1")
		if r.ErrorCode != 0 {
			t.Fatalf("describe broker-loggers 1: error %d %v", r.ErrorCode, r.ErrorMessage)
		}
		out := map[string]string{}
		for _, e := range r.Configs {
			if e.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig || e.Value == nil {
				t.Errorf("logger %s: source %v value %v, want DYNAMIC_BROKER_LOGGER_CONFIG with a level", e.Name, e.Source, e.Value)
				continue
			}
			out[e.Name] = *e.Value
		}
		return out
	}
	alter := func(name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: name, Configs: ops}}
		return raw(t, addr, req, 1).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	}
	set := func(logger, level string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: logger, Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr(level)}
	}
	del := func(logger string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: logger, Op: kmsg.IncrementalAlterConfigOpDelete}
	}

	before := levels()
	const rm, fetcher = "broker-1.controller", "broker-1.controller.child"
	if before["root"] != "DEBUG" || before[rm] != "DEBUG" {
		t.Fatalf("loggers %v: want root and %s at DEBUG", before, rm)
	}
	if r := alter("1", set(rm, "WARN")); r.ErrorCode != 0 {
		t.Fatalf("set %s WARN: error %d %v", rm, r.ErrorCode, r.ErrorMessage)
	}
	after := levels()
	if after[rm] != "WARN" || after["root"] != "DEBUG" || (after[fetcher] != "" && after[fetcher] != "WARN") {
		t.Errorf("after setting %s to WARN: %v", rm, after)
	}
	if r := alter("", del(rm)); r.ErrorCode != 0 || levels()[rm] != "DEBUG" {
		t.Errorf("unset %s (no broker id: this broker): error %d %v, level %s", rm, r.ErrorCode, r.ErrorMessage, levels()[rm])
	}

	for _, tc := range []struct {
		name string
		op   kmsg.IncrementalAlterConfigsRequestResourceConfig
		msg  string
	}{
		{"1", set("no.such.logger", "INFO"), "Invalid config value for resource ConfigResource(type=BROKER_LOGGER, name='1'): Logger no.such.logger does not exist!"},
		{"1", set(rm, "LOUD"), "Invalid config value for resource ConfigResource(type=BROKER_LOGGER, name='1'): Cannot set the log level of " + rm + " to LOUD as it is not a supported log level. Valid log levels are FATAL, ERROR, WARN, INFO, DEBUG, TRACE"},
		{"1", del("root"), "Removing the log level of the root logger is not allowed"},
		{"1", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: rm, Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("INFO")}, "APPEND operation is not allowed for the BROKER_LOGGER resource"},
		{"2", set(rm, "INFO"), "Unexpected broker id, expected 1, but received 2"},
	} {
		r := alter(tc.name, tc.op)
		if r.ErrorCode != 42 || r.ErrorMessage == nil || *r.ErrorMessage != tc.msg {
			t.Errorf("%s %s on %q: error %d %v, want INVALID_REQUEST (42) %q", tc.op.Op, tc.op.Name, tc.name, r.ErrorCode, r.ErrorMessage, tc.msg)
		}
	}
	// The old AlterConfigs refuses broker loggers for the whole request, as
	// 2.8 throws while reading it: the topic beside the logger is not changed.
	createTopic(t, c, "beside-logger", 1, 1)
	old := kmsg.NewPtrAlterConfigsRequest()
	old.Resources = []kmsg.AlterConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "beside-logger", Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}},
		{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: "1", Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: rm, Value: kmsg.StringPtr("WARN")}}},
	}
	for _, r := range raw(t, addr, old, 1).(*kmsg.AlterConfigsResponse).Resources {
		if r.ErrorCode != 42 || r.ErrorMessage == nil || *r.ErrorMessage != "AlterConfigs is deprecated and does not support the resource type BROKER_LOGGER" {
			t.Errorf("AlterConfigs with a broker logger, resource %s: error %d %v", r.ResourceName, r.ErrorCode, r.ErrorMessage)
		}
	}
	if data, _, err := c.ZooKeeper().Get("/config/topics/beside-logger"); err != nil || strings.Contains(string(data), "retention.ms") {
		t.Errorf("the topic beside the logger was changed: %s %v", data, err)
	}
	for name, msg := range map[string]string{"": "Broker id must not be empty", "2": "Unexpected broker id, expected 1 but received 2", "x": "Broker id must be an integer, but it is: x"} {
		if r := describe(name); r.ErrorCode != 42 || r.ErrorMessage == nil || *r.ErrorMessage != msg {
			t.Errorf("describe broker-loggers %q: error %d %v, want INVALID_REQUEST %q", name, r.ErrorCode, r.ErrorMessage, msg)
		}
	}
}
