package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// adminReassigner is the --bootstrap-server backend: ListPartitionReassignments,
// AlterPartitionReassignments, Metadata and IncrementalAlterConfigs for the
// throttles.
type adminReassigner struct {
	*reassigner
	cl *kgo.Client
}

// currentAssignment is every partition of the topics, failing when one is
// missing (Kafka's describeTopics).
func (r *adminReassigner) currentAssignment(topics []string) (assignment, error) {
	return r.adminAssignment(topics, nil)
}

// listReassignments asks the controller for the ongoing reassignments of
// the targets' partitions, or of all partitions when targets is nil.
func (r *adminReassigner) listReassignments(targets []reassignTarget) (map[kafka.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	if targets != nil {
		req.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		for _, t := range targets {
			i := slices.IndexFunc(req.Topics, func(x kmsg.ListPartitionReassignmentsRequestTopic) bool { return x.Topic == t.tp.Topic })
			if i < 0 {
				req.Topics = append(req.Topics, kmsg.ListPartitionReassignmentsRequestTopic{Topic: t.tp.Topic})
				i = len(req.Topics) - 1
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, t.tp.Partition)
		}
	}
	resp, err := req.RequestWith(ctx, r.cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, brokerError(err, resp.ErrorMessage)
	}
	out := map[kafka.TopicPartition]kmsg.ListPartitionReassignmentsResponseTopicPartition{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p
		}
	}
	return out, nil
}

// metadata fetches the brokers and the given topics (none when topics is
// empty).
func (r *adminReassigner) metadata(topics []string) (*kmsg.MetadataResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, t := range topics {
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(t)})
	}
	return req.RequestWith(ctx, r.cl)
}

// brokerRacks maps the live brokers to their racks ("" for none).
func (r *adminReassigner) brokerRacks() (map[int32]string, error) {
	m, err := r.metadata(nil)
	if err != nil {
		return nil, err
	}
	racks := map[int32]string{}
	for _, b := range m.Brokers {
		racks[b.NodeID] = derefOr(b.Rack, "")
	}
	return racks, nil
}

// describePartitions returns the replicas of every partition of the topics
// that exist; a missing topic has no entries (Kafka's --verify then shows
// an empty replica set).
func (r *adminReassigner) describePartitions(topics []string) (assignment, error) {
	if len(topics) == 0 {
		return assignment{}, nil
	}
	m, err := r.metadata(topics)
	if err != nil {
		return nil, err
	}
	out := assignment{}
	for _, t := range m.Topics {
		if kerr.ErrorForCode(t.ErrorCode) != nil {
			continue
		}
		for _, p := range t.Partitions {
			out[kafka.TopicPartition{Topic: *t.Topic, Partition: p.Partition}] = p.Replicas
		}
	}
	return out, nil
}

// adminAssignment is Kafka's describeTopics: every partition of the topics
// (only those of targets when given), failing when a topic is missing.
func (r *adminReassigner) adminAssignment(topics []string, targets []reassignTarget) (assignment, error) {
	m, err := r.metadata(topics)
	if err != nil {
		return nil, err
	}
	out := assignment{}
	for _, t := range m.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil, fmt.Errorf("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic %s not found.", *t.Topic)
			}
			return nil, fmt.Errorf("topic %s: %s", *t.Topic, javaException(err))
		}
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: *t.Topic, Partition: p.Partition}
			if targets == nil || slices.ContainsFunc(targets, func(x reassignTarget) bool { return x.tp == tp }) {
				out[tp] = p.Replicas
			}
		}
	}
	return out, nil
}

func (r *adminReassigner) execute(targets []reassignTarget, opts toolOptions) error {
	throttle, err := longOption(opts, "throttle")
	if err != nil {
		return err
	}
	logDirThrottle, err := longOption(opts, "replica-alter-log-dirs-throttle")
	if err != nil {
		return err
	}
	timeout, err := movesTimeout(opts)
	if err != nil {
		return err
	}
	moves := replicaMoves(targets)
	ongoing, err := r.listReassignments(nil)
	if err != nil {
		return err
	}
	if !opts.has("additional") && len(ongoing) > 0 {
		return &terseError{cannotExecuteMessage}
	}
	live, err := liveBrokers(r)
	if err != nil {
		return err
	}
	for _, t := range targets {
		for _, id := range t.replicas {
			if !slices.Contains(live, id) {
				return fmt.Errorf("Unknown broker id %d", id)
			}
		}
	}
	current, err := r.adminAssignment(targetTopics(targets), targets)
	if err != nil {
		return err
	}
	r.printRollback(targets, current)
	if throttle >= 0 || logDirThrottle >= 0 {
		fmt.Fprintln(r.out, "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.")
	}
	if throttle >= 0 {
		moves := proposedMoves(ongoing, targets, current)
		if err := r.alterConfigs(topicThrottleOps(moves), brokerThrottleOps(moves, throttle)); err != nil {
			return err
		}
		fmt.Fprintf(r.out, "The inter-broker throttle limit was set to %d B/s\n", throttle)
	}
	if logDirThrottle >= 0 {
		if err := r.alterConfigs(nil, logDirThrottleOps(moves, logDirThrottle)); err != nil {
			return err
		}
		fmt.Fprintf(r.out, "The replica-alter-dir throttle limit was set to %d B/s\n", logDirThrottle)
	}
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	for _, t := range targets {
		addReassignTopic(req, t.tp, t.replicas)
	}
	failed, err := r.alterReassignments(req)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return &terseError{"Error reassigning partition(s):\n" + strings.Join(failed, "\n")}
	}
	r.printStarted(targets)
	if len(moves) > 0 {
		return r.executeMoves(moves, timeout)
	}
	return nil
}

