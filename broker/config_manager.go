package broker

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/zkpaths"
)

// configManager is Kafka's DynamicConfigManager with its
// ZkNodeChangeNotificationListener, and the broker's DynamicBrokerConfig.
//
// It keeps the broker configuration in layers, most specific first:
// /config/brokers/<id>, /config/brokers/<default>, server.properties, Kafka's
// defaults. Topic log configs are computed from the effective broker values
// with /config/topics/<t> on top.
//
// A changeListener processes /config/changes: each notification it has not
// applied — all of them after a start, as Kafka does — makes the manager
// re-read the entity's config znode.
type configManager struct {
	s      *Server
	log    *zap.Logger
	static map[string]string // server.properties as supplied

	mu         sync.RWMutex
	dynDefault map[string]string // /config/brokers/<default>
	dynBroker  map[string]string // /config/brokers/<id>

	clock atomic.Pointer[func() time.Time] // the notification purge's; tests move it forward
}

func newConfigManager(s *Server) *configManager {
	m := &configManager{
		s: s, log: s.log.Named("dynamic-config-manager"), static: s.cfg.Properties,
		dynDefault: map[string]string{}, dynBroker: map[string]string{},
	}
	now := time.Now
	m.clock.Store(&now)
	return m
}

// lookup returns the effective value of a broker config and where it comes
// from.
func (m *configManager) lookup(name string) (string, int8, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, layer := range []struct {
		values map[string]string
		source int8
	}{{m.dynBroker, sourceDynamicBroker}, {m.dynDefault, sourceDynamicDefault}, {m.static, sourceStaticBrokerConfig}} {
		if v, ok := brokerconfig.Supplied(layer.values, name); ok {
			return v, layer.source, true
		}
	}
	if v, ok := brokerconfig.BrokerDefault(name); ok {
		return v, sourceDefaultConfig, true
	}
	return "", 0, false
}

// brokerValue is the effective value of a broker config, "" when unset.
func (m *configManager) brokerValue(name string) string {
	v, _, _ := m.lookup(name)
	return v
}

// topicDefault is the broker's default for a topic config, as Kafka's
// copyKafkaConfigToLog computes it from the effective broker config.
func (m *configManager) topicDefault(topicConfig string) string {
	fromHours := func(ms, hours string) string {
		if v, _, ok := m.lookup(ms); ok {
			return v
		}
		return strconv.FormatInt(parseInteger(m.brokerValue(hours))*3600000, 10)
	}
	switch topicConfig {
	case "retention.ms":
		ms := int64(0)
		if v, _, ok := m.lookup("log.retention.ms"); ok {
			ms = parseInteger(v)
		} else if v, _, ok := m.lookup("log.retention.minutes"); ok {
			ms = parseInteger(v) * 60000
		} else {
			ms = parseInteger(m.brokerValue("log.retention.hours")) * 3600000
		}
		return strconv.FormatInt(max(ms, -1), 10)
	case "segment.ms":
		return fromHours("log.roll.ms", "log.roll.hours")
	case "segment.jitter.ms":
		return fromHours("log.roll.jitter.ms", "log.roll.jitter.hours")
	case "flush.ms":
		if v, _, ok := m.lookup("log.flush.interval.ms"); ok {
			return v
		}
		return m.brokerValue("log.flush.scheduler.interval.ms")
	}
	def, ok := brokerconfig.LookupTopicConfig(topicConfig)
	if !ok {
		return ""
	}
	if def.BrokerSynonym != "" {
		if v, _, ok := m.lookup(def.BrokerSynonym); ok {
			return v
		}
	}
	return def.KafkaDefault
}

// parseInteger reads an integer config value, 0 when it does not parse (values
// were validated where they were set).
func parseInteger(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n
}

// logDefaults is the LogConfig of a topic without overrides.
func (m *configManager) logDefaults() storage.LogConfig {
	return brokerconfig.LogConfigFromBroker(m.topicDefault)
}

// uncleanLeaderElection is the effective unclean.leader.election.enable.
func (m *configManager) uncleanLeaderElection() bool {
	v, _ := brokerconfig.ParseValue("unclean.leader.election.enable", brokerconfig.TypeBoolean, m.brokerValue("unclean.leader.election.enable"))
	return v == "true"
}

