package broker_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/zkpaths"
)

func adminOf(c *testcluster.Cluster) *kadm.Client { return kadm.NewClient(c.Client()) }

// createTopicWithConfigs creates a one-partition topic through kadm on a
// cluster whose brokers 1..N all run, and waits until every broker knows its
// leader and every replica has its log.
func createTopicWithConfigs(t *testing.T, c *testcluster.Cluster, name string, rf int16, configs map[string]*string) {
	t.Helper()
	resp, err := adminOf(c).CreateTopic(ctxT(t, 20*time.Second), 1, rf, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	c.WaitForLeader(name, 0)
	brokers := int32(len(c.BootstrapAddrs()))
	c.WaitFor("every replica of "+name+" to have its log", func() bool {
		n := int16(0)
		for id := int32(1); id <= brokers; id++ {
			if _, ok := broker.LocalLog(c.Broker(id), name, 0); ok {
				n++
			}
		}
		return n == rf
	})
}

// localLogConfig is the config of a broker's log of partition 0.
func localLogConfig(t *testing.T, c *testcluster.Cluster, id int32, topic string) (storage.LogConfig, bool) {
	t.Helper()
	l, ok := broker.LocalLog(c.Broker(id), topic, 0)
	if !ok {
		return storage.LogConfig{}, false
	}
	return l.Config(), true
}

// waitForLogConfig waits until every listed broker's log of the topic
// satisfies cond.
func waitForLogConfig(t *testing.T, c *testcluster.Cluster, topic, what string, cond func(storage.LogConfig) bool, ids ...int32) {
	t.Helper()
	c.WaitFor(what, func() bool {
		for _, id := range ids {
			cfg, ok := localLogConfig(t, c, id, topic)
			if !ok || !cond(cfg) {
				return false
			}
		}
		return true
	})
}

// alterErr is the error of a one-resource alteration through kadm.
func alterErr(resps kadm.AlterConfigsResponses, err error) error {
	if err != nil {
		return err
	}
	if len(resps) != 1 {
		return fmt.Errorf("%d alter responses, want 1", len(resps))
	}
	return resps[0].Err
}

func findConfig(t *testing.T, rcs kadm.ResourceConfigs, err error, name string) kadm.Config {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe configs: %+v", rcs)
	}
	for _, cfg := range rcs[0].Configs {
		if cfg.Key == name {
			return cfg
		}
	}
	t.Fatalf("config %s not described", name)
	return kadm.Config{}
}

func describeRaw(t *testing.T, addr string, typ kmsg.ConfigResourceType, name string, configNames ...string) kmsg.DescribeConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, configNames
	req.Resources = append(req.Resources, r)
	return raw(t, addr, req, 3).(*kmsg.DescribeConfigsResponse).Resources[0]
}

func configChanges(t *testing.T, zkc *zkclient.Client) []string {
	t.Helper()
	children, _, err := zkc.Children(zkpaths.ConfigChanges)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(children)
	return children
}

