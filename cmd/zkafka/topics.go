package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

var topicsOptions = []optionSpec{
	argOpt("bootstrap-server", "server to connect to", "REQUIRED: The Kafka server to connect to. In case of providing this, a direct Zookeeper connection won't be required."),
	argOpt("command-config", "command config property file", "Property file containing configs to be passed to Admin Client. "+
		"This is used only with --bootstrap-server option for describing and altering broker configs."),
	argOpt("zookeeper", "hosts", "DEPRECATED, The connection string for the zookeeper connection in the form host:port. Multiple hosts can be given to allow fail-over."),
	flagOpt("list", "List all available topics."),
	flagOpt("create", "Create a new topic."),
	flagOpt("delete", "Delete a topic"),
	flagOpt("alter", "Alter the number of partitions, replica assignment, and/or configuration for the topic."),
	flagOpt("describe", "List details for the given topics."),
	argOpt("topic", "topic", "The topic to create, alter, describe or delete. It also accepts a regular expression, except for --create option. "+
		`Put topic name in double quotes and use the '\\' prefix to escape regular expression symbols; e.g. "test\\.topic".`),
	argOpt("config", "name=value", topicConfigDoc()),
	argOpt("delete-config", "name", "A topic configuration override to be removed for an existing topic (see the list of configurations under the --config option). "+
		"Not supported with the --bootstrap-server option."),
	argOpt("partitions", "# of partitions", "The number of partitions for the topic being created or altered (WARNING: If partitions are increased for a topic "+
		"that has a key, the partition logic or ordering of the messages will be affected). If not supplied for create, defaults to the cluster default.").typed("Integer"),
	argOpt("replication-factor", "replication factor", "The replication factor for each partition in the topic being created. If not supplied, defaults to the cluster default.").typed("Integer"),
	argOpt("replica-assignment", "broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...",
		"A list of manual partition-to-broker assignments for the topic being created or altered."),
	flagOpt("under-replicated-partitions", "if set when describing topics, only show under replicated partitions"),
	flagOpt("unavailable-partitions", "if set when describing topics, only show partitions whose leader is not available"),
	flagOpt("under-min-isr-partitions", "if set when describing topics, only show partitions whose isr count is less than the configured minimum. Not supported with the --zookeeper option."),
	flagOpt("at-min-isr-partitions", "if set when describing topics, only show partitions whose isr count is equal to the configured minimum. Not supported with the --zookeeper option."),
	flagOpt("topics-with-overrides", "if set when describing topics, only show topics that have overridden configs"),
	flagOpt("if-exists", "if set when altering or deleting or describing topics, the action will only execute if the topic exists."),
	flagOpt("if-not-exists", "if set when creating topics, the action will only execute if the topic does not already exist."),
	flagOpt("exclude-internal", "exclude internal topics when running list or describe command. The internal topics will be listed by default"),
	helpOption,
}

// topicConfigDoc is --config's description: Kafka lists every topic config,
// one a line after a tab.
func topicConfigDoc() string {
	var names []string
	for _, c := range brokerconfig.TopicConfigs() {
		names = append(names, "\t"+c.Name)
	}
	slices.Sort(names)
	return "A topic configuration override for the topic being created or altered. The following is a list of valid configurations: \n" +
		strings.Join(names, "\n") + "\nSee the Kafka documentation for full details on the topic configs. It is supported only in combination with --create " +
		"if --bootstrap-server option is used (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)."
}

