package chaos

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Finding kinds. The ones of acks=all producers, of the group and of the history itself fail a run; the
// acks=1 producer's are reported only: losing acknowledged records is what acks=1 allows.
const (
	FindLost               = "acknowledged-but-missing"
	FindDuplicated         = "duplicated"
	FindReordered          = "reordered"
	FindWrongOffset        = "acknowledged-at-another-offset"
	FindNeverSent          = "never-sent"
	FindUnverified         = "unverified"
	FindCommittedBackwards = "committed-offset-went-backwards"
	FindNeverProcessed     = "never-processed"
	// FindStaleCommitted is reported, not failed: a deposed coordinator (a paused broker that resumed)
	// served committed offsets older than the group's before it learned of its successor, as Kafka
	// 2.8's does.
	FindStaleCommitted = "stale-committed-offset-served"
	// FindUnackedCommitted is reported, not failed: a coordinator served a committed offset no commit
	// was acknowledged for — a commit it had appended but not replicated when it crashed, loaded
	// back to its log end on restart as Kafka 2.8's GroupMetadataManager does — and a later answer
	// went back to the last acknowledged commit once another broker led.
	FindUnackedCommitted = "unacknowledged-committed-offset-served"
)

// maxExamples bounds the examples kept per finding kind.
const maxExamples = 20

// Finding is one anomaly the checker found, with the fault during which its record was sent.
type Finding struct {
	Kind  string `json:"kind"`
	Acks  string `json:"acks,omitempty"` // the producer's acks, for record findings
	Fault string `json:"fault"`          // "none" before the first fault
	Text  string `json:"text"`
}

// Counts are one class of producers' figures.
type Counts struct {
	Sent        int `json:"sent"`
	Acked       int `json:"acked"`
	Failed      int `json:"failed"` // completed with an error: not acknowledged, may or may not be in the log
	Lost        int `json:"lost"`
	Duplicated  int `json:"duplicated"`
	Reordered   int `json:"reordered"`
	WrongOffset int `json:"wrong_offset"`
}

// recState is what the checker knows of one record.
type recState struct {
	sent      float64 // when it was handed to the producer
	partition int32
	offset    int64 // acknowledged offset
	readAt    int64 // first offset the reader found it at
	done      bool  // a produce op completed it
	acked     bool
	reads     uint16
	processed bool
}

type producerState struct {
	acks string
	recs []recState // by seq
}

func (p *producerState) rec(seq int64) *recState {
	for int64(len(p.recs)) <= seq {
		p.recs = append(p.recs, recState{offset: -1, readAt: -1})
	}
	return &p.recs[seq]
}

// Checker reads a run's history one op at a time and finds what the run's guarantees forbid:
// acknowledged records missing from the final read, records read twice, a producer's records out of
// order within a partition, records acknowledged at one offset and found at another, records nobody
// sent, committed offsets going backwards, and records the group never processed.
type Checker struct {
	producers map[string]*producerState
	// lastSeq is, per partition and producer, the highest seq the reader has read so far.
	lastSeq     map[int32]map[string]int64
	readEnds    map[int32]readEnd
	committed   map[int32]int64
	ackedCommit map[int32]int64 // the highest acknowledged commit per partition, so far
	faults      []faultMark
	neverSent   int
	backwards   int
	stale       int
	unacked     int
	found       findingSet
	reordered   map[string]map[string]int // by acks, then fault
	sawReadEnd  bool
}

// findingSet keeps up to maxExamples findings of each kind and counts them all.
type findingSet struct {
	examples map[string][]Finding
	counts   map[string]int
}

func (s *findingSet) add(f Finding) {
	if s.counts == nil {
		s.examples, s.counts = map[string][]Finding{}, map[string]int{}
	}
	s.counts[f.Kind]++
	if len(s.examples[f.Kind]) < maxExamples {
		s.examples[f.Kind] = append(s.examples[f.Kind], f)
	}
}

func (s *findingSet) clone() findingSet {
	c := findingSet{examples: map[string][]Finding{}, counts: map[string]int{}}
	maps.Copy(c.counts, s.counts)
	for k, v := range s.examples {
		c.examples[k] = slices.Clone(v)
	}
	return c
}

// readEnd is where the final read of a partition ended, and why it ended early ("" if it did not).
type readEnd struct {
	offset int64
	err    string
}

// faultMark is a fault's start, for attributing records to the fault during which they were sent.
type faultMark struct {
	t    float64
	name string
}

// NewChecker returns an empty checker.
func NewChecker() *Checker {
	return &Checker{
		producers: map[string]*producerState{},
		lastSeq:   map[int32]map[string]int64{},
		readEnds:  map[int32]readEnd{},
		committed: map[int32]int64{}, ackedCommit: map[int32]int64{},
		reordered: map[string]map[string]int{"all": {}, "1": {}},
	}
}

func (c *Checker) producer(name, acks string) *producerState {
	p := c.producers[name]
	if p == nil {
		p = &producerState{acks: acks}
		c.producers[name] = p
	}
	if acks != "" {
		p.acks = acks
	}
	return p
}

