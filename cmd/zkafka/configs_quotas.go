package main

// kafka-configs --entity-type users|clients|ips: client quotas, as Kafka 2.8's
// ConfigCommand handles them — through DescribeClientQuotas and
// AlterClientQuotas with --bootstrap-server, through adminzk (the znodes
// and a change notification) with --zookeeper. A user and a client id may
// be named together (--entity-type users --entity-name u --entity-type
// clients --entity-name c), the i-th name going with the i-th type.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/zkpaths"
)

// quotaTarget is one entity type of the command and the entities of it
// named: any (describe), the default, or one by name.
type quotaTarget struct {
	entityType string // users, clients or ips
	quotaType  string // its ClientQuotaEntity type: user, client-id or ip
	match      adminzk.QuotaMatch
}

// quotaTargets pairs the command's entity types with its names.
func quotaTargets(opts toolOptions) ([]quotaTarget, error) {
	types, names := opts.all("entity-type"), opts.all("entity-name")
	switch {
	case len(types) == 2 && (types[0] == types[1] || !slices.Contains(types, "users") || !slices.Contains(types, "clients")):
		return nil, errors.New("Only 'users' and 'clients' entity types may be specified together")
	case len(types) == 2 && opts.has("entity-default"):
		return nil, errors.New("zkafka configs: name both the user and the client id (--entity-name twice) to describe or alter them together")
	case len(names) > len(types):
		return nil, errors.New("More entity names than entity types were specified")
	}
	targets := make([]quotaTarget, len(types))
	for i, t := range types {
		targets[i] = quotaTarget{entityType: t, quotaType: adminzk.QuotaUser, match: adminzk.QuotaMatch{Any: !opts.has("entity-default")}}
		switch t {
		case "clients":
			targets[i].quotaType = adminzk.QuotaClientID
		case "ips":
			targets[i].quotaType = adminzk.QuotaIP
		}
		if i < len(names) {
			targets[i].match = adminzk.QuotaMatch{Name: &names[i]}
		}
	}
	return targets, nil
}

// quotaComponents is the targets as an adminzk entity's components; every
// target must be named.
func quotaComponents(targets []quotaTarget) []adminzk.QuotaComponent {
	var out []adminzk.QuotaComponent
	for _, t := range targets {
		out = append(out, adminzk.QuotaComponent{Type: t.quotaType, Name: t.match.Name})
	}
	return out
}

// quotaEntityLabel is how 2.8's tool names a quota entity: "user-principal
// 'alice', client-id 'app'", "the default client-id".
func quotaEntityLabel(e adminzk.QuotaEntity) string {
	var parts []string
	add := func(has bool, typ string, name *string) {
		switch {
		case !has:
		case name == nil:
			parts = append(parts, "the default "+typ)
		default:
			parts = append(parts, fmt.Sprintf("%s '%s'", typ, *name))
		}
	}
	add(e.HasUser, "user-principal", e.User)
	add(e.HasClientID, "client-id", e.ClientID)
	add(e.HasIP, "ip", e.IP)
	return strings.Join(parts, ", ")
}

// quotaOps turns --add-config and --delete-config into quota ops: values
// must be numbers.
func (c *configCommand) quotaOps() ([]adminzk.QuotaOp, error) {
	var ops []adminzk.QuotaOp
	for _, k := range c.addOrder {
		if isScramKey(k) {
			continue // SCRAM credentials, not quotas
		}
		v, err := strconv.ParseFloat(c.add[k], 64)
		if err != nil {
			return nil, fmt.Errorf("Cannot parse quota configuration value for %s: %s", k, c.add[k])
		}
		ops = append(ops, adminzk.QuotaOp{Key: k, Value: v})
	}
	for _, k := range c.del {
		if !isScramKey(k) {
			ops = append(ops, adminzk.QuotaOp{Key: k, Remove: true})
		}
	}
	return ops, nil
}

func (c *configCommand) runQuotasAdmin(ctx context.Context, cl *kgo.Client, out io.Writer) error {
	if c.opts.has("alter") {
		if scram, err := c.checkAdminUserKeys(); err != nil || scram {
			if err != nil {
				return err
			}
			return c.alterScramAdmin(ctx, cl, out)
		}
		return c.alterQuotasAdmin(ctx, cl, out)
	}
	resp, err := c.describeQuotas(ctx, cl)
	if err != nil {
		return err
	}
	for _, e := range resp.Entries {
		components := make([]adminzk.QuotaComponent, len(e.Entity))
		for i, p := range e.Entity {
			components[i] = adminzk.QuotaComponent{Type: p.Type, Name: p.Name}
		}
		qe, err := adminzk.ParseQuotaEntity(components)
		if err != nil {
			return err
		}
		values := make([]string, len(e.Values))
		for i, v := range e.Values {
			values[i] = v.Key + "=" + kafka.JavaDouble(v.Value)
		}
		fmt.Fprintf(out, "Quota configs for %s are %s\n", quotaEntityLabel(qe), strings.Join(values, ", "))
	}
	return c.describeScramAdmin(ctx, cl, out)
}

