package lab

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/consumer"
)

// Figures are one mode's comparison figures, every one computed from the
// mode's events over the measured window: from the scenario's start to the
// end of the drain (all records produced were processed, or the drain gave
// up).
type Figures struct {
	Mode    string  `json:"mode"`
	Legacy  bool    `json:"legacy"`  // the ZooKeeper consumer: rounds are attempts, not generations
	Partial bool    `json:"partial"` // the mode did not finish (interrupted)
	Window  float64 `json:"window_seconds"`

	Triggers   int `json:"triggers"`   // scenario actions on members (and brokers)
	Rebalances int `json:"rebalances"` // group rebalances: overlapping member rebalances count once
	// Rounds are generations formed (coordinator: cooperative's two rounds
	// count two) or rebalance attempts by members (legacy).
	Rounds int `json:"rounds"`
	// StableP50 and StableMax: seconds from a trigger to a stable
	// assignment (every partition fetched by a live member, the rebalances
	// it caused done).
	StableP50 float64 `json:"stable_p50_seconds"`
	StableMax float64 `json:"stable_max_seconds"`

	PausedMemberSeconds       float64 `json:"paused_member_seconds"`       // members alive with fetching paused
	UnfetchedPartitionSeconds float64 `json:"unfetched_partition_seconds"` // partitions no live, unpaused member owned
	UnfetchedMaxPartition     float64 `json:"unfetched_max_partition_seconds"`

	Processed  int `json:"processed"`  // records processed, duplicates included
	Duplicates int `json:"duplicates"` // processings beyond the first of the same partition and offset
	Never      int `json:"never"`      // records produced and never processed

	ZKWatchNotifications int64 `json:"zk_watch_notifications"`
	ZKReads              int64 `json:"zk_reads"`
	ZKWrites             int64 `json:"zk_writes"`
	JoinGroups           int64 `json:"join_group_requests"`
	SyncGroups           int64 `json:"sync_group_requests"`
	Heartbeats           int64 `json:"heartbeat_requests"`

	FailedAttempts int `json:"failed_attempts"` // rebalance attempts that failed (and were retried, or gave up)
	OwnerConflicts int `json:"owner_conflicts"` // legacy: failed owner claims
	FencedCommits  int `json:"fenced_commits"`  // coordinator: commits refused to a member no longer in the generation
	FailedCommits  int `json:"failed_commits"`  // commits that failed otherwise (no coordinator, ZooKeeper or network errors)
}

// Segment is a span of time during which Member fetched Partition.
type Segment struct {
	Partition int32   `json:"partition"`
	Member    string  `json:"member"`
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
}

// Analysis is one mode's figures and the data its pictures are drawn from.
type Analysis struct {
	Figures    Figures
	Partitions int
	Segments   []Segment
	Markers    []Event // the scenario's actions
	// Herd is the cost of each join, for scenarios of joins only.
	Herd       []HerdPoint
	Start, End float64 // the measured window
}

// ModeEvents returns the events of mode, in time order.
func ModeEvents(events []Event, mode string) []Event {
	var out []Event
	for _, e := range events {
		if e.Mode == mode {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T < out[j].T })
	return out
}

// Modes returns the modes of a log in order of first appearance.
func Modes(events []Event) []string {
	var out []string
	for _, e := range events {
		if !slices.Contains(out, e.Mode) {
			out = append(out, e.Mode)
		}
	}
	return out
}

var triggers = []string{MarkJoin, MarkLeave, MarkKill, MarkRestart, MarkStall, MarkExpire, MarkCut, MarkKillBroker, MarkRestartBroker}