// faultAt names the fault in progress at t: the last one started at or before it.
func (c *Checker) faultAt(t float64) string {
	i, _ := slices.BinarySearchFunc(c.faults, t, func(f faultMark, t float64) int { return cmp.Compare(f.t, t) })
	for i < len(c.faults) && c.faults[i].t <= t {
		i++
	}
	if i == 0 {
		return "none"
	}
	return c.faults[i-1].name
}

// finding describes a finding about something sent (or observed) at t.
func (c *Checker) finding(kind, acks string, t float64, format string, args ...any) Finding {
	return Finding{Kind: kind, Acks: acks, Fault: c.faultAt(t), Text: fmt.Sprintf(format, args...)}
}

// Add takes the next op of the history.
func (c *Checker) Add(op Op) {
	switch op.Type {
	case OpFault:
		c.faults = append(c.faults, faultMark{t: op.T, name: op.Fault})
	case OpProduce:
		p := c.producer(op.Rec.Producer, op.Acks)
		r := p.rec(op.Rec.Seq)
		r.done, r.sent, r.partition = true, op.Sent, op.Rec.Partition
		if op.Err == "" {
			r.acked, r.offset = true, op.Rec.Offset
		}
	case OpProcess:
		c.producer(op.Rec.Producer, "").rec(op.Rec.Seq).processed = true
	case OpCommitted:
		if op.Note != "" {
			c.stale++
			c.found.add(c.finding(FindStaleCommitted, "", op.T, "partition %d: broker %d served committed offset %d below the group's %d at %.1fs (%s)", op.Partition, op.Broker, op.Offset, c.committed[op.Partition], op.T, op.Note))
			return
		}
		if prev, ok := c.committed[op.Partition]; ok && op.Offset < prev {
			if acked, ok := c.ackedCommit[op.Partition]; ok && op.Offset >= acked && prev > acked {
				c.unacked++
				c.found.add(c.finding(FindUnackedCommitted, "", op.T, "partition %d: committed offset %d had been served though the last acknowledged commit was %d; broker %d serves %d at %.1fs", op.Partition, prev, acked, op.Broker, op.Offset, op.T))
			} else {
				c.backwards++
				c.found.add(c.finding(FindCommittedBackwards, "", op.T, "partition %d: the group's committed offset went from %d back to %d at %.1fs", op.Partition, prev, op.Offset, op.T))
			}
		}
		c.committed[op.Partition] = op.Offset
	case OpCommit:
		if op.Err == "" && op.Offset > c.ackedCommit[op.Partition] {
			c.ackedCommit[op.Partition] = op.Offset
		}
	case OpRead:
		c.read(op)
	case OpReadEnd:
		c.sawReadEnd = true
		c.readEnds[op.Partition] = readEnd{offset: op.Offset, err: op.Err}
	}
}

func (c *Checker) read(op Op) {
	rec := op.Rec
	p := c.producers[rec.Producer]
	if p == nil || rec.Seq < 0 || rec.Seq >= int64(len(p.recs)) || !p.recs[rec.Seq].done {
		c.neverSent++
		c.found.add(c.finding(FindNeverSent, "", op.T, "%s-%d at %d@%d was never sent", rec.Producer, rec.Seq, rec.Partition, rec.Offset))
		return
	}
	r := &p.recs[rec.Seq]
	r.reads++
	if r.reads == 1 {
		r.readAt = rec.Offset
	}
	last := c.lastSeq[rec.Partition]
	if last == nil {
		last = map[string]int64{}
		c.lastSeq[rec.Partition] = last
	}
	if prev, ok := last[rec.Producer]; ok && rec.Seq < prev {
		c.reordered[p.acks][c.faultAt(r.sent)]++
		c.found.add(c.finding(FindReordered, p.acks, r.sent, "partition %d: %s-%d at offset %d follows %s-%d", rec.Partition, rec.Producer, rec.Seq, rec.Offset, rec.Producer, prev))
	} else {
		last[rec.Producer] = rec.Seq
	}
}

// CheckResult is what the checker concluded.
type CheckResult struct {
	AcksAll Counts `json:"acks_all"`
	AcksOne Counts `json:"acks_1"`
	// NeverSent counts records read that no producer sent; Unverified acknowledged records in partitions
	// the final reader could not read to their end.
	NeverSent  int `json:"never_sent"`
	Unverified int `json:"unverified"`
	// NeverProcessed counts records in the log the group never processed; CommittedBackwards the times
	// a committed offset went down.
	NeverProcessed     int `json:"never_processed"`
	CommittedBackwards int `json:"committed_backwards"`
	// StaleCommitted counts answers of a deposed coordinator below the group's committed offsets,
	// UnackedCommitted answers above every acknowledged commit that a later answer took back:
	// reported, not failed.
	StaleCommitted   int `json:"stale_committed"`
	UnackedCommitted int `json:"unacked_committed"`
	// ByFault splits the producers' figures by the fault during which the records were sent ("none"
	// before the first).
	ByFault map[string]FaultCounts `json:"by_fault"`
	// Findings holds up to 20 examples of each kind; FindingCounts all of them.
	Findings      []Finding      `json:"findings"`
	FindingCounts map[string]int `json:"finding_counts"`
	// Failures names the findings that fail the run; empty means PASS.
	Failures []string `json:"failures"`
}

