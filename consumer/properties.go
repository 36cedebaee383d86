package consumer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/security"
)

// ConfigFromProperties builds a Config from Kafka consumer properties, both
// 0.8 names (zookeeper.connect, auto.commit.enable, smallest/largest) and
// the new consumer's (bootstrap.servers, enable.auto.commit,
// earliest/latest), and the security configs (security.protocol, ssl.*,
// sasl.*) the brokers' listener needs. Topics are not a property: set
// Config.Topics.
func ConfigFromProperties(props map[string]string) (Config, error) {
	var cfg Config
	ms := func(key, v string, dst *time.Duration) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %s=%q is not a non-negative number of milliseconds", ErrInvalidConfig, key, v)
		}
		*dst = time.Duration(n) * time.Millisecond
		return nil
	}
	secProps := map[string]string{}
	for key, v := range props {
		if security.IsClientSecurityConfig(key) {
			secProps[key] = v
			continue
		}
		var err error
		switch key {
		case "group.id":
			cfg.GroupID = v
		case "client.id":
			cfg.ClientID = v
		case "zookeeper.connect":
			cfg.ZooKeeperConnect = v
		case "bootstrap.servers":
			cfg.BootstrapServers = strings.Split(v, ",")
		case "auto.commit.enable", "enable.auto.commit":
			var on bool
			if on, err = strconv.ParseBool(v); err != nil {
				err = fmt.Errorf("%w: %s=%q is not a boolean", ErrInvalidConfig, key, v)
			}
			cfg.DisableAutoCommit = !on
		case "auto.commit.interval.ms":
			err = ms(key, v, &cfg.AutoCommitInterval)
		case "auto.offset.reset":
			cfg.AutoOffsetReset = v
		case "isolation.level":
			cfg.IsolationLevel = v
		case "exclude.internal.topics":
			var exclude bool
			if exclude, err = strconv.ParseBool(v); err != nil {
				err = fmt.Errorf("%w: %s=%q is not a boolean", ErrInvalidConfig, key, v)
			}
			cfg.IncludeInternalTopics = !exclude
		case "max.poll.records":
			if cfg.MaxPollRecords, err = strconv.Atoi(v); err != nil {
				err = fmt.Errorf("%w: %s=%q is not an integer", ErrInvalidConfig, key, v)
			}
		case "rebalance.max.retries":
			if cfg.RebalanceMaxRetries, err = strconv.Atoi(v); err != nil {
				err = fmt.Errorf("%w: %s=%q is not an integer", ErrInvalidConfig, key, v)
			}
		case "rebalance.backoff.ms":
			err = ms(key, v, &cfg.RebalanceBackoff)
		case "zookeeper.session.timeout.ms":
			err = ms(key, v, &cfg.ZooKeeperSessionTimeout)
		case "session.timeout.ms":
			err = ms(key, v, &cfg.SessionTimeout)
		case "heartbeat.interval.ms":
			err = ms(key, v, &cfg.HeartbeatInterval)
		case "max.poll.interval.ms":
			err = ms(key, v, &cfg.RebalanceTimeout)
		case "metadata.max.age.ms":
			err = ms(key, v, &cfg.MetadataMaxAge)
		case "group.protocol":
			cfg.GroupProtocol = v
		case "group.remote.assignor":
			cfg.GroupRemoteAssignor = v
		case "group.instance.id":
			cfg.GroupInstanceID = v
		case "partition.assignment.strategy":
			for _, s := range strings.Split(v, ",") {
				cfg.PartitionAssignmentStrategy = append(cfg.PartitionAssignmentStrategy, assignorName(strings.TrimSpace(s)))
			}
		default:
			err = fmt.Errorf("%w: unknown property %q", ErrInvalidConfig, key)
		}
		if err != nil {
			return Config{}, err
		}
	}
	sec, err := security.ClientSecurity(secProps)
	if err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	cfg.Security = sec
	return cfg, nil
}

// assignorName maps Java's assignor class names to the protocol names.
func assignorName(s string) string {
	switch s {
	case "org.apache.kafka.clients.consumer.RangeAssignor":
		return "range"
	case "org.apache.kafka.clients.consumer.RoundRobinAssignor":
		return "roundrobin"
	case "org.apache.kafka.clients.consumer.StickyAssignor":
		return "sticky"
	case "org.apache.kafka.clients.consumer.CooperativeStickyAssignor":
		return "cooperative-sticky"
	}
	return s
}
