package brokerconfig

import (
	"fmt"
	"slices"
	"strings"
)

// rebalanceProtocols checks group.coordinator.rebalance.protocols as Kafka
// 4.0 does (classic must stay; share groups are not served here) and
// reports whether consumer is enabled.
func rebalanceProtocols(protocols []string) (consumer bool, err error) {
	for _, p := range protocols {
		switch strings.ToLower(p) {
		case "classic":
		case "consumer":
			consumer = true
		default:
			return false, fmt.Errorf("invalid value %s for configuration group.coordinator.rebalance.protocols: supported protocols are classic and consumer: %w", p, ErrConfig)
		}
	}
	if !slices.ContainsFunc(protocols, func(p string) bool { return strings.EqualFold(p, "classic") }) {
		return false, fmt.Errorf("disabling the 'classic' protocol is not supported: %w", ErrConfig)
	}
	return consumer, nil
}

// ConsumerAssignors are the server-side assignors of the consumer group
// protocol this broker has (group.consumer.assignors).
var ConsumerAssignors = []string{"uniform", "range"}

// checkConsumerGroupConfigs applies Kafka 4.0's GroupCoordinatorConfig
// checks to the group.consumer.* configs.
func checkConsumerGroupConfigs(p *Reader) error {
	session, minSession, maxSession := p.Int32("group.consumer.session.timeout.ms"),
		p.Int32("group.consumer.min.session.timeout.ms"), p.Int32("group.consumer.max.session.timeout.ms")
	heartbeat, minHeartbeat, maxHeartbeat := p.Int32("group.consumer.heartbeat.interval.ms"),
		p.Int32("group.consumer.min.heartbeat.interval.ms"), p.Int32("group.consumer.max.heartbeat.interval.ms")
	if err := p.Err(); err != nil {
		return err
	}
	switch {
	case minSession < 1 || minHeartbeat < 1 || p.Int32("group.consumer.max.size") < 1:
		return fmt.Errorf("group.consumer.min.session.timeout.ms, group.consumer.min.heartbeat.interval.ms and group.consumer.max.size must be at least 1: %w", ErrConfig)
	case session < minSession || session > maxSession:
		return fmt.Errorf("group.consumer.session.timeout.ms %d must be between group.consumer.min.session.timeout.ms %d and group.consumer.max.session.timeout.ms %d: %w", session, minSession, maxSession, ErrConfig)
	case heartbeat < minHeartbeat || heartbeat > maxHeartbeat:
		return fmt.Errorf("group.consumer.heartbeat.interval.ms %d must be between group.consumer.min.heartbeat.interval.ms %d and group.consumer.max.heartbeat.interval.ms %d: %w", heartbeat, minHeartbeat, maxHeartbeat, ErrConfig)
	case heartbeat >= session:
		return fmt.Errorf("group.consumer.heartbeat.interval.ms %d must be less than group.consumer.session.timeout.ms %d: %w", heartbeat, session, ErrConfig)
	}
	assignors := p.List("group.consumer.assignors")
	if len(assignors) == 0 {
		return fmt.Errorf("group.consumer.assignors must name at least one assignor: %w", ErrConfig)
	}
	for _, a := range assignors {
		if !slices.Contains(ConsumerAssignors, a) {
			return fmt.Errorf("group.consumer.assignors: unknown assignor %s (this broker has %s): %w", a, strings.Join(ConsumerAssignors, ", "), ErrConfig)
		}
	}
	return nil
}
