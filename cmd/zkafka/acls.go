package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/kafka"
)

// aclOperationsHelp is --operation's list of operation names
// (AclEntry.AclOperations as SecurityUtils.operationName writes them; Kafka
// prints a hash set, this is the enum's order).
func aclOperationsHelp() string {
	var b strings.Builder
	for op := acl.OpAll; op <= acl.OpIdempotentWrite; op++ {
		b.WriteString("\n\t" + op.ZkName())
	}
	return b.String() + "\n"
}

var aclsOptions = []optionSpec{
	argOpt("bootstrap-server", "server to connect to", "A list of host/port pairs to use for establishing the connection to the Kafka cluster. "+
		"This list should be in the form host1:port1,host2:port2,... This config is required for acl management using admin client API."),
	argOpt("command-config", "command-config", "A property file containing configs to be passed to Admin Client.").optional(),
	argOpt("authorizer", "authorizer", "Fully qualified class name of the authorizer, defaults to kafka.security.authorizer.AclAuthorizer."),
	argOpt("authorizer-properties", "authorizer-properties", "REQUIRED: properties required to configure an instance of Authorizer. "+
		"These are key=val pairs. For the default authorizer the example values are: zookeeper.connect=localhost:2181"),
	argOpt("topic", "topic", "topic to which ACLs should be added or removed. A value of * indicates ACL should apply to all topics."),
	flagOpt("cluster", "Add/Remove cluster ACLs."),
	argOpt("group", "group", "Consumer Group to which the ACLs should be added or removed. A value of * indicates the ACLs should apply to all groups."),
	argOpt("transactional-id", "transactional-id", "The transactionalId to which ACLs should be added or removed. "+
		"A value of * indicates the ACLs should apply to all transactionalIds."),
	flagOpt("idempotent", "Enable idempotence for the producer. This should be used in combination with the --producer option. "+
		"Note that idempotence is enabled automatically if the producer is authorized to a particular transactional-id."),
	argOpt("delegation-token", "delegation-token", "Delegation token to which ACLs should be added or removed. A value of * indicates ACL should apply to all tokens."),
	argOpt("resource-pattern-type", "", "The type of the resource pattern or pattern filter. "+
		"When adding acls, this should be a specific pattern type, e.g. 'literal' or 'prefixed'. "+
		"When listing or removing acls, a specific pattern type can be used to list or remove acls from specific resource patterns, "+
		"or use the filter values of 'any' or 'match', where 'any' will match any pattern type, but will match the resource name exactly, "+
		"where as 'match' will perform pattern matching to list or remove all acls that affect the supplied resource(s). "+
		"WARNING: 'match', when used in combination with the '--remove' switch, should be used with care.").typed("ANY|MATCH|LITERAL|PREFIXED").defaults("LITERAL"),
	flagOpt("add", "Indicates you are trying to add ACLs."),
	flagOpt("remove", "Indicates you are trying to remove ACLs."),
	flagOpt("list", "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource."),
	argOpt("operation", "", "Operation that is being allowed or denied. Valid operation names are: "+aclOperationsHelp()).defaults("All"),
	argOpt("allow-principal", "allow-principal", "principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. "+
		"For example, User:* is the wild card indicating all users."),
	argOpt("deny-principal", "deny-principal", "principal is in principalType:name format. By default anyone not added through --allow-principal is denied access. "+
		"You only need to use this option as negation to already allowed set. Note that principalType must be supported by the Authorizer being used. "+
		"For example if you wanted to allow access to all users in the system but not test-user you can define an ACL that allows access to User:* and specify --deny-principal=User:test@EXAMPLE.COM. "+
		"AND PLEASE REMEMBER DENY RULES TAKES PRECEDENCE OVER ALLOW RULES."),
	argOpt("principal", "principal", "List ACLs for the specified principal. principal is in principalType:name format. "+
		"Note that principalType must be supported by the Authorizer being used. Multiple --principal option can be passed.").optional(),
	argOpt("allow-host", "allow-host", "Host from which principals listed in --allow-principal will have access. "+
		"If you have specified --allow-principal then the default for this option will be set to * which allows access from all hosts."),
	argOpt("deny-host", "deny-host", "Host from which principals listed in --deny-principal will be denied access. "+
		"If you have specified --deny-principal then the default for this option will be set to * which denies access from all hosts."),
	flagOpt("producer", "Convenience option to add/remove ACLs for producer role. This will generate ACLs that allows WRITE,DESCRIBE and CREATE on topic."),
	flagOpt("consumer", "Convenience option to add/remove ACLs for consumer role. This will generate ACLs that allows READ,DESCRIBE on topic and READ on group."),
	flagOpt("force", "Assume Yes to all queries and do not prompt."),
	argOpt("zk-tls-config-file", "Authorizer ZooKeeper TLS configuration", "Identifies the file where ZooKeeper client TLS connectivity properties for the authorizer are defined.  "+
		"Any properties other than the following (with or without an \"authorizer.\" prefix) are ignored: "+
		"zookeeper.clientCnxnSocket, zookeeper.ssl.cipher.suites, zookeeper.ssl.client.enable, zookeeper.ssl.crl.enable, zookeeper.ssl.enabled.protocols, "+
		"zookeeper.ssl.endpoint.identification.algorithm, zookeeper.ssl.keystore.location, zookeeper.ssl.keystore.password, zookeeper.ssl.keystore.type, "+
		"zookeeper.ssl.ocsp.enable, zookeeper.ssl.protocol, zookeeper.ssl.truststore.location, zookeeper.ssl.truststore.password, zookeeper.ssl.truststore.type. "+
		"Note that if SASL is not configured and zookeeper.set.acl is supposed to be true due to mutual certificate authentication being used "+
		"then it is necessary to explicitly specify --authorizer-properties zookeeper.set.acl=true"),
	helpOption,
}