// synonyms lists where the named config (given under any of names) is set,
// layer by layer, dropping the entries before the first one named name —
// Kafka's configSynonyms, quirks included (retention.ms of a broker that only
// sets log.retention.hours has no synonyms).
func (m *configManager) synonyms(name string, names []string) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	m.mu.RLock()
	layers := []struct {
		values map[string]string
		source int8
	}{{m.dynBroker, sourceDynamicBroker}, {m.dynDefault, sourceDynamicDefault}, {m.static, sourceStaticBrokerConfig}}
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	add := func(n, v string, source int8) {
		s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		s.Name, s.Value, s.Source = n, kmsg.StringPtr(v), kmsg.ConfigSource(source)
		out = append(out, s)
	}
	for _, layer := range layers {
		for _, n := range names {
			if v, ok := brokerconfig.Supplied(layer.values, n); ok {
				add(n, v, layer.source)
			}
		}
	}
	m.mu.RUnlock()
	for _, n := range names {
		if v, ok := brokerconfig.BrokerDefault(n); ok {
			add(n, v, sourceDefaultConfig)
		}
	}
	for len(out) > 0 && out[0].Name != name {
		out = out[1:]
	}
	return out
}

// dynamicLayer returns a copy of /config/brokers/<default> (entity
// DefaultEntity) or of this broker's /config/brokers/<id>.
func (m *configManager) dynamicLayer(perBroker bool) map[string]string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if perBroker {
		return maps.Clone(m.dynBroker)
	}
	return maps.Clone(m.dynDefault)
}

// loadBrokerConfigs reads /config/brokers/<default> and /config/brokers/<id>;
// Kafka does it before the log manager starts, so logs open with them.
func (m *configManager) loadBrokerConfigs() error {
	for _, entity := range []string{zkpaths.DefaultEntity, strconv.Itoa(int(m.s.brokerID))} {
		if err := m.reloadBrokerConfig(entity); err != nil {
			return err
		}
	}
	return nil
}

// reloadBrokerConfig re-reads one /config/brokers entity into its layer,
// dropping (with a warning) entries that are not valid dynamic configs, as
// Kafka does with persisted configs it cannot apply.
func (m *configManager) reloadBrokerConfig(entity string) error {
	cfg, err := m.s.adminZk().FetchEntityConfig(zkpaths.EntityBrokers, entity)
	if err != nil {
		return err
	}
	for k, v := range cfg {
		if err := brokerconfig.ValidateDynamicBrokerConfig(map[string]string{k: v}); err != nil {
			m.log.Warn("Ignoring a dynamic broker config that is not valid", zap.String("entity", entity), zap.String("config", k), zap.Error(err))
			delete(cfg, k)
		}
	}
	if entity != zkpaths.DefaultEntity {
		// Before the layer shows the rates, so DescribeConfigs never
		// reports a rate that does not apply yet.
		m.applyReplicationThrottleRates(cfg)
	}
	m.mu.Lock()
	if entity == zkpaths.DefaultEntity {
		m.dynDefault = cfg
	} else {
		m.dynBroker = cfg
	}
	m.mu.Unlock()
	m.log.Info("Loaded dynamic broker config", zap.String("entity", entity), zap.String("config", adminzk.FormatConfig(cfg)))
	m.applyClockSkew()
	return nil
}

// applyClockSkew moves the broker's clock to the effective
// zkafka.clock.skew.ms, logging the jump.
func (m *configManager) applyClockSkew() {
	ms, err := strconv.ParseInt(m.brokerValue("zkafka.clock.skew.ms"), 10, 64)
	if err != nil {
		return // validated before it reached a layer; the static one by brokerconfig.New
	}
	skew := time.Duration(ms) * time.Millisecond
	if m.s.clock.SetSkew(skew) {
		m.log.Warn("The broker's wall clock jumped", zap.Duration("skew", skew), zap.Time("now", m.s.clock.Now()))
	}
}

// start runs the listener of /config/changes until ctx ends.
func (m *configManager) start(ctx context.Context) {
	clock := func() time.Time { return (*m.clock.Load())() }
	m.s.startChangeListener(ctx, m.log, zkpaths.ConfigChanges, clock, m.processNotification)
}