// alterReassignments sends an AlterPartitionReassignments request and
// returns Kafka's "t-0: message" line for every partition that failed.
func (r *adminReassigner) alterReassignments(req *kmsg.AlterPartitionAssignmentsRequest) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, r.cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, brokerError(err, resp.ErrorMessage)
	}
	type failure struct {
		tp  kafka.TopicPartition
		msg string
	}
	var failures []failure
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				failures = append(failures, failure{kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition},
					brokerError(err, p.ErrorMessage).Error()})
			}
		}
	}
	slices.SortFunc(failures, func(a, b failure) int { return kafka.Compare(a.tp, b.tp) })
	lines := make([]string, len(failures))
	for i, f := range failures {
		lines[i] = f.tp.String() + ": " + f.msg
	}
	return lines, nil
}

func addReassignTopic(req *kmsg.AlterPartitionAssignmentsRequest, tp kafka.TopicPartition, replicas []int32) {
	i := slices.IndexFunc(req.Topics, func(t kmsg.AlterPartitionAssignmentsRequestTopic) bool { return t.Topic == tp.Topic })
	if i < 0 {
		req.Topics = append(req.Topics, kmsg.AlterPartitionAssignmentsRequestTopic{Topic: tp.Topic})
		i = len(req.Topics) - 1
	}
	req.Topics[i].Partitions = append(req.Topics[i].Partitions,
		kmsg.AlterPartitionAssignmentsRequestTopicPartition{Partition: tp.Partition, Replicas: replicas})
}

func (r *adminReassigner) verify(targets []reassignTarget, preserveThrottles bool) error {
	ongoing, err := r.listReassignments(nil)
	if err != nil {
		return err
	}
	states := map[kafka.TopicPartition]reassignmentState{}
	var settled []reassignTarget
	for _, t := range targets {
		if p, ok := ongoing[t.tp]; ok {
			states[t.tp] = reassignmentState{current: p.Replicas, target: t.replicas}
		} else {
			settled = append(settled, t)
		}
	}
	current, err := r.describePartitions(targetTopics(settled))
	if err != nil {
		return err
	}
	for _, t := range settled {
		states[t.tp] = reassignmentState{current: current[t.tp], target: t.replicas, done: true}
	}
	r.printStates(states)
	movesOngoing := r.verifyMoves(replicaMoves(targets))
	if len(ongoing) == 0 && !movesOngoing && !preserveThrottles {
		return r.adminClearThrottles(targets)
	}
	return nil
}

// movesTimeout is --timeout, the wait for log-dir moves to start (10 s by
// default).
func movesTimeout(opts toolOptions) (time.Duration, error) {
	timeout, err := longOption(opts, "timeout")
	if err != nil {
		return 0, err
	}
	if timeout < 0 {
		timeout = 10000
	}
	return time.Duration(timeout) * time.Millisecond, nil
}

// cancel stops the targets' partition reassignments and their log-dir moves
// under way, each replica asked back to its current log dir (Kafka's
// cancelAssignment), then clears the throttles unless told to keep them.
func (r *adminReassigner) cancel(targets []reassignTarget, opts toolOptions) error {
	timeout, err := movesTimeout(opts)
	if err != nil {
		return err
	}
	ongoing, err := r.listReassignments(targets)
	if err != nil {
		return err
	}
	var active []kafka.TopicPartition
	for tp, p := range ongoing {
		if len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0 {
			active = append(active, tp)
		}
	}
	slices.SortFunc(active, kafka.Compare)
	if len(active) > 0 {
		req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		req.TimeoutMillis = int32(adminTimeout.Milliseconds())
		for _, tp := range active {
			addReassignTopic(req, tp, nil)
		}
		failed, err := r.alterReassignments(req)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			return &terseError{fmt.Sprintf("Error cancelling partition reassignment%s for:\n%s", plural(len(failed)), strings.Join(failed, "\n"))}
		}
		fmt.Fprintf(r.out, "Successfully cancelled partition reassignment%s for: %s\n", plural(len(active)), joinPartitions(active, ","))
	} else {
		fmt.Fprintln(r.out, "None of the specified partition reassignments are active.")
	}
	moves := replicaMoves(targets)
	dirs := r.describeReplicaLogDirs(moves)
	var back []replicaMove
	for _, m := range moves {
		if d := dirs[m]; d.current != "" && d.future != "" {
			back = append(back, replicaMove{m.tp, m.broker, d.current})
		}
	}
	if len(back) == 0 {
		fmt.Fprintln(r.out, "None of the specified partition moves are active.")
	} else if err := r.executeMoves(back, timeout); err != nil {
		return err
	}
	if !opts.has("preserve-throttles") {
		return r.adminClearThrottles(targets)
	}
	return nil
}

