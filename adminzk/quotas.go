package adminzk

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/zkpaths"
)

// ErrInvalidQuota: a client quota entity, filter or value is malformed.
var ErrInvalidQuota = errors.New("invalid client quota")

// The entity types of client quotas (ClientQuotaEntity).
const (
	QuotaUser     = "user"
	QuotaClientID = "client-id"
	QuotaIP       = "ip"
)

// QuotaEntity names the entity of a client quota: a user, a client id, or
// both, or an IP; each a name or nil for the default entity.
type QuotaEntity struct {
	HasUser, HasClientID, HasIP bool
	User, ClientID, IP          *string
}

// QuotaOp sets a quota key to Value, or removes it.
type QuotaOp struct {
	Key    string
	Value  float64
	Remove bool
}

// QuotaComponent is one component of a ParseQuotaEntity input: an entity
// type and a name, nil for the default.
type QuotaComponent struct {
	Type string
	Name *string
}

// ParseQuotaEntity checks an entity as Kafka's parseAndSanitizeQuotaEntity
// does: user, client-id and ip, each at most once and not empty.
func ParseQuotaEntity(components []QuotaComponent) (QuotaEntity, error) {
	var e QuotaEntity
	if len(components) == 0 {
		return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Invalid empty client quota entity")
	}
	for _, c := range components {
		if c.Name != nil && *c.Name == "" {
			return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Empty %s not supported", c.Type)
		}
		switch c.Type {
		case QuotaUser:
			if e.HasUser {
				return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Duplicate user entity type")
			}
			e.HasUser, e.User = true, c.Name
		case QuotaClientID:
			if e.HasClientID {
				return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Duplicate client-id entity type")
			}
			e.HasClientID, e.ClientID = true, c.Name
		case QuotaIP:
			if e.HasIP {
				return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Duplicate ip entity type")
			}
			e.HasIP, e.IP = true, c.Name
		default:
			return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Unhandled client quota entity type: %s", c.Type)
		}
	}
	return e, nil
}

// sanitizedName is an entity name as its znode names it.
func sanitizedName(name *string) string {
	if name == nil {
		return zkpaths.DefaultEntity
	}
	return quota.Sanitize(*name)
}

// ConfigPath is the entity's config type and its sanitized name below it
// (/config/<entityType>/<name>).
func (e QuotaEntity) ConfigPath() (entityType, name string) {
	switch {
	case e.HasIP:
		return zkpaths.EntityIPs, sanitizedName(e.IP)
	case e.HasUser && e.HasClientID:
		return zkpaths.EntityUsers, sanitizedName(e.User) + "/" + zkpaths.EntityClients + "/" + sanitizedName(e.ClientID)
	case e.HasUser:
		return zkpaths.EntityUsers, sanitizedName(e.User)
	}
	return zkpaths.EntityClients, sanitizedName(e.ClientID)
}

// AlterClientQuotas applies ops to an entity's quotas as Kafka 2.8's
// ZkAdminManager.alterClientQuotas: an IP entity stands alone and must be
// an address or a resolvable host; unknown keys (an IP has only
// connection_creation_rate, users and clients the others) are
// INVALID_REQUEST, the byte rates must be whole numbers (LONG), the
// connection rate an INT, the doubles are stored as Java prints them. With
// validateOnly nothing is written.
func (c *Client) AlterClientQuotas(e QuotaEntity, ops []QuotaOp, validateOnly bool) error {
	if e.HasIP {
		if e.HasUser || e.HasClientID {
			return adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Invalid quota entity combination, IP entity should not be used with user/client ID entity.")
		}
		if e.IP != nil && !validIPEntity(*e.IP) {
			return adminErr(ErrInvalidQuota, kerr.InvalidRequest, "%s is not a valid IP or resolvable host.", *e.IP)
		}
	}
	props, err := quotaProps(e, ops)
	if err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	entityType, name := e.ConfigPath()
	return c.ChangeEntityConfig(entityType, name, func(cfg map[string]string) (bool, error) {
		for _, op := range ops {
			if op.Remove {
				delete(cfg, op.Key)
			} else {
				cfg[op.Key] = props[op.Key]
			}
		}
		return true, nil
	})
}

