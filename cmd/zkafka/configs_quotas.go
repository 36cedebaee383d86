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
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
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
		v, err := strconv.ParseFloat(c.add[k], 64)
		if err != nil {
			return nil, fmt.Errorf("Cannot parse quota configuration value for %s: %s", k, c.add[k])
		}
		ops = append(ops, adminzk.QuotaOp{Key: k, Value: v})
	}
	for _, k := range c.del {
		ops = append(ops, adminzk.QuotaOp{Key: k, Remove: true})
	}
	return ops, nil
}

func (c *configCommand) runQuotasAdmin(ctx context.Context, cl *kgo.Client, out io.Writer) error {
	if c.opts.has("alter") {
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
	return nil
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

func (c *configCommand) runQuotasZooKeeper(zkc *zkclient.Client, out io.Writer) error {
	admin := newAdminZk(zkc)
	if c.opts.has("alter") {
		ops, err := c.quotaOps()
		if err != nil {
			return err
		}
		e, err := adminzk.ParseQuotaEntity(quotaComponents(c.quotaTargets))
		if err != nil {
			return err
		}
		if err := admin.AlterClientQuotas(e, ops, false); err != nil {
			return err
		}
		fmt.Fprintf(out, "Completed updating config for entity: %s.\n", quotaEntityLabel(e))
		return nil
	}
	filter, err := adminzk.QuotaFilterOf(describeComponents(c.quotaTargets), true)
	if err != nil {
		return err
	}
	described, err := admin.DescribeClientQuotas(filter)
	if err != nil {
		return err
	}
	for _, d := range described {
		pairs := make([]string, 0, len(d.Values))
		for _, k := range slices.Sorted(maps.Keys(d.Values)) {
			pairs = append(pairs, k+"="+kafka.JavaDouble(d.Values[k]))
		}
		fmt.Fprintf(out, "Configs for %s are %s\n", quotaEntityLabel(d.Entity), strings.Join(pairs, ","))
	}
	return nil
}
