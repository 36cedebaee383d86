package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Op types: every line of a run's history is one of these.
const (
	OpProduce    = "produce"    // a producer's record completed: acknowledged at Rec's offset, or failed (Err)
	OpProcess    = "process"    // a group member processed Rec
	OpCommit     = "commit"     // a member's commit of Offset for Partition completed (Err if it failed)
	OpCommitted  = "committed"  // the group's committed Offset for Partition, as OffsetFetch answered it
	OpRead       = "read"       // the final reader read Rec
	OpReadEnd    = "read-end"   // the final reader reached Offset, the end of Partition (Err if it could not)
	OpFault      = "fault"      // Fault was injected into Target
	OpHeal       = "heal"       // Fault's target was healed (restarted, continued, reconnected)
	OpHealthy    = "healthy"    // the cluster was whole again after Fault: every broker registered, every ISR full
	OpController = "controller" // who acts as controller changed: Broker, or -1 with Note saying why none does
	OpPhase      = "phase"      // the run entered phase Note
	OpNote       = "note"       // anything worth reading next to the timeline (Note)
)

// Phases of a run.
const (
	PhasePrepare = "prepare" // namespaces, tmpfs, topic
	PhaseWarmUp  = "warm-up" // producers and the group run, no fault yet
	PhaseFaults  = "faults"  // the fault loop
	PhaseDrain   = "drain"   // producers stopped, the group catches up
	PhaseRead    = "read"    // the final reader reads everything
	PhaseRestore = "restore" // namespaces and tmpfs removed
	PhaseDone    = "done"
)

// Rec names one record: Producer's Seq-th record, and where it is.
type Rec struct {
	Producer  string `json:"producer"`
	Seq       int64  `json:"seq"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"` // -1 until acknowledged
}

// Op is one line of the history. T is when it completed, in seconds since the run started.
type Op struct {
	T    float64 `json:"t"`
	Type string  `json:"type"`
	Rec  *Rec    `json:"rec,omitempty"`
	// Sent is when a produced record was handed to its producer.
	Sent float64 `json:"sent,omitempty"`
	// Acks is the producer's acks setting: "all" or "1" (produce ops).
	Acks   string `json:"acks,omitempty"`
	Member string `json:"member,omitempty"`
	// Partition and Offset: commits, committed offsets and read ends.
	Partition int32 `json:"partition,omitempty"`
	Offset    int64 `json:"offset,omitempty"`
	// Fault, Seq and Target: fault, heal and healthy ops. Seq numbers the faults from 1.
	Fault  string `json:"fault,omitempty"`
	Seq    int    `json:"seq,omitempty"`
	Target string `json:"target,omitempty"`
	Broker int32  `json:"broker,omitempty"`
	Err    string `json:"err,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Value is the record value Producer writes for Seq; parseValue reads it back.
func Value(producer string, seq int64) []byte { return fmt.Appendf(nil, "%s-%012d", producer, seq) }

func parseValue(v []byte) (producer string, seq int64, ok bool) {
	s := string(v)
	i := strings.LastIndexByte(s, '-')
	if i <= 0 || len(s)-i-1 != 12 {
		return "", 0, false
	}
	if _, err := fmt.Sscanf(s[i+1:], "%d", &seq); err != nil {
		return "", 0, false
	}
	return s[:i], seq, true
}

// History writes a run's ops as JSON lines as they happen, so a run cut short still leaves its
// history. It keeps nothing in memory: a long run has millions of ops, and the checker reads them back
// one at a time.
type History struct {
	start time.Time
	mu    sync.Mutex
	w     *bufio.Writer
	f     *os.File
	err   error
}

// NewHistory starts a history at start, written to path.
func NewHistory(start time.Time, path string) (*History, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &History{start: start, f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
}

// Since is t in seconds since the run started.
func (h *History) Since(t time.Time) float64 { return t.Sub(h.start).Seconds() }

// Now is the current time in seconds since the run started.
func (h *History) Now() float64 { return h.Since(time.Now()) }

// Add stamps op with the current time unless it has one, and records it.
func (h *History) Add(op Op) {
	if op.T == 0 {
		op.T = h.Now()
	}
	b, err := json.Marshal(op)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil || h.err != nil {
		return
	}
	if err == nil {
		_, err = h.w.Write(append(b, '\n'))
	}
	h.err = err
}

// Close flushes the file.
func (h *History) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return h.err
	}
	err := h.err
	if ferr := h.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := h.f.Close(); err == nil {
		err = cerr
	}
	h.f, h.w = nil, nil
	return err
}

// ScanHistory calls fn with each op of a history written by History, in order.
func ScanHistory(r io.Reader, fn func(Op)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var op Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			return fmt.Errorf("history line %d: %w", line, err)
		}
		fn(op)
	}
	return sc.Err()
}