// clusterPattern is AclCommand's ClusterResourceFilter.
var clusterPattern = acl.Resource{Type: acl.ResourceCluster, Name: acl.ClusterName, Pattern: acl.PatternLiteral}

// runACLs is kafka-acls.sh (Kafka 2.8's AclCommand): add, remove and list
// ACLs through CreateAcls, DeleteAcls and DescribeAcls with
// --bootstrap-server, or with --authorizer-properties zookeeper.connect=…
// directly in /kafka-acl through an AclAuthorizer of its own, as 2.8's
// AuthorizerService does.
func runACLs(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, aclsOptions)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if helpNeeded(args, opts, "This tool helps to manage acls on kafka.", aclsOptions, stderr) {
		return 1
	}
	cmd, err := newACLCommand(opts, stdin, stdout)
	if err == nil {
		err = cmd.run()
	}
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		printUsage(stderr, ue.msg, aclsOptions)
		return 1
	}
	fmt.Fprintf(stdout, "Error while executing ACL command: %s\n", err)
	fmt.Fprintf(stdout, "java.util.concurrent.ExecutionException: %s\n", err)
	return 1
}

// aclService is AclCommandService: where ACLs are read and written.
type aclService interface {
	create(bindings []acl.Binding) error
	delete(filters []acl.Filter) error
	list(f acl.Filter) ([]acl.Binding, error)
}

// aclCommand is a validated kafka-acls invocation.
type aclCommand struct {
	opts    toolOptions
	pattern acl.PatternType
	in      *bufio.Reader
	out     io.Writer
	svc     aclService
	close   func()
}

func newACLCommand(opts toolOptions, stdin io.Reader, stdout io.Writer) (*aclCommand, error) {
	c := &aclCommand{opts: opts, pattern: acl.PatternLiteral, in: bufio.NewReader(stdin), out: stdout}
	if opts.has("resource-pattern-type") {
		v := opts.value("resource-pattern-type")
		p, err := acl.ParsePatternType(v)
		if err != nil || p == acl.PatternUnknown {
			return nil, usageErrorf("Cannot parse argument '%s' of option resource-pattern-type", v)
		}
		c.pattern = p
	}
	return c, c.checkArgs()
}