// describeComponents is the DescribeClientQuotas filter of the targets.
func describeComponents(targets []quotaTarget) []kmsg.DescribeClientQuotasRequestComponent {
	var out []kmsg.DescribeClientQuotasRequestComponent
	for _, t := range targets {
		comp := kmsg.NewDescribeClientQuotasRequestComponent()
		comp.EntityType = t.quotaType
		switch {
		case t.match.Any:
			comp.MatchType = kmsg.QuotasMatchTypeAny
		case t.match.Name == nil:
			comp.MatchType = kmsg.QuotasMatchTypeDefault
		default:
			comp.MatchType, comp.Match = kmsg.QuotasMatchTypeExact, t.match.Name
		}
		out = append(out, comp)
	}
	return out
}

// describeQuotas asks for the quotas of exactly the entity types named, as
// 2.8's tool does (a strict filter).
func (c *configCommand) describeQuotas(ctx context.Context, cl *kgo.Client) (*kmsg.DescribeClientQuotasResponse, error) {
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Strict, req.Components = true, describeComponents(c.quotaTargets)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	return resp, withMessage(resp.ErrorCode, resp.ErrorMessage)
}

func (c *configCommand) alterQuotasAdmin(ctx context.Context, cl *kgo.Client, out io.Writer) error {
	ops, err := c.quotaOps()
	if err != nil {
		return err
	}
	components := quotaComponents(c.quotaTargets)
	// As 2.8's tool, a key to delete must be set on the entity.
	current, err := c.describeQuotas(ctx, cl)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, e := range current.Entries {
		for _, v := range e.Values {
			set[v.Key] = true
		}
	}
	if invalid := slices.DeleteFunc(slices.Clone(c.del), func(k string) bool { return set[k] }); len(invalid) > 0 {
		return &usageError{"Invalid config(s): " + strings.Join(invalid, ",")}
	}
	req := kmsg.NewPtrAlterClientQuotasRequest()
	var entry kmsg.AlterClientQuotasRequestEntry
	for _, comp := range components {
		entry.Entity = append(entry.Entity, kmsg.AlterClientQuotasRequestEntryEntity{Type: comp.Type, Name: comp.Name})
	}
	for _, op := range ops {
		entry.Ops = append(entry.Ops, kmsg.AlterClientQuotasRequestEntryOp{Key: op.Key, Value: op.Value, Remove: op.Remove})
	}
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{entry}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, e := range resp.Entries {
		if err := withMessage(e.ErrorCode, e.ErrorMessage); err != nil {
			return err
		}
	}
	first := c.quotaTargets[0]
	if first.match.Name == nil {
		fmt.Fprintf(out, "Completed updating default config for %s in the cluster.\n", first.entityType)
	} else {
		fmt.Fprintf(out, "Completed updating config for %s %s.\n", singular(first.entityType), *first.match.Name)
	}
	return nil
}

// runQuotasZooKeeper is 2.8's --zookeeper path for users, clients and ips:
// --alter checks that the keys to delete are set, then writes through
// adminzk; --describe prints the stored configs as they are.
func (c *configCommand) runQuotasZooKeeper(zkc *zkclient.Client, out io.Writer) error {
	if !c.opts.has("alter") {
		return c.describeQuotasZooKeeper(zkc, out)
	}
	admin := newAdminZk(zkc)
	e, err := adminzk.ParseQuotaEntity(quotaComponents(c.quotaTargets))
	if err != nil {
		return err
	}
	entityType, name := e.ConfigPath()
	cfg, err := admin.FetchEntityConfig(entityType, name)
	if err != nil {
		return err
	}
	if invalid := slices.DeleteFunc(slices.Clone(c.del), func(k string) bool { _, ok := cfg[k]; return ok }); len(invalid) > 0 {
		return &usageError{"Invalid config(s): " + strings.Join(invalid, ",")}
	}
	if _, scramAdd, _, _, scramDel, _ := c.splitKeys(); len(scramAdd)+len(scramDel) > 0 {
		if e.HasUser && !e.HasClientID {
			return c.alterUserZooKeeper(zkc, out)
		}
		return &usageError{"requirement failed: Unknown Dynamic Configuration: " + scalaSet(append(scramAdd, scramDel...)) + "."}
	}
	ops, err := c.quotaOps()
	if err != nil {
		return err
	}
	if err := admin.AlterClientQuotas(e, ops, false); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for entity: %s.\n", zkQuotaEntityLabel(c.quotaTargets))
	return nil
}

