package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

var configsOptions = []optionSpec{
	argOpt("zookeeper", "urls", "DEPRECATED. The connection string for the zookeeper connection in the form host:port. "+
		"Multiple URLS can be given to allow fail-over. Replaced by --bootstrap-server, REQUIRED unless --bootstrap-server is given."),
	argOpt("bootstrap-server", "server to connect to", "The Kafka server to connect to. This is required for describing and altering broker configs."),
	argOpt("command-config", "command config property file", "Property file containing configs to be passed to Admin Client. "+
		"This is used only with --bootstrap-server option for describing and altering broker configs."),
	flagOpt("alter", "Alter the configuration for the entity."),
	flagOpt("describe", "List configs for the given entity."),
	flagOpt("all", "List all configs for the given topic, broker, or broker-logger entity (includes static configuration when the entity type is brokers)"),
	argOpt("entity-type", "", "Type of entity (topics/clients/users/brokers/broker-loggers/ips)"),
	argOpt("entity-name", "", "Name of entity (topic name/client id/user principal name/broker id/ip)"),
	flagOpt("entity-default", "Default entity name for clients/users/brokers/ips (applies to corresponding entity type in command line)"),
	argOpt("add-config", "", "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'. "+
		"Valid configurations are the topic configs (see kafka-topics --config) for entity-type 'topics', the dynamic broker configs for 'brokers', "+
		"producer_byte_rate, consumer_byte_rate, request_percentage and controller_mutation_rate for 'users' and 'clients', "+
		"SCRAM-SHA-256 and SCRAM-SHA-512 ('[iterations=8192,password=secret]') for 'users', "+
		"and connection_creation_rate for 'ips'. "+
		"Entity types 'users' and 'clients' may be specified together to update config for clients of a specific user."),
	argOpt("add-config-file", "", "Path to a properties file with configs to add. See add-config for a list of valid configurations."),
	argOpt("delete-config", "", "config keys to remove 'k1,k2'"),
	argOpt("topic", "", "The topic's name."),
	argOpt("broker", "", "The broker's ID."),
	flagOpt("broker-defaults", "The config defaults for all brokers."),
	argOpt("broker-logger", "", "The broker's ID for its logger config."),
	zkTLSConfigFileOption,
	helpOption,
}

// brokerDefault is the entity name of the cluster-wide broker config.
const brokerDefault = "<default>"

