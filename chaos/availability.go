package chaos

import (
	"cmp"
	"math"
	"slices"
)

// FaultFigures are one fault's timings, in seconds since the run started (Start, Heal, Healthy) or
// as durations.
type FaultFigures struct {
	Seq     int     `json:"seq"`
	Fault   string  `json:"fault"` // kind/variant, e.g. kill/controller
	Target  string  `json:"target"`
	Start   float64 `json:"start"`
	Heal    float64 `json:"heal"`    // the target was restarted, continued or reconnected; 0 if never
	Healthy float64 `json:"healthy"` // every broker registered and every ISR full again; 0 if never
	// Unavailable is the longest a record sent during the fault (from Start until the cluster was
	// whole again, or the next fault) waited for its acknowledgement, counted up to the next
	// fault's start at most: from the fault, about the time until the slowest partition took
	// records again. A record still waiting when the next fault begins is that fault's to explain
	// too (a producer's retry of a request to a leader that moved, caught by the next fault's cut,
	// waits for the client's request timeout). Partition names that partition.
	Unavailable float64 `json:"unavailable"`
	Partition   int32   `json:"partition"`
	// NeverRecovered is set when some partition acknowledged no record sent during the fault.
	NeverRecovered bool `json:"never_recovered,omitempty"`
	// NoController is how long, from Start to Healthy (or the next fault), no live broker acted as
	// controller: /controller absent, or held by the session of a broker that was killed, paused or
	// cut off from ZooKeeper.
	NoController float64 `json:"no_controller"`
}

// ackPoint is one acknowledged record: when it was sent and when its acknowledgement came.
type ackPoint struct{ sent, acked float64 }

// Availability reads a history one op at a time and times each fault.
type Availability struct {
	faults  []FaultFigures
	acks    map[string]map[int32][]ackPoint // by producer acks, then partition
	ctrl    []ctrlPoint
	last    float64
	perSec  map[string][]int // acknowledged records per second, by acks
	healthy map[int]float64
}

type ctrlPoint struct {
	t  float64
	ok bool
}

// NewAvailability returns an empty analysis.
func NewAvailability() *Availability {
	return &Availability{acks: map[string]map[int32][]ackPoint{}, perSec: map[string][]int{}, healthy: map[int]float64{}}
}

// Add takes the next op of the history.
func (a *Availability) Add(op Op) {
	a.last = max(a.last, op.T)
	switch op.Type {
	case OpFault:
		a.faults = append(a.faults, FaultFigures{Seq: op.Seq, Fault: op.Fault, Target: op.Target, Start: op.T})
	case OpHeal:
		if f := a.fault(op.Seq); f != nil {
			f.Heal = op.T
		}
	case OpHealthy:
		if f := a.fault(op.Seq); f != nil {
			f.Healthy = op.T
		}
	case OpController:
		a.ctrl = append(a.ctrl, ctrlPoint{t: op.T, ok: op.Broker >= 0})
	case OpProduce:
		if op.Err != "" {
			return
		}
		byPart := a.acks[op.Acks]
		if byPart == nil {
			byPart = map[int32][]ackPoint{}
			a.acks[op.Acks] = byPart
		}
		byPart[op.Rec.Partition] = append(byPart[op.Rec.Partition], ackPoint{sent: op.Sent, acked: op.T})
		sec := int(op.T)
		counts := a.perSec[op.Acks]
		for len(counts) <= sec {
			counts = append(counts, 0)
		}
		counts[sec]++
		a.perSec[op.Acks] = counts
	}
}

func (a *Availability) fault(seq int) *FaultFigures {
	for i := len(a.faults) - 1; i >= 0; i-- {
		if a.faults[i].Seq == seq {
			return &a.faults[i]
		}
	}
	return nil
}

// Faults times every fault. The produce acknowledgements measured are those of the acks=all
// producers, or of the acks=1 producer when it ran alone.
func (a *Availability) Faults() []FaultFigures {
	byPart := a.acks["all"]
	if len(byPart) == 0 {
		byPart = a.acks["1"]
	}
	sorted := map[int32][]ackPoint{}
	for p, pts := range byPart {
		pts = slices.Clone(pts)
		slices.SortFunc(pts, func(x, y ackPoint) int { return cmp.Compare(x.sent, y.sent) })
		sorted[p] = pts
	}
	out := slices.Clone(a.faults)
	for i := range out {
		f := &out[i]
		end := f.Healthy
		if end == 0 {
			end = a.last
		}
		next := math.Inf(1)
		if i+1 < len(out) {
			next = out[i+1].Start
			end = min(end, next)
		}
		f.Partition = -1
		for p, pts := range sorted {
			j, _ := slices.BinarySearchFunc(pts, f.Start, func(x ackPoint, t float64) int { return cmp.Compare(x.sent, t) })
			if j == len(pts) || pts[j].sent > end {
				f.NeverRecovered = true
				continue
			}
			for ; j < len(pts) && pts[j].sent <= end; j++ {
				if wait := min(pts[j].acked, next) - pts[j].sent; wait > f.Unavailable || f.Partition < 0 || (wait == f.Unavailable && p < f.Partition) {
					f.Unavailable, f.Partition = wait, p
				}
			}
		}
		f.NoController = a.noController(f.Start, end)
	}
	return out
}

// noController sums the time in [from, to] during which no live controller acted.
func (a *Availability) noController(from, to float64) float64 {
	ok := true // until the observer says otherwise
	total := 0.0
	prev := from
	for _, c := range a.ctrl {
		if c.t > to {
			break
		}
		if c.t > from {
			if !ok {
				total += c.t - prev
			}
			prev = c.t
		}
		ok = c.ok
	}
	if !ok && to > prev {
		total += to - prev
	}
	return total
}

// PerSecond is the number of records acknowledged in each second of the run, by acks ("all", "1").
func (a *Availability) PerSecond() map[string][]int { return a.perSec }

// End is the time of the last op.
func (a *Availability) End() float64 { return a.last }
