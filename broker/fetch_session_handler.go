package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchSessionHandler is a follower's side of its fetch session with one leader (Kafka's
// FetchSessionHandler): the first fetch is full and asks for a session; once the leader grants one,
// each fetch lists only the partitions whose fetch parameters changed since the last, and forgets
// those no longer fetched. Any error starts over with a full fetch. It belongs to the fetcher's
// goroutine.
type fetchSessionHandler struct {
	id    int32 // 0: none
	epoch int32 // of the next fetch; 0 is a full one
	// sent are the partitions the leader's session holds, as last sent.
	sent map[fetchSessionKey]kmsg.FetchRequestTopicPartition
}

// build turns req, which lists every partition to fetch, into the session's next fetch.
func (h *fetchSessionHandler) build(req *kmsg.FetchRequest) {
	req.SessionID, req.SessionEpoch = h.id, h.epoch
	want := make(map[fetchSessionKey]kmsg.FetchRequestTopicPartition, len(h.sent))
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			want[fetchSessionKey{t.Topic, p.Partition}] = p
		}
	}
	full := h.epoch == fetchSessionInitialEpoch
	sent := h.sent
	h.sent = want
	if full {
		return
	}
	changed := req.Topics[:0]
	for _, t := range req.Topics {
		kept := t.Partitions[:0]
		for _, p := range t.Partitions {
			if was, ok := sent[fetchSessionKey{t.Topic, p.Partition}]; !ok || !sameFetchParams(was, p) {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			t.Partitions = kept
			changed = append(changed, t)
		}
	}
	req.Topics = changed
	forgotten := map[string]int{}
	for k := range sent {
		if _, ok := want[k]; ok {
			continue
		}
		i, ok := forgotten[k.topic]
		if !ok {
			i = len(req.ForgottenTopics)
			forgotten[k.topic] = i
			req.ForgottenTopics = append(req.ForgottenTopics, kmsg.FetchRequestForgottenTopic{Topic: k.topic})
		}
		req.ForgottenTopics[i].Partitions = append(req.ForgottenTopics[i].Partitions, k.partition)
	}
}

func sameFetchParams(a, b kmsg.FetchRequestTopicPartition) bool {
	return a.FetchOffset == b.FetchOffset && a.LogStartOffset == b.LogStartOffset && a.PartitionMaxBytes == b.PartitionMaxBytes &&
		a.CurrentLeaderEpoch == b.CurrentLeaderEpoch && a.LastFetchedEpoch == b.LastFetchedEpoch
}

// handleResponse moves the session on after a response: a granted session is used from the next
// fetch; session id 0 means sessionless (the cache was full, or the session ended), so the next
// fetch is full again; a session error closes the session and starts a new one.
func (h *fetchSessionHandler) handleResponse(resp *kmsg.FetchResponse) {
	switch {
	case resp.ErrorCode == kerr.FetchSessionIDNotFound.Code:
		h.id, h.epoch = 0, fetchSessionInitialEpoch
	case resp.ErrorCode != 0:
		h.epoch = fetchSessionInitialEpoch
	case resp.SessionID == 0:
		h.id, h.epoch = 0, fetchSessionInitialEpoch
	case h.epoch == fetchSessionInitialEpoch:
		h.id, h.epoch = resp.SessionID, nextFetchSessionEpoch(fetchSessionInitialEpoch)
	default:
		h.epoch = nextFetchSessionEpoch(h.epoch)
	}
}

// handleError is a fetch that got no response: the next one is full and closes the session.
func (h *fetchSessionHandler) handleError() {
	h.epoch = fetchSessionInitialEpoch
}
