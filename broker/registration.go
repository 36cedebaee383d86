package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// registration returns this broker's /brokers/ids/<id> data.
func (s *Server) registration() zkpaths.BrokerRegistration {
	reg := zkpaths.BrokerRegistration{
		ID:        s.brokerID,
		JmxPort:   -1,
		Rack:      s.cfg.Rack,
		Timestamp: time.Now().UnixMilli(),
	}
	for _, l := range s.advertised {
		reg.Endpoints = append(reg.Endpoints, zkpaths.Endpoint{
			ListenerName: l.Name, SecurityProtocol: l.SecurityProtocol, Host: l.Host, Port: l.Port,
		})
	}
	return reg
}

// register creates the ephemeral /brokers/ids/<id> the way Kafka 2.2+ does: a
// multi of {create with no data, set the data at version 0}, so the returned
// czxid is this create's and becomes the broker epoch.
//
// A znode left by this broker's own previous session (a restart after
// kill -9, before that session expired) is deleted and created again, as
// KAFKA-7165 does for the same client: the session id of every registration
// is kept in the first log dir to recognise it. A znode held by any other
// session is waited for, up to the session timeout plus a margin, and then
// refused as a broker id in use.
func (s *Server) register(ctx context.Context) error {
	path := zkpaths.BrokerPath(s.brokerID)
	data := s.registration().Encode()
	deadline := time.Now().Add(s.cfg.ZooKeeperSessionTimeout + 5*time.Second)
	previous := s.previousSession()
	// Recorded before the znode exists: a kill -9 right after the create
	// must still leave the id that recognises the registration.
	s.rememberSession()
	for {
		resps, err := s.zk.Multi(
			&zk.CreateRequest{Path: path, Flags: zk.FlagEphemeral},
			&zk.SetDataRequest{Path: path, Data: data, Version: 0},
		)
		if err == nil {
			s.brokerEpoch.Store(resps[1].Stat.Czxid)
			s.log.Info("Registered broker", zap.String("path", path), zap.Int64("broker-epoch", resps[1].Stat.Czxid))
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("register %s: %w", path, err)
		}
		_, stat, err := s.zk.Get(path)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return fmt.Errorf("register %s: %w", path, err)
		}
		if stat.EphemeralOwner == s.zk.SessionID() {
			s.brokerEpoch.Store(stat.Czxid)
			return nil
		}
		if previous != 0 && stat.EphemeralOwner == previous {
			s.log.Info("Replacing the registration left by this broker's previous session", zap.String("path", path), zap.String("previous-session", fmt.Sprintf("0x%x", previous)))
			if err := s.zk.Delete(path, stat.Version); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				return fmt.Errorf("register %s: delete the previous registration: %w", path, err)
			}
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("register %s: broker id %d is in use by another live ZooKeeper session 0x%x", path, s.brokerID, stat.EphemeralOwner)
		}
		s.log.Warn("Waiting for the previous registration of this broker id to expire", zap.String("path", path), zap.String("owner-session", fmt.Sprintf("0x%x", stat.EphemeralOwner)))
		exists, _, ch, err := s.zk.ExistsW(path)
		if err != nil {
			return fmt.Errorf("register %s: %w", path, err)
		}
		if !exists {
			continue
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// reregister runs after a session expiry replaced the ZooKeeper session: the
// old ephemeral is gone, so the broker registers again with a new epoch.
func (s *Server) reregister() {
	if s.ctx.Err() != nil {
		return
	}
	s.log.Info("Re-registering after ZooKeeper session expiry")
	if err := s.register(s.ctx); err != nil {
		s.log.Error("Re-registration failed", zap.Error(err))
	}
}

// deregister removes /brokers/ids/<id> if this session still owns it.
func (s *Server) deregister() error {
	path := zkpaths.BrokerPath(s.brokerID)
	_, stat, err := s.zk.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deregister %s: %w", path, err)
	}
	if stat.EphemeralOwner != s.zk.SessionID() {
		return nil
	}
	if err := s.zk.Delete(path, stat.Version); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("deregister %s: %w", path, err)
	}
	return nil
}

// BrokerEpoch returns the czxid of this broker's registration.
func (s *Server) BrokerEpoch() int64 { return s.brokerEpoch.Load() }

// sessionFile holds the ZooKeeper session id of the broker's latest
// registration, in the first log dir.
const sessionFile = "zookeeper-session"

// previousSession returns the session id the previous process registered
// with, or 0.
func (s *Server) previousSession() int64 {
	b, err := os.ReadFile(filepath.Join(s.cfg.LogDirs[0], sessionFile))
	if err != nil {
		return 0
	}
	id, err := strconv.ParseInt(strings.TrimSpace(string(b)), 16, 64)
	if err != nil {
		return 0
	}
	return id
}

// rememberSession records the current session id, replacing the file whole
// (a crash mid-write must not leave it empty); failing to is only logged, as
// it costs at most a wait for expiry at the next fast restart.
func (s *Server) rememberSession() {
	id := strconv.FormatInt(s.zk.SessionID(), 16)
	path := filepath.Join(s.cfg.LogDirs[0], sessionFile)
	tmp := path + ".tmp"
	err := os.WriteFile(tmp, []byte(id+"\n"), 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		s.log.Warn("Cannot record the ZooKeeper session id", zap.Error(err))
	}
}
