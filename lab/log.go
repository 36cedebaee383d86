package lab

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/consumer"
)

// Event types the lab adds to the consumers' own (consumer.EventType's
// names: registered, joined, rebalance-started, ...).
const (
	TypePhase       = "phase"        // Note: warm-up, scenario, drain, done, aborted
	TypeMarker      = "marker"       // a scenario action; Note: join, leave, kill, restart, stall, return, ...
	TypeProcessed   = "processed"    // the member processed record Offset of Partitions[0]
	TypeStats       = "stats"        // the member's counters; Note: baseline or final
	TypeStartOffset = "start-offset" // the mode's first offset of Partitions[0]
	TypeEndOffset   = "end-offset"   // the mode's end offset of Partitions[0] after producing stopped
	// TypeCoordinator is the group's coordinator, Broker, as FindCoordinator
	// answers the lab: logged at the start and at each change (coordinator
	// modes of scenarios that kill brokers).
	TypeCoordinator = "coordinator"
	TypeBrokerDown  = "broker-down" // the cluster's metadata no longer lists Broker (its ZooKeeper session expired)
	TypeBrokerUp    = "broker-up"   // the cluster's metadata lists Broker again
)

// Phases of a mode's run.
const (
	PhaseWarmUp   = "warm-up"
	PhaseScenario = "scenario"
	PhaseDrain    = "drain"
	PhaseDone     = "done"
	PhaseAborted  = "aborted"
)

// Markers: what the scenario did to a member.
const (
	MarkJoin    = "join"    // a member started
	MarkLeave   = "leave"   // a member closed gracefully
	MarkKill    = "kill"    // a member was killed (no commit, no goodbye)
	MarkRestart = "restart" // a member closed and started again
	MarkStall   = "stall"   // a member's processing stalled
	MarkReturn  = "return"  // the stall ended
	MarkExpire  = "expire"  // a legacy member's ZooKeeper session was expired
	MarkCut     = "cut"     // a member's requests to Kafka fail for a while
	// MarkKillBroker and MarkRestartBroker act on Broker, not on a member.
	MarkKillBroker    = "kill-broker"    // a broker was killed (kill -9)
	MarkRestartBroker = "restart-broker" // the killed broker was started again
)

// Event is one line of a run's log: a consumer's event or the lab's own.
type Event struct {
	T          float64         `json:"t"` // seconds since the run started
	Mode       string          `json:"mode"`
	Member     string          `json:"member,omitempty"`
	Type       string          `json:"type"`
	Partitions []int32         `json:"partitions,omitempty"`
	Generation int32           `json:"generation,omitempty"`
	Offset     int64           `json:"offset,omitempty"`
	Key        string          `json:"key,omitempty"`
	Count      int             `json:"count,omitempty"`
	Broker     *int32          `json:"broker,omitempty"` // the broker a broker marker or event names (0 is a broker id)
	Err        string          `json:"err,omitempty"`
	Fenced     bool            `json:"fenced,omitempty"`   // a commit refused: the member was no longer in the generation
	Conflict   bool            `json:"conflict,omitempty"` // a legacy attempt that found a partition owned by another
	Note       string          `json:"note,omitempty"`
	Stats      *consumer.Stats `json:"stats,omitempty"`
}

// WriteJSONLines writes events one JSON object a line.
func WriteJSONLines(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadJSONLines reads what WriteJSONLines wrote.
func ReadJSONLines(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("event log line %d: %w", line, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// csvHeader names the CSV columns; partitions are space-separated and the
// stats columns are empty except on stats rows.
var csvHeader = []string{
	"t", "mode", "member", "type", "partitions", "generation", "offset", "key", "count", "err", "fenced", "conflict", "note", "broker",
	"zk_watch_notifications", "zk_reads", "zk_writes", "join_group", "sync_group", "heartbeat", "rebalances", "records_delivered",
}

// WriteCSV writes events as CSV with a header, for spreadsheets and plotting
// tools.
func WriteCSV(w io.Writer, events []Event) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, e := range events {
		ps := make([]string, len(e.Partitions))
		for i, p := range e.Partitions {
			ps[i] = strconv.Itoa(int(p))
		}
		row := []string{
			strconv.FormatFloat(e.T, 'f', 6, 64), e.Mode, e.Member, e.Type, strings.Join(ps, " "),
			strconv.Itoa(int(e.Generation)), strconv.FormatInt(e.Offset, 10), e.Key, strconv.Itoa(e.Count), e.Err,
			strconv.FormatBool(e.Fenced), strconv.FormatBool(e.Conflict), e.Note, "",
		}
		if e.Broker != nil {
			row[13] = strconv.Itoa(int(*e.Broker))
		}
		if s := e.Stats; s != nil {
			for _, v := range []int64{s.ZKWatchNotifications, s.ZKReads, s.ZKWrites, s.JoinGroupRequests, s.SyncGroupRequests, s.HeartbeatRequests, s.Rebalances, s.RecordsDelivered} {
				row = append(row, strconv.FormatInt(v, 10))
			}
		} else {
			row = append(row, make([]string, 8)...)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// label names a marker in the pictures: the action and whom it acted on.
func (e Event) label() string {
	if e.Broker != nil {
		return fmt.Sprintf("%s %d", e.Note, *e.Broker)
	}
	return e.Note + " " + e.Member
}
