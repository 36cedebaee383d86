package controller

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// Controller election, as Kafka 2.1+: one ZooKeeper transaction creates the ephemeral
// /controller and bumps /controller_epoch at the zkVersion just read, so the winner's epoch and
// its fencing token (the new zkVersion) come from the same atomic step.

// controllerWatchEvent maps the /controller watch to its event: a created or changed znode may
// name another broker (ControllerChange); a deleted one calls an election (Reelect).
func controllerWatchEvent(ev zk.Event) event {
	switch ev.Type {
	case zk.EventNodeDeleted:
		return reelectEvent{}
	case zk.EventNodeCreated, zk.EventNodeDataChanged:
		return controllerChangeEvent{}
	}
	return nil
}

// refreshActiveController reads /controller, arming its watch, and records the active
// controller's id (-1 if none). stat is nil when /controller does not exist.
func (c *Controller) refreshActiveController() (id int32, stat *zk.Stat, err error) {
	c.activeID.Store(-1)
	exists, _, err := c.existsW(zkpaths.Controller, sessionScope, controllerWatchEvent)
	if err != nil || !exists {
		return -1, nil, err
	}
	data, stat, err := c.store.Get(zkpaths.Controller)
	if errors.Is(err, zk.ErrNoNode) {
		return -1, nil, nil
	}
	if err != nil {
		return -1, nil, err
	}
	reg, err := zkpaths.DecodeControllerRegistration(data)
	if err != nil {
		return -1, nil, fmt.Errorf("%s: %w", zkpaths.Controller, err)
	}
	c.activeID.Store(reg.BrokerID)
	return reg.BrokerID, stat, nil
}

// elect runs for controller (Kafka's KafkaController.elect).
func (c *Controller) elect() {
	id, _, err := c.refreshActiveController()
	if err != nil {
		c.log.Error("Could not read the active controller; not running for election", zap.Error(err))
		return
	}
	if id != -1 {
		c.log.Debug("A controller has been elected; stopping the election", zap.Int32("controller-id", id))
		return
	}
	epoch, epochZkVersion, err := c.registerController()
	if errors.Is(err, ErrControllerMoved) {
		c.log.Info("Another broker won the controller election", zap.Error(err))
		c.maybeResign()
		return
	}
	if err != nil {
		c.log.Error("Controller election failed", zap.Error(err))
		c.maybeResign()
		return
	}
	c.becomeActive(epoch, epochZkVersion)
	c.log.Info("Elected as the controller", zap.Int32("epoch-zk-version", epochZkVersion))
	if err := c.onControllerFailover(); err != nil {
		if errors.Is(err, ErrControllerMoved) {
			c.controllerMoved(err)
			return
		}
		c.triggerControllerMove(err)
	}
}

// readControllerEpoch reads /controller_epoch and its zkVersion, creating it as 0 if absent.
func (c *Controller) readControllerEpoch() (epoch, zkVersion int32, err error) {
	for {
		data, stat, err := c.store.Get(zkpaths.ControllerEpoch)
		if err == nil {
			epoch, err := zkpaths.DecodeControllerEpoch(data)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %w", zkpaths.ControllerEpoch, err)
			}
			return epoch, stat.Version, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return 0, 0, err
		}
		_, err = c.store.Create(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(zkpaths.InitialControllerEpoch), 0, nil)
		if err == nil {
			return zkpaths.InitialControllerEpoch, initialZkVersion, nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return 0, 0, err
		}
		// Another broker created it first: read theirs.
	}
}

