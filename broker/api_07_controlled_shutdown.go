package broker

// ControlledShutdown (key 7), versions 0–3 (broker → controller).
//
//	v1: same as v0 (v0 carried a non-standard header in old clients)
//	v2: broker epoch (KIP-380)
//	v3: flexible
//
// Only the active controller serves it (others answer NOT_CONTROLLER). The
// controller moves every leadership off the stopping broker and takes it out
// of every ISR before answering; the answer lists the partitions it still
// leads, for which the broker retries.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"go.uber.org/zap"
)

var controlledShutdownAPI = api{
	key: 7, min: 0, max: maxVersion(7),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpClusterAction); resp != nil {
			return resp
		}
		return s.handleControlledShutdown(ctx, r.body.(*kmsg.ControlledShutdownRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleControlledShutdown(ctx context.Context, req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse {
	resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
	brokerEpoch := int64(-1)
	if req.Version >= 2 {
		brokerEpoch = req.BrokerEpoch
	}
	s.log.Info("Handling a controlled shutdown request", zap.Int32("shutting-down-broker", req.BrokerID), zap.Int64("broker-epoch", brokerEpoch))
	remaining, err := s.controller.ControlledShutdown(ctx, req.BrokerID, brokerEpoch)
	if err != nil {
		resp.ErrorCode = controllerErrorCode(err)
		return resp
	}
	for _, tp := range remaining {
		resp.PartitionsRemaining = append(resp.PartitionsRemaining, kmsg.ControlledShutdownResponsePartitionsRemaining{Topic: tp.Topic, Partition: tp.Partition})
	}
	return resp
}

// controllerErrorCode is the Kafka error code of an error from a controller
// call: the kerr value it wraps, REQUEST_TIMED_OUT for a call that ran out of
// time, UNKNOWN_SERVER_ERROR otherwise.
func controllerErrorCode(err error) int16 {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.RequestTimedOut.Code
	}
	return errorCode(err)
}

// errorMessage is err's text for a response's error message, nil for nil.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	return kmsg.StringPtr(err.Error())
}