// Analyze computes a mode's figures from its events (ModeEvents order).
func Analyze(mode string, events []Event) Analysis {
	a := Analysis{Figures: Figures{Mode: mode}}
	f := &a.Figures
	a.Start, a.End = window(events)
	f.Window = a.End - a.Start
	f.Partial = !slices.ContainsFunc(events, func(e Event) bool { return e.Type == TypePhase && e.Note == PhaseDone })
	f.Legacy = slices.ContainsFunc(events, func(e Event) bool { return e.Type == consumer.EventRegistered.String() })
	a.Partitions = partitionCount(events)

	inWindow := func(t float64) bool { return t >= a.Start && t <= a.End }
	for _, e := range events {
		switch {
		case e.Type == TypeMarker && slices.Contains(triggers, e.Note) && inWindow(e.T):
			f.Triggers++
			a.Markers = append(a.Markers, e)
		case e.Type == TypeMarker && inWindow(e.T):
			a.Markers = append(a.Markers, e)
		case e.Type == consumer.EventRebalanceFailed.String() && inWindow(e.T):
			f.FailedAttempts++
			if e.Conflict {
				f.OwnerConflicts++
			}
		case e.Type == consumer.EventOffsetsCommitted.String() && e.Fenced && inWindow(e.T):
			f.FencedCommits++
		case e.Type == consumer.EventOffsetsCommitted.String() && e.Err != "" && inWindow(e.T):
			f.FailedCommits++
		case e.Type == consumer.EventRebalanceStarted.String() && f.Legacy && inWindow(e.T):
			f.Rounds++
		}
	}
	w := walkOwnership(events, a.Partitions, a.Start, a.End)
	a.Segments = w.segments
	a.Herd = Herd(events)
	f.PausedMemberSeconds = w.paused
	for _, s := range w.unfetched {
		f.UnfetchedPartitionSeconds += s
		f.UnfetchedMaxPartition = max(f.UnfetchedMaxPartition, s)
	}
	episodes, newGens := rebalanceEpisodes(events, f.Legacy)
	if !f.Legacy {
		for _, t := range newGens {
			if inWindow(t) {
				f.Rounds++
			}
		}
	}
	var counted []episode
	for _, ep := range episodes {
		if ep.counted && inWindow(ep.start) {
			counted = append(counted, ep)
		}
	}
	f.Rebalances = len(counted)
	f.StableP50, f.StableMax = stability(a.Markers, counted, w, a.End)
	f.Processed, f.Duplicates, f.Never = delivery(events)
	addStats(f, events)
	return a
}

// window is the measured span: the scenario phase to done (or aborted, or
// the last event of a run cut short).
func window(events []Event) (start, end float64) {
	start, end = -1, -1
	for _, e := range events {
		if e.Type != TypePhase {
			continue
		}
		switch e.Note {
		case PhaseScenario:
			start = e.T
		case PhaseDone, PhaseAborted:
			if end < 0 {
				end = e.T
			}
		}
	}
	if len(events) == 0 {
		return 0, 0
	}
	if start < 0 {
		start = events[0].T
	}
	if end < 0 {
		end = events[len(events)-1].T
	}
	return start, max(start, end)
}

func partitionCount(events []Event) int {
	n := 0
	for _, e := range events {
		for _, p := range e.Partitions {
			n = max(n, int(p)+1)
		}
	}
	return n
}

// walk is what walkOwnership finds.
type walk struct {
	segments   []Segment
	paused     float64           // member-seconds, in the window
	unfetched  map[int32]float64 // partition-seconds, in the window
	recoveries []float64         // times every partition became fetched again
	allFetched bool              // at the window's end
}

// walkOwnership replays assignments, revocations, pauses and the
// scenario's kills and leaves. A partition is fetched while some owner of
// it is alive and not paused.
func walkOwnership(events []Event, partitions int, start, end float64) walk {
	owners := map[int32]map[string]bool{}
	paused, gone := map[string]bool{}, map[string]bool{}
	w := walk{unfetched: map[int32]float64{}}
	fetching := func(p int32) []string {
		var ms []string
		for m := range owners[p] {
			if !paused[m] && !gone[m] {
				ms = append(ms, m)
			}
		}
		return ms
	}
	all := func() bool {
		for p := range int32(partitions) {
			if len(fetching(p)) == 0 {
				return false
			}
		}
		return true
	}
	// accrue adds an interval of d seconds in the current state to the
	// unfetched partition-seconds and the paused member-seconds.
	accrue := func(d float64) {
		for p := range int32(partitions) {
			if len(fetching(p)) == 0 {
				w.unfetched[p] += d
			}
		}
		for m, on := range paused {
			if on && !gone[m] {
				w.paused += d
			}
		}
	}
	segOpen := map[int32]map[string]float64{} // partition → member → segment start
	sync := func(t float64) {
		for p := range int32(partitions) {
			now := fetching(p)
			if segOpen[p] == nil {
				segOpen[p] = map[string]float64{}
			}
			for m, s := range segOpen[p] {
				if !slices.Contains(now, m) {
					w.segments = append(w.segments, Segment{Partition: p, Member: m, Start: s, End: t})
					delete(segOpen[p], m)
				}
			}
			for _, m := range now {
				if _, ok := segOpen[p][m]; !ok {
					segOpen[p][m] = t
				}
			}
		}
	}
	prev := start
	wasAll := false
	started := false
	for _, e := range events {
		if e.Type == TypeProcessed {
			continue
		}
		if !started && e.T >= start {
			started = true
			wasAll = all()
		}
		if started {
			if lo, hi := max(prev, start), min(e.T, end); hi > lo {
				accrue(hi - lo)
			}
			prev = e.T
		}
		switch e.Type {
		case consumer.EventPartitionsAssigned.String():
			for _, p := range e.Partitions {
				if owners[p] == nil {
					owners[p] = map[string]bool{}
				}
				owners[p][e.Member] = true
			}
		case consumer.EventPartitionsRevoked.String(), consumer.EventPartitionsLost.String():
			for _, p := range e.Partitions {
				delete(owners[p], e.Member)
			}
		case consumer.EventFetchingPaused.String():
			paused[e.Member] = true
		case consumer.EventFetchingResumed.String():
			paused[e.Member] = false
		case TypeMarker:
			switch e.Note {
			case MarkKill, MarkLeave:
				gone[e.Member] = true
			case MarkJoin:
				gone[e.Member] = false
			case MarkRestart: // a new consumer: not paused, owning nothing yet
				paused[e.Member] = false
				for _, ms := range owners {
					delete(ms, e.Member)
				}
			}
		}
		sync(e.T)
		if started && e.T <= end {
			now := all()
			if now && !wasAll {
				w.recoveries = append(w.recoveries, e.T)
			}
			wasAll = now
		}
	}
	if !started {
		wasAll = all()
	}
	if end > prev && started {
		accrue(end - prev)
	}
	w.allFetched = wasAll
	for p, ms := range segOpen {
		for m, s := range ms {
			w.segments = append(w.segments, Segment{Partition: p, Member: m, Start: s, End: max(s, end)})
		}
	}
	slices.SortFunc(w.segments, func(a, b Segment) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Start, b.Start), cmp.Compare(a.Member, b.Member))
	})
	return w
}

