package quota

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is a kind of client quota, named by its config key.
type Kind int

// The quotas a broker enforces on its clients.
const (
	Produce Kind = iota // producer_byte_rate: bytes appended per second
	Fetch               // consumer_byte_rate: bytes fetched per second
	Request             // request_percentage: handler time, in percent of one thread
	// ControllerMutation is controller_mutation_rate: partitions created or
	// deleted per second.
	ControllerMutation
	// Connection is connection_creation_rate, an IP's quota: connections
	// accepted per second (ConnectionRates).
	Connection
)

// Keys of the quotas of users and client ids (Kafka 2.8's QuotaConfigs).
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
	// ConnectionCreationRate is the one quota of an IP entity.
	ConnectionCreationRate = "connection_creation_rate"
)

// ConfigKey is the kind's key in a quota config.
func (k Kind) ConfigKey() string {
	return [...]string{ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate, ConnectionCreationRate}[k]
}

// IsQuotaKey reports whether key is a quota of users and client ids, and
// whether its value must be a whole number (the byte rates).
func IsQuotaKey(key string) (known, whole bool) {
	switch key {
	case ProducerByteRate, ConsumerByteRate:
		return true, true
	case RequestPercentage, ControllerMutationRate:
		return true, false
	}
	return false, false
}

// Default is the name of a default entity in ZooKeeper.
const Default = "<default>"

// Sanitize is how Kafka writes a user or client id into a znode name
// (Sanitizer.sanitize): URL-encoded, a space as %20, * as %2A, ~ kept.
func Sanitize(name string) string { return sanitizer.Replace(url.QueryEscape(name)) }

var sanitizer = strings.NewReplacer("+", "%20", "*", "%2A", "%7E", "~")

// Desanitize undoes Sanitize.
func Desanitize(name string) (string, error) { return url.PathUnescape(name) }

// Config is the quota manager's settings.
type Config struct {
	Samples int           // quota.window.num (11)
	Window  time.Duration // quota.window.size.seconds (1 s)
	Now     func() time.Time
}

// Manager holds the quotas set in ZooKeeper and measures each client's
// rates against them. Configs are read under an RWMutex that only config
// changes write; each rate has its own lock, so requests of different
// clients do not wait for each other.
type Manager struct {
	cfg Config

	mu      sync.RWMutex
	configs map[string]map[string]float64 // entity path below /config → quota key → value
	any     atomic.Bool                   // some quota is set: the fast path's check

	sensors sync.Map // sensorKey → *rate
	buckets sync.Map // sensorKey → *tokenBucket, for controller mutations
}

