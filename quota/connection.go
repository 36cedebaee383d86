package quota

import (
	"math"
	"net/netip"
	"sync"
)

// ConnectionRates are Kafka 2.8's IP connection-rate quotas (KIP-612):
// connection_creation_rate of /config/ips/<ip> and /config/ips/<default>,
// connections accepted per second from one address, measured as the client
// quotas' rates are. A connection above the rate is not served: Kafka holds
// it for the throttle time, at most one window, then closes it.
type ConnectionRates struct {
	cfg Config

	mu    sync.RWMutex
	rates map[netip.Addr]float64
	def   float64 // the default entity's; unbounded when unset
	any   bool

	sensors sync.Map // netip.Addr → *rate
}

// NewConnectionRates returns IP connection-rate quotas with none set.
func NewConnectionRates(cfg Config) *ConnectionRates {
	return &ConnectionRates{cfg: cfg.withDefaults(), rates: map[netip.Addr]float64{}, def: math.MaxInt32}
}

// Set sets or (set false) removes the rate of one address.
func (c *ConnectionRates) Set(addr netip.Addr, rate float64, set bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if set {
		c.rates[addr.Unmap()] = rate
	} else {
		delete(c.rates, addr.Unmap())
	}
	c.any = len(c.rates) > 0 || c.def != math.MaxInt32
}

// SetDefault sets or (set false) removes the rate of addresses without
// their own (Kafka's default is Integer.MAX_VALUE: unbounded).
func (c *ConnectionRates) SetDefault(rate float64, set bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.def = math.MaxInt32
	if set {
		c.def = rate
	}
	c.any = len(c.rates) > 0 || c.def != math.MaxInt32
}

// Lookup returns the quota that applies to connections from addr; false
// when it is unbounded.
func (c *ConnectionRates) Lookup(addr netip.Addr) (Applied, bool) {
	addr = addr.Unmap()
	c.mu.RLock()
	bound, ok := c.rates[addr]
	if !ok {
		bound = c.def
	}
	some := c.any
	c.mu.RUnlock()
	if !some || bound == math.MaxInt32 {
		return Applied{}, false
	}
	r, _ := c.sensors.LoadOrStore(addr, &rate{})
	return Applied{cfg: c.cfg, kind: Connection, bound: bound, r: r.(*rate)}, true
}