// runConfigs is kafka-configs.sh (Kafka 2.8's ConfigCommand) for topics and
// brokers: describe and alter the dynamic configs, through the
// DescribeConfigs and IncrementalAlterConfigs APIs or, with --zookeeper, the
// /config znodes and a change notification.
func runConfigs(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, configsOptions)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if helpNeeded(args, opts, "This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip", configsOptions, stderr) {
		return 1
	}
	cmd, err := newConfigCommand(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if opts.has("zookeeper") {
		fmt.Fprintln(stdout, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
		fmt.Fprintln(stdout, "Use --bootstrap-server instead to specify a broker to connect to.")
		zkc, err := dialZooKeeperSecure(ctx, opts.value("zookeeper"), opts.value("zk-tls-config-file"), nil)
		if err == nil {
			defer zkc.Close()
			err = cmd.runZooKeeper(zkc, stdout)
		}
		return cmd.finish(err, args, stderr)
	}
	cl, _, err := dialAdmin(opts.value("bootstrap-server"), opts.value("command-config"))
	if err == nil {
		defer cl.Close()
		err = cmd.runAdmin(ctx, cl, stdout)
	}
	return cmd.finish(err, args, stderr)
}

// configCommand is a validated kafka-configs invocation.
type configCommand struct {
	opts       toolOptions
	entityType string // "topics" or "brokers"
	entityName string // "" for every entity of the type (describe); brokerDefault
	// quotaTargets are the users, clients or ips entities named (client quotas).
	quotaTargets []quotaTarget
	add          map[string]string
	addOrder     []string
	del          []string
}

func newConfigCommand(opts toolOptions) (*configCommand, error) {
	// The checks and messages of 2.8's ConfigCommandOptions.checkArgs, in its order.
	if opts.count("describe", "alter") != 1 {
		return nil, errors.New("Command must include exactly one action: --describe, --alter")
	}
	for _, o := range []string{"add-config", "add-config-file", "delete-config"} {
		if opts.has("describe") && opts.has(o) {
			return nil, fmt.Errorf("Option \"[describe]\" can't be used with option \"[%s]\"", o)
		}
	}
	c := &configCommand{opts: opts, add: map[string]string{}}
	flags := opts.count("topic", "broker", "broker-defaults", "broker-logger")
	types := opts.all("entity-type")
	quotaPair := len(types) == 2 && slices.Contains(types, "users") && slices.Contains(types, "clients")
	switch {
	case len(types) > 1 && !quotaPair || flags > 1 || flags == 1 && opts.has("entity-type"):
		return nil, errors.New("Only 'users' and 'clients' entity types may be specified together")
	case flags == 1 && (opts.has("entity-name") || opts.has("entity-default")):
		return nil, errors.New("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
	case opts.has("topic"):
		c.entityType, c.entityName = "topics", opts.value("topic")
	case opts.has("broker"):
		c.entityType, c.entityName = "brokers", opts.value("broker")
	case opts.has("broker-defaults"):
		c.entityType, c.entityName = "brokers", brokerDefault
	case opts.has("broker-logger"):
		c.entityType, c.entityName = "broker-loggers", opts.value("broker-logger")
	case opts.has("entity-type"):
		c.entityType, c.entityName = types[0], opts.value("entity-name")
		if opts.has("entity-default") {
			c.entityName = brokerDefault
		}
	}
	connect := "--bootstrap-server"
	if opts.has("zookeeper") {
		connect = "--zookeeper"
	}
	switch c.entityType {
	case "", "topics", "brokers":
	case "broker-loggers":
		if connect == "--zookeeper" {
			return nil, fmt.Errorf("Invalid entity type %s, the entity type must be one of topics,brokers with the %s argument", c.entityType, connect)
		}
		if c.entityName == brokerDefault {
			return nil, errors.New("--entity-default is not supported for broker-loggers")
		}
	case "clients", "users", "ips":
		targets, err := quotaTargets(opts)
		if err != nil {
			return nil, err
		}
		c.quotaTargets = targets
	default:
		return nil, fmt.Errorf("Invalid entity type %s, the entity type must be one of topics,brokers with the %s argument", c.entityType, connect)
	}
	switch {
	case c.entityType == "":
		return nil, errors.New("At least one entity type must be specified")
	case opts.count("bootstrap-server", "zookeeper") == 0:
		return nil, errors.New("One of the required --bootstrap-server or --zookeeper arguments must be specified")
	case opts.count("bootstrap-server", "zookeeper") == 2:
		return nil, errors.New("Only one of --bootstrap-server or --zookeeper must be specified")
	case opts.has("all") && opts.has("zookeeper"):
		return nil, errors.New("--bootstrap-server must be specified for --all")
	}
	switch {
	case c.entityType == "topics" && c.entityName == brokerDefault:
		return nil, errors.New("Invalid entity type topics for --entity-default, which applies to brokers")
	case c.entityType == "topics" && c.entityName != "":
		if err := zkpaths.ValidateTopicName(c.entityName); err != nil {
			return nil, err
		}
	case c.entityType == "brokers" && c.entityName != "" && c.entityName != brokerDefault:
		if _, err := strconv.ParseInt(c.entityName, 10, 32); err != nil {
			return nil, fmt.Errorf("The entity name for brokers must be a valid integer broker id, but it is: %s", c.entityName)
		}
	}
	if !opts.has("alter") {
		return c, nil
	}
	switch {
	case c.quotaTargets != nil && slices.ContainsFunc(c.quotaTargets, func(t quotaTarget) bool { return t.match.Any }):
		return nil, errors.New("an entity-name or default entity must be specified with --alter of users, clients, brokers or ips")
	case c.entityName == "" && c.entityType == "brokers":
		return nil, errors.New("an entity-name or default entity must be specified with --alter of users, clients, brokers or ips")
	case c.entityName == "":
		return nil, errors.New("an entity name must be specified with --alter of " + c.entityType)
	case opts.has("add-config") && opts.has("add-config-file"):
		return nil, errors.New("Only one of --add-config or --add-config-file must be specified")
	case opts.count("add-config", "add-config-file", "delete-config") == 0:
		return nil, errors.New("At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter")
	}
	if file := opts.value("add-config-file"); file != "" {
		props, err := brokerconfig.ReadPropertiesFile(file)
		if err != nil {
			return nil, err
		}
		for _, k := range sortedKeys(props) {
			c.addOrder = append(c.addOrder, k)
			c.add[k] = props[k]
		}
	}
	if err := c.parseAddConfig(strings.Join(opts.all("add-config"), ",")); err != nil {
		return nil, err
	}
	for _, d := range opts.all("delete-config") {
		for k := range strings.SplitSeq(d, ",") {
			c.del = append(c.del, strings.TrimSpace(k))
		}
	}
	return c, nil
}

// splitOutsideBrackets splits s at sep where sep is not inside [...].
func splitOutsideBrackets(s string, sep rune) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// parseAddConfig reads --add-config "k1=v1,k2=[a,b]"; a bracketed list keeps
// its commas and loses its brackets, as in Kafka.
func (c *configCommand) parseAddConfig(s string) error {
	if s == "" {
		return nil
	}
	for _, e := range splitOutsideBrackets(s, ',') {
		kv := splitOutsideBrackets(e, '=')
		if len(kv) != 2 {
			return errors.New(`Invalid entity config: all configs to be added must be in the format "key=val".`)
		}
		k := strings.TrimSpace(kv[0])
		v := strings.NewReplacer("[", "", "]", "").Replace(strings.TrimSpace(kv[1]))
		if _, dup := c.add[k]; !dup {
			c.addOrder = append(c.addOrder, k)
		}
		c.add[k] = v
	}
	return nil
}

func (c *configCommand) finish(err error, args []string, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, ue.msg)
		return 1
	}
	fmt.Fprintf(stderr, "Error while executing config command with args '%s'\n%s\n", strings.Join(args, " "), kafkaMessage(err))
	return 1
}

