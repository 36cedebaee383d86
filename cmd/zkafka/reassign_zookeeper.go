package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// zkReassigner is the --zookeeper backend: it reads assignments and brokers
// from ZooKeeper and writes the /admin/reassign_partitions request and the
// throttle configs through adminzk; the controller's watch does the rest.
type zkReassigner struct {
	*reassigner
	zk    *zkclient.Client
	admin *adminzk.Client
}

// brokerRacks maps the brokers registered in /brokers/ids to their racks.
func (r *zkReassigner) brokerRacks() (map[int32]string, error) {
	ids, _, err := r.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		return nil, fmt.Errorf("list brokers: %w", err)
	}
	racks := map[int32]string{}
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			continue
		}
		data, _, err := r.zk.Get(zkpaths.BrokerPath(int32(id)))
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("read broker %d: %w", id, err)
		}
		reg, err := zkpaths.DecodeBrokerRegistration(int32(id), data)
		if err != nil {
			return nil, err
		}
		racks[int32(id)] = reg.Rack
	}
	return racks, nil
}

// currentAssignment reads the topics' assignments from ZooKeeper; as in Kafka's
// ZooKeeper path, a missing topic simply has no partitions.
func (r *zkReassigner) currentAssignment(topics []string) (assignment, error) {
	out := assignment{}
	for _, t := range topics {
		a, err := zkTopicAssignment(r.zk, t)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for p, replicas := range a.Partitions {
			out[kafka.TopicPartition{Topic: t, Partition: p}] = replicas
		}
	}
	return out, nil
}

func (r *zkReassigner) execute(targets []reassignTarget, opts toolOptions) error {
	if len(replicaMoves(targets)) > 0 {
		return errNeedsBootstrapServer
	}
	throttle, err := longOption(opts, "throttle")
	if err != nil {
		return err
	}
	current, err := r.currentAssignment(targetTopics(targets))
	if err != nil {
		return err
	}
	var missing []string
	for _, t := range targets {
		if _, ok := current[t.tp]; !ok {
			missing = append(missing, t.tp.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("The proposed assignment contains non-existent partitions: List(%s)", strings.Join(missing, ", "))
	}
	live, err := liveBrokers(r)
	if err != nil {
		return err
	}
	var unknown []int32
	for _, t := range targets {
		for _, id := range t.replicas {
			if !slices.Contains(live, id) && !slices.Contains(unknown, id) {
				unknown = append(unknown, id)
			}
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("The proposed assignment contains non-existent brokerIDs: %s", joinInt32s(unknown))
	}
	if ok, _, err := r.zk.Exists(zkpaths.ReassignPartitions); err != nil {
		return fmt.Errorf("read %s: %w", zkpaths.ReassignPartitions, err)
	} else if ok {
		return &terseError{cannotExecuteMessage}
	}
	r.printRollback(targets, current)
	if throttle >= 0 {
		fmt.Fprintln(r.out, "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.")
		moves := proposedMoves(nil, targets, current)
		leader, follower := topicThrottleValues(moves)
		for _, t := range slices.Sorted(maps.Keys(leader)) {
			err := r.admin.ChangeEntityConfig(zkpaths.EntityTopics, t, func(c map[string]string) (bool, error) {
				c[topicThrottles[0]], c[topicThrottles[1]] = leader[t], follower[t]
				return true, nil
			})
			if err != nil {
				return err
			}
		}
		rate := strconv.FormatInt(throttle, 10)
		for _, id := range reassigningBrokers(moves) {
			err := r.admin.ChangeEntityConfig(zkpaths.EntityBrokers, strconv.Itoa(int(id)), func(c map[string]string) (bool, error) {
				c[brokerThrottles[0]], c[brokerThrottles[1]] = rate, rate
				return true, nil
			})
			if err != nil {
				return err
			}
		}
		fmt.Fprintf(r.out, "The inter-broker throttle limit was set to %d B/s\n", throttle)
	}
	data := zkpaths.ReassignPartitionsData{}
	for _, t := range targets {
		data.Partitions = append(data.Partitions, zkpaths.PartitionReplicas{Topic: t.tp.Topic, Partition: t.tp.Partition, Replicas: t.replicas})
	}
	if err := r.admin.WriteReassignment(data); err != nil {
		if errors.Is(err, adminzk.ErrReassignmentInProgress) {
			return &terseError{cannotExecuteMessage}
		}
		return err
	}
	r.printStarted(targets)
	return nil
}

func (r *zkReassigner) verify(targets []reassignTarget, preserveThrottles bool) error {
	if len(replicaMoves(targets)) > 0 {
		return errNeedsBootstrapServer
	}
	pending := map[kafka.TopicPartition]bool{}
	d, _, err := r.admin.PendingReassignment()
	if err != nil {
		return err
	}
	for _, p := range d.Partitions {
		pending[kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = true
	}
	fmt.Fprintln(r.out, "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "+
		"Use --bootstrap-server instead for more accurate results.")
	current, err := r.currentAssignment(targetTopics(targets))
	if err != nil {
		return err
	}
	states := map[kafka.TopicPartition]reassignmentState{}
	for _, t := range targets {
		states[t.tp] = reassignmentState{current: current[t.tp], target: t.replicas, done: !pending[t.tp]}
	}
	r.printStates(states)
	if len(pending) > 0 || preserveThrottles {
		return nil
	}
	live, err := liveBrokers(r)
	if err != nil {
		return err
	}
	brokers, topics := throttleScope(live, targets)
	fmt.Fprintf(r.out, "Clearing broker-level throttles on broker%s %s\n", plural(len(brokers)), joinInt32s(brokers))
	for _, id := range brokers {
		if err := r.admin.ChangeEntityConfig(zkpaths.EntityBrokers, strconv.Itoa(int(id)), removeKeys(brokerThrottles)); err != nil {
			return err
		}
	}
	fmt.Fprintf(r.out, "Clearing topic-level throttles on topic%s %s\n", plural(len(topics)), strings.Join(topics, ","))
	for _, t := range topics {
		if err := r.admin.ChangeEntityConfig(zkpaths.EntityTopics, t, removeKeys(topicThrottles)); err != nil {
			return err
		}
	}
	return nil
}

// removeKeys is a config update deleting keys; it writes nothing when the
// config has none of them.
func removeKeys(keys []string) func(map[string]string) (bool, error) {
	return func(c map[string]string) (bool, error) {
		changed := false
		for _, k := range keys {
			if _, ok := c[k]; ok {
				delete(c, k)
				changed = true
			}
		}
		return changed, nil
	}
}
