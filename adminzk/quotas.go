package adminzk

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
// both, each a name or nil for the default entity.
type QuotaEntity struct {
	HasUser, HasClientID bool
	User, ClientID       *string
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
// does: user and client-id, each at most once; an IP entity is refused
// here, as connection-rate quotas are not served.
func ParseQuotaEntity(components []QuotaComponent) (QuotaEntity, error) {
	var e QuotaEntity
	if len(components) == 0 {
		return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Invalid empty client quota entity")
	}
	for _, c := range components {
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
			return e, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "IP connection-rate quotas are not supported by this broker")
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

// configPath is the entity's config type and name below it.
func (e QuotaEntity) configPath() (entityType, name string) {
	switch {
	case e.HasUser && e.HasClientID:
		return zkpaths.EntityUsers, sanitizedName(e.User) + "/" + zkpaths.EntityClients + "/" + sanitizedName(e.ClientID)
	case e.HasUser:
		return zkpaths.EntityUsers, sanitizedName(e.User)
	}
	return zkpaths.EntityClients, sanitizedName(e.ClientID)
}

// AlterClientQuotas applies ops to an entity's quotas as Kafka 2.8's
// ZkAdminManager.alterClientQuotas: unknown keys are INVALID_REQUEST, the
// byte rates must be whole numbers, the doubles are stored as Java prints
// them. With validateOnly nothing is written.
func (c *Client) AlterClientQuotas(e QuotaEntity, ops []QuotaOp, validateOnly bool) error {
	props := map[string]string{}
	for _, op := range ops {
		if op.Remove {
			continue
		}
		known, whole := quota.IsQuotaKey(op.Key)
		switch {
		case !known:
			return adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Invalid configuration key %s", op.Key)
		case !whole:
			props[op.Key] = JavaDouble(op.Value)
			continue
		}
		const epsilon = 1e-6
		n := math.Floor(op.Value + epsilon)
		if math.Abs(n-op.Value) > epsilon || n > math.MaxInt64 || n < math.MinInt64 {
			return adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Configuration %s must be a LONG value", op.Key)
		}
		props[op.Key] = strconv.FormatInt(int64(n), 10)
	}
	if validateOnly {
		return nil
	}
	entityType, name := e.configPath()
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

// JavaDouble formats v as Java's Double.toString, which Kafka uses to store
// and print quota doubles: 1024.0, 0.5, 1.0E7.
func JavaDouble(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 1e-3 || a >= 1e7) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'E', -1, 64), "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
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
// each entity type at most once, user or client-id (IP connection-rate
// quotas are not served), an exact match with a name.
func QuotaFilterOf(components []kmsg.DescribeClientQuotasRequestComponent, strict bool) (QuotaFilter, error) {
	f := QuotaFilter{Components: map[string]QuotaMatch{}, Strict: strict}
	for _, c := range components {
		if _, dup := f.Components[c.EntityType]; dup {
			return f, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "Duplicate %s filter component entity type", c.EntityType)
		}
		switch c.EntityType {
		case QuotaUser, QuotaClientID:
		case QuotaIP:
			return f, adminErr(ErrInvalidQuota, kerr.InvalidRequest, "IP connection-rate quotas are not supported by this broker")
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
	return f, nil
}

// DescribedQuota is one entity's quotas.
type DescribedQuota struct {
	Entity QuotaEntity
	Values map[string]float64
}

// DescribeClientQuotas lists the quotas matching a filter (from
// QuotaFilterOf) as Kafka 2.8's ZkAdminManager.describeClientQuotas: user,
// client-id and user/client-id entities, only those with some quota key, in
// a stable order.
func (c *Client) DescribeClientQuotas(f QuotaFilter) ([]DescribedQuota, error) {
	userMatch, hasUser := f.Components[QuotaUser]
	clientMatch, hasClient := f.Components[QuotaClientID]
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
	return out, nil
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