// singular is Kafka's entityType.dropRight(1).
// singular is Kafka's entityType.dropRight(1): topic, broker, broker-logger.
func singular(entityType string) string { return strings.TrimSuffix(entityType, "s") }

func (c *configCommand) resourceType() kmsg.ConfigResourceType {
	switch c.entityType {
	case "topics":
		return kmsg.ConfigResourceTypeTopic
	case "broker-loggers":
		return kmsg.ConfigResourceTypeBrokerLogger
	}
	return kmsg.ConfigResourceTypeBroker
}

// resourceName is the entity's DescribeConfigs name: the cluster default is
// the empty broker name.
func resourceName(entity string) string {
	if entity == brokerDefault {
		return ""
	}
	return entity
}

func (c *configCommand) runAdmin(ctx context.Context, cl *kgo.Client, out io.Writer) error {
	if c.quotaTargets != nil {
		return c.runQuotasAdmin(ctx, cl, out)
	}
	if c.opts.has("alter") {
		return c.alterAdmin(ctx, cl, out)
	}
	entities := []string{c.entityName}
	if c.entityName == "" {
		meta := kmsg.NewPtrMetadataRequest()
		if c.entityType == "brokers" {
			meta.Topics = []kmsg.MetadataRequestTopic{}
		}
		resp, err := meta.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		entities = nil
		if c.entityType == "topics" {
			for _, t := range resp.Topics {
				if t.Topic != nil {
					entities = append(entities, *t.Topic)
				}
			}
			slices.Sort(entities)
		} else {
			for _, b := range resp.Brokers {
				entities = append(entities, strconv.Itoa(int(b.NodeID)))
			}
			slices.SortFunc(entities, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
			if c.entityType == "brokers" {
				entities = append(entities, brokerDefault)
			}
		}
	}
	all := c.opts.has("all")
	for _, entity := range entities {
		entries, err := describeEntity(ctx, cl, c.resourceType(), resourceName(entity))
		if err != nil {
			return err
		}
		switch {
		case entity == brokerDefault:
			fmt.Fprintf(out, "Default configs for %s in the cluster are:\n", c.entityType)
		case all:
			fmt.Fprintf(out, "All configs for %s %s are:\n", singular(c.entityType), entity)
		default:
			fmt.Fprintf(out, "Dynamic configs for %s %s are:\n", singular(c.entityType), entity)
		}
		want := c.dynamicSource(entity)
		for _, e := range entries {
			if !all && e.Source != want {
				continue
			}
			synonyms := make([]string, len(e.ConfigSynonyms))
			for i, s := range e.ConfigSynonyms {
				synonyms[i] = fmt.Sprintf("%s:%s=%s", s.Source, s.Name, javaString(s.Value))
			}
			fmt.Fprintf(out, "  %s=%s sensitive=%t synonyms={%s}\n", e.Name, javaString(e.Value), e.IsSensitive, strings.Join(synonyms, ", "))
		}
	}
	return nil
}

// dynamicSource is the source of the configs an entity's --alter sets.
func (c *configCommand) dynamicSource(entity string) kmsg.ConfigSource {
	switch {
	case c.entityType == "topics":
		return kmsg.ConfigSourceDynamicTopicConfig
	case c.entityType == "broker-loggers":
		return kmsg.ConfigSourceDynamicBrokerLoggerConfig
	case entity == brokerDefault:
		return kmsg.ConfigSourceDynamicDefaultBrokerConfig
	}
	return kmsg.ConfigSourceDynamicBrokerConfig
}

// javaString prints a nullable string as Java does.
func javaString(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// describeEntity returns one resource's configs with synonyms, by name.
func describeEntity(ctx context.Context, cl *kgo.Client, typ kmsg.ConfigResourceType, name string) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	req.Resources = append(req.Resources, r)
	var (
		resp kmsg.Response
		err  error
	)
	if (typ == kmsg.ConfigResourceTypeBroker || typ == kmsg.ConfigResourceTypeBrokerLogger) && name != "" {
		// A broker's own configs, and its loggers, come from that broker.
		id, _ := strconv.Atoi(name)
		resp, err = cl.Broker(id).Request(ctx, req)
	} else {
		resp, err = req.RequestWith(ctx, cl)
	}
	if err != nil {
		return nil, err
	}
	resources := resp.(*kmsg.DescribeConfigsResponse).Resources
	if len(resources) == 0 {
		return nil, fmt.Errorf("no answer for %s", name)
	}
	if err := withMessage(resources[0].ErrorCode, resources[0].ErrorMessage); err != nil {
		return nil, err
	}
	configs := resources[0].Configs
	slices.SortFunc(configs, func(a, b kmsg.DescribeConfigsResponseResourceConfig) int { return strings.Compare(a.Name, b.Name) })
	return configs, nil
}

func (c *configCommand) alterAdmin(ctx context.Context, cl *kgo.Client, out io.Writer) error {
	current, err := describeEntity(ctx, cl, c.resourceType(), resourceName(c.entityName))
	if err != nil {
		return err
	}
	var invalid []string
	if c.entityType == "broker-loggers" {
		// Kafka's ConfigCommand checks every logger named exists before it alters any.
		for _, k := range append(slices.Clone(c.del), c.addOrder...) {
			if !slices.ContainsFunc(current, func(e kmsg.DescribeConfigsResponseResourceConfig) bool { return e.Name == k }) {
				invalid = append(invalid, k)
			}
		}
		if len(invalid) > 0 {
			return fmt.Errorf("Invalid broker logger(s): %s", strings.Join(invalid, ","))
		}
	}
	for _, k := range c.del {
		// Only a config the entity itself sets can be deleted.
		if !slices.ContainsFunc(current, func(e kmsg.DescribeConfigsResponseResourceConfig) bool {
			return e.Name == k && e.Source == c.dynamicSource(c.entityName)
		}) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return &usageError{"Invalid config(s): " + strings.Join(invalid, ",")}
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = c.resourceType(), resourceName(c.entityName)
	for _, k := range c.addOrder {
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Op, cfg.Value = k, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(c.add[k])
		r.Configs = append(r.Configs, cfg)
	}
	for _, k := range c.del {
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Op = k, kmsg.IncrementalAlterConfigOpDelete
		r.Configs = append(r.Configs, cfg)
	}
	req.Resources = append(req.Resources, r)
	var resp kmsg.Response
	if (c.entityType == "brokers" || c.entityType == "broker-loggers") && c.entityName != brokerDefault {
		id, _ := strconv.Atoi(c.entityName)
		resp, err = cl.Broker(id).Request(ctx, req)
	} else {
		resp, err = req.RequestWith(ctx, cl)
	}
	if err != nil {
		return err
	}
	for _, res := range resp.(*kmsg.IncrementalAlterConfigsResponse).Resources {
		if err := withMessage(res.ErrorCode, res.ErrorMessage); err != nil {
			return err
		}
	}
	if c.entityName == brokerDefault {
		fmt.Fprintln(out, "Completed updating default config for brokers in the cluster.")
	} else {
		fmt.Fprintf(out, "Completed updating config for %s %s.\n", singular(c.entityType), c.entityName)
	}
	return nil
}

// zkEntityLabel is Kafka's ConfigEntity.toString: "topic 't'", "brokers '1'",
// "default brokers".
func (c *configCommand) zkEntityLabel(entity string) string {
	typeName := c.entityType
	if typeName == "topics" {
		typeName = "topic"
	}
	if entity == brokerDefault {
		return "default " + typeName
	}
	return fmt.Sprintf("%s '%s'", typeName, entity)
}

func (c *configCommand) runZooKeeper(zkc *zkclient.Client, out io.Writer) error {
	if c.quotaTargets != nil {
		return c.runQuotasZooKeeper(zkc, out)
	}
	if c.opts.has("alter") {
		return c.alterZooKeeper(zkc, out)
	}
	entities := []string{c.entityName}
	if c.entityName == "" {
		var err error
		entities, _, err = zkc.Children(zkpaths.Config + "/" + c.entityType)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		slices.Sort(entities)
	}
	admin := newAdminZk(zkc)
	for _, entity := range entities {
		cfg, err := admin.FetchEntityConfig(c.entityType, entity)
		if err != nil {
			return err
		}
		pairs := make([]string, 0, len(cfg))
		for _, k := range sortedKeys(cfg) {
			pairs = append(pairs, k+"="+cfg[k])
		}
		fmt.Fprintf(out, "Configs for %s are %s\n", c.zkEntityLabel(entity), strings.Join(pairs, ","))
	}
	return nil
}

// alterZooKeeper changes /config/<type>/<name> through adminzk, which
// announces it with a sequential /config/changes/config_change_ node and
// applies the change again if another writer got in first.
func (c *configCommand) alterZooKeeper(zkc *zkclient.Client, out io.Writer) error {
	if c.entityType == "topics" {
		if ok, _, err := zkc.Exists(zkpaths.TopicPath(c.entityName)); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("Topic %s does not exist.", c.entityName)
		}
	}
	if c.entityType == "brokers" {
		if err := c.checkBrokersStopped(zkc); err != nil {
			return err
		}
	}
	err := newAdminZk(zkc).ChangeEntityConfig(c.entityType, c.entityName, func(cfg map[string]string) (bool, error) {
		var invalid []string
		for _, k := range c.del {
			if _, ok := cfg[k]; !ok {
				invalid = append(invalid, k)
			}
		}
		if len(invalid) > 0 {
			return false, &usageError{"Invalid config(s): " + strings.Join(invalid, ",")}
		}
		return true, applyConfigChange(cfg, c.add, c.del, c.entityType == "topics")
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for entity: %s.\n", c.zkEntityLabel(c.entityName))
	return nil
}

// applyConfigChange sets add and removes del in an entity's config; a topic's
// result must pass Kafka's LogConfig validation, which also normalises it.
func applyConfigChange(cfg, add map[string]string, del []string, topic bool) error {
	maps.Copy(cfg, add)
	for _, k := range del {
		delete(cfg, k)
	}
	if !topic {
		return nil
	}
	valid, err := brokerconfig.ValidateTopicConfig(cfg)
	if err != nil {
		return err
	}
	clear(cfg)
	maps.Copy(cfg, valid)
	return nil
}

// zkUpdatableBrokerConfigs may change through ZooKeeper while brokers run
// (replication quotas); other dynamic broker configs need the brokers to
// validate them, so the ZooKeeper path only bootstraps stopped brokers.
var zkUpdatableBrokerConfigs = map[string]bool{
	"leader.replication.throttled.rate":              true,
	"follower.replication.throttled.rate":            true,
	"replica.alter.log.dirs.io.max.bytes.per.second": true,
}

func (c *configCommand) checkBrokersStopped(zkc *zkclient.Client) error {
	var dynamic []string
	for _, k := range c.addOrder {
		if !zkUpdatableBrokerConfigs[k] {
			dynamic = append(dynamic, k)
		}
	}
	if len(dynamic) == 0 {
		return nil
	}
	msg := fmt.Sprintf("requirement failed: --bootstrap-server option must be specified to update broker configs Set(%s)", strings.Join(dynamic, ", "))
	info := "Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers are started to enable encrypted password configs to be stored in ZooKeeper."
	if c.entityName == brokerDefault {
		if ids, err := childrenOrNone(zkc, zkpaths.BrokerIDs); err != nil {
			return err
		} else if len(ids) > 0 {
			return &usageError{msg + " for default cluster if any broker is running. " + info}
		}
		return nil
	}
	id, _ := strconv.ParseInt(c.entityName, 10, 32)
	if ok, _, err := zkc.Exists(zkpaths.BrokerPath(int32(id))); err != nil {
		return err
	} else if ok {
		return &usageError{fmt.Sprintf("%s when broker %s is running. %s", msg, c.entityName, info)}
	}
	return nil
}