// checkArgs is AclCommandOptions.checkArgs, in its order.
func (c *aclCommand) checkArgs() error {
	o := c.opts
	if o.has("bootstrap-server") && o.has("authorizer") {
		return usageErrorf("Only one of --bootstrap-server or --authorizer must be specified")
	}
	if !o.has("bootstrap-server") {
		if err := o.checkRequired("authorizer-properties"); err != nil {
			return err
		}
	}
	if o.has("command-config") && !o.has("bootstrap-server") {
		return usageErrorf("The --command-config option can only be used with --bootstrap-server option")
	}
	if o.has("authorizer-properties") && o.has("bootstrap-server") {
		return usageErrorf("The --authorizer-properties option can only be used with --authorizer option")
	}
	if o.count("add", "remove", "list") != 1 {
		return usageErrorf("Command must include exactly one action: --list, --add, --remove. ")
	}
	if err := o.checkInvalid("list", "producer", "consumer", "allow-host", "allow-principal", "deny-host", "deny-principal"); err != nil {
		return err
	}
	for _, role := range []string{"producer", "consumer"} {
		if err := o.checkInvalid(role, "operation", "deny-principal", "deny-host"); err != nil {
			return err
		}
	}
	switch {
	case o.has("principal") && !o.has("list"):
		return usageErrorf("The --principal option is only available if --list is set")
	case o.has("producer") && !o.has("topic"):
		return usageErrorf("With --producer you must specify a --topic")
	case o.has("idempotent") && !o.has("producer"):
		return usageErrorf("The --idempotent option is only available if --producer is set")
	case o.has("consumer") && (!o.has("topic") || !o.has("group") || (!o.has("producer") && (o.has("cluster") || o.has("transactional-id")))):
		return usageErrorf("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.")
	}
	return nil
}

func (c *aclCommand) run() error {
	if err := c.connect(); err != nil {
		return err
	}
	defer c.close()
	switch {
	case c.opts.has("add"):
		return c.add()
	case c.opts.has("remove"):
		return c.remove()
	}
	return c.list()
}

// connect opens the admin client or, without --bootstrap-server, the
// ZooKeeper session of an AclAuthorizer loaded from /kafka-acl.
func (c *aclCommand) connect() error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if c.opts.has("bootstrap-server") {
		cl, _, err := dialAdmin(c.opts.value("bootstrap-server"), c.opts.value("command-config"))
		if err != nil {
			return err
		}
		c.svc, c.close = &adminACLs{cl: cl}, cl.Close
		return nil
	}
	if class := c.opts.value("authorizer"); class != "" && class != "kafka.security.authorizer.AclAuthorizer" && class != "kafka.security.auth.SimpleAclAuthorizer" {
		return fmt.Errorf("authorizer %s is not supported: this tool has kafka.security.authorizer.AclAuthorizer", class)
	}
	props := map[string]string{}
	for _, kv := range c.opts.all("authorizer-properties") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return usageErrorf("Invalid command line properties: %s", strings.Join(c.opts.all("authorizer-properties"), " "))
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	connect := props["zookeeper.connect"]
	if connect == "" {
		connect = props["authorizer.zookeeper.url"]
	}
	if connect == "" {
		return fmt.Errorf("Missing required configuration \"zookeeper.connect\" which has no default value.")
	}
	var setACL bool
	if v, ok := props["zookeeper.set.acl"]; ok {
		parsed, err := brokerconfig.ParseValue("zookeeper.set.acl", brokerconfig.TypeBoolean, v)
		if err != nil {
			return err
		}
		setACL = parsed == "true"
	}
	zkc, err := dialZooKeeperSecure(ctx, connect, c.opts.value("zk-tls-config-file"), &setACL)
	if err != nil {
		return err
	}
	store := adminzk.New(zkc, zap.NewNop()).ACLStore()
	a := acl.New(store, acl.Config{}, zap.NewNop())
	if err = store.CreatePaths(); err == nil {
		err = a.Load()
	}
	if err != nil {
		zkc.Close()
		return err
	}
	c.svc, c.close = &authorizerACLs{a: a, out: c.out}, func() { zkc.Close() }
	return nil
}