// runTopics is kafka-topics.sh (Kafka 2.8's TopicCommand): one action on
// topics, through a broker's admin APIs (--bootstrap-server) or directly on
// the znodes (--zookeeper), as the pre-3.0 tool could.
func runTopics(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, topicsOptions)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if helpNeeded(args, opts, "This tool helps to create, delete, describe, or change a topic.", topicsOptions, stderr) {
		return 1
	}
	cmd, err := newTopicCommand(opts)
	if err != nil {
		return finishTool(err, "topic", stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	var svc topicService
	if opts.has("zookeeper") {
		zkc, err := dialZooKeeper(ctx, opts.value("zookeeper"))
		if err != nil {
			return finishTool(err, "topic", stderr)
		}
		defer zkc.Close()
		svc = &zkTopicService{zk: zkc, admin: newAdminZk(zkc), out: stdout}
	} else {
		cl, adm, err := dialAdmin(opts.value("bootstrap-server"), opts.value("command-config"))
		if err != nil {
			return finishTool(err, "topic", stderr)
		}
		defer cl.Close()
		svc = &adminTopicService{cl: cl, adm: adm, out: stdout}
	}
	return finishTool(cmd.run(ctx, svc, stdout), "topic", stderr)
}

// topicCommand is a validated kafka-topics invocation.
type topicCommand struct {
	opts              toolOptions
	action            string
	topic             string
	partitions        int32 // -1: broker default
	replicationFactor int16 // -1: broker default
	assignment        map[int32][]int32
	configs           map[string]string
}

func newTopicCommand(opts toolOptions) (*topicCommand, error) {
	actions := []string{"create", "list", "describe", "alter", "delete"}
	if opts.count(actions...) != 1 {
		return nil, usageErrorf("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
	}
	if opts.count("bootstrap-server", "zookeeper") != 1 {
		return nil, usageErrorf("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	c := &topicCommand{opts: opts, topic: opts.value("topic"), partitions: -1, replicationFactor: -1}
	for _, a := range actions {
		if opts.has(a) {
			c.action = a
		}
	}
	if c.action != "list" && c.action != "describe" {
		if err := opts.checkRequired("topic"); err != nil {
			return nil, err
		}
	}
	for _, check := range []struct {
		option  string
		invalid []string
	}{
		{"replica-assignment", []string{"replication-factor"}},
		{"if-not-exists", []string{"alter", "list", "describe", "delete"}},
		{"if-exists", []string{"create", "list"}},
		{"under-replicated-partitions", []string{"alter", "create", "delete", "list", "unavailable-partitions",
			"under-min-isr-partitions", "at-min-isr-partitions", "topics-with-overrides"}},
		{"unavailable-partitions", []string{"alter", "create", "delete", "list", "under-min-isr-partitions",
			"at-min-isr-partitions", "topics-with-overrides"}},
		{"under-min-isr-partitions", []string{"alter", "create", "delete", "list", "at-min-isr-partitions", "topics-with-overrides"}},
		{"at-min-isr-partitions", []string{"alter", "create", "delete", "list", "topics-with-overrides"}},
		{"topics-with-overrides", []string{"alter", "create", "delete", "list"}},
		{"partitions", []string{"describe", "list", "delete"}},
		{"replication-factor", []string{"alter", "describe", "list", "delete"}},
		{"config", []string{"describe", "list", "delete"}},
		{"delete-config", []string{"create", "describe", "list", "delete"}},
	} {
		if err := opts.checkInvalid(check.option, check.invalid...); err != nil {
			return nil, err
		}
	}
	if c.action == "create" && opts.has("replica-assignment") && opts.has("partitions") {
		return nil, usageErrorf("Option \"[replica-assignment]\" can't be used with option \"[partitions]\"")
	}
	if opts.has("partitions") {
		p, err := opts.int32Option("partitions")
		if err != nil {
			return nil, err
		}
		if p < 1 {
			return nil, errors.New("The partitions must be greater than 0")
		}
		c.partitions = p
	}
	if opts.has("replication-factor") {
		rf, err := opts.int32Option("replication-factor")
		if err != nil {
			return nil, err
		}
		if rf < 1 || rf > 32767 {
			return nil, errors.New("The replication factor must be between 1 and 32767 inclusive")
		}
		c.replicationFactor = int16(rf)
	}
	if opts.has("replica-assignment") {
		a, err := parseReplicaAssignment(opts.value("replica-assignment"))
		if err != nil {
			return nil, err
		}
		c.assignment = a
	}
	if c.action == "alter" {
		changesConfig := opts.has("config") || opts.has("delete-config")
		if changesConfig && opts.has("bootstrap-server") {
			return nil, usageErrorf("Option combination \"[bootstrap-server],[config]\" can't be used with option \"[alter]\"; use kafka-configs to change topic configs")
		}
		if !changesConfig {
			if err := opts.checkRequired("partitions"); err != nil {
				return nil, err
			}
		}
	}
	if c.action == "create" && opts.has("zookeeper") && c.assignment == nil {
		if err := opts.checkRequired("partitions", "replication-factor"); err != nil {
			return nil, err
		}
	}
	c.configs = map[string]string{}
	for _, kv := range opts.all("config") {
		parts := regexp.MustCompile(`\s*=\s*`).Split(kv, -1)
		if len(parts) != 2 {
			return nil, errors.New(`Invalid topic config: all configs to be added must be in the format "key=val".`)
		}
		c.configs[strings.TrimSpace(parts[0])] = strings.TrimSpace(parts[1])
	}
	return c, nil
}

// parseReplicaAssignment reads "1:2,2:3": partitions separated by commas,
// each a colon-separated replica list.
func parseReplicaAssignment(s string) (map[int32][]int32, error) {
	a := map[int32][]int32{}
	for i, part := range strings.Split(s, ",") {
		var replicas []int32
		for _, b := range strings.Split(part, ":") {
			id, err := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("For input string: %q", strings.TrimSpace(b))
			}
			if slices.Contains(replicas, int32(id)) {
				return nil, fmt.Errorf("Partition replica lists may not contain duplicate entries: %d", id)
			}
			replicas = append(replicas, int32(id))
		}
		if i > 0 && len(replicas) != len(a[0]) {
			return nil, fmt.Errorf("Partition %d has different replication factor: %v", i, replicas)
		}
		a[int32(i)] = replicas
	}
	return a, nil
}

// topicMatcher is Kafka's IncludeList: the --topic value is a regular
// expression ("," meaning "|") that must match a whole topic name.
func topicMatcher(spec string) (func(string) bool, error) {
	if spec == "" {
		return func(string) bool { return true }, nil
	}
	spec = strings.ReplaceAll(strings.Join(strings.Fields(spec), ""), ",", "|")
	re, err := regexp.Compile("^(?:" + spec + ")$")
	if err != nil {
		return nil, fmt.Errorf("%s is an invalid regex.", spec)
	}
	return re.MatchString, nil
}

// topicDescription is what --describe prints of one topic.
type topicDescription struct {
	name              string
	id                string // "" when the topic has none
	configs           []string
	markedForDeletion bool
	minISR            int // min.insync.replicas
	partitions        []partitionDescription
}

type partitionDescription struct {
	partition        int32
	leader           int32 // -1: none
	replicas, isr    []int32
	adding, removing []int32
}

// topicService is one of the two ways to reach the cluster.
type topicService interface {
	listTopics(ctx context.Context, excludeInternal bool) ([]string, error)
	markedForDeletion(topic string) bool
	create(ctx context.Context, c *topicCommand) error
	describe(ctx context.Context, topics []string) ([]topicDescription, map[int32]bool, error)
	alterPartitions(ctx context.Context, topic string, total int32, assignment map[int32][]int32) error
	delete(ctx context.Context, topic string) error
}

func (c *topicCommand) run(ctx context.Context, svc topicService, out io.Writer) error {
	if c.action == "create" {
		if strings.ContainsAny(c.topic, "._") {
			fmt.Fprintln(out, "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.")
		}
		err := svc.create(ctx, c)
		if errors.Is(err, kerr.TopicAlreadyExists) && c.opts.has("if-not-exists") {
			return nil
		}
		if err == nil {
			fmt.Fprintf(out, "Created topic %s.\n", c.topic)
		}
		return err
	}
	match, err := topicMatcher(c.topic)
	if err != nil {
		return err
	}
	all, err := svc.listTopics(ctx, c.opts.has("exclude-internal"))
	if err != nil {
		return err
	}
	var topics []string
	for _, t := range all {
		if match(t) {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	if c.topic != "" && len(topics) == 0 && !c.opts.has("if-exists") && c.action != "list" {
		return fmt.Errorf("Topic '%s' does not exist as expected", c.topic)
	}
	switch c.action {
	case "list":
		for _, t := range topics {
			if svc.markedForDeletion(t) {
				fmt.Fprintf(out, "%s - marked for deletion\n", t)
			} else {
				fmt.Fprintln(out, t)
			}
		}
	case "describe":
		descs, live, err := svc.describe(ctx, topics)
		if err != nil {
			return err
		}
		c.printDescriptions(out, descs, live)
	case "alter":
		for _, t := range topics {
			if zks, ok := svc.(*zkTopicService); ok && (c.opts.has("config") || c.opts.has("delete-config")) {
				if err := zks.alterConfig(t, c.configs, c.opts.all("delete-config")); err != nil {
					return err
				}
			}
			if !c.opts.has("partitions") {
				continue
			}
			if t == "__consumer_offsets" {
				return errors.New("The number of partitions for the offsets topic cannot be changed.")
			}
			if err := svc.alterPartitions(ctx, t, c.partitions, c.assignment); err != nil {
				return err
			}
		}
	case "delete":
		for _, t := range topics {
			if err := svc.delete(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// printDescriptions prints Kafka 2.8's describe format, with its filters.
func (c *topicCommand) printDescriptions(out io.Writer, descs []topicDescription, live map[int32]bool) {
	underReplicated := c.opts.has("under-replicated-partitions")
	unavailable := c.opts.has("unavailable-partitions")
	underMinISR := c.opts.has("under-min-isr-partitions")
	atMinISR := c.opts.has("at-min-isr-partitions")
	filtered := underReplicated || unavailable || underMinISR || atMinISR
	overrides := c.opts.has("topics-with-overrides")
	for _, d := range descs {
		deletion := ""
		if d.markedForDeletion {
			deletion = "\tMarkedForDeletion: true"
		}
		if !filtered && (!overrides || len(d.configs) > 0) {
			fmt.Fprintf(out, "Topic: %s", d.name)
			if d.id != "" {
				fmt.Fprintf(out, "\tTopicId: %s", d.id)
			}
			rf := 0
			if len(d.partitions) > 0 {
				p := d.partitions[0]
				rf = len(p.replicas) - len(p.adding)
			}
			fmt.Fprintf(out, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: %s%s\n",
				len(d.partitions), rf, strings.Join(d.configs, ","), deletion)
		}
		if overrides {
			continue
		}
		for _, p := range d.partitions {
			noLeader := p.leader < 0 || !live[p.leader]
			isr := len(p.isr)
			if filtered && !(underReplicated && isr < len(p.replicas) ||
				unavailable && noLeader ||
				underMinISR && (noLeader || isr < d.minISR) ||
				atMinISR && isr == d.minISR) {
				continue
			}
			leader := "none"
			if p.leader >= 0 {
				leader = strconv.Itoa(int(p.leader))
			}
			fmt.Fprintf(out, "\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s",
				d.name, p.partition, leader, joinInt32s(p.replicas), joinInt32s(p.isr))
			if len(p.adding) > 0 || len(p.removing) > 0 {
				fmt.Fprintf(out, "\tAdding Replicas: %s\tRemoving Replicas: %s", joinInt32s(p.adding), joinInt32s(p.removing))
			}
			fmt.Fprintln(out, deletion)
		}
	}
}

// adminTopicService talks to brokers: CreateTopics, Metadata,
// DescribeConfigs, ListPartitionReassignments, CreatePartitions, DeleteTopics.
type adminTopicService struct {
	cl  *kgo.Client
	adm *kadm.Client
	out io.Writer
}

func (s *adminTopicService) listTopics(ctx context.Context, excludeInternal bool) ([]string, error) {
	var (
		details kadm.TopicDetails
		err     error
	)
	if excludeInternal {
		details, err = s.adm.ListTopics(ctx)
	} else {
		details, err = s.adm.ListTopicsWithInternal(ctx)
	}
	if err != nil {
		return nil, err
	}
	return details.Names(), nil
}

func (s *adminTopicService) markedForDeletion(string) bool { return false }

func (s *adminTopicService) create(ctx context.Context, c *topicCommand) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = c.topic, c.partitions, c.replicationFactor
	if c.assignment != nil {
		t.NumPartitions, t.ReplicationFactor = -1, -1
		for _, p := range sortedKeys(c.assignment) {
			ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			ra.Partition, ra.Replicas = p, c.assignment[p]
			t.ReplicaAssignment = append(t.ReplicaAssignment, ra)
		}
	}
	for _, k := range sortedKeys(c.configs) {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsg.StringPtr(c.configs[k])
		t.Configs = append(t.Configs, cfg)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		if err := withMessage(rt.ErrorCode, rt.ErrorMessage); err != nil {
			return err
		}
	}
	return nil
}

// withMessage is a Kafka error code with the broker's message, which is what
// the Java admin client's exceptions carry.
func withMessage(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil || msg == nil || *msg == "" {
		return err
	}
	return &messageError{msg: *msg, code: err}
}

func (s *adminTopicService) describe(ctx context.Context, topics []string) ([]topicDescription, map[int32]bool, error) {
	if len(topics) == 0 {
		return nil, nil, nil
	}
	meta, err := s.adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, nil, err
	}
	live := map[int32]bool{}
	for _, b := range meta.Brokers {
		live[b.NodeID] = true
	}
	configs, err := s.adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, nil, err
	}
	// Kafka tolerates a failed ListPartitionReassignments: no reassignments.
	reassignments, _ := s.adm.ListPartitionReassignments(ctx, kadm.TopicsSet{})
	var descs []topicDescription
	for _, name := range topics {
		td, ok := meta.Topics[name]
		if !ok || td.Err != nil {
			continue
		}
		d := topicDescription{name: name}
		if td.ID != (kadm.TopicID{}) {
			// Kafka prints a Uuid in URL-safe base64 without padding.
			d.id = base64.RawURLEncoding.EncodeToString(td.ID[:])
		}
		rc, err := configs.On(name, nil)
		if err == nil && rc.Err != nil {
			err = rc.Err
		}
		if err != nil {
			return nil, nil, err
		}
		d.minISR = 1
		for _, cfg := range rc.Configs {
			if cfg.Key == "min.insync.replicas" {
				d.minISR, _ = strconv.Atoi(cfg.MaybeValue())
			}
			if cfg.Source != kmsg.ConfigSourceDefaultConfig {
				d.configs = append(d.configs, cfg.Key+"="+cfg.MaybeValue())
			}
		}
		for _, p := range td.Partitions.Sorted() {
			pd := partitionDescription{partition: p.Partition, leader: p.Leader, replicas: p.Replicas, isr: p.ISR}
			if r, ok := reassignments[name][p.Partition]; ok {
				pd.adding, pd.removing = r.AddingReplicas, r.RemovingReplicas
			}
			d.partitions = append(d.partitions, pd)
		}
		descs = append(descs, d)
	}
	return descs, live, nil
}

func (s *adminTopicService) alterPartitions(ctx context.Context, topic string, total int32, assignment map[int32][]int32) error {
	meta, err := s.adm.Metadata(ctx, topic)
	if err != nil {
		return err
	}
	current := int32(len(meta.Topics[topic].Partitions))
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	t := kmsg.NewCreatePartitionsRequestTopic()
	t.Topic, t.Count = topic, total
	if assignment != nil {
		// The assignment names every partition; only the new ones are sent.
		for p := current; p < total; p++ {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = assignment[p]
			t.Assignment = append(t.Assignment, a)
		}
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		if err := withMessage(rt.ErrorCode, rt.ErrorMessage); err != nil {
			return err
		}
	}
	return nil
}

func (s *adminTopicService) delete(ctx context.Context, topic string) error {
	resp, err := s.adm.DeleteTopics(ctx, topic)
	if err != nil {
		return err
	}
	for _, r := range resp {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return &messageError{msg: r.ErrMessage, code: r.Err}
			}
			return r.Err
		}
	}
	return nil
}

// zkTopicService reads the znodes and writes them through adminzk, as
// Kafka's TopicCommand did with --zookeeper: the controller's watches do
// the rest.
type zkTopicService struct {
	zk    *zkclient.Client
	admin *adminzk.Client
	out   io.Writer
}

func (s *zkTopicService) listTopics(_ context.Context, excludeInternal bool) ([]string, error) {
	topics, _, err := s.zk.Children(zkpaths.BrokerTopics)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if excludeInternal {
		topics = slices.DeleteFunc(topics, func(t string) bool { return t == "__consumer_offsets" || t == "__transaction_state" })
	}
	return topics, err
}

func (s *zkTopicService) markedForDeletion(topic string) bool {
	ok, err := s.admin.MarkedForDeletion(topic)
	return err == nil && ok
}

func (s *zkTopicService) liveBrokers() ([]int32, error) {
	ids, _, err := s.zk.Children(zkpaths.BrokerIDs)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	var brokers []int32
	for _, id := range ids {
		if n, err := strconv.ParseInt(id, 10, 32); err == nil {
			brokers = append(brokers, int32(n))
		}
	}
	slices.Sort(brokers)
	return brokers, nil
}

func (s *zkTopicService) create(_ context.Context, c *topicCommand) error {
	if err := zkpaths.ValidateTopicName(c.topic); err != nil {
		return err
	}
	assignment := c.assignment
	if assignment == nil {
		brokers, err := s.liveBrokers()
		if err != nil {
			return err
		}
		if assignment, err = controller.AssignReplicasRandom(brokers, c.partitions, c.replicationFactor); err != nil {
			return err
		}
	}
	configs, err := brokerconfig.ValidateTopicConfig(c.configs)
	if err != nil {
		return err
	}
	// Kafka 2.8's tool writes no topic id; the controller gives it one.
	_, err = s.admin.CreateTopicWithoutID(c.topic, assignment, configs)
	return err
}

func (s *zkTopicService) describe(_ context.Context, topics []string) ([]topicDescription, map[int32]bool, error) {
	brokers, err := s.liveBrokers()
	if err != nil {
		return nil, nil, err
	}
	live := map[int32]bool{}
	for _, b := range brokers {
		live[b] = true
	}
	var descs []topicDescription
	for _, name := range topics {
		data, _, err := s.zk.Get(zkpaths.TopicPath(name))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		ta, err := zkpaths.DecodeTopicAssignment(data)
		if err != nil {
			return nil, nil, err
		}
		// ZooKeeper holds only overrides; Kafka's default applies otherwise.
		d := topicDescription{name: name, id: ta.TopicID, markedForDeletion: s.markedForDeletion(name), minISR: 1}
		if data, _, err := s.zk.Get(zkpaths.TopicConfigPath(name)); err == nil {
			cfg, err := zkpaths.DecodeEntityConfig(data)
			if err != nil {
				return nil, nil, err
			}
			for _, k := range sortedKeys(cfg.Config) {
				d.configs = append(d.configs, k+"="+cfg.Config[k])
			}
			if v, ok := cfg.Config["min.insync.replicas"]; ok {
				d.minISR, _ = strconv.Atoi(v)
			}
		}
		for _, p := range ta.PartitionIDs() {
			pd := partitionDescription{partition: p, leader: -1, replicas: ta.Partitions[p],
				adding: ta.AddingReplicas[p], removing: ta.RemovingReplicas[p]}
			if data, _, err := s.zk.Get(zkpaths.PartitionStatePath(name, p)); err == nil {
				if st, err := zkpaths.DecodeLeaderAndIsr(data); err == nil {
					pd.leader, pd.isr = st.Leader, st.ISR
				}
			}
			d.partitions = append(d.partitions, pd)
		}
		descs = append(descs, d)
	}
	return descs, live, nil
}

func (s *zkTopicService) alterPartitions(_ context.Context, topic string, total int32, assignment map[int32][]int32) error {
	fmt.Fprintln(s.out, "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected")
	_, err := s.admin.AddPartitions(topic, func(ta zkpaths.TopicAssignment) (map[int32][]int32, error) {
		current := int32(len(ta.Partitions))
		var added map[int32][]int32
		if assignment != nil {
			if int32(len(assignment)) != total {
				return nil, fmt.Errorf("Increasing the number of partitions by %d but %d assignments provided.", total-current, int32(len(assignment))-current)
			}
			added = map[int32][]int32{}
			for p := current; p < total; p++ {
				added[p] = assignment[p]
			}
		} else {
			brokers, err := s.liveBrokers()
			if err != nil {
				return nil, err
			}
			if added, err = controller.AssignNewPartitions(brokers, ta.Partitions, total); err != nil {
				return nil, err
			}
		}
		if total <= current {
			return nil, fmt.Errorf("The number of partitions for a topic can only be increased. Topic %s currently has %d partitions, %d would not be an increase.", topic, current, total)
		}
		return added, nil
	}, false)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out, "Adding partitions succeeded!")
	return nil
}

// alterConfig is the deprecated --alter --config / --delete-config of the
// ZooKeeper path: the topic's config znode and a change notification.
func (s *zkTopicService) alterConfig(topic string, add map[string]string, del []string) error {
	fmt.Fprintln(s.out, "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future releases.")
	fmt.Fprintln(s.out, "         Going forward, please use kafka-configs.sh for this functionality")
	trimmed := make([]string, len(del))
	for i, k := range del {
		trimmed[i] = strings.TrimSpace(k)
	}
	err := s.admin.ChangeEntityConfig(zkpaths.EntityTopics, topic, func(cfg map[string]string) (bool, error) {
		return true, applyConfigChange(cfg, add, trimmed, true)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Updated config for topic %s.\n", topic)
	return nil
}

func (s *zkTopicService) delete(_ context.Context, topic string) error {
	if topic == "__consumer_offsets" || topic == "__transaction_state" {
		return fmt.Errorf("Topic %s is a kafka internal topic and is not allowed to be marked for deletion.", topic)
	}
	err := s.admin.MarkTopicForDeletion(topic)
	switch {
	case errors.Is(err, adminzk.ErrMarkedForDeletion):
		fmt.Fprintf(s.out, "Topic %s is already marked for deletion.\n", topic)
	case err != nil:
		return fmt.Errorf("Error while deleting topic %s: %w", topic, err)
	default:
		fmt.Fprintf(s.out, "Topic %s is marked for deletion.\n", topic)
		fmt.Fprintln(s.out, "Note: This will have no impact if delete.topic.enable is not set to true.")
	}
	return nil
}
