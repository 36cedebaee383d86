package broker

import (
	"container/list"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch sessions (KIP-227, Kafka 2.8's FetchSession.scala). A Fetch v7+ with session epoch 0 is a
// full fetch that asks for a session: the broker caches its partitions and their fetch parameters
// and answers with a session id. The client's next fetches are incremental: they name the session
// and the next epoch, list only the partitions whose parameters changed (and the forgotten ones),
// and get back only the partitions with news: records, a new high watermark or log start offset, an
// error or a diverging epoch. A follower of thousands of partitions then sends and receives a few
// bytes per round instead of every partition each time.
//
// Session epoch -1 (FINAL) is a sessionless full fetch, as every Fetch below v7 is.
const (
	fetchSessionInitialEpoch = 0
	fetchSessionFinalEpoch   = -1
	// fetchSessionEvictionAfter is Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: a session
	// unused this long may be evicted by any new one, and one younger is protected from
	// consumers' sessions, as in 2.8 (a constant there too).
	fetchSessionEvictionAfter = 120 * time.Second
)

// nextFetchSessionEpoch is Kafka's FetchMetadata.nextEpoch.
func nextFetchSessionEpoch(epoch int32) int32 {
	switch {
	case epoch < 0:
		return fetchSessionFinalEpoch
	case epoch == math.MaxInt32:
		return 1
	}
	return epoch + 1
}

// fetchSessionCache holds the broker's fetch sessions, at most max.incremental.fetch.session.cache.slots.
// Lookups, the incremental fetch's path, take no cache-wide lock; creating and evicting a session,
// on full fetches only, take mu. A session's own lock may be held when taking mu, never the reverse.
type fetchSessionCache struct {
	maxEntries int
	sessions   sync.Map // int32 id → *fetchSession

	mu    sync.Mutex
	count int // sessions in the map; under mu
}

func newFetchSessionCache(maxEntries int) *fetchSessionCache {
	return &fetchSessionCache{maxEntries: maxEntries}
}

// fetchSession is one client's session: its partitions in the order the broker reads them, which
// moves a partition that had something to say to the end, so a response cut short by max.bytes
// starts with the others next time.
type fetchSession struct {
	id         int32
	privileged bool // a follower's
	created    time.Time
	lastUsed   atomic.Int64 // unix nanoseconds
	size       atomic.Int32 // len(parts), for eviction without the session's lock

	mu    sync.Mutex
	epoch int32                             // the epoch the next fetch must carry; under mu
	parts map[fetchSessionKey]*list.Element // of *cachedPartition; under mu
	order list.List                         // under mu
}

type fetchSessionKey struct {
	topic     string
	partition int32
}

// cachedPartition is what a session remembers of one partition: the request's parameters, used when
// an incremental fetch leaves the partition out, and the last high watermark and log start offset
// sent, which decide whether the next response must include it.
type cachedPartition struct {
	key                   fetchSessionKey
	fetchOffset           int64
	fetcherLogStartOffset int64
	maxBytes              int32
	leaderEpoch           int32
	lastFetchedEpoch      int32
	highWatermark         int64
	localLogStartOffset   int64
}

func (c *cachedPartition) updateRequest(p kmsg.FetchRequestTopicPartition) {
	c.fetchOffset, c.fetcherLogStartOffset, c.maxBytes = p.FetchOffset, p.LogStartOffset, p.PartitionMaxBytes
	c.leaderEpoch, c.lastFetchedEpoch = p.CurrentLeaderEpoch, p.LastFetchedEpoch
}

func (c *cachedPartition) request() kmsg.FetchRequestTopicPartition {
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset, p.LogStartOffset, p.PartitionMaxBytes = c.key.partition, c.fetchOffset, c.fetcherLogStartOffset, c.maxBytes
	p.CurrentLeaderEpoch, p.LastFetchedEpoch = c.leaderEpoch, c.lastFetchedEpoch
	return p
}

// mustRespond is Kafka's CachedPartition.maybeUpdateResponseData: whether an incremental response
// includes the partition; with update it also remembers what is sent. An error resets the cached
// high watermark so the partition is sent again once the error is gone.
func (c *cachedPartition) mustRespond(rp *kmsg.FetchResponseTopicPartition, hasRecords, update bool) bool {
	must := hasRecords || rp.ErrorCode != 0 || rp.DivergingEpoch.EndOffset >= 0 || rp.PreferredReadReplica >= 0
	if c.highWatermark != rp.HighWatermark {
		must = true
		if update {
			c.highWatermark = rp.HighWatermark
		}
	}
	if c.localLogStartOffset != rp.LogStartOffset {
		must = true
		if update {
			c.localLogStartOffset = rp.LogStartOffset
		}
	}
	if rp.ErrorCode != 0 && update {
		c.highWatermark = -1
	}
	return must
}

// fetchContext is Kafka's FetchContext: how one Fetch uses the sessions. req is the fetch to read,
// which for an incremental fetch holds every partition of the session.
type fetchContext struct {
	cache *fetchSessionCache
	req   *kmsg.FetchRequest
	// errorCode is a session error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH): the
	// answer is that error and no partitions.
	errorCode int16
	// full asks for a new session once the response is ready; session is set for an incremental
	// fetch.
	full     bool
	session  *fetchSession
	reqEpoch int32
	follower bool
}

// newContext is Kafka's FetchManager.newContext: a full fetch closes the session it names and, but
// for epoch FINAL, will ask for a new one; an incremental fetch must name a live session at the
// epoch it expects, and updates that session's partitions with the request's.
func (c *fetchSessionCache) newContext(req *kmsg.FetchRequest, now time.Time) *fetchContext {
	fc := &fetchContext{cache: c, req: req, reqEpoch: req.SessionEpoch, follower: req.ReplicaID >= 0}
	if req.Version < 7 {
		return fc
	}
	if req.SessionEpoch == fetchSessionInitialEpoch || req.SessionEpoch == fetchSessionFinalEpoch {
		if req.SessionID != 0 {
			c.remove(req.SessionID)
		}
		fc.full = req.SessionEpoch == fetchSessionInitialEpoch && c.maxEntries > 0
		return fc
	}
	v, ok := c.sessions.Load(req.SessionID)
	if !ok {
		fc.errorCode = kerr.FetchSessionIDNotFound.Code
		return fc
	}
	s := v.(*fetchSession)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != req.SessionEpoch {
		fc.errorCode = kerr.InvalidFetchSessionEpoch.Code
		return fc
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			k := fetchSessionKey{t.Topic, p.Partition}
			if e, ok := s.parts[k]; ok {
				e.Value.(*cachedPartition).updateRequest(p)
				continue
			}
			cp := &cachedPartition{key: k, highWatermark: -1, localLogStartOffset: -1}
			cp.updateRequest(p)
			s.parts[k] = s.order.PushBack(cp)
		}
	}
	for _, t := range req.ForgottenTopics {
		for _, p := range t.Partitions {
			k := fetchSessionKey{t.Topic, p}
			if e, ok := s.parts[k]; ok {
				s.order.Remove(e)
				delete(s.parts, k)
			}
		}
	}
	s.size.Store(int32(len(s.parts)))
	if len(s.parts) == 0 {
		// Nothing left to fetch: the session ends and the request is read as it is.
		c.remove(s.id)
		return fc
	}
	s.lastUsed.Store(now.UnixNano())
	s.epoch = nextFetchSessionEpoch(s.epoch)
	fc.session = s
	fc.req = s.request(req)
	return fc
}

// request is req with every partition of the session, in the session's order, topics grouped as
// they come; the caller holds s.mu.
func (s *fetchSession) request(req *kmsg.FetchRequest) *kmsg.FetchRequest {
	r := *req
	r.Topics = nil
	r.ForgottenTopics = nil
	for e := s.order.Front(); e != nil; e = e.Next() {
		cp := e.Value.(*cachedPartition)
		if n := len(r.Topics); n == 0 || r.Topics[n-1].Topic != cp.key.topic {
			r.Topics = append(r.Topics, kmsg.FetchRequestTopic{Topic: cp.key.topic})
		}
		last := &r.Topics[len(r.Topics)-1]
		last.Partitions = append(last.Partitions, cp.request())
	}
	return &r
}

// errorResponse answers a session error: the error, no partitions, no session.
func (fc *fetchContext) errorResponse() *kmsg.FetchResponse {
	resp := fc.req.ResponseKind().(*kmsg.FetchResponse)
	resp.ErrorCode = fc.errorCode
	return resp
}

// throttledResponse is Kafka's getThrottledResponse: empty, and the session stays as it was (a full
// fetch gets no session; an incremental one keeps its id).
func (fc *fetchContext) throttledResponse(throttleMillis int32) *kmsg.FetchResponse {
	resp := fc.req.ResponseKind().(*kmsg.FetchResponse)
	resp.ThrottleMillis = throttleMillis
	if s := fc.session; s != nil {
		resp.SessionID = s.id
		s.mu.Lock()
		if s.epoch != nextFetchSessionEpoch(fc.reqEpoch) {
			resp.ErrorCode = kerr.InvalidFetchSessionEpoch.Code
		}
		s.mu.Unlock()
	}
	return resp
}

// finish is Kafka's updateAndGenerateResponseData: a full fetch creates its session from the
// response, if the cache has room; an incremental one leaves out the partitions with nothing new
// and moves those it sends to the end of the session.
func (fc *fetchContext) finish(res *fetchResult, now time.Time) {
	switch {
	case fc.full:
		res.resp.SessionID = fc.cache.create(fc.req, res.resp, fc.follower, now)
	case fc.session != nil:
		s := fc.session
		res.resp.SessionID = s.id
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.epoch != nextFetchSessionEpoch(fc.reqEpoch) {
			// Another fetch with this epoch came in meanwhile: a duplicate.
			res.close()
			res.resp.Topics, res.resp.ErrorCode = nil, kerr.InvalidFetchSessionEpoch.Code
			return
		}
		res.keep(func(ti, pi int) bool {
			t := &res.resp.Topics[ti]
			rp := &t.Partitions[pi]
			e, ok := s.parts[fetchSessionKey{t.Topic, rp.Partition}]
			if !ok {
				return true
			}
			if !e.Value.(*cachedPartition).mustRespond(rp, res.recordsLen(ti, pi) > 0, true) {
				return false
			}
			s.order.MoveToBack(e)
			return true
		})
	}
}

// create is Kafka's FetchSessionCache.maybeCreateSession: a new session of the full fetch's
// partitions, remembering what the response told, or 0 when the cache is full and no session may
// be evicted for it.
func (c *fetchSessionCache) create(req *kmsg.FetchRequest, resp *kmsg.FetchResponse, privileged bool, now time.Time) int32 {
	s := &fetchSession{privileged: privileged, created: now, epoch: nextFetchSessionEpoch(fetchSessionInitialEpoch), parts: map[fetchSessionKey]*list.Element{}}
	s.lastUsed.Store(now.UnixNano())
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			cp := &cachedPartition{key: fetchSessionKey{t.Topic, p.Partition}, highWatermark: -1, localLogStartOffset: -1}
			cp.updateRequest(p)
			if _, dup := s.parts[cp.key]; !dup {
				s.parts[cp.key] = s.order.PushBack(cp)
			}
		}
	}
	for _, t := range resp.Topics {
		for i := range t.Partitions {
			rp := &t.Partitions[i]
			if e, ok := s.parts[fetchSessionKey{t.Topic, rp.Partition}]; ok {
				cp := e.Value.(*cachedPartition)
				cp.highWatermark, cp.localLogStartOffset = rp.HighWatermark, rp.LogStartOffset
			}
		}
	}
	s.size.Store(int32(len(s.parts)))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count >= c.maxEntries && !c.evictFor(privileged, len(s.parts), now) {
		return 0
	}
	for {
		s.id = rand.Int32N(math.MaxInt32-1) + 1
		if _, taken := c.sessions.LoadOrStore(s.id, s); !taken {
			break
		}
	}
	c.count++
	return s.id
}

