package broker

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// listenerSecurity is what a listener's security protocol needs
// (Kafka's ChannelBuilders): a TLS config for SSL and SASL_SSL, the
// enabled SASL mechanisms with their PLAIN users for SASL_PLAINTEXT and
// SASL_SSL.
type listenerSecurity struct {
	protocol   string
	tls        *tls.Config
	sasl       bool
	mechanisms []string          // sasl.enabled.mechanisms, in order
	plainUsers map[string]string // PLAIN's user_<name> entries
	// reauth is connections.max.reauth.ms (KIP-368): 0 never expires a
	// session.
	reauth time.Duration
	// maxReceive is sasl.server.max.receive.size, the largest frame read
	// before a connection authenticates.
	maxReceive int32
}

// newListenerSecurity reads a listener's security configs, each
// listener.name.<listener>.<key> or <key>.
func newListenerSecurity(cfg *brokerconfig.Config, l brokerconfig.Listener) (*listenerSecurity, error) {
	ls := &listenerSecurity{protocol: l.SecurityProtocol}
	props := func(key string) string { return cfg.ListenerConfig(l.Name, key) }
	if l.SecurityProtocol == "SSL" || l.SecurityProtocol == "SASL_SSL" {
		clientAuth := props("ssl.client.auth")
		if l.SecurityProtocol == "SASL_SSL" {
			// KIP-684: on SASL_SSL only the listener's own ssl.client.auth
			// counts.
			clientAuth = cfg.Properties["listener.name."+strings.ToLower(l.Name)+".ssl.client.auth"]
		}
		var err error
		if ls.tls, err = security.ServerTLS(props, clientAuth); err != nil {
			return nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
	}
	if l.SecurityProtocol != "SASL_PLAINTEXT" && l.SecurityProtocol != "SASL_SSL" {
		return ls, nil
	}
	ls.sasl = true
	r := brokerconfig.NewReader(map[string]string{"v": props("connections.max.reauth.ms"), "n": props("sasl.server.max.receive.size")})
	ls.reauth, ls.maxReceive = r.Ms("v"), r.Int32("n")
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("listener %s: %w", l.Name, err)
	}
	for _, m := range strings.Split(props("sasl.enabled.mechanisms"), ",") {
		m = strings.TrimSpace(m)
		switch _, scram := security.ScramMechanismNamed(m); {
		case m == "":
			continue
		case m == "PLAIN":
			entries, err := security.ParseJaasConfig(cfg.ListenerMechanismConfig(l.Name, m, "sasl.jaas.config"))
			if err != nil {
				return nil, fmt.Errorf("listener %s: %s: %w", l.Name, brokerconfig.ListenerMechanismKey(l.Name, m, "sasl.jaas.config"), err)
			}
			ls.plainUsers = security.PlainUsers(entries)
		case !scram:
			return nil, fmt.Errorf("listener %s: SASL mechanism %s is not supported, only PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512: %w", l.Name, m, brokerconfig.ErrConfig)
		}
		ls.mechanisms = append(ls.mechanisms, m)
	}
	if len(ls.mechanisms) == 0 {
		return nil, fmt.Errorf("listener %s: sasl.enabled.mechanisms is empty: %w", l.Name, brokerconfig.ErrConfig)
	}
	return ls, nil
}

// interBrokerSecurity is how this broker connects to the inter-broker
// listener of the others (replica fetchers, the controller's channel,
// controlled shutdown, transaction markers): that listener's protocol, its
// ssl.* configs as a client, and sasl.mechanism.inter.broker.protocol with
// the username and password of the listener's JAAS entry for it.
func interBrokerSecurity(cfg *brokerconfig.Config) (wire.Security, error) {
	var sec wire.Security
	l, ok := cfg.AdvertisedListener(cfg.InterBrokerListenerName)
	if !ok {
		return sec, fmt.Errorf("inter.broker.listener.name %s is not among advertised.listeners: %w", cfg.InterBrokerListenerName, brokerconfig.ErrConfig)
	}
	if l.SecurityProtocol == "SSL" || l.SecurityProtocol == "SASL_SSL" {
		var err error
		if sec.TLS, err = security.ClientTLS(func(key string) string { return cfg.ListenerConfig(l.Name, key) }); err != nil {
			return sec, fmt.Errorf("inter-broker listener %s: %w", l.Name, err)
		}
	}
	if l.SecurityProtocol != "SASL_PLAINTEXT" && l.SecurityProtocol != "SASL_SSL" {
		return sec, nil
	}
	mech := cfg.SaslMechanismInterBrokerProtocol
	key := brokerconfig.ListenerMechanismKey(l.Name, mech, "sasl.jaas.config")
	entries, err := security.ParseJaasConfig(cfg.ListenerMechanismConfig(l.Name, mech, "sasl.jaas.config"))
	if err != nil {
		return sec, fmt.Errorf("sasl.mechanism.inter.broker.protocol %s: %s: %w", mech, key, err)
	}
	user, pass := entries[0].Options["username"], entries[0].Options["password"]
	if user == "" {
		return sec, fmt.Errorf("%s has no username for inter-broker SASL: %w", key, brokerconfig.ErrConfig)
	}
	if sec.SASL, ok = security.ClientMechanism(mech, user, pass, false); !ok {
		return sec, fmt.Errorf("sasl.mechanism.inter.broker.protocol %s is not supported, only PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512: %w", mech, brokerconfig.ErrConfig)
	}
	return sec, nil
}

// scramCredentials are the SCRAM credentials of /config/users/<user>, by
// mechanism and user, as Kafka's CredentialCache holds them.
type scramCredentials struct {
	mu sync.RWMutex
	m  map[string]map[string]security.ScramCredential
}

func (c *scramCredentials) lookup(m security.ScramMechanism, user string) (security.ScramCredential, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cred, ok := c.m[m.Name][user]
	return cred, ok
}

// update replaces a user's credentials with those of its config (an entity
// name as /config/users sanitizes it); a malformed credential is logged and
// left out, as Kafka's CredentialProvider skips it.
func (c *scramCredentials) update(entityName string, cfg map[string]string, log *zap.Logger) {
	if strings.Contains(entityName, "/") || entityName == zkpaths.DefaultEntity {
		return // a user's clients, or the default user: quotas only
	}
	user, err := quota.Desanitize(entityName)
	if err != nil {
		log.Error("Ignoring the SCRAM credentials of a user whose name is not sanitized", zap.String("entity", entityName), zap.Error(err))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]map[string]security.ScramCredential{}
	}
	for _, m := range security.ScramMechanisms {
		delete(c.m[m.Name], user)
		v, ok := cfg[m.Name]
		if !ok {
			continue
		}
		cred, err := security.ParseScramCredential(v)
		if err != nil {
			log.Error("Ignoring a malformed SCRAM credential", zap.String("user", user), zap.String("mechanism", m.Name))
			continue
		}
		if c.m[m.Name] == nil {
			c.m[m.Name] = map[string]security.ScramCredential{}
		}
		c.m[m.Name][user] = cred
	}
}

// saslServer starts the exchange of a mechanism the listener enables.
func (s *Server) saslServer(ls *listenerSecurity, mechanism string) (security.Server, bool) {
	if !slices.Contains(ls.mechanisms, mechanism) {
		return nil, false
	}
	if m, ok := security.ScramMechanismNamed(mechanism); ok {
		return security.NewScramServer(m, s.scram.lookup, s.tokens.credential), true
	}
	return security.NewPlainServer(ls.plainUsers), true
}