// registerController is the election transaction. On success it returns the new epoch and the
// zkVersion of /controller_epoch that fences this controller's writes.
func (c *Controller) registerController() (epoch, epochZkVersion int32, err error) {
	current, version, err := c.readControllerEpoch()
	if err != nil {
		return 0, 0, err
	}
	epoch = current + 1
	c.session = c.store.SessionID()
	reg := zkpaths.ControllerRegistration{BrokerID: c.cfg.BrokerID, Timestamp: c.clock.Now().UnixMilli()}
	res, err := c.store.Multi(
		&zk.CreateRequest{Path: zkpaths.Controller, Data: reg.Encode(), Flags: zk.FlagEphemeral},
		&zk.SetDataRequest{Path: zkpaths.ControllerEpoch, Data: zkpaths.EncodeControllerEpoch(epoch), Version: version},
	)
	if err == nil {
		return epoch, res[1].Stat.Version, nil
	}
	if !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrBadVersion) {
		return 0, 0, fmt.Errorf("register controller: %w", err)
	}
	// Lost the race, unless this very transaction succeeded before a lost connection made it
	// look failed: then /controller names us and the epoch is ours.
	id, _, rerr := c.refreshActiveController()
	if rerr != nil {
		return 0, 0, fmt.Errorf("register controller: %w (re-reading %s: %w)", err, zkpaths.Controller, rerr)
	}
	now, nowVersion, rerr := c.readControllerEpoch()
	if rerr != nil {
		return 0, 0, fmt.Errorf("register controller: %w (re-reading %s: %w)", err, zkpaths.ControllerEpoch, rerr)
	}
	if id == c.cfg.BrokerID && now == epoch {
		return epoch, nowVersion, nil
	}
	return 0, 0, fmt.Errorf("%w: broker %d is the controller, epoch %d", ErrControllerMoved, id, now)
}

// becomeActive starts a term as the active controller.
func (c *Controller) becomeActive(epoch, epochZkVersion int32) {
	c.cc = newControllerContext(epoch, epochZkVersion)
	c.term++
	c.epoch.Store(epoch)
	c.activeID.Store(c.cfg.BrokerID)
	c.active.Store(true)
	e := zap.Int32("controller-epoch", epoch)
	c.log, c.stateLog = c.baseLog.With(e), c.baseStateLog.With(e)
	c.newActiveContext()
	c.channels = c.newChannels(c.loopCtx, c.log)
}

// resign ends the term, if any (Kafka's onControllerResignation): active-scope watches stop
// mattering, request senders stop with their queues, and the controller context is dropped.
// ZooKeeper is not touched.
func (c *Controller) resign() {
	if c.cc == nil {
		return
	}
	c.cancelActive()
	if c.rebalanceTimer != nil {
		c.rebalanceTimer.Stop()
		c.rebalanceTimer = nil
	}
	scope := activeScope
	c.forgetWatches(&scope)
	c.channels.shutdown()
	c.channels = nil
	c.closeReadSessions()
	c.cc = nil
	c.active.Store(false)
	c.log.Info("Resigned as the controller")
	c.log, c.stateLog = c.baseLog, c.baseStateLog
}

// maybeResign re-reads /controller and resigns if it no longer names this broker.
func (c *Controller) maybeResign() {
	wasActive := c.cc != nil
	id, _, err := c.refreshActiveController()
	if err != nil {
		c.log.Error("Could not read the active controller", zap.Error(err))
	}
	if wasActive && id != c.cfg.BrokerID {
		c.resign()
	}
}

// controllerMoved handles ErrControllerMoved from a fenced write: resign, then re-read
// /controller. If it still names this broker, its epoch is stale although its ephemeral blocks
// any other election; deleting the znode (only if this session owns it) lets a proper election
// run, as Kafka's triggerControllerMove intends.
func (c *Controller) controllerMoved(cause error) {
	c.log.Info("Controller moved to another broker; resigning", zap.Error(cause))
	c.resign()
	id, stat, err := c.refreshActiveController()
	if err != nil {
		c.log.Error("Could not read the active controller", zap.Error(err))
		return
	}
	if id != c.cfg.BrokerID || stat.EphemeralOwner != c.store.SessionID() {
		return
	}
	if err := c.store.Delete(zkpaths.Controller, stat.Version); err != nil && !errors.Is(err, zk.ErrNoNode) {
		c.log.Error("Could not delete a stale controller registration", zap.Error(err))
	}
}

// triggerControllerMove handles a failure the controller cannot recover from in place: resign
// and delete /controller (fenced) so that every broker runs a new election.
func (c *Controller) triggerControllerMove(cause error) {
	c.log.Error("Controller failover failed; forcing a new controller election", zap.Error(cause))
	if c.cc == nil {
		return
	}
	_, err := c.fencedMulti(&zk.DeleteRequest{Path: zkpaths.Controller, Version: -1})
	c.resign()
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		c.log.Error("Could not delete the controller registration", zap.Error(err))
	}
}

// processExpire resigns after the session expired; every watch of that session is gone.
func (c *Controller) processExpire() {
	c.activeID.Store(-1)
	c.resign()
	c.forgetWatches(nil)
}