// adminClearThrottles removes the reassignment throttles from every live
// broker, every target replica and every target topic.
func (r *adminReassigner) adminClearThrottles(targets []reassignTarget) error {
	live, err := liveBrokers(r)
	if err != nil {
		return err
	}
	brokers, topics := throttleScope(live, targets)
	fmt.Fprintf(r.out, "Clearing broker-level throttles on broker%s %s\n", plural(len(brokers)), joinInt32s(brokers))
	var brokerOps []configOps
	for _, id := range brokers {
		brokerOps = append(brokerOps, configOps{kind: kmsg.ConfigResourceTypeBroker, name: strconv.Itoa(int(id)), delete: brokerThrottles})
	}
	if err := r.alterConfigs(nil, brokerOps); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "Clearing topic-level throttles on topic%s %s\n", plural(len(topics)), strings.Join(topics, ","))
	var topicOps []configOps
	for _, t := range topics {
		topicOps = append(topicOps, configOps{kind: kmsg.ConfigResourceTypeTopic, name: t, delete: topicThrottles})
	}
	return r.alterConfigs(topicOps, nil)
}

// configOps are the config changes for one resource.
type configOps struct {
	kind   kmsg.ConfigResourceType
	name   string
	set    map[string]string
	delete []string
}

// alterConfigs sends IncrementalAlterConfigs: topics to any broker, each
// broker's own resource to that broker.
func (r *adminReassigner) alterConfigs(topicOps, brokerOps []configOps) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	for _, ops := range append(topicOps, brokerOps...) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.IncrementalAlterConfigsRequestResource{ResourceType: ops.kind, ResourceName: ops.name}
		for _, k := range slices.Sorted(maps.Keys(ops.set)) {
			res.Configs = append(res.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{
				Name: k, Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr(ops.set[k])})
		}
		for _, k := range ops.delete {
			res.Configs = append(res.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{
				Name: k, Op: kmsg.IncrementalAlterConfigOpDelete})
		}
		req.Resources = append(req.Resources, res)
		var resp *kmsg.IncrementalAlterConfigsResponse
		var err error
		if ops.kind == kmsg.ConfigResourceTypeBroker {
			id, _ := strconv.Atoi(ops.name)
			resp, err = req.RequestWith(ctx, r.cl.Broker(id))
		} else {
			resp, err = req.RequestWith(ctx, r.cl)
		}
		if err != nil {
			return err
		}
		for _, rr := range resp.Resources {
			if err := kerr.ErrorForCode(rr.ErrorCode); err != nil {
				return &messageError{msg: javaException(brokerError(err, rr.ErrorMessage)), code: err}
			}
		}
	}
	return nil
}

// topicThrottleOps sets leader.replication.throttled.replicas to the
// "partition:broker" sources and follower.…replicas to the destinations.
func topicThrottleOps(moves map[kafka.TopicPartition]partitionMove) []configOps {
	leader, follower := topicThrottleValues(moves)
	var ops []configOps
	for _, t := range slices.Sorted(maps.Keys(leader)) {
		ops = append(ops, configOps{kind: kmsg.ConfigResourceTypeTopic, name: t, set: map[string]string{
			topicThrottles[0]: leader[t], topicThrottles[1]: follower[t]}})
	}
	return ops
}

// brokerThrottleOps sets the leader and follower rates on every broker a
// partition moves from or to.
func brokerThrottleOps(moves map[kafka.TopicPartition]partitionMove, throttle int64) []configOps {
	var ops []configOps
	for _, id := range reassigningBrokers(moves) {
		rate := strconv.FormatInt(throttle, 10)
		ops = append(ops, configOps{kind: kmsg.ConfigResourceTypeBroker, name: strconv.Itoa(int(id)),
			set: map[string]string{brokerThrottles[0]: rate, brokerThrottles[1]: rate}})
	}
	return ops
}