// processNotification applies one notification. Only ZooKeeper failures are
// returned (the notification is then retried); a malformed notification or
// config is logged and skipped, as in Kafka.
func (m *configManager) processNotification(data []byte) error {
	n, err := zkpaths.DecodeConfigChangeNotification(data)
	if err != nil {
		m.log.Error("Ignoring a malformed config change notification", zap.ByteString("data", data), zap.Error(err))
		return nil
	}
	m.log.Info("Processing config change notification", zap.String("entity-path", n.EntityPath))
	switch n.EntityType() {
	case zkpaths.EntityTopics:
		return m.s.applyTopicConfigChange(n.EntityName())
	case zkpaths.EntityBrokers:
		name := n.EntityName()
		if name != zkpaths.DefaultEntity && name != strconv.Itoa(int(m.s.brokerID)) {
			return nil // another broker's own config
		}
		if err := m.reloadBrokerConfig(name); err != nil {
			return err
		}
		return m.s.applyBrokerConfigChange()
	case zkpaths.EntityClients, zkpaths.EntityUsers:
		return m.reloadQuotaConfig(n.EntityPath)
	case zkpaths.EntityIPs:
		return m.reloadIPQuotaConfig(n.EntityName())
	}
	m.log.Error("Ignoring a config change of an unknown entity type", zap.String("entity-path", n.EntityPath))
	return nil
}

// applyTopicConfigChange gives every local log of the topic its new config
// (Kafka's TopicConfigHandler), and, when the topic now allows unclean leader
// election, tells the controller, which may elect leaders for its offline
// partitions.
func (s *Server) applyTopicConfigChange(topic string) error {
	overrides, err := s.adminZk().FetchEntityConfig(zkpaths.EntityTopics, topic)
	if err != nil {
		return err
	}
	s.applyReplicationThrottles(topic, overrides)
	if !s.applyTopicLogConfig(topic, overrides) {
		return nil
	}
	if s.topicConfigValue(overrides, "unclean.leader.election.enable") == "true" {
		s.controller.TopicConfigChanged(topic)
	}
	return nil
}

// applyTopicLogConfig sets the config of the topic's local logs and
// partitions from its overrides over the broker defaults; an invalid stored
// config is logged and left unapplied (false).
func (s *Server) applyTopicLogConfig(topic string, overrides map[string]string) bool {
	cfg := s.defaultLogConfig()
	if err := brokerconfig.ApplyTopicConfig(&cfg, overrides); err != nil {
		s.log.Error("Ignoring an invalid topic config", zap.String("topic", topic), zap.String("config", adminzk.FormatConfig(overrides)), zap.Error(err))
		return false
	}
	minInsync := s.topicConfigValue(overrides, "min.insync.replicas")
	n := 0
	for tp, l := range s.logs.All() {
		if tp.Topic != topic {
			continue
		}
		if err := l.SetConfig(cfg); err != nil {
			s.log.Error("Cannot apply a topic config to a log", zap.Stringer("partition", tp), zap.Error(err))
			continue
		}
		if p, ok := s.replicas.Partition(tp.Topic, tp.Partition); ok {
			v, _ := strconv.ParseInt(minInsync, 10, 32)
			p.SetMinInsyncReplicas(int32(v))
		}
		n++
	}
	s.log.Info("Applied topic config", zap.String("topic", topic), zap.String("config", adminzk.FormatConfig(overrides)), zap.Int("logs", n))
	return true
}

// topicConfigValue is a topic config's effective value, normalized: the
// override, else the broker default.
func (s *Server) topicConfigValue(overrides map[string]string, name string) string {
	def, _ := brokerconfig.LookupTopicConfig(name)
	raw, ok := overrides[name]
	if !ok {
		raw = s.configs.topicDefault(name)
	}
	v, err := brokerconfig.ParseValue(name, def.Type, raw)
	if err != nil {
		return def.KafkaDefault
	}
	return v
}

// applyBrokerConfigChange recomputes every local log's config after the
// broker defaults changed (Kafka's DynamicLogConfig.reconfigure): topic
// overrides stay, everything else follows the new defaults. The controller
// learns the broker's unclean.leader.election.enable, which it falls back
// to for topics without an override.
func (s *Server) applyBrokerConfigChange() error {
	topics := map[string]bool{}
	for tp := range s.logs.All() {
		topics[tp.Topic] = true
	}
	for topic := range topics {
		overrides, err := s.adminZk().FetchEntityConfig(zkpaths.EntityTopics, topic)
		if err != nil {
			return err
		}
		s.applyTopicLogConfig(topic, overrides)
	}
	s.controller.BrokerConfigChanged(s.configs.uncleanLeaderElection())
	return nil
}
