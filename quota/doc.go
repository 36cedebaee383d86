// Package quota is Kafka's client quotas (ClientQuotaManager with the
// default quota callback): byte-rate quotas on produce and fetch, and
// request-time quotas, per user and client id, as /config/users and
// /config/clients set them.
//
// Data flows in two ways. Configs come from the broker's config manager:
// every change of a users or clients entity is handed to Manager.Set, which
// keeps the quota values by entity. Requests come from the request path:
// Record adds a request's bytes (or handler time) to the rate of the quota
// entity that applies to its user and client id, and returns how long the
// client must be throttled when that rate is above the quota.
//
// Which quota applies follows Kafka's precedence, the first level that sets
// the quota's key winning: user and client id, user and default client,
// user, default user and client id, default user and default client, default
// user, client id, default client. A quota set on a default entity is each
// client's own: the rate is measured per actual user or client id (the
// metric tags of the level that matched).
//
// Rates are measured as Kafka's Rate over quota.window.num samples of
// quota.window.size.seconds each, and the throttle time is Kafka's:
// (rate - quota) / quota × the measured window.
//
// Mutation is the controller mutation quota (controller_mutation_rate,
// KIP-599): Kafka's token bucket per client, taken by the partitions a
// request creates or deletes, strict (refusing once in debt) for the newer
// request versions and permissive (throttling only) for older ones.
//
// Replication is the other kind of quota, Kafka's ReplicationQuotaManager:
// one byte rate for a broker's throttled leader (or follower) traffic, set
// from leader.replication.throttled.rate (or the follower one), and the
// partitions throttled, from the topics' throttled replicas lists. It only
// answers whether a partition is throttled and whether the rate is
// exceeded; the broker decides what to hold back.
package quota