// evictFor is Kafka's tryEvict, for a new session of size partitions: the least recently used
// session if it is stale; else the least valuable evictable one — a consumer's before a follower's,
// a smaller before a larger — if it is worth less than the new one. Followers' sessions, and any
// younger than fetchSessionEvictionAfter, are evictable only by followers, and by no one while
// young. The caller holds c.mu.
func (c *fetchSessionCache) evictFor(privileged bool, size int, now time.Time) bool {
	var stale, cheapest *fetchSession
	var cheapestSize int
	c.sessions.Range(func(_, v any) bool {
		s := v.(*fetchSession)
		if stale == nil || s.lastUsed.Load() < stale.lastUsed.Load() {
			stale = s
		}
		old := now.Sub(s.created) > fetchSessionEvictionAfter
		if !old && (!privileged || s.privileged) {
			return true
		}
		n := int(s.size.Load())
		if cheapest == nil || evictableLess(s.privileged, n, s.id, cheapest.privileged, cheapestSize, cheapest.id) {
			cheapest, cheapestSize = s, n
		}
		return true
	})
	switch {
	case stale != nil && now.Sub(time.Unix(0, stale.lastUsed.Load())) > fetchSessionEvictionAfter:
		c.removeLocked(stale.id)
	case cheapest != nil && !evictableLess(privileged, size, 0, cheapest.privileged, cheapestSize, cheapest.id):
		c.removeLocked(cheapest.id)
	default:
		return false
	}
	return true
}

// evictableLess orders sessions as Kafka's EvictableKey: privileged, then size, then id.
func evictableLess(aPriv bool, aSize int, aID int32, bPriv bool, bSize int, bID int32) bool {
	if aPriv != bPriv {
		return !aPriv
	}
	if aSize != bSize {
		return aSize < bSize
	}
	return aID < bID
}

func (c *fetchSessionCache) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(id)
}

func (c *fetchSessionCache) removeLocked(id int32) {
	if _, ok := c.sessions.LoadAndDelete(id); ok {
		c.count--
	}
}
