package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// controlledShutdownVersion is the ControlledShutdown version a 2.8 broker
// sends (inter.broker.protocol.version 2.4 and later).
const controlledShutdownVersion = 3

// controlledShutdown is the broker's side of a controlled shutdown (Kafka's
// KafkaServer.controlledShutdown), run before anything stops: up to
// controlled.shutdown.max.retries times, find the controller in ZooKeeper,
// ask it to move this broker's leaderships away and take it out of every ISR,
// and stop when it answers with no partition left; between attempts wait
// controlled.shutdown.retry.backoff.ms. When every attempt fails the broker
// shuts down anyway (uncleanly: its partitions fail over when its session
// ends).
func (s *Server) controlledShutdown() {
	if !s.cfg.ControlledShutdownEnable || s.zk == nil || s.brokerEpoch.Load() == 0 {
		return
	}
	log := s.log.Named("controlled-shutdown")
	log.Info("Starting controlled shutdown")
	for attempt := int32(1); attempt <= s.cfg.ControlledShutdownMaxRetries; attempt++ {
		remaining, err := s.tryControlledShutdown()
		if err == nil && len(remaining) == 0 {
			log.Info("Controlled shutdown succeeded", zap.Int32("attempt", attempt))
			return
		}
		if err != nil {
			log.Warn("Controlled shutdown attempt failed", zap.Int32("attempt", attempt), zap.Error(err))
		} else {
			log.Info("Remaining partitions to move", zap.Int32("attempt", attempt), zap.Int("partitions", len(remaining)),
				zap.String("first", remaining[0].Topic+"-"+strconv.Itoa(int(remaining[0].Partition))))
		}
		if attempt < s.cfg.ControlledShutdownMaxRetries {
			time.Sleep(s.cfg.ControlledShutdownRetryBackoff)
		}
	}
	log.Warn("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed")
}

// tryControlledShutdown sends one ControlledShutdown to the current
// controller and returns the partitions it says this broker still leads.
func (s *Server) tryControlledShutdown() ([]kmsg.ControlledShutdownResponsePartitionsRemaining, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ControllerSocketTimeout)
	defer cancel()
	cl, addr, err := s.dialController(ctx)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrControlledShutdownRequest()
	req.BrokerID = s.brokerID
	req.BrokerEpoch = s.brokerEpoch.Load()
	resp, err := cl.RequestVersion(ctx, req, controlledShutdownVersion)
	if err != nil {
		return nil, fmt.Errorf("ControlledShutdown to %s: %w", addr, err)
	}
	r := resp.(*kmsg.ControlledShutdownResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return nil, fmt.Errorf("ControlledShutdown to %s: %w", addr, err)
	}
	return r.PartitionsRemaining, nil
}

// dialController connects to the active controller's inter-broker endpoint, as found in
// ZooKeeper now, and returns the connection and the address.
func (s *Server) dialController(ctx context.Context) (*wire.Client, string, error) {
	addr, err := s.controllerAddr()
	if err != nil {
		return nil, "", err
	}
	cl, err := wire.DialSecure(ctx, addr, strconv.Itoa(int(s.brokerID)), s.interBroker)
	if err != nil {
		return nil, addr, fmt.Errorf("connect to the controller at %s: %w", addr, err)
	}
	return cl, addr, nil
}

// controllerAddr reads /controller and the controller's registration, and
// returns its inter-broker endpoint.
func (s *Server) controllerAddr() (string, error) {
	data, _, err := s.zk.Get(zkpaths.Controller)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", zkpaths.Controller, err)
	}
	c, err := zkpaths.DecodeControllerRegistration(data)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", zkpaths.Controller, err)
	}
	data, _, err = s.zk.Get(zkpaths.BrokerPath(c.BrokerID))
	if err != nil {
		return "", fmt.Errorf("read the registration of controller %d: %w", c.BrokerID, err)
	}
	reg, err := zkpaths.DecodeBrokerRegistration(c.BrokerID, data)
	if err != nil {
		return "", fmt.Errorf("read the registration of controller %d: %w", c.BrokerID, err)
	}
	ep, ok := reg.Endpoint(s.cfg.InterBrokerListenerName)
	if !ok {
		return "", fmt.Errorf("controller %d has no %s endpoint", c.BrokerID, s.cfg.InterBrokerListenerName)
	}
	return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), nil
}