// quotaProps checks the values of ops for an entity's kind and writes
// them as the znode stores them, by key.
func quotaProps(e QuotaEntity, ops []QuotaOp) (map[string]string, error) {
	props := map[string]string{}
	for _, op := range ops {
		if op.Remove {
			continue
		}
		known, whole := quota.IsQuotaKey(op.Key)
		typ, limit := "LONG", float64(math.MaxInt64)
		if e.HasIP {
			known, whole, typ, limit = op.Key == quota.ConnectionCreationRate, true, "INT", math.MaxInt32
		}
		switch {
		case !known:
			return nil, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Invalid configuration key %s", op.Key)
		case !whole:
			props[op.Key] = kafka.JavaDouble(op.Value)
			continue
		}
		const epsilon = 1e-6
		n := math.Floor(op.Value + epsilon)
		if math.Abs(n-op.Value) > epsilon || n > limit || n < -limit-1 {
			return nil, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Configuration %s must be a %s value", op.Key, typ)
		}
		props[op.Key] = strconv.FormatInt(int64(n), 10)
	}
	return props, nil
}

// validIPEntity reports whether name is an IP address or a host name that
// resolves (Kafka's DynamicConfig.Ip.isValidIpEntity).
func validIPEntity(name string) bool {
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	addrs, err := net.LookupHost(name)
	return err == nil && len(addrs) > 0
}

// QuotaMatch is one component of a DescribeClientQuotas filter: any entity
// of its type, or the one named (a nil Name is the default entity).
type QuotaMatch struct {
	Any  bool
	Name *string
}

// QuotaFilter is a DescribeClientQuotas filter, by entity type.
type QuotaFilter struct {
	Components map[string]QuotaMatch
	Strict     bool
}

// QuotaFilterOf checks a DescribeClientQuotas filter as Kafka 2.8 does:
// each entity type at most once, ip not with user or client-id, an exact
// match with a name.
func QuotaFilterOf(components []kmsg.DescribeClientQuotasRequestComponent, strict bool) (QuotaFilter, error) {
	f := QuotaFilter{Components: map[string]QuotaMatch{}, Strict: strict}
	for _, c := range components {
		if _, dup := f.Components[c.EntityType]; dup {
			return f, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Duplicate %s filter component entity type", c.EntityType)
		}
		switch c.EntityType {
		case QuotaUser, QuotaClientID, QuotaIP:
		case "":
			return f, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Unexpected empty filter component entity type")
		default:
			return f, adminErr(ErrInvalidQuota, kerr.UnsupportedVersion, "Custom entity type '%s' not supported", c.EntityType)
		}
		switch c.MatchType {
		case kmsg.QuotasMatchTypeExact:
			if c.Match == nil {
				return f, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Missing match for the exact match type of %s", c.EntityType)
			}
			f.Components[c.EntityType] = QuotaMatch{Name: c.Match}
		case kmsg.QuotasMatchTypeDefault:
			f.Components[c.EntityType] = QuotaMatch{}
		case kmsg.QuotasMatchTypeAny:
			f.Components[c.EntityType] = QuotaMatch{Any: true}
		default:
			return f, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Unexpected match type")
		}
	}
	_, user := f.Components[QuotaUser]
	_, client := f.Components[QuotaClientID]
	if _, ip := f.Components[QuotaIP]; ip && (user || client) {
		return f, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.")
	}
	return f, nil
}

// DescribedQuota is one entity's quotas.
type DescribedQuota struct {
	Entity QuotaEntity
	Values map[string]float64
}