// aclGroup is a resource pattern (or filter) with its entries: one block
// of AclCommand's output.
type aclGroup struct {
	resource acl.Resource
	entries  []acl.Entry
}

// resourceFilters is getResourceFilter: topics, the cluster (only with a
// literal pattern), groups, transactional ids, delegation tokens.
func (c *aclCommand) resourceFilters(dieIfNone bool) ([]acl.Resource, error) {
	var out []acl.Resource
	add := func(typ acl.ResourceType, name string) {
		r := acl.Resource{Type: typ, Name: name, Pattern: c.pattern}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, t := range c.opts.all("topic") {
		add(acl.ResourceTopic, strings.TrimSpace(t))
	}
	if c.pattern == acl.PatternLiteral && (c.opts.has("cluster") || c.opts.has("idempotent")) {
		add(acl.ResourceCluster, acl.ClusterName)
	}
	for _, g := range c.opts.all("group") {
		add(acl.ResourceGroup, strings.TrimSpace(g))
	}
	for _, t := range c.opts.all("transactional-id") {
		add(acl.ResourceTransactionalID, t)
	}
	for _, t := range c.opts.all("delegation-token") {
		add(acl.ResourceDelegationToken, strings.TrimSpace(t))
	}
	if len(out) == 0 && dieIfNone {
		return nil, usageErrorf("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>")
	}
	return out, nil
}

func (c *aclCommand) principals(option string) ([]kafka.Principal, error) {
	var out []kafka.Principal
	for _, s := range c.opts.all(option) {
		if s == "" { // --principal without a value
			continue
		}
		p, err := kafka.ParsePrincipal(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// entries is getAcl: every allowed principal × operation × allowed host,
// then the same for the denied ones; hosts default to * for a principal.
func (c *aclCommand) entries(ops []acl.Operation) ([]acl.Entry, error) {
	var out []acl.Entry
	for _, side := range []struct {
		principal, host string
		perm            acl.Permission
	}{{"allow-principal", "allow-host", acl.Allow}, {"deny-principal", "deny-host", acl.Deny}} {
		principals, err := c.principals(side.principal)
		if err != nil {
			return nil, err
		}
		hosts := []string{acl.WildcardHost}
		if c.opts.has(side.host) {
			hosts = nil
			for _, h := range c.opts.all(side.host) {
				if h = strings.TrimSpace(h); !slices.Contains(hosts, h) {
					hosts = append(hosts, h)
				}
			}
		}
		for _, p := range principals {
			for _, op := range ops {
				for _, h := range hosts {
					e := acl.Entry{Principal: p.String(), Host: h, Operation: op, Permission: side.perm}
					if !slices.Contains(out, e) {
						out = append(out, e)
					}
				}
			}
		}
	}
	return out, nil
}

// filterToACLs is getResourceFilterToAcls: the --operation ACLs on every
// resource, or the --producer and --consumer expansions, validated against
// each type's operations. Entries are in the order of their text (Kafka
// prints a hash set).
func (c *aclCommand) filterToACLs() ([]aclGroup, error) {
	var groups []aclGroup
	put := func(r acl.Resource, es []acl.Entry) {
		for i := range groups {
			if groups[i].resource == r {
				for _, e := range es {
					if !slices.Contains(groups[i].entries, e) {
						groups[i].entries = append(groups[i].entries, e)
					}
				}
				return
			}
		}
		groups = append(groups, aclGroup{r, es})
	}
	filters, err := c.resourceFilters(true)
	if err != nil {
		return nil, err
	}
	of := func(ops ...acl.Operation) ([]acl.Entry, error) { return c.entries(ops) }
	producer, consumer := c.opts.has("producer"), c.opts.has("consumer")
	if !producer && !consumer {
		var ops []acl.Operation
		names := c.opts.all("operation")
		if len(names) == 0 {
			names = []string{"All"}
		}
		for _, n := range names {
			op, err := acl.ParseOperation(strings.TrimSpace(n))
			if err != nil {
				op = acl.OpUnknown
			}
			if !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
		es, err := of(ops...)
		if err != nil {
			return nil, err
		}
		for _, r := range filters {
			put(r, es)
		}
	}
	if producer {
		topicACLs, err := of(acl.OpWrite, acl.OpDescribe, acl.OpCreate)
		if err != nil {
			return nil, err
		}
		txnACLs, _ := of(acl.OpWrite, acl.OpDescribe)
		for _, r := range filters {
			switch r.Type {
			case acl.ResourceTopic:
				put(r, topicACLs)
			case acl.ResourceTransactionalID:
				put(r, txnACLs)
			}
		}
		if c.opts.has("idempotent") {
			idem, _ := of(acl.OpIdempotentWrite)
			put(clusterPattern, idem)
		}
	}
	if consumer {
		topicACLs, err := of(acl.OpRead, acl.OpDescribe)
		if err != nil {
			return nil, err
		}
		groupACLs, _ := of(acl.OpRead)
		for _, r := range filters {
			switch r.Type {
			case acl.ResourceTopic:
				put(r, topicACLs)
			case acl.ResourceGroup:
				put(r, groupACLs)
			}
		}
	}
	for _, g := range groups {
		slices.SortFunc(g.entries, func(x, y acl.Entry) int { return strings.Compare(x.String(), y.String()) })
		valid := append(slices.Clone(acl.SupportedOperations[g.resource.Type]), acl.OpAll)
		for _, e := range g.entries {
			if !slices.Contains(valid, e.Operation) {
				names := make([]string, len(valid))
				for i, op := range valid {
					names[i] = op.String()
				}
				return nil, usageErrorf("ResourceType %s only supports operations %s", g.resource.Type, strings.Join(names, ","))
			}
		}
	}
	return groups, nil
}

// block is one of AclCommand's outputs: the heading, then each entry on a
// line of its own after a tab, with Kafka's stray spaces and blank line.
func block(heading string, entries []acl.Entry) string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = "\t" + e.String()
	}
	return heading + ": \n " + strings.Join(lines, "\n") + " \n"
}

func (c *aclCommand) add() error {
	if c.pattern != acl.PatternLiteral && c.pattern != acl.PatternPrefixed {
		return usageErrorf("A '--resource-pattern-type' value of '%s' is not valid when adding acls.", c.pattern)
	}
	groups, err := c.filterToACLs()
	if err != nil {
		return err
	}
	for _, g := range groups {
		if len(g.entries) == 0 {
			return usageErrorf("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
		}
	}
	for _, g := range groups {
		fmt.Fprintln(c.out, block("Adding ACLs for resource `"+g.resource.String()+"`", g.entries))
		bindings := make([]acl.Binding, len(g.entries))
		for i, e := range g.entries {
			bindings[i] = acl.Binding{Resource: g.resource, Entry: e}
		}
		if err := c.svc.create(bindings); err != nil {
			return err
		}
	}
	return c.list()
}

func (c *aclCommand) remove() error {
	groups, err := c.filterToACLs()
	if err != nil {
		return err
	}
	for _, g := range groups {
		prompt := "Are you sure you want to delete all ACLs for resource filter `" + g.resource.String() + "`? (y/n)"
		if len(g.entries) > 0 {
			prompt = strings.TrimSuffix(block("Are you sure you want to remove ACLs", g.entries), "\n") + "\n from resource filter `" + g.resource.String() + "`? (y/n)"
		}
		if !c.confirm(prompt) {
			continue
		}
		base := acl.Filter{Type: g.resource.Type, Name: &g.resource.Name, Pattern: g.resource.Pattern, Operation: acl.OpAny, Permission: acl.PermissionAny}
		filters := []acl.Filter{base}
		if len(g.entries) > 0 {
			filters = nil
			for _, e := range g.entries {
				f := base
				f.Principal, f.Host, f.Operation, f.Permission = &e.Principal, &e.Host, e.Operation, e.Permission
				filters = append(filters, f)
			}
		}
		if err := c.svc.delete(filters); err != nil {
			return err
		}
	}
	return c.list()
}

// confirm is confirmAction: --force, or a line reading y.
func (c *aclCommand) confirm(msg string) bool {
	if c.opts.has("force") {
		return true
	}
	fmt.Fprintln(c.out, msg)
	line, _ := c.in.ReadString('\n')
	return strings.EqualFold(strings.TrimRight(line, "\r\n"), "y")
}

func (c *aclCommand) list() error {
	filters, err := c.resourceFilters(false)
	if err != nil {
		return err
	}
	principals, err := c.principals("principal")
	if err != nil {
		return err
	}
	var bindings []acl.Binding
	if len(filters) == 0 {
		all := acl.Filter{Type: acl.ResourceAny, Pattern: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny}
		if bindings, err = c.svc.list(all); err != nil {
			return err
		}
	}
	for _, r := range filters {
		f := acl.Filter{Type: r.Type, Name: &r.Name, Pattern: r.Pattern, Operation: acl.OpAny, Permission: acl.PermissionAny}
		bs, err := c.svc.list(f)
		if err != nil {
			return err
		}
		bindings = append(bindings, bs...)
	}
	groups := groupBindings(bindings)
	if len(principals) == 0 {
		c.printGroups(groups)
		return nil
	}
	for _, p := range principals {
		fmt.Fprintf(c.out, "ACLs for principal `%s`\n", p)
		var mine []aclGroup
		for _, g := range groups {
			var es []acl.Entry
			for _, e := range g.entries {
				if e.Principal == p.String() {
					es = append(es, e)
				}
			}
			if len(es) > 0 {
				mine = append(mine, aclGroup{g.resource, es})
			}
		}
		c.printGroups(mine)
	}
	return nil
}

func (c *aclCommand) printGroups(groups []aclGroup) {
	for _, g := range groups {
		fmt.Fprintln(c.out, block("Current ACLs for resource `"+g.resource.String()+"`", g.entries))
	}
}

// groupBindings collects bindings by resource pattern, each entry once, in
// the order of the resources' and entries' text (Kafka prints hash order).
func groupBindings(bindings []acl.Binding) []aclGroup {
	var groups []aclGroup
	for _, b := range bindings {
		i := slices.IndexFunc(groups, func(g aclGroup) bool { return g.resource == b.Resource })
		if i < 0 {
			groups = append(groups, aclGroup{resource: b.Resource})
			i = len(groups) - 1
		}
		if !slices.Contains(groups[i].entries, b.Entry) {
			groups[i].entries = append(groups[i].entries, b.Entry)
		}
	}
	slices.SortFunc(groups, func(x, y aclGroup) int { return strings.Compare(x.resource.String(), y.resource.String()) })
	for _, g := range groups {
		slices.SortFunc(g.entries, func(x, y acl.Entry) int { return strings.Compare(x.String(), y.String()) })
	}
	return groups
}

// authorizerACLs is AuthorizerService: the tool's own AclAuthorizer on
// ZooKeeper. Like Kafka's, a failed binding is printed and the rest goes on.
type authorizerACLs struct {
	a   *acl.Authorizer
	out io.Writer
}

func (s *authorizerACLs) create(bindings []acl.Binding) error {
	for _, err := range s.a.CreateACLs(bindings) {
		if err != nil {
			fmt.Fprintf(s.out, "Error while adding ACLs: %s\n", err)
		}
	}
	return nil
}

func (s *authorizerACLs) delete(filters []acl.Filter) error {
	for _, deleted := range s.a.DeleteACLs(filters) {
		for _, d := range deleted {
			if d.Err != nil {
				fmt.Fprintf(s.out, "Error while removing ACLs: %s\n", d.Err)
			}
		}
	}
	return nil
}

func (s *authorizerACLs) list(f acl.Filter) ([]acl.Binding, error) { return s.a.ACLs(f), nil }

// adminACLs is AdminClientService: CreateAcls, DeleteAcls, DescribeAcls;
// the first error fails the command, as the admin client's all().get().
type adminACLs struct{ cl *kgo.Client }

func (s *adminACLs) create(bindings []acl.Binding) error {
	req := kmsg.NewPtrCreateACLsRequest()
	for _, b := range bindings {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceType(b.Resource.Type), b.Resource.Name, kmsg.ACLResourcePatternType(b.Resource.Pattern)
		c.Principal, c.Host, c.Operation, c.PermissionType = b.Entry.Principal, b.Entry.Host, kmsg.ACLOperation(b.Entry.Operation), kmsg.ACLPermissionType(b.Entry.Permission)
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(context.Background(), s.cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Results {
		if r.ErrorCode != 0 {
			return aclError(r.ErrorCode, r.ErrorMessage)
		}
	}
	return nil
}

func (s *adminACLs) delete(filters []acl.Filter) error {
	req := kmsg.NewPtrDeleteACLsRequest()
	for _, f := range filters {
		df := kmsg.NewDeleteACLsRequestFilter()
		df.ResourceType, df.ResourceName, df.ResourcePatternType = kmsg.ACLResourceType(f.Type), f.Name, kmsg.ACLResourcePatternType(f.Pattern)
		df.Principal, df.Host, df.Operation, df.PermissionType = f.Principal, f.Host, kmsg.ACLOperation(f.Operation), kmsg.ACLPermissionType(f.Permission)
		req.Filters = append(req.Filters, df)
	}
	resp, err := req.RequestWith(context.Background(), s.cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Results {
		if r.ErrorCode != 0 {
			return aclError(r.ErrorCode, r.ErrorMessage)
		}
		for _, m := range r.MatchingACLs {
			if m.ErrorCode != 0 {
				return aclError(m.ErrorCode, m.ErrorMessage)
			}
		}
	}
	return nil
}

func (s *adminACLs) list(f acl.Filter) ([]acl.Binding, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourceName, req.ResourcePatternType = kmsg.ACLResourceType(f.Type), f.Name, kmsg.ACLResourcePatternType(f.Pattern)
	req.Principal, req.Host, req.Operation, req.PermissionType = f.Principal, f.Host, kmsg.ACLOperation(f.Operation), kmsg.ACLPermissionType(f.Permission)
	resp, err := req.RequestWith(context.Background(), s.cl)
	if err != nil {
		return nil, err
	}
	if resp.ErrorCode != 0 {
		return nil, aclError(resp.ErrorCode, resp.ErrorMessage)
	}
	var out []acl.Binding
	for _, r := range resp.Resources {
		res := acl.Resource{Type: acl.ResourceType(r.ResourceType), Name: r.ResourceName, Pattern: acl.PatternType(r.ResourcePatternType)}
		for _, a := range r.ACLs {
			out = append(out, acl.Binding{Resource: res, Entry: acl.Entry{Principal: a.Principal, Host: a.Host, Operation: acl.Operation(a.Operation), Permission: acl.Permission(a.PermissionType)}})
		}
	}
	return out, nil
}

// aclError is a broker's error as the admin client's exception prints it.
func aclError(code int16, msg *string) error {
	return fmt.Errorf("%s", javaException(brokerError(kerr.ErrorForCode(code), msg)))
}
