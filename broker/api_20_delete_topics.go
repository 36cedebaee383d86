package broker

// DeleteTopics (key 20), versions 0–6.
//
//	v1: throttle time
//	v2, v3: same (v3: TOPIC_DELETION_DISABLED instead of INVALID_REQUEST)
//	v4: flexible
//	v5: error messages
//	v6: topics named by name or by topic id (KIP-516); the answer carries the
//	    id asked for. An unknown id gets UNKNOWN_TOPIC_ID; a topic given both
//	    a name and an id makes the whole request INVALID_REQUEST, as in 2.8.
//
// Only the active controller serves it (others answer NOT_CONTROLLER). Each
// topic is marked for deletion with /admin/delete_topics/<t> (a topic marked
// already is fine); the controller does the rest. The response waits until
// this broker's metadata cache no longer has the topics (the controller
// drops them from every broker first) or the request timeout passes (then
// REQUEST_TIMED_OUT; the deletion goes on).

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/reqclock"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/zkpaths"
)

var deleteTopicsAPI = api{
	key: 20, min: 0, max: 6,
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		mutations := s.mutationQuota(r, 5)
		resp := s.handleDeleteTopics(ctx, r, r.body.(*kmsg.DeleteTopicsRequest), mutations)
		resp.ThrottleMillis = s.mutationThrottle(r, mutations)
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return deleteTopicsError(req.(*kmsg.DeleteTopicsRequest), code)
	},
}

// deleteTopicsError answers every topic asked with code.
func deleteTopicsError(req *kmsg.DeleteTopicsRequest, code int16) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	for _, t := range deleteTopicsAsked(req) {
		resp.Topics = append(resp.Topics, kmsg.DeleteTopicsResponseTopic{Topic: t.Topic, TopicID: t.TopicID, ErrorCode: code})
	}
	return resp
}

// deleteTopicsAsked is the request's topics in v6's shape: before v6 each
// is a name.
func deleteTopicsAsked(req *kmsg.DeleteTopicsRequest) []kmsg.DeleteTopicsRequestTopic {
	if req.Version >= 6 {
		return req.Topics
	}
	asked := make([]kmsg.DeleteTopicsRequestTopic, 0, len(req.TopicNames))
	for _, name := range req.TopicNames {
		asked = append(asked, kmsg.DeleteTopicsRequestTopic{Topic: kmsg.StringPtr(name)})
	}
	return asked
}

func (s *Server) handleDeleteTopics(ctx context.Context, r *request, req *kmsg.DeleteTopicsRequest, mutations *quota.Mutation) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	if !s.controller.IsActive() {
		return deleteTopicsError(req, kerr.NotController.Code)
	}
	asked := deleteTopicsAsked(req)
	for _, t := range asked {
		if t.Topic != nil && t.TopicID != ([16]byte{}) {
			return deleteTopicsError(req, kerr.InvalidRequest.Code)
		}
	}
	var pending []int // indexes into resp.Topics awaiting deletion
	seen := map[string]bool{}
	for _, t := range asked {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.TopicID = t.TopicID
		if t.Topic == nil {
			name, ok := s.metadata.TopicName(t.TopicID)
			if !ok {
				rt.ErrorCode = kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, rt)
				continue
			}
			t.Topic = &name
		}
		topic := *t.Topic
		if seen[topic] {
			continue
		}
		seen[topic] = true
		rt.Topic = kmsg.StringPtr(topic)
		if code, hideName := s.deleteTopicDenied(r, topic, t.TopicID != [16]byte{}); code != 0 {
			if hideName {
				rt.Topic = nil
			}
			rt.ErrorCode = code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if err := s.markTopicForDeletion(topic, req.Version, mutations); err != nil {
			var te *topicError
			if errors.As(err, &te) {
				rt.ErrorCode, rt.ErrorMessage = te.code.Code, te.message()
			} else {
				s.log.Error("Topic deletion failed", zap.String("topic", topic), zap.Error(err))
				rt.ErrorCode, rt.ErrorMessage = kerr.UnknownServerError.Code, kmsg.StringPtr(err.Error())
			}
		} else {
			pending = append(pending, len(resp.Topics))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	gone := func(i int) bool {
		_, _, ok := s.metadata.Topic(*resp.Topics[i].Topic)
		return !ok
	}
	defer reqclock.Waited(ctx, time.Now())
	timeout := time.NewTimer(time.Duration(req.TimeoutMillis) * time.Millisecond)
	defer timeout.Stop()
	for {
		pending = slices.DeleteFunc(pending, gone)
		if len(pending) == 0 {
			return resp
		}
		select {
		case <-s.metadata.changed():
		case <-timeout.C:
			for _, i := range pending {
				resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
				resp.Topics[i].ErrorMessage = kmsg.StringPtr("Timed out waiting for the topic to be deleted.")
			}
			return resp
		case <-ctx.Done():
			return resp
		}
	}
}

// markTopicForDeletion creates /admin/delete_topics/<t>, as Kafka's
// AdminZkClient.deleteTopic does; marking it twice is not an error.
func (s *Server) markTopicForDeletion(topic string, version int16, mutations *quota.Mutation) error {
	if !s.controller.IsActive() {
		return errNotController
	}
	if !s.cfg.DeleteTopicEnable {
		if version < 3 {
			return topicErr(kerr.InvalidRequest, "Topic deletion is disabled.")
		}
		return topicErr(kerr.TopicDeletionDisabled, "Topic deletion is disabled.")
	}
	if zkpaths.ValidateTopicName(topic) != nil {
		return topicErr(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
	}
	// The partitions this broker's metadata knows, as Kafka counts them.
	_, partitions, _ := s.metadata.Topic(topic)
	if err := mutations.Record(len(partitions)); err != nil {
		return throttlingQuotaExceeded()
	}
	err := s.adminZk().MarkTopicForDeletion(topic)
	switch {
	case errors.Is(err, adminzk.ErrUnknownTopic):
		return topicErr(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
	case errors.Is(err, adminzk.ErrMarkedForDeletion):
		return nil
	}
	return err
}