// zkEntity is one level of 2.8's ConfigCommand.ConfigEntity: an entity type
// and its sanitized name, "" for every entity of the type.
type zkEntity struct{ entityType, name string }

func (e zkEntity) path() string { return e.entityType + "/" + e.name }

// String is 2.8's Entity.toString: "user-principal 'alice'", "default
// client-id", "ips '10.1.2.3'".
func (e zkEntity) String() string {
	typeName := map[string]string{"users": "user-principal", "clients": "client-id"}[e.entityType]
	if typeName == "" {
		typeName = e.entityType
	}
	switch {
	case e.name == quota.Default:
		return "default " + typeName
	case typeName == e.entityType:
		return fmt.Sprintf("%s '%s'", typeName, e.name)
	}
	name, err := quota.Desanitize(e.name)
	if err != nil {
		name = e.name
	}
	return fmt.Sprintf("%s '%s'", typeName, name)
}

// zkEntities are the targets as 2.8's parseEntity orders them: a user
// before its clients.
func zkEntities(targets []quotaTarget) []zkEntity {
	var out []zkEntity
	for _, t := range targets {
		e := zkEntity{entityType: t.entityType}
		switch {
		case t.match.Any:
		case t.match.Name == nil:
			e.name = quota.Default
		case t.entityType == "ips":
			e.name = *t.match.Name
		default:
			e.name = quota.Sanitize(*t.match.Name)
		}
		out = append(out, e)
	}
	if len(out) == 2 && out[0].entityType == "clients" {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// zkQuotaEntityLabel is 2.8's ConfigEntity.toString of named targets.
func zkQuotaEntityLabel(targets []quotaTarget) string {
	var parts []string
	for _, e := range zkEntities(targets) {
		parts = append(parts, e.String())
	}
	return strings.Join(parts, ", ")
}

// describeQuotasZooKeeper is 2.8's describeConfigWithZk for users, clients
// and ips: the entities of ConfigEntity.getAllEntities, each with its
// stored config as it is (SCRAM credentials included); describing every
// user leaves out users whose znode only holds their clients.
func (c *configCommand) describeQuotasZooKeeper(zkc *zkclient.Client, out io.Writer) error {
	entities := zkEntities(c.quotaTargets)
	root := entities[0]
	var all [][]zkEntity
	if root.name != "" {
		all = [][]zkEntity{{root}}
	} else {
		names, err := childrenOrNone(zkc, zkpaths.Config+"/"+root.entityType)
		if err != nil {
			return err
		}
		slices.Sort(names)
		for _, n := range names {
			all = append(all, []zkEntity{{root.entityType, n}})
		}
	}
	if len(entities) == 2 {
		child := entities[1]
		var withChild [][]zkEntity
		for _, r := range all {
			if child.name != "" {
				withChild = append(withChild, []zkEntity{r[0], child})
				continue
			}
			names, err := childrenOrNone(zkc, zkpaths.Config+"/"+r[0].path()+"/"+child.entityType)
			if err != nil {
				return err
			}
			slices.Sort(names)
			for _, n := range names {
				withChild = append(withChild, []zkEntity{r[0], {child.entityType, n}})
			}
		}
		all = withChild
	}
	describeAllUsers := root.entityType == "users" && root.name == "" && len(entities) == 1
	admin := newAdminZk(zkc)
	for _, levels := range all {
		name, labels := levels[0].name, []string{levels[0].String()}
		if len(levels) == 2 {
			name += "/" + levels[1].path()
			labels = append(labels, levels[1].String())
		}
		cfg, err := admin.FetchEntityConfig(root.entityType, name)
		if err != nil {
			return err
		}
		if len(cfg) == 0 && describeAllUsers {
			continue
		}
		pairs := make([]string, 0, len(cfg))
		for _, k := range sortedKeys(cfg) {
			pairs = append(pairs, k+"="+cfg[k])
		}
		fmt.Fprintf(out, "Configs for %s are %s\n", strings.Join(labels, ", "), strings.Join(pairs, ","))
	}
	return nil
}
