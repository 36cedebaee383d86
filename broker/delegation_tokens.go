package broker

// Delegation tokens (KIP-48) as Kafka 2.8's DelegationTokenManager keeps
// them: with delegation.token.secret.key (or its alias
// delegation.token.master.key) set, a token is created for the principal
// of a SASL-authenticated connection, stored in
// /delegation_token/tokens/<tokenId> and announced by a sequential
// /delegation_token/token_changes/token_change_NNNNNNNNNN whose data is the
// token id. Every broker keeps every token in memory with the SCRAM
// credentials of its HMAC (HMAC-SHA512 of the id with the secret key, base64
// as the password), re-reads a token when notified, and removes expired
// tokens every delegation.token.expiry.check.interval.ms.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/zkpaths"
)

// tokenInfo is a token as the cache holds it (Kafka's TokenInformation).
type tokenInfo struct {
	id                      string
	owner                   kafka.Principal
	renewers                []kafka.Principal
	issue, maxTime, expires int64 // epoch milliseconds
}

func (t tokenInfo) ownerOrRenewer(p kafka.Principal) bool {
	return t.owner == p || slices.Contains(t.renewers, p)
}

// delegationTokens is the DelegationTokenManager with its
// DelegationTokenCache.
type delegationTokens struct {
	s   *Server
	log *zap.Logger
	// secret is the secret key; nil disables tokens (tokenAuthEnabled).
	secret []byte
	// maxLifetime, renewTime and checkInterval are
	// delegation.token.max.lifetime.ms, .expiry.time.ms and
	// .expiry.check.interval.ms, in milliseconds.
	maxLifetime, renewTime, checkInterval int64
	now                                   func() time.Time

	// lock serializes changes and notifications (the manager's lock).
	lock sync.Mutex
	// mu guards the cache, which SASL exchanges read.
	mu     sync.RWMutex
	tokens map[string]tokenInfo
	byHMAC map[string]string                              // base64 HMAC → token id
	creds  map[string]map[string]security.ScramCredential // mechanism → token id
}

// startDelegationTokens reads the delegation.token.* configs and, with a
// secret key, creates the token paths, starts the change listener, loads
// every token and schedules the expiry check, as DelegationTokenManager's
// startup does.
func (s *Server) startDelegationTokens() error {
	props := s.cfg.Properties
	d := &delegationTokens{s: s, log: s.log.Named("delegation-token-manager"), now: time.Now,
		tokens: map[string]tokenInfo{}, byHMAC: map[string]string{}, creds: map[string]map[string]security.ScramCredential{}}
	s.tokens = d
	for _, f := range []struct {
		key string
		dst *int64
	}{
		{"delegation.token.max.lifetime.ms", &d.maxLifetime},
		{"delegation.token.expiry.time.ms", &d.renewTime},
		{"delegation.token.expiry.check.interval.ms", &d.checkInterval},
	} {
		v := strings.TrimSpace(s.configs.brokerValue(f.key))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%s %q is not a positive long", f.key, v)
		}
		*f.dst = n
	}
	key, ok := props["delegation.token.secret.key"]
	if !ok {
		key = props["delegation.token.master.key"]
	}
	if key == "" {
		return nil
	}
	d.secret = []byte(key)
	for _, p := range []string{zkpaths.DelegationTokens, zkpaths.DelegationTokenChanges} {
		if err := s.zk.CreateIfMissing(p, nil); err != nil {
			return err
		}
	}
	if err := d.load(); err != nil {
		return err
	}
	s.startChangeListener(s.ctx, d.log, zkpaths.DelegationTokenChanges, d.now, func(data []byte) error {
		return d.processNotification(string(data))
	})
	s.wg.Go(func() { d.runExpiry(s.ctx) })
	return nil
}

func (d *delegationTokens) enabled() bool { return d != nil && d.secret != nil }

func (d *delegationTokens) nowMs() int64 { return d.now().UnixMilli() }

// hmac is HMAC-SHA512 of the token id with the secret key
// (DelegationTokenManager.createHmac).
func (d *delegationTokens) hmac(tokenID string) []byte {
	h := hmac.New(sha512.New, d.secret)
	h.Write([]byte(tokenID))
	return h.Sum(nil)
}