// episode is a span during which some member was rebalancing.
type episode struct {
	start, end float64
	counted    bool // a group rebalance: legacy always; coordinator when a new generation formed
}

// rebalanceEpisodes merges the members' overlapping rebalance attempts and
// returns them with the times new generations formed (coordinator mode).
func rebalanceEpisodes(events []Event, legacy bool) ([]episode, []float64) {
	type span struct{ start, end float64 }
	var spans []span
	opened := map[string]float64{}
	var newGens []float64
	maxGen := int32(-1)
	closeSpan := func(m string, t float64) {
		if s, ok := opened[m]; ok {
			spans = append(spans, span{s, t})
			delete(opened, m)
		}
	}
	for _, e := range events {
		switch e.Type {
		case consumer.EventRebalanceStarted.String():
			if _, ok := opened[e.Member]; !ok {
				opened[e.Member] = e.T
			}
		case consumer.EventRebalanceDone.String(), consumer.EventRebalanceFailed.String():
			closeSpan(e.Member, e.T)
		case consumer.EventJoined.String():
			if e.Generation > maxGen {
				maxGen = e.Generation
				newGens = append(newGens, e.T)
			}
		case TypeMarker:
			if e.Note == MarkKill || e.Note == MarkLeave || e.Note == MarkRestart {
				closeSpan(e.Member, e.T)
			}
		}
	}
	last := 0.0
	if len(events) > 0 {
		last = events[len(events)-1].T
	}
	for _, m := range slices.Sorted(maps.Keys(opened)) {
		spans = append(spans, span{opened[m], last})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var eps []episode
	for _, s := range spans {
		if n := len(eps); n > 0 && s.start <= eps[n-1].end {
			eps[n-1].end = max(eps[n-1].end, s.end)
			continue
		}
		eps = append(eps, episode{start: s.start, end: s.end})
	}
	for i := range eps {
		eps[i].counted = legacy || slices.ContainsFunc(newGens, func(t float64) bool { return t >= eps[i].start && t <= eps[i].end })
	}
	return eps, newGens
}

// stability returns the median and maximum time from each trigger to a
// stable assignment: the end of the last rebalance that started before the
// next trigger, or the last moment every partition became fetched again,
// whichever is later; a trigger after which the group never settled counts
// until the next trigger (or the window's end).
func stability(markers []Event, episodes []episode, w walk, end float64) (p50, maxS float64) {
	var ts []float64
	for _, m := range markers {
		if slices.Contains(triggers, m.Note) {
			ts = append(ts, m.T)
		}
	}
	if len(ts) == 0 {
		return 0, 0
	}
	var out []float64
	for i, t := range ts {
		h := end
		if i+1 < len(ts) {
			h = ts[i+1]
		}
		settled := t
		for _, ep := range episodes {
			if ep.start >= t && ep.start < h {
				settled = max(settled, ep.end)
			}
		}
		for _, r := range w.recoveries {
			if r >= t && r < h {
				settled = max(settled, r)
			}
		}
		if i+1 == len(ts) && !w.allFetched {
			settled = h
		}
		out = append(out, min(settled, h)-t)
	}
	slices.Sort(out)
	return out[(len(out)-1)/2], out[len(out)-1]
}

// delivery counts processings, duplicates and records never processed
// between each partition's start offset and end offset (or the highest
// offset processed, when the run ended before the end offsets were read).
func delivery(events []Event) (processed, dups, never int) {
	starts, ends := map[int32]int64{}, map[int32]int64{}
	seen := map[int32]map[int64]int{}
	for _, e := range events {
		if len(e.Partitions) != 1 {
			continue
		}
		p := e.Partitions[0]
		switch e.Type {
		case TypeStartOffset:
			starts[p] = e.Offset
		case TypeEndOffset:
			ends[p] = e.Offset
		case TypeProcessed:
			processed++
			if seen[p] == nil {
				seen[p] = map[int64]int{}
			}
			seen[p][e.Offset]++
		}
	}
	for p, start := range starts {
		end, ok := ends[p]
		if !ok {
			end = start
			for o := range seen[p] {
				end = max(end, o+1)
			}
		}
		for o := start; o < end; o++ {
			switch n := seen[p][o]; {
			case n == 0:
				never++
			case n > 1:
				dups += n - 1
			}
		}
	}
	return processed, dups, never
}

// addStats sums the members' counters over the window: each consumer
// instance's final counters less those at the scenario's start.
func addStats(f *Figures, events []Event) {
	base := map[string]consumer.Stats{}
	var sum consumer.Stats
	for _, e := range events {
		if e.Type != TypeStats || e.Stats == nil {
			continue
		}
		switch e.Note {
		case "baseline":
			base[e.Member] = *e.Stats
		case "final":
			b := base[e.Member]
			s := *e.Stats
			sum.ZKWatchNotifications += s.ZKWatchNotifications - b.ZKWatchNotifications
			sum.ZKReads += s.ZKReads - b.ZKReads
			sum.ZKWrites += s.ZKWrites - b.ZKWrites
			sum.JoinGroupRequests += s.JoinGroupRequests - b.JoinGroupRequests
			sum.SyncGroupRequests += s.SyncGroupRequests - b.SyncGroupRequests
			sum.HeartbeatRequests += s.HeartbeatRequests - b.HeartbeatRequests
			delete(base, e.Member)
		}
	}
	f.ZKWatchNotifications, f.ZKReads, f.ZKWrites = sum.ZKWatchNotifications, sum.ZKReads, sum.ZKWrites
	f.JoinGroups, f.SyncGroups, f.Heartbeats = sum.JoinGroupRequests, sum.SyncGroupRequests, sum.HeartbeatRequests
}

// HerdPoint is what one join cost the group, summed over its members.
type HerdPoint struct {
	Size                 int   `json:"group_size"` // members after the join
	ZKWatchNotifications int64 `json:"zk_watch_notifications"`
	ZKReads              int64 `json:"zk_reads"`
	JoinGroups           int64 `json:"join_group_requests"`
}

// Herd returns the cost of each join of a scenario of joins only (scale-out,
// herd): the members' counters taken before a join and before the next
// action (or after the scenario), compared member by member, a member that
// joined in between counting from zero. It returns nil for a scenario that
// also removes members.
func Herd(events []Event) []HerdPoint {
	snaps := map[int]map[string]consumer.Stats{}
	size, sizes := 0, map[int]int{} // members after step n's action
	step := 0
	for _, e := range events {
		switch {
		case e.Type == TypeMarker && slices.Contains([]string{MarkLeave, MarkKill, MarkRestart}, e.Note):
			return nil
		case e.Type == TypeMarker && e.Note == MarkJoin:
			size++
			sizes[step] = size
		case e.Type == TypeStats && e.Stats != nil && strings.HasPrefix(e.Note, "step-"):
			n, err := strconv.Atoi(strings.TrimPrefix(e.Note, "step-"))
			if err != nil {
				continue
			}
			if snaps[n] == nil {
				snaps[n] = map[string]consumer.Stats{}
			}
			snaps[n][e.Member] = *e.Stats
			step = n
		}
	}
	var out []HerdPoint
	for n := 1; snaps[n+1] != nil; n++ {
		if snaps[n] == nil || sizes[n] == 0 {
			continue
		}
		p := HerdPoint{Size: sizes[n]}
		for m, s := range snaps[n+1] {
			b := snaps[n][m]
			p.ZKWatchNotifications += s.ZKWatchNotifications - b.ZKWatchNotifications
			p.ZKReads += s.ZKReads - b.ZKReads
			p.JoinGroups += s.JoinGroupRequests - b.JoinGroupRequests
		}
		out = append(out, p)
	}
	return out
}