// DescribeClientQuotas lists the quotas matching a filter (from
// QuotaFilterOf) as Kafka 2.8's ZkAdminManager.describeClientQuotas: user,
// client-id and user/client-id entities unless the filter names ip, IP
// entities unless it names user or client-id; only those with some quota
// key of their kind, in a stable order.
func (c *Client) DescribeClientQuotas(f QuotaFilter) ([]DescribedQuota, error) {
	userMatch, hasUser := f.Components[QuotaUser]
	clientMatch, hasClient := f.Components[QuotaClientID]
	ipMatch, hasIP := f.Components[QuotaIP]
	// matches is Kafka's: a component matches a name it equals (a default
	// the default), or any name of its type; a type without a component
	// matches an absent name, or any when not strict.
	matches := func(has bool, m QuotaMatch, present bool, name *string) bool {
		switch {
		case !has:
			return !present || !f.Strict
		case !present:
			return false
		case m.Any:
			return true
		case m.Name == nil || name == nil:
			return m.Name == nil && name == nil
		}
		return *m.Name == *name
	}
	var out []DescribedQuota
	add := func(e QuotaEntity, cfg map[string]string) {
		values := map[string]float64{}
		for k, v := range cfg {
			if known, _ := quota.IsQuotaKey(k); known {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					values[k] = f
				}
			}
		}
		if len(values) > 0 && matches(hasUser, userMatch, e.HasUser, e.User) && matches(hasClient, clientMatch, e.HasClientID, e.ClientID) {
			out = append(out, DescribedQuota{Entity: e, Values: values})
		}
	}
	if !hasIP {
		paths, err := c.QuotaEntityPaths()
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			e, ok := quotaEntityOf(p)
			if !ok {
				continue
			}
			entityType, name, _ := strings.Cut(p, "/")
			cfg, err := c.FetchEntityConfig(entityType, name)
			if err != nil {
				return nil, err
			}
			add(e, cfg)
		}
	}
	if hasUser || hasClient || (!hasIP && f.Strict) {
		return out, nil
	}
	ips, err := c.IPQuotaEntities()
	if err != nil {
		return nil, err
	}
	for _, name := range ips {
		ip, err := desanitized(name)
		if err != nil || (!ipMatch.Any && hasIP && !sameName(ipMatch.Name, ip)) {
			continue
		}
		cfg, err := c.FetchEntityConfig(zkpaths.EntityIPs, name)
		if err != nil {
			return nil, err
		}
		if v, err := strconv.ParseFloat(cfg[quota.ConnectionCreationRate], 64); err == nil {
			out = append(out, DescribedQuota{Entity: QuotaEntity{HasIP: true, IP: ip}, Values: map[string]float64{quota.ConnectionCreationRate: v}})
		}
	}
	return out, nil
}

// sameName reports whether two entity names (nil the default) are equal.
func sameName(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// IPQuotaEntities lists the IP entities that have a znode under /config/ips
// (sanitized, "<default>" for the default), sorted.
func (c *Client) IPQuotaEntities() ([]string, error) {
	return c.children(zkpaths.ConfigIPs)
}

// QuotaEntityPaths lists every users and clients entity that has a znode,
// as paths below /config ("users/alice", "users/alice/clients/app",
// "clients/<default>"), users first, each level sorted.
func (c *Client) QuotaEntityPaths() ([]string, error) {
	users, err := c.children(zkpaths.Config + "/" + zkpaths.EntityUsers)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, u := range users {
		paths = append(paths, zkpaths.EntityUsers+"/"+u)
		clients, err := c.children(zkpaths.EntityConfigPath(zkpaths.EntityUsers, u+"/"+zkpaths.EntityClients))
		if err != nil {
			return nil, err
		}
		for _, cl := range clients {
			paths = append(paths, zkpaths.EntityUsers+"/"+u+"/"+zkpaths.EntityClients+"/"+cl)
		}
	}
	clients, err := c.children(zkpaths.Config + "/" + zkpaths.EntityClients)
	if err != nil {
		return nil, err
	}
	for _, cl := range clients {
		paths = append(paths, zkpaths.EntityClients+"/"+cl)
	}
	return paths, nil
}

// quotaEntityOf is the entity of a QuotaEntityPaths path; false for a name
// that is not a sanitized one.
func quotaEntityOf(path string) (QuotaEntity, bool) {
	parts := strings.Split(path, "/")
	var e QuotaEntity
	var err error
	switch {
	case len(parts) == 2 && parts[0] == zkpaths.EntityClients:
		e.HasClientID = true
		e.ClientID, err = desanitized(parts[1])
	case len(parts) == 2 && parts[0] == zkpaths.EntityUsers:
		e.HasUser = true
		e.User, err = desanitized(parts[1])
	case len(parts) == 4 && parts[0] == zkpaths.EntityUsers && parts[2] == zkpaths.EntityClients:
		e.HasUser, e.HasClientID = true, true
		if e.User, err = desanitized(parts[1]); err == nil {
			e.ClientID, err = desanitized(parts[3])
		}
	default:
		return e, false
	}
	return e, err == nil
}

// desanitized is a znode's entity name: nil for the default.
func desanitized(name string) (*string, error) {
	if name == zkpaths.DefaultEntity {
		return nil, nil
	}
	n, err := quota.Desanitize(name)
	return &n, err
}

// children lists a znode's children, none when it does not exist, sorted.
func (c *Client) children(path string) ([]string, error) {
	children, _, err := c.zk.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", path, err)
	}
	slices.Sort(children)
	return children, nil
}