// New returns a manager with no quotas.
func New(cfg Config) *Manager {
	return &Manager{cfg: cfg.withDefaults(), configs: map[string]map[string]float64{}}
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Set replaces the quotas of an entity, given by its path below /config as
// a config change notification names it ("users/alice/clients/app",
// "clients/<default>"), with the quota keys of cfg; other keys, and values
// that are not numbers, are ignored. An empty cfg removes the entity.
func (m *Manager) Set(entityPath string, cfg map[string]string) {
	quotas := map[string]float64{}
	for k, v := range cfg {
		if known, _ := IsQuotaKey(k); !known {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			quotas[k] = f
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(quotas) == 0 {
		delete(m.configs, entityPath)
	} else {
		m.configs[entityPath] = quotas
	}
	m.any.Store(len(m.configs) > 0)
}

// sensorKey names one measured rate: the kind, and the user and client id
// tags of the level whose quota applies ("" for a tag the level lacks).
type sensorKey struct {
	kind         Kind
	user, client string
}

// level is one step of Kafka's quota precedence.
type level struct {
	path               func(user, client string) string
	tagUser, tagClient bool
}

var levels = []level{
	{func(u, c string) string { return "users/" + u + "/clients/" + c }, true, true},
	{func(u, c string) string { return "users/" + u + "/clients/" + Default }, true, true},
	{func(u, c string) string { return "users/" + u }, true, false},
	{func(u, c string) string { return "users/" + Default + "/clients/" + c }, true, true},
	{func(u, c string) string { return "users/" + Default + "/clients/" + Default }, true, true},
	{func(u, c string) string { return "users/" + Default }, true, false},
	{func(u, c string) string { return "clients/" + c }, false, true},
	{func(u, c string) string { return "clients/" + Default }, false, true},
}

// Quota returns the quota of kind that applies to user and clientID, and
// the rate it is measured on; ok is false when none is set.
func (m *Manager) Quota(kind Kind, user, clientID string) (bound float64, key sensorKey, ok bool) {
	if !m.any.Load() {
		return 0, sensorKey{}, false
	}
	u, c := Sanitize(user), Sanitize(clientID)
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, l := range levels {
		q, found := m.configs[l.path(u, c)][kind.ConfigKey()]
		if !found {
			continue
		}
		key = sensorKey{kind: kind}
		if l.tagUser {
			key.user = user
		}
		if l.tagClient {
			key.client = clientID
		}
		return q, key, true
	}
	return 0, sensorKey{}, false
}

// Applied is the quota of one kind that applies to a client, and the rate
// it is measured on: looked up once for all a request records.
type Applied struct {
	cfg   Config
	kind  Kind
	bound float64
	r     *rate
}

// Lookup returns the quota of kind that applies to user and clientID;
// false when none is set, which needs no lock.
func (m *Manager) Lookup(kind Kind, user, clientID string) (Applied, bool) {
	bound, key, ok := m.Quota(kind, user, clientID)
	if !ok {
		return Applied{}, false
	}
	return Applied{cfg: m.cfg, kind: kind, bound: bound, r: m.rate(key)}, true
}

// Record is Lookup then Applied.Record: 0 without a quota.
func (m *Manager) Record(kind Kind, user, clientID string, value float64) time.Duration {
	a, ok := m.Lookup(kind, user, clientID)
	if !ok {
		return 0
	}
	return a.Record(value)
}

// MaxValueInWindow is the most a client may take within the quota's window,
// quota × (Samples-1) windows (Kafka's getMaxValueInQuotaWindow): a fetch is
// capped at it so one response cannot exceed what the quota ever allows.
func (a Applied) MaxValueInWindow() float64 {
	return a.bound * (a.cfg.Window * time.Duration(a.cfg.Samples-1)).Seconds()
}

// Record adds value (bytes, or percent-seconds of handler time) to the
// rate, and returns how long the client is to be throttled: 0 unless the
// rate is now above the quota. A request or connection quota's throttle is
// at most one window (Kafka's ClientRequestQuotaManager and ConnectionQuotas
// bound it so).
func (a Applied) Record(value float64) time.Duration {
	d := a.record(value)
	if a.kind == Request || a.kind == Connection {
		d = min(d, a.cfg.Window)
	}
	return d
}

func (a Applied) record(value float64) time.Duration {
	now := a.cfg.Now()
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	a.r.record(value, now, a.cfg)
	observed, window := a.r.measure(now, a.cfg, a.cfg.Window*time.Duration(a.cfg.Samples-1))
	switch {
	case observed <= a.bound:
		return 0
	case a.bound <= 0:
		// Kafka's formula divides by the quota: a zero quota throttles for
		// the whole measured span.
		return a.cfg.Window * time.Duration(a.cfg.Samples)
	}
	return time.Duration(math.Round((observed - a.bound) / a.bound * float64(window)))
}

// Unrecord takes back a value recorded for a response that was not sent
// (a throttled fetch gets an empty one, as in Kafka).
func (a Applied) Unrecord(value float64) {
	a.r.mu.Lock()
	a.r.record(-value, a.cfg.Now(), a.cfg)
	a.r.mu.Unlock()
}

func (m *Manager) rate(key sensorKey) *rate {
	if r, ok := m.sensors.Load(key); ok {
		return r.(*rate)
	}
	r, _ := m.sensors.LoadOrStore(key, &rate{})
	return r.(*rate)
}

// rate is Kafka's Rate over a SampledStat: samples of cfg.Window each, the
// oldest dropped once cfg.Samples windows have passed it.
type rate struct {
	mu      sync.Mutex
	samples []sample
}

type sample struct {
	start time.Time
	total float64
}

func (r *rate) purge(now time.Time, cfg Config) {
	expire := now.Add(-cfg.Window * time.Duration(cfg.Samples))
	i := 0
	for i < len(r.samples) && !r.samples[i].start.After(expire) {
		i++
	}
	r.samples = r.samples[i:]
}

func (r *rate) record(v float64, now time.Time, cfg Config) {
	r.purge(now, cfg)
	if n := len(r.samples); n == 0 || !now.Before(r.samples[n-1].start.Add(cfg.Window)) {
		r.samples = append(r.samples, sample{start: now})
	}
	r.samples[len(r.samples)-1].total += v
}

// measure returns the rate per second and the window it is measured over:
// from the oldest sample's start, but at least minWindow, so first bytes do
// not read as a burst: Samples-1 windows for client quotas (Kafka's
// Rate.windowSize), one window for replication (SimpleRate).
func (r *rate) measure(now time.Time, cfg Config, minWindow time.Duration) (perSecond float64, window time.Duration) {
	r.purge(now, cfg)
	total := 0.0
	for _, s := range r.samples {
		total += s.total
	}
	window = minWindow
	if len(r.samples) > 0 {
		window = max(window, now.Sub(r.samples[0].start))
	}
	return total / window.Seconds(), window
}