// TestAlterTopicConfigAppliesToRunningLogs alters segment.bytes and
// retention.bytes through kadm and sees every replica's running log take them
// (retention then deletes old segments and the log start offset moves), the
// znodes Kafka writes, and DescribeConfigs telling overrides from defaults.
func TestAlterTopicConfigAppliesToRunningLogs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: map[string]string{"log.retention.check.interval.ms": "50"}})
	createTopicWithConfigs(t, c, "dyn", 3, nil)
	leader := c.WaitForLeader("dyn", 0)
	// acks=all: every follower has each batch before the next is sent, so
	// no follower fetch carries more than segment.bytes.
	produce := func(n int) {
		for range n {
			req := produceReq("dyn", 0, recordBatch(make([]byte, 200)))
			req.Acks = -1
			if code, _ := produceCode(t, c, c.Addr(leader), req); code != 0 {
				t.Fatal(kerr.ErrorForCode(code))
			}
		}
	}
	produce(40)
	for _, id := range []int32{1, 2, 3} {
		if cfg, ok := localLogConfig(t, c, id, "dyn"); !ok || cfg.SegmentBytes != 1<<30 || cfg.RetentionBytes != -1 {
			t.Fatalf("broker %d log config before the change: %+v (exists %v)", id, cfg, ok)
		}
	}
	before := len(configChanges(t, c.ZooKeeper()))

	err := alterErr(adminOf(c).AlterTopicConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "segment.bytes", Value: kadm.StringPtr("1024")},
		{Op: kadm.SetConfig, Name: "retention.bytes", Value: kadm.StringPtr("2048")},
	}, "dyn"))
	if err != nil {
		t.Fatal(err)
	}
	waitForLogConfig(t, c, "dyn", "every replica's log to take the new config", func(cfg storage.LogConfig) bool {
		return cfg.SegmentBytes == 1024 && cfg.RetentionBytes == 2048
	}, 1, 2, 3)

	// The first segment holds the 40 batches written before; new appends
	// roll small segments and retention deletes the old ones, on the leader
	// and on the followers.
	produce(40)
	c.WaitFor("retention to advance every replica's log start offset", func() bool {
		for _, id := range []int32{1, 2, 3} {
			l, ok := broker.LocalLog(c.Broker(id), "dyn", 0)
			if !ok || l.LogStartOffset() < 40 {
				return false
			}
		}
		return true
	})
	lr := kmsg.NewPtrListOffsetsRequest()
	lr.ReplicaID = -1
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Timestamp = -2
	lr.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "dyn", Partitions: []kmsg.ListOffsetsRequestTopicPartition{p}}}
	if earliest := raw(t, c.Addr(leader), lr, 5).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].Offset; earliest < 40 {
		t.Errorf("ListOffsets earliest = %d, want >= 40", earliest)
	}

	// ZooKeeper holds what Kafka's tools read and write.
	data, _, err := c.ZooKeeper().Get(zkpaths.TopicConfigPath("dyn"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"version":1,"config":{"retention.bytes":"2048","segment.bytes":"1024"}}`; string(data) != want {
		t.Errorf("/config/topics/dyn = %s, want %s", data, want)
	}
	changes := configChanges(t, c.ZooKeeper())
	if len(changes) != before+1 {
		t.Fatalf("config changes %v, want one more than %d", changes, before)
	}
	last := changes[len(changes)-1]
	if !regexp.MustCompile(`^config_change_\d{10}$`).MatchString(last) {
		t.Errorf("notification name %q", last)
	}
	if data, _, err := c.ZooKeeper().Get(zkpaths.ConfigChangePath(last)); err != nil || string(data) != `{"version":2,"entity_path":"topics/dyn"}` {
		t.Errorf("notification %s = %s (%v)", last, data, err)
	}

	// DescribeConfigs on a broker that does not lead the partition.
	other := int32(1)
	if leader == 1 {
		other = 2
	}
	res := describeRaw(t, c.Addr(other), kmsg.ConfigResourceTypeTopic, "dyn")
	if res.ErrorCode != 0 || len(res.Configs) != 26 {
		t.Fatalf("describe dyn: code %d, %d configs, want 0 and Kafka's 26 topic configs", res.ErrorCode, len(res.Configs))
	}
	byName := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, e := range res.Configs {
		byName[e.Name] = e
	}
	rb := byName["retention.bytes"]
	if *rb.Value != "2048" || rb.Source != kmsg.ConfigSourceDynamicTopicConfig || rb.ReadOnly || rb.IsSensitive ||
		rb.ConfigType != kmsg.ConfigTypeLong || rb.Documentation == nil {
		t.Errorf("retention.bytes = %+v", rb)
	}
	if syn := rb.ConfigSynonyms; len(syn) != 2 || syn[0].Name != "retention.bytes" || syn[0].Source != kmsg.ConfigSourceDynamicTopicConfig ||
		syn[1].Name != "log.retention.bytes" || *syn[1].Value != "-1" || syn[1].Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("retention.bytes synonyms = %+v", syn)
	}
	if sb := byName["segment.bytes"]; *sb.Value != "1024" || sb.Source != kmsg.ConfigSourceDynamicTopicConfig || sb.ConfigType != kmsg.ConfigTypeInt {
		t.Errorf("segment.bytes = %+v", sb)
	}
	if rm := byName["retention.ms"]; *rm.Value != "604800000" || rm.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("retention.ms = %+v", rm)
	}
	if cp := byName["cleanup.policy"]; *cp.Value != "delete" || cp.Source != kmsg.ConfigSourceDefaultConfig || cp.ConfigType != kmsg.ConfigTypeList {
		t.Errorf("cleanup.policy = %+v", cp)
	}
	// Version 0 has is_default instead of a source, and no synonyms.
	v0 := kmsg.NewPtrDescribeConfigsRequest()
	v0.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "dyn", ConfigNames: []string{"retention.ms", "retention.bytes"}}}
	v0Configs := raw(t, c.Addr(other), v0, 0).(*kmsg.DescribeConfigsResponse).Resources[0].Configs
	if len(v0Configs) != 2 {
		t.Errorf("v0 described %d configs, asked for 2", len(v0Configs))
	}
	for _, e := range v0Configs {
		if e.IsDefault != (e.Name == "retention.ms") {
			t.Errorf("v0 %s: is_default %v", e.Name, e.IsDefault)
		}
	}
	if res := describeRaw(t, c.Addr(1), kmsg.ConfigResourceTypeTopic, "no-such-topic"); res.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("describe a missing topic: code %d, want UNKNOWN_TOPIC_OR_PARTITION", res.ErrorCode)
	}
	if res := describeRaw(t, c.Addr(1), kmsg.ConfigResourceTypeBrokerLogger, "1"); res.ErrorCode != 0 ||
		!slices.ContainsFunc(res.Configs, func(e kmsg.DescribeConfigsResponseResourceConfig) bool { return e.Name == "root" }) {
		t.Errorf("describe BROKER_LOGGER 1: code %d, %d loggers; want the root logger among them", res.ErrorCode, len(res.Configs))
	}
}

// TestDynamicBrokerConfigDefaultsTopics changes log.retention.ms cluster-wide
// (/config/brokers/<default>) and for one broker (/config/brokers/<id>):
// topics without an override follow on the brokers concerned, a topic with
// its own override keeps it.
func TestDynamicBrokerConfigDefaultsTopics(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	createTopicWithConfigs(t, c, "plain", 2, nil)
	createTopicWithConfigs(t, c, "pinned", 2, map[string]*string{"retention.ms": kadm.StringPtr("3600000")})
	adm := adminOf(c)

	err := alterErr(adm.AlterBrokerConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "log.retention.ms", Value: kadm.StringPtr("12345")},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.ZooKeeper().Get(zkpaths.BrokerConfigPath(zkpaths.DefaultEntity)); err != nil || string(data) != `{"version":1,"config":{"log.retention.ms":"12345"}}` {
		t.Errorf("/config/brokers/<default> = %s (%v)", data, err)
	}
	waitForLogConfig(t, c, "plain", "the cluster default to reach plain's logs", func(cfg storage.LogConfig) bool { return cfg.RetentionMs == 12345 }, 1, 2)
	for _, id := range []int32{1, 2} {
		if cfg, _ := localLogConfig(t, c, id, "pinned"); cfg.RetentionMs != 3600000 {
			t.Errorf("broker %d: pinned retention.ms %d, want its override 3600000", id, cfg.RetentionMs)
		}
	}
	rcs, derr := adm.DescribeTopicConfigs(ctxT(t, 10*time.Second), "plain")
	rm := findConfig(t, rcs, derr, "retention.ms")
	if rm.MaybeValue() != "12345" || rm.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("plain retention.ms = %+v, want 12345 from DYNAMIC_DEFAULT_BROKER_CONFIG", rm)
	}
	rcs, derr = adm.DescribeBrokerConfigs(ctxT(t, 10*time.Second), 1)
	if lrm := findConfig(t, rcs, derr, "log.retention.ms"); lrm.MaybeValue() != "12345" || lrm.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("broker 1 log.retention.ms = %+v", lrm)
	}
	res := describeRaw(t, c.Addr(1), kmsg.ConfigResourceTypeBroker, "1", "broker.id", "log.retention.ms")
	for _, e := range res.Configs {
		switch e.Name {
		case "broker.id":
			if !e.ReadOnly || e.Source != kmsg.ConfigSourceStaticBrokerConfig || *e.Value != "1" {
				t.Errorf("broker.id = %+v, want read-only 1 from STATIC_BROKER_CONFIG", e)
			}
		case "log.retention.ms":
			if e.ReadOnly {
				t.Errorf("log.retention.ms is dynamic, described read-only")
			}
		}
	}
	if len(res.Configs) != 2 {
		t.Errorf("described %d configs, asked for 2", len(res.Configs))
	}

	// Broker 1's own override wins over the default, on broker 1 only.
	err = alterErr(adm.AlterBrokerConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "log.retention.ms", Value: kadm.StringPtr("555")},
	}, 1))
	if err != nil {
		t.Fatal(err)
	}
	waitForLogConfig(t, c, "plain", "broker 1's override to reach its log", func(cfg storage.LogConfig) bool { return cfg.RetentionMs == 555 }, 1)
	if cfg, _ := localLogConfig(t, c, 2, "plain"); cfg.RetentionMs != 12345 {
		t.Errorf("broker 2 took broker 1's override: retention.ms %d", cfg.RetentionMs)
	}

	// A static config cannot change at run time.
	err = alterErr(adm.AlterBrokerConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "broker.id", Value: kadm.StringPtr("7")},
	}, 1))
	if !errors.Is(err, kerr.InvalidRequest) {
		t.Errorf("setting broker.id dynamically: %v, want INVALID_REQUEST", err)
	}
}

// TestAlterConfigsRejectsBadInput checks Kafka's answers to bad alterations
// and that none of them changes what ZooKeeper holds.
func TestAlterConfigsRejectsBadInput(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	createTopicWithConfigs(t, c, "guarded", 1, map[string]*string{"retention.ms": kadm.StringPtr("1000")})
	addr := c.Addr(1)
	stored, stat, err := c.ZooKeeper().Get(zkpaths.TopicConfigPath("guarded"))
	if err != nil {
		t.Fatal(err)
	}
	changes := configChanges(t, c.ZooKeeper())

	alter := func(topic string, validateOnly bool, kv ...string) kmsg.AlterConfigsResponseResource {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.ValidateOnly = validateOnly
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		for i := 0; i < len(kv); i += 2 {
			r.Configs = append(r.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: kv[i], Value: kmsg.StringPtr(kv[i+1])})
		}
		req.Resources = append(req.Resources, r)
		return raw(t, addr, req, 1).(*kmsg.AlterConfigsResponse).Resources[0]
	}
	incremental := func(op kmsg.IncrementalAlterConfigOp, name, value string) kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "guarded"
		r.Configs = append(r.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: name, Op: op, Value: kmsg.StringPtr(value)})
		req.Resources = append(req.Resources, r)
		return raw(t, addr, req, 1).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	}
	msg := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	for _, tc := range []struct {
		name     string
		code     int16
		message  string
		response func() (int16, *string)
	}{
		{"unknown name", kerr.InvalidConfig.Code, "Unknown topic config name: no.such.config", func() (int16, *string) {
			r := alter("guarded", false, "no.such.config", "1")
			return r.ErrorCode, r.ErrorMessage
		}},
		{"not a number", kerr.InvalidRequest.Code, "Invalid config value for resource ConfigResource(type=TOPIC, name='guarded'): Invalid value abc for configuration retention.ms: Not a number of type LONG", func() (int16, *string) {
			r := alter("guarded", false, "retention.ms", "abc")
			return r.ErrorCode, r.ErrorMessage
		}},
		{"out of range", kerr.InvalidRequest.Code, "Invalid value 10 for configuration segment.bytes: Value must be at least 14", func() (int16, *string) {
			r := alter("guarded", false, "segment.bytes", "10")
			return r.ErrorCode, r.ErrorMessage
		}},
		{"bad list element", kerr.InvalidRequest.Code, "String must be one of: compact, delete", func() (int16, *string) {
			r := alter("guarded", false, "cleanup.policy", "compact,bogus")
			return r.ErrorCode, r.ErrorMessage
		}},
		{"missing topic", kerr.UnknownTopicOrPartition.Code, "The topic 'nowhere' does not exist.", func() (int16, *string) {
			r := alter("nowhere", false, "retention.ms", "1")
			return r.ErrorCode, r.ErrorMessage
		}},
		{"append to a non-list", kerr.InvalidRequest.Code, "Config value append is not allowed for config key: retention.ms", func() (int16, *string) {
			r := incremental(kmsg.IncrementalAlterConfigOpAppend, "retention.ms", "5")
			return r.ErrorCode, r.ErrorMessage
		}},
		{"incremental unknown name", kerr.InvalidConfig.Code, "Unknown topic config name: bogus", func() (int16, *string) {
			r := incremental(kmsg.IncrementalAlterConfigOpSet, "bogus", "5")
			return r.ErrorCode, r.ErrorMessage
		}},
		{"validate only", 0, "", func() (int16, *string) {
			r := alter("guarded", true, "retention.ms", "5000")
			return r.ErrorCode, r.ErrorMessage
		}},
	} {
		code, m := tc.response()
		if code != tc.code || !strings.Contains(msg(m), tc.message) {
			t.Errorf("%s: code %d %q, want %d containing %q", tc.name, code, msg(m), tc.code, tc.message)
		}
	}
	after, stat2, err := c.ZooKeeper().Get(zkpaths.TopicConfigPath("guarded"))
	if err != nil || string(after) != string(stored) || stat2.Version != stat.Version {
		t.Errorf("/config/topics/guarded changed: %s v%d, was %s v%d (%v)", after, stat2.Version, stored, stat.Version, err)
	}
	if now := configChanges(t, c.ZooKeeper()); !slices.Equal(now, changes) {
		t.Errorf("notifications written for rejected changes: %v, was %v", now, changes)
	}
	if cfg, _ := localLogConfig(t, c, 1, "guarded"); cfg.RetentionMs != 1000 {
		t.Errorf("log retention.ms %d, want 1000", cfg.RetentionMs)
	}

	// APPEND and SUBTRACT work on a list config, starting from Kafka's default.
	if r := incremental(kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", "compact"); r.ErrorCode != 0 {
		t.Fatalf("append: %v %s", kerr.ErrorForCode(r.ErrorCode), msg(r.ErrorMessage))
	}
	waitForLogConfig(t, c, "guarded", "cleanup.policy delete,compact", func(cfg storage.LogConfig) bool { return cfg.CleanupPolicy == "compact,delete" }, 1)
	if r := incremental(kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", "delete"); r.ErrorCode != 0 {
		t.Fatalf("subtract: %v %s", kerr.ErrorForCode(r.ErrorCode), msg(r.ErrorMessage))
	}
	waitForLogConfig(t, c, "guarded", "cleanup.policy compact", func(cfg storage.LogConfig) bool { return cfg.CleanupPolicy == "compact" }, 1)
	if data, _, _ := c.ZooKeeper().Get(zkpaths.TopicConfigPath("guarded")); string(data) != `{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"1000"}}` {
		t.Errorf("/config/topics/guarded = %s", data)
	}

	// DELETE drops the override: the log falls back to the broker default.
	del := kmsg.NewPtrIncrementalAlterConfigsRequest()
	dr := kmsg.NewIncrementalAlterConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, "guarded"
	dr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpDelete}}
	del.Resources = append(del.Resources, dr)
	if r := raw(t, addr, del, 0).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]; r.ErrorCode != 0 {
		t.Fatalf("delete: %v %s", kerr.ErrorForCode(r.ErrorCode), msg(r.ErrorMessage))
	}
	waitForLogConfig(t, c, "guarded", "retention.ms back to the broker default", func(cfg storage.LogConfig) bool { return cfg.RetentionMs == 7*24*3600*1000 }, 1)
}

// TestLegacyNotificationAndExpiry writes a config change the way an old
// kafka-configs.sh did (straight into ZooKeeper, a version-1 notification)
// and sees it applied; then notifications older than 15 minutes are purged
// while newer ones stay.
func TestLegacyNotificationAndExpiry(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	createTopicWithConfigs(t, c, "legacy", 1, nil)
	zkc := c.ZooKeeper()
	if err := zkc.CreateIfMissing(zkpaths.TopicConfigPath("legacy"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := zkc.Set(zkpaths.TopicConfigPath("legacy"), []byte(`{"version":1,"config":{"retention.ms":"777"}}`), -1); err != nil {
		t.Fatal(err)
	}
	oldPath, err := zkc.Create(zkpaths.ConfigChangePrefix, []byte(`{"version":1,"entity_type":"topics","entity_name":"legacy"}`), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	waitForLogConfig(t, c, "legacy", "the v1 notification to be applied", func(cfg storage.LogConfig) bool { return cfg.RetentionMs == 777 }, 1)
	_, oldStat, err := zkc.Get(oldPath)
	if err != nil {
		t.Fatalf("a fresh notification was purged: %v", err)
	}

	// From now on the broker's clock is 15 minutes and 1 ms past the old
	// notification's creation.
	aged := time.UnixMilli(oldStat.Ctime).Add(15*time.Minute + time.Millisecond)
	broker.SetConfigChangeClock(c.Broker(1), func() time.Time { return aged })
	err = alterErr(adminOf(c).AlterTopicConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("888")},
	}, "legacy"))
	if err != nil {
		t.Fatal(err)
	}
	waitForLogConfig(t, c, "legacy", "the new change to be applied", func(cfg storage.LogConfig) bool { return cfg.RetentionMs == 888 }, 1)
	c.WaitFor("the expired notification to be purged", func() bool {
		ok, _, err := zkc.Exists(oldPath)
		return err == nil && !ok
	})
	changes := configChanges(t, zkc)
	if len(changes) == 0 {
		t.Fatal("the new notification was purged too")
	}
	_, newStat, err := zkc.Get(zkpaths.ConfigChangePath(changes[len(changes)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if newStat.Ctime <= oldStat.Ctime+1 {
		t.Fatalf("notifications created %d ms apart; the test needs more", newStat.Ctime-oldStat.Ctime)
	}
}

// TestStartupLoadsDynamicBrokerConfigs starts a broker on a ZooKeeper that
// already holds /config/brokers/<default>: its logs open with the dynamic
// default over server.properties, and a config that cannot be dynamic is
// ignored.
func TestStartupLoadsDynamicBrokerConfigs(t *testing.T) {
	connect := zktest.NewChroot(t)
	zkc := zkSession(t, connect)
	if err := zkc.CreateIfMissing(zkpaths.BrokerConfigPath(zkpaths.DefaultEntity),
		[]byte(`{"version":1,"config":{"log.segment.bytes":"4096","log.retention.hours":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, ZooKeeper: connect, Properties: map[string]string{"log.segment.bytes": "8192"}})
	createTopicWithConfigs(t, c, "boot", 1, nil)
	if cfg, ok := localLogConfig(t, c, 1, "boot"); !ok || cfg.SegmentBytes != 4096 || cfg.RetentionMs != 7*24*3600*1000 {
		t.Errorf("log config %+v, want segment.bytes 4096 from <default> and the static retention", cfg)
	}
	res := describeRaw(t, c.Addr(1), kmsg.ConfigResourceTypeBroker, "1", "log.segment.bytes")
	if len(res.Configs) != 1 {
		t.Fatalf("describe broker 1: %+v", res)
	}
	e := res.Configs[0]
	var got []string
	for _, syn := range e.ConfigSynonyms {
		got = append(got, fmt.Sprintf("%s=%s@%d", syn.Name, *syn.Value, syn.Source))
	}
	want := []string{"log.segment.bytes=4096@3", "log.segment.bytes=8192@4", "log.segment.bytes=1073741824@5"}
	if *e.Value != "4096" || e.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || !slices.Equal(got, want) {
		t.Errorf("log.segment.bytes = %s from %d, synonyms %v; want 4096 from 3, synonyms %v", *e.Value, e.Source, got, want)
	}
	res = describeRaw(t, c.Addr(1), kmsg.ConfigResourceTypeBroker, "")
	if len(res.Configs) != 1 || res.Configs[0].Name != "log.segment.bytes" {
		t.Errorf("cluster default configs %+v, want only log.segment.bytes (the invalid entry dropped)", res.Configs)
	}
}

