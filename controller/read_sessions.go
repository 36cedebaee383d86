package controller

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// Read sessions. ZooKeeper answers one session's requests in order on one worker thread, so a
// session reads at most about 14,000 partition states a second on this project's machines
// however deep the pipeline; a failover at 200,000 partitions spent 13 s there. The active
// controller therefore opens a few more sessions at its first bulk read of partition states and
// spreads such reads over them and its own (Kafka reads through its one session). A cluster
// too small for a bulk read never opens them. They only read:
// every write, watch and ephemeral znode stays on the session that won the election, and each
// bulk read begins with a sync on every read session, so none of them is behind a write the
// controller's own session has seen.

// zkReadSessions is how many extra sessions an active controller reads through.
const zkReadSessions = 3

// bulkReadMin is the smallest read that goes through the read sessions: below it one
// session's pipeline is as fast as the syncs would cost.
const bulkReadMin = 512

// readSession is a ZooKeeper session the active controller reads partition states through.
type readSession interface {
	znodeReader
	Sync(path string) error
	Close() error
}

// openReadSessions opens zkReadSessions sessions like zkc, side by side, within a few seconds;
// those that fail to open are logged and done without.
func openReadSessions(zkc *zkclient.Client, log *zap.Logger) []readSession {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var mu sync.Mutex
	var out []readSession
	var wg sync.WaitGroup
	for range zkReadSessions {
		wg.Go(func() {
			s, err := zkc.NewSession(ctx)
			if err != nil {
				log.Warn("Could not open a ZooKeeper read session; reading through fewer", zap.Error(err))
				return
			}
			mu.Lock()
			out = append(out, s)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// syncedReadSessions returns the read sessions to spread a read of n partition states over:
// none below bulkReadMin, else those whose sync succeeded, opening them at the term's first bulk
// read.
func (c *Controller) syncedReadSessions(n int) []readSession {
	if n < c.bulkReadMin {
		return nil
	}
	if !c.readSessionsOpened && c.openReadSessions != nil {
		c.readSessionsOpened = true
		c.readSessions = c.openReadSessions(c.log)
		c.log.Info("Opened ZooKeeper read sessions", zap.Int("sessions", len(c.readSessions)))
	}
	if len(c.readSessions) == 0 {
		return nil
	}
	ok := make([]bool, len(c.readSessions))
	var wg sync.WaitGroup
	for i, s := range c.readSessions {
		wg.Go(func() {
			err := s.Sync(zkpaths.ControllerEpoch)
			if err != nil {
				c.log.Warn("A ZooKeeper read session could not sync; reading without it", zap.Error(err))
			}
			ok[i] = err == nil
		})
	}
	wg.Wait()
	var synced []readSession
	for i, s := range c.readSessions {
		if ok[i] {
			synced = append(synced, s)
		}
	}
	return synced
}

// closeReadSessions closes the read sessions at resignation.
func (c *Controller) closeReadSessions() {
	for _, s := range c.readSessions {
		_ = s.Close()
	}
	c.readSessions, c.readSessionsOpened = nil, false
}
