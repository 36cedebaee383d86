package broker

// Client quotas (Kafka's ClientQuotaManager for produce and fetch): the
// quota configs of users and client ids come from /config/users and
// /config/clients, loaded at startup and on each change notification into
// the quota package's manager. A produce's request bytes and a consumer
// fetch's record bytes are recorded against the quota that applies to the
// client (its user is the connection's principal: ANONYMOUS on a listener
// without authentication); a rate above it sets the response's throttle_time_ms, and the listener
// mutes the connection for that long (Kafka's channel throttling): after
// sending the response to a client that throttles itself (KIP-219), before
// it to an older one. A throttled fetch gets an empty response, its bytes
// taken back, as in Kafka.

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/zkpaths"
)

// loadQuotaConfigs reads every users, clients and ips entity, nested ones
// included, as Kafka's DynamicConfigManager does at startup.
func (m *configManager) loadQuotaConfigs() error {
	paths, err := m.s.adminZk().QuotaEntityPaths()
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := m.reloadQuotaConfig(p); err != nil {
			return err
		}
	}
	ips, err := m.s.adminZk().IPQuotaEntities()
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if err := m.reloadIPQuotaConfig(ip); err != nil {
			return err
		}
	}
	return nil
}

// reloadQuotaConfig re-reads the config of a users or clients entity, given
// by its path below /config, into the quota manager.
func (m *configManager) reloadQuotaConfig(entityPath string) error {
	entityType, name, _ := strings.Cut(entityPath, "/")
	cfg, err := m.s.adminZk().FetchEntityConfig(entityType, name)
	if err != nil {
		return err
	}
	m.s.clientQuotas.Set(entityPath, cfg)
	if entityType == zkpaths.EntityUsers {
		// The same znode holds the user's SCRAM credentials.
		m.s.scram.update(name, cfg, m.log)
	}
	m.log.Info("Loaded client quota config", zap.String("entity-path", entityPath), zap.String("config", adminzk.FormatConfig(adminzk.LoggableConfig(cfg))))
	return nil
}

// reloadIPQuotaConfig re-reads an IP entity's connection_creation_rate
// (Kafka's IpConfigHandler): the default entity's, or an address's, a host
// name standing for the first address it resolves to.
func (m *configManager) reloadIPQuotaConfig(name string) error {
	cfg, err := m.s.adminZk().FetchEntityConfig(zkpaths.EntityIPs, name)
	if err != nil {
		return err
	}
	rate, err := strconv.ParseFloat(cfg[quota.ConnectionCreationRate], 64)
	set := err == nil
	log := m.log.With(zap.String("ip", name), zap.String("config", adminzk.FormatConfig(cfg)))
	if name == zkpaths.DefaultEntity {
		m.s.connectionRates.SetDefault(rate, set)
		log.Info("Loaded the default IP connection rate quota")
		return nil
	}
	host, err := quota.Desanitize(name)
	if err != nil {
		log.Error("Ignoring an IP quota entity whose name is not sanitized", zap.Error(err))
		return nil
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		ips, lookupErr := net.LookupIP(host)
		if lookupErr != nil || len(ips) == 0 {
			log.Error("Ignoring an IP quota entity that does not resolve", zap.Error(lookupErr))
			return nil
		}
		addr, _ = netip.AddrFromSlice(ips[0])
	}
	m.s.connectionRates.Set(addr, rate, set)
	log.Info("Loaded an IP connection rate quota", zap.Stringer("address", addr.Unmap()))
	return nil
}

// clientID is the request's client id, "" when null.
func (r *request) clientID() string {
	if r.hdr.ClientID == nil {
		return ""
	}
	return *r.hdr.ClientID
}

// throttle asks the listener to mute the connection for d, keeping the
// longest asked for.
func (r *request) throttle(d time.Duration) {
	r.throttleTime = max(r.throttleTime, d)
}

// throttleMillis is a throttle time as the responses carry it.
func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), 1<<31-1))
}

// mutationQuota is the request's controller mutation quota (KIP-599),
// strict from version strictSince of its API, nil when none applies.
func (s *Server) mutationQuota(r *request, strictSince int16) *quota.Mutation {
	return s.clientQuotas.Mutation(r.principal().Name, r.clientID(), r.hdr.APIVersion >= strictSince)
}

// mutationThrottle asks the listener to mute the connection for what is
// left of the quota's throttle, and returns it as the response carries it.
func (s *Server) mutationThrottle(r *request, q *quota.Mutation) int32 {
	d := q.ThrottleTime()
	r.throttle(d)
	return throttleMillis(d)
}

// throttlingQuotaExceeded refuses a topic's mutation beyond a strict
// controller mutation quota.
func throttlingQuotaExceeded() error {
	return topicErr(kerr.ThrottlingQuotaExceeded, "%s", kerr.ThrottlingQuotaExceeded.Description)
}