// FaultCounts are the figures of the records sent during one kind of fault.
type FaultCounts struct {
	AcksAll Counts `json:"acks_all"`
	AcksOne Counts `json:"acks_1"`
}

// Verdict is PASS or FAIL.
func (r CheckResult) Verdict() string {
	if len(r.Failures) == 0 {
		return "PASS"
	}
	return "FAIL"
}

// Result judges everything added so far.
func (c *Checker) Result() CheckResult {
	res := CheckResult{NeverSent: c.neverSent, CommittedBackwards: c.backwards, StaleCommitted: c.stale, UnackedCommitted: c.unacked, ByFault: map[string]FaultCounts{}}
	found := c.found.clone()
	// count adds one to a field of both the run's counts and its fault's.
	count := func(acks string, sent float64, field func(*Counts) *int) {
		fault := c.faultAt(sent)
		fc := res.ByFault[fault]
		if acks == "1" {
			*field(&res.AcksOne)++
			*field(&fc.AcksOne)++
		} else {
			*field(&res.AcksAll)++
			*field(&fc.AcksAll)++
		}
		res.ByFault[fault] = fc
	}
	for _, name := range slices.Sorted(maps.Keys(c.producers)) {
		p := c.producers[name]
		for seq := range p.recs {
			r := &p.recs[seq]
			if !r.done {
				continue
			}
			count(p.acks, r.sent, func(c *Counts) *int { return &c.Sent })
			if r.reads > 0 && !r.processed {
				res.NeverProcessed++
				found.add(c.finding(FindNeverProcessed, p.acks, r.sent, "%s-%d at %d@%d was never processed by the group", name, seq, r.partition, r.readAt))
			}
			if r.reads > 1 {
				count(p.acks, r.sent, func(c *Counts) *int { return &c.Duplicated })
				found.add(c.finding(FindDuplicated, p.acks, r.sent, "%s-%d (partition %d) was read %d times", name, seq, r.partition, r.reads))
			}
			if !r.acked {
				count(p.acks, r.sent, func(c *Counts) *int { return &c.Failed })
				continue
			}
			count(p.acks, r.sent, func(c *Counts) *int { return &c.Acked })
			switch end, ended := c.readEnds[r.partition]; {
			case !ended || (end.err != "" && r.offset >= end.offset):
				res.Unverified++
				if c.sawReadEnd {
					found.add(c.finding(FindUnverified, p.acks, r.sent, "%s-%d acknowledged at %d@%d: the final read did not reach it (%s)", name, seq, r.partition, r.offset, end.err))
				}
			case r.reads == 0:
				count(p.acks, r.sent, func(c *Counts) *int { return &c.Lost })
				found.add(c.finding(FindLost, p.acks, r.sent, "%s-%d acknowledged at %d@%d (sent at %.1fs) is missing", name, seq, r.partition, r.offset, r.sent))
			case r.readAt != r.offset:
				count(p.acks, r.sent, func(c *Counts) *int { return &c.WrongOffset })
				found.add(c.finding(FindWrongOffset, p.acks, r.sent, "%s-%d acknowledged at %d@%d was read at offset %d", name, seq, r.partition, r.offset, r.readAt))
			}
		}
	}
	for acks, byFault := range c.reordered {
		for fault, n := range byFault {
			fc := res.ByFault[fault]
			if acks == "1" {
				res.AcksOne.Reordered += n
				fc.AcksOne.Reordered += n
			} else {
				res.AcksAll.Reordered += n
				fc.AcksAll.Reordered += n
			}
			res.ByFault[fault] = fc
		}
	}
	res.FindingCounts = found.counts
	for _, k := range slices.Sorted(maps.Keys(found.examples)) {
		res.Findings = append(res.Findings, found.examples[k]...)
	}
	for _, f := range []struct {
		n    int
		what string
	}{
		{res.AcksAll.Lost, "acks=all records lost"},
		{res.AcksAll.Duplicated, "acks=all records duplicated"},
		{res.AcksAll.Reordered, "acks=all records reordered"},
		{res.AcksAll.WrongOffset, "acks=all records at another offset than acknowledged"},
		{res.NeverSent, "records never sent"},
		{res.Unverified, "acknowledged records not verified"},
		{res.NeverProcessed, "records the group never processed"},
		{res.CommittedBackwards, "committed offsets went backwards"},
	} {
		if f.n > 0 {
			res.Failures = append(res.Failures, fmt.Sprintf("%d %s", f.n, f.what))
		}
	}
	return res
}