// credential finds a token's SCRAM credential and owner for a
// token-authenticated SASL exchange (DelegationTokenCache.credential,
// owner and expiry).
func (d *delegationTokens) credential(m security.ScramMechanism, tokenID string) (security.ScramCredential, string, int64, bool) {
	if !d.enabled() {
		return security.ScramCredential{}, "", 0, false
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	t, ok := d.tokens[tokenID]
	cred, ok2 := d.creds[m.Name][tokenID]
	if !ok || !ok2 {
		return security.ScramCredential{}, "", 0, false
	}
	return cred, t.owner.Name, t.expires, true
}

// updateCache puts a token and the SCRAM credentials of its HMAC, at each
// mechanism's minimum iterations, in the cache.
func (d *delegationTokens) updateCache(t tokenInfo) {
	hmacB64 := base64.StdEncoding.EncodeToString(d.hmac(t.id))
	creds := map[string]security.ScramCredential{}
	for _, m := range security.ScramMechanisms {
		creds[m.Name] = m.NewCredential(hmacB64, security.ScramMinIterations)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tokens[t.id] = t
	d.byHMAC[hmacB64] = t.id
	for name, c := range creds {
		if d.creds[name] == nil {
			d.creds[name] = map[string]security.ScramCredential{}
		}
		d.creds[name][t.id] = c
	}
}

func (d *delegationTokens) removeCache(tokenID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.tokens, tokenID)
	for h, id := range d.byHMAC {
		if id == tokenID {
			delete(d.byHMAC, h)
		}
	}
	for _, m := range d.creds {
		delete(m, tokenID)
	}
}

// byHMACValue finds a token by the HMAC a client sends (tokenForHmac).
func (d *delegationTokens) byHMACValue(h []byte) (tokenInfo, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	t, ok := d.tokens[d.byHMAC[base64.StdEncoding.EncodeToString(h)]]
	return t, ok
}

// all is every cached token, by id.
func (d *delegationTokens) all() []tokenInfo {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]tokenInfo, 0, len(d.tokens))
	for _, t := range d.tokens {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// encode is a token's znode data: principals sanitized as Kafka's
// Sanitizer does.
func (t tokenInfo) encode() []byte {
	renewers := make([]string, len(t.renewers))
	for i, r := range t.renewers {
		renewers[i] = quota.Sanitize(r.String())
	}
	return zkpaths.EncodeDelegationTokenInfo(zkpaths.DelegationTokenInfo{Owner: quota.Sanitize(t.owner.String()), Renewers: renewers,
		IssueTimestamp: t.issue, MaxTimestamp: t.maxTime, ExpiryTimestamp: t.expires, TokenID: t.id})
}

func decodeTokenInfo(data []byte) (tokenInfo, error) {
	z, err := zkpaths.DecodeDelegationTokenInfo(data)
	if err != nil {
		return tokenInfo{}, err
	}
	principal := func(s string) (kafka.Principal, error) {
		d, err := quota.Desanitize(s)
		if err != nil {
			return kafka.Principal{}, err
		}
		return kafka.ParsePrincipal(d)
	}
	t := tokenInfo{id: z.TokenID, issue: z.IssueTimestamp, maxTime: z.MaxTimestamp, expires: z.ExpiryTimestamp}
	if t.owner, err = principal(z.Owner); err != nil {
		return t, err
	}
	for _, r := range z.Renewers {
		p, err := principal(r)
		if err != nil {
			return t, err
		}
		t.renewers = append(t.renewers, p)
	}
	return t, nil
}

// read is a token's znode, false when there is none.
func (d *delegationTokens) read(tokenID string) (tokenInfo, bool, error) {
	data, _, err := d.s.zk.Get(zkpaths.DelegationTokenPath(tokenID))
	if errors.Is(err, zk.ErrNoNode) {
		return tokenInfo{}, false, nil
	}
	if err != nil {
		return tokenInfo{}, false, fmt.Errorf("read delegation token %s: %w", tokenID, err)
	}
	t, err := decodeTokenInfo(data)
	if err != nil {
		return t, false, err
	}
	return t, true, nil
}

// load fills the cache with every token (loadCache); a malformed token is
// logged and left out.
func (d *delegationTokens) load() error {
	d.lock.Lock()
	defer d.lock.Unlock()
	ids, _, err := d.s.zk.Children(zkpaths.DelegationTokens)
	if err != nil {
		return fmt.Errorf("list %s: %w", zkpaths.DelegationTokens, err)
	}
	d.log.Info("Loading the token cache", zap.Int("token-count", len(ids)))
	for _, id := range ids {
		t, ok, err := d.read(id)
		switch {
		case errors.Is(err, zkpaths.ErrMalformed):
			d.log.Error("Error while getting Token for tokenId", zap.String("token-id", id), zap.Error(err))
		case err != nil:
			return err
		case ok:
			d.updateCache(t)
		}
	}
	return nil
}

// store writes a token, caches it and notifies the other brokers
// (updateToken).
func (d *delegationTokens) store(t tokenInfo) error {
	path := zkpaths.DelegationTokenPath(t.id)
	if _, err := d.s.zk.Set(path, t.encode(), -1); errors.Is(err, zk.ErrNoNode) {
		if _, err := d.s.zk.Create(path, t.encode(), 0, nil); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	d.updateCache(t)
	return d.notify(t.id)
}

// remove deletes a token, uncaches it and notifies (removeToken).
func (d *delegationTokens) remove(tokenID string) error {
	if err := d.s.zk.Delete(zkpaths.DelegationTokenPath(tokenID), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	d.removeCache(tokenID)
	return d.notify(tokenID)
}

func (d *delegationTokens) notify(tokenID string) error {
	_, err := d.s.zk.Create(zkpaths.DelegationTokenChanges+"/"+zkpaths.DelegationTokenChangeSequencePrefix, []byte(tokenID), zk.FlagSequence, nil)
	return err
}

// createResult is what CreateDelegationToken answers.
type createResult struct {
	token tokenInfo
	hmac  []byte
	code  int16
}

// create makes a token for owner (createToken): its lifetime is the asked
// one capped by delegation.token.max.lifetime.ms (the maximum when <= 0),
// its first expiry delegation.token.expiry.time.ms later.
func (d *delegationTokens) create(owner kafka.Principal, renewers []kafka.Principal, maxLifetimeMs int64) (createResult, error) {
	if !d.enabled() {
		return createResult{code: kerr.DelegationTokenAuthDisabled.Code}, nil
	}
	d.lock.Lock()
	defer d.lock.Unlock()
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand never fails on Linux
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	now := d.nowMs()
	life := d.maxLifetime
	if maxLifetimeMs > 0 {
		life = min(maxLifetimeMs, d.maxLifetime)
	}
	t := tokenInfo{id: base64.RawURLEncoding.EncodeToString(id[:]), owner: owner, renewers: renewers, issue: now, maxTime: now + life}
	t.expires = min(t.maxTime, now+d.renewTime)
	if err := d.store(t); err != nil {
		return createResult{}, err
	}
	d.log.Info("Created a delegation token", zap.String("token-id", t.id), zap.Stringer("owner", owner))
	return createResult{token: t, hmac: d.hmac(t.id)}, nil
}

// renew moves a token's expiry to now plus the period
// (delegation.token.expiry.time.ms when negative), within its maximum
// (renewToken); expire with a negative period removes the token at once,
// else sets its expiry the same way (expireToken). Each answers the error
// code and the new expiry, -1 on error.
func (d *delegationTokens) renew(p kafka.Principal, h []byte, periodMs int64) (int16, int64, error) {
	return d.change(p, h, periodMs, false)
}

func (d *delegationTokens) expire(p kafka.Principal, h []byte, periodMs int64) (int16, int64, error) {
	return d.change(p, h, periodMs, true)
}

func (d *delegationTokens) change(p kafka.Principal, h []byte, periodMs int64, expire bool) (int16, int64, error) {
	if !d.enabled() {
		return kerr.DelegationTokenAuthDisabled.Code, -1, nil
	}
	d.lock.Lock()
	defer d.lock.Unlock()
	t, ok := d.byHMACValue(h)
	now := d.nowMs()
	switch {
	case !ok:
		return kerr.DelegationTokenNotFound.Code, -1, nil
	case !t.ownerOrRenewer(p):
		return kerr.DelegationTokenOwnerMismatch.Code, -1, nil
	case t.maxTime < now || t.expires < now:
		return kerr.DelegationTokenExpired.Code, -1, nil
	case expire && periodMs < 0:
		if err := d.remove(t.id); err != nil {
			return 0, -1, err
		}
		d.log.Info("Token expired", zap.String("token-id", t.id), zap.Stringer("owner", t.owner))
		return 0, now, nil
	}
	if !expire && periodMs < 0 {
		periodMs = d.renewTime
	}
	t.expires = min(t.maxTime, now+periodMs)
	if err := d.store(t); err != nil {
		return 0, -1, err
	}
	d.log.Info("Updated the expiry time of a delegation token", zap.String("token-id", t.id), zap.Stringer("owner", t.owner), zap.Bool("renew", !expire))
	return 0, t.expires, nil
}

// expireTokens removes every token past its expiry or maximum.
func (d *delegationTokens) expireTokens() error {
	d.lock.Lock()
	defer d.lock.Unlock()
	now := d.nowMs()
	for _, t := range d.all() {
		if t.maxTime < now || t.expires < now {
			d.log.Info("Delegation token expired", zap.String("token-id", t.id), zap.Stringer("owner", t.owner))
			if err := d.remove(t.id); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *delegationTokens) runExpiry(ctx context.Context) {
	tick := time.NewTicker(time.Duration(d.checkInterval) * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := d.expireTokens(); err != nil && ctx.Err() == nil {
				d.log.Error("Cannot remove expired delegation tokens", zap.Error(err))
			}
		}
	}
}

func (d *delegationTokens) processNotification(tokenID string) error {
	d.lock.Lock()
	defer d.lock.Unlock()
	d.log.Info("Processing Token Notification", zap.String("token-id", tokenID))
	t, ok, err := d.read(tokenID)
	switch {
	case errors.Is(err, zkpaths.ErrMalformed):
		d.log.Error("Ignoring a malformed delegation token", zap.String("token-id", tokenID), zap.Error(err))
	case err != nil:
		return err
	case ok:
		d.updateCache(t)
	default:
		d.removeCache(tokenID)
	}
	return nil
}