// TestUncleanElectionConfigElectsOfflinePartition takes a partition offline
// with its only ISR member down, then enables unclean.leader.election.enable
// on the topic, or cluster-wide in /config/brokers/<default>: the broker that
// processes the change tells the controller, which elects the out-of-sync
// replica.
func TestUncleanElectionConfigElectsOfflinePartition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typ    kmsg.ConfigResourceType
		entity string
	}{
		{"topic override", kmsg.ConfigResourceTypeTopic, "unclean"},
		{"broker default", kmsg.ConfigResourceTypeBroker, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: map[string]string{"replica.lag.time.max.ms": "1000"}})
			createTopicWithConfigs(t, c, "unclean", 2, nil)
			c.StopBroker(2)
			// A fetch broker 2 sent while shutting down can put it back in the
			// ISR of the new leader after the controller removed it (2.8 checks
			// no liveness in AlterIsr; KIP-841 fixed it in 3.3). An idle
			// partition never shrinks a caught-up follower, so a record makes
			// the dead one fall behind and leave after replica.lag.time.max.ms.
			produce := c.Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			if err := produce.ProduceSync(ctxT(t, 20*time.Second), &kgo.Record{Topic: "unclean", Value: []byte("lost to the unclean election")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			c.WaitFor("the ISR to shrink to broker 1", func() bool {
				s, ok := c.PartitionState("unclean", 0)
				return ok && slices.Equal(s.ISR, []int32{1})
			})
			c.StopBroker(1)
			c.StartBroker(2)
			c.WaitFor("the partition to be offline under broker 2's control", func() bool {
				s, ok := c.PartitionState("unclean", 0)
				return ok && s.Leader == -1 && c.Broker(2).Controller().IsActive()
			})

			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			r := kmsg.NewIncrementalAlterConfigsRequestResource()
			r.ResourceType, r.ResourceName = tc.typ, tc.entity
			r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "unclean.leader.election.enable", Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr("true")}}
			req.Resources = append(req.Resources, r)
			c.WaitFor("broker 2 to accept the config change", func() bool {
				return raw(t, c.Addr(2), req, 1).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode == 0
			})
			c.WaitFor("an unclean leader", func() bool {
				s, ok := c.PartitionState("unclean", 0)
				return ok && s.Leader == 2
			})
		})
	}
}

// TestConfigChangesSurviveSessionExpiry expires a broker's ZooKeeper session
// (its child watch on /config/changes dies with it) and sees a change
// written afterwards still applied.
func TestConfigChangesSurviveSessionExpiry(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	createTopicWithConfigs(t, c, "expiry", 1, nil)
	b := c.Broker(1)
	oldEpoch := b.BrokerEpoch()
	if err := b.ZooKeeper().ForceExpire(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("a new session", func() bool { return b.BrokerEpoch() > oldEpoch })
	zkc := c.ZooKeeper()
	if err := zkc.CreateIfMissing(zkpaths.TopicConfigPath("expiry"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := zkc.Set(zkpaths.TopicConfigPath("expiry"), []byte(`{"version":1,"config":{"segment.ms":"60000"}}`), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := zkc.Create(zkpaths.ConfigChangePrefix, []byte(`{"version":2,"entity_path":"topics/expiry"}`), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	waitForLogConfig(t, c, "expiry", "the change written after the expiry to be applied", func(cfg storage.LogConfig) bool { return cfg.SegmentMs == 60000 }, 1)
}
