package chaos

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/pace"
	"github.com/zkafka/zkafka/wire"
)

// The network fuzzer of `zkafka chaos fuzz`: connections that send brokers valid requests of every
// API they advertise, the same requests corrupted, headers and frame sizes that lie, and random
// bytes, while a producer keeps writing. A broker must answer what it can, close the connections it
// cannot trust, keep serving everyone else, and keep its memory bounded.
//
// Requests whose valid form changes the cluster for anyone who asks (Kafka 2.8 without an
// authorizer obeys them: creating and deleting topics, partitions and records, configs,
// reassignments, elections, controlled shutdown, deleting groups and offsets, the controller's
// LeaderAndIsr, StopReplica and UpdateMetadata at the current controller epoch, transaction
// markers) are sent only with a lying header or frame, never as valid or corrupted bodies: the
// fuzzer tests bad input, not what an unauthenticated admin or a forged controller may do.

// Kinds of fuzzed requests.
const (
	FuzzValid   = "valid"   // a well-formed request of an advertised API and version
	FuzzMutated = "mutated" // the same with bytes flipped, fields overwritten with extremes, cut or extended
	FuzzHeader  = "header"  // a valid body under an unknown API key, an unadvertised version or a lying client id length
	FuzzFrame   = "frame"   // a size prefix that lies: negative, past the broker's limit, or longer than what follows
	FuzzRandom  = "random"  // random bytes in a well-sized frame
)

// FuzzKinds are the kinds in the order the report lists them.
var FuzzKinds = []string{FuzzValid, FuzzMutated, FuzzHeader, FuzzFrame, FuzzRandom}

// fuzzExcluded are the API keys sent only with a lying header or frame (see above).
var fuzzExcluded = []int16{
	4,  // LeaderAndIsr
	5,  // StopReplica
	6,  // UpdateMetadata
	7,  // ControlledShutdown
	19, // CreateTopics
	20, // DeleteTopics
	21, // DeleteRecords
	27, // WriteTxnMarkers
	33, // AlterConfigs
	37, // CreatePartitions
	42, // DeleteGroups
	43, // ElectLeaders
	44, // IncrementalAlterConfigs
	45, // AlterPartitionReassignments
	47, // OffsetDelete
}

// FuzzOptions say what to fuzz and how much.
type FuzzOptions struct {
	Bootstrap   []string // brokers; each connection goes to one of them
	Connections int      // connections to open in all
	Concurrency int      // connections open at once
	PerConn     int      // requests a connection sends before it is closed (fewer if the broker closes it)
	Seed        uint64   // 0: from the time
	// ReadTimeout is how long a connection waits for each answer; a request Kafka does not answer
	// (acks=0) or a frame the broker waits to complete times out.
	ReadTimeout time.Duration
	Topic       string   // the producer's topic, created with 3 partitions and the brokers' default replication
	Rate        int      // records per second the producer sends (acks=all, idempotent)
	PIDs        []int    // broker processes whose resident memory is reported before and after
	Logs        []string // broker log files in which recovered handler panics are counted
	Progress    io.Writer
}

// DefaultFuzzOptions are `zkafka chaos fuzz`'s defaults.
func DefaultFuzzOptions() FuzzOptions {
	return FuzzOptions{Connections: 2000, Concurrency: 32, PerConn: 8, ReadTimeout: time.Second, Rate: 50}
}

// FuzzReport is what a fuzz run did and what the brokers did with it.
type FuzzReport struct {
	Seed              uint64           `json:"seed"`
	Duration          time.Duration    `json:"duration_ns"`
	Connections       int64            `json:"connections"`
	Requests          map[string]int64 `json:"requests"` // per kind
	Answered          int64            `json:"answered"`
	ClosedByBroker    int64            `json:"closed_by_broker"`
	Unanswered        int64            `json:"unanswered"` // waited ReadTimeout for nothing
	Produced          int64            `json:"produced"`
	ProduceFailed     int64            `json:"produce_failed"`
	FirstProduceError string           `json:"first_produce_error,omitempty"`
	RSSBefore         []int64          `json:"rss_before_bytes,omitempty"` // per PIDs entry
	RSSAfter          []int64          `json:"rss_after_bytes,omitempty"`
	Panics            int              `json:"handler_panics"`        // new "Request handler panicked" lines in Logs
	Unreachable       []string         `json:"unreachable,omitempty"` // brokers that did not answer ApiVersions after the run
}

// Verdict is PASS when every broker still answers, none logged a handler panic and the producer
// lost nothing.
func (r *FuzzReport) Verdict() string {
	if len(r.Unreachable) == 0 && r.Panics == 0 && r.ProduceFailed == 0 && r.Produced > 0 {
		return "PASS"
	}
	return "FAIL"
}

// TotalRequests is the sum over kinds.
func (r *FuzzReport) TotalRequests() int64 {
	var n int64
	for _, v := range r.Requests {
		n += v
	}
	return n
}

// WriteTable prints the report: the requests per kind, the brokers' answers, memory, and a last
// line `connections=N requests=M answered=A closed=C unanswered=U produced=P produce-failed=F
// panics=X verdict=PASS|FAIL`.
func (r *FuzzReport) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%-8s %10s\n", "KIND", "REQUESTS")
	for _, k := range FuzzKinds {
		fmt.Fprintf(w, "%-8s %10d\n", k, r.Requests[k])
	}
	fmt.Fprintf(w, "\n%d connections in %v (seed %d): %d answered, %d closed by the broker, %d unanswered after the read timeout\n",
		r.Connections, r.Duration.Round(100*time.Millisecond), r.Seed, r.Answered, r.ClosedByBroker, r.Unanswered)
	for i := range r.RSSBefore {
		fmt.Fprintf(w, "broker process %d: resident memory %.1f MiB before, %.1f MiB after\n", i+1, mib(r.RSSBefore[i]), mib(r.RSSAfter[i]))
	}
	fmt.Fprintf(w, "producer (acks=all, idempotent): %d acknowledged, %d failed%s\n", r.Produced, r.ProduceFailed, suffix(r.FirstProduceError))
	for _, b := range r.Unreachable {
		fmt.Fprintf(w, "broker %s does not answer ApiVersions after the run\n", b)
	}
	if r.Panics > 0 {
		fmt.Fprintf(w, "%d request handler panics in the broker logs\n", r.Panics)
	}
	fmt.Fprintf(w, "connections=%d requests=%d answered=%d closed=%d unanswered=%d produced=%d produce-failed=%d panics=%d verdict=%s\n",
		r.Connections, r.TotalRequests(), r.Answered, r.ClosedByBroker, r.Unanswered, r.Produced, r.ProduceFailed, r.Panics, r.Verdict())
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func suffix(err string) string {
	if err == "" {
		return ""
	}
	return " (first: " + err + ")"
}

// apiRange is an advertised API and its versions.
type apiRange struct{ key, min, max int16 }

// fuzzTargets are the APIs a fuzz run sends: all those advertised, and those whose bodies it may
// fill or corrupt (all but fuzzExcluded).
type fuzzTargets struct{ all, body []apiRange }

// Fuzz runs the fuzzer until o.Connections connections have been used or ctx ends.
func Fuzz(ctx context.Context, o FuzzOptions) (*FuzzReport, error) {
	if len(o.Bootstrap) == 0 || o.Connections <= 0 || o.Concurrency <= 0 || o.PerConn <= 0 || o.ReadTimeout <= 0 || o.Topic == "" {
		return nil, errors.New("fuzz: bootstrap, connections, concurrency, requests per connection, read timeout and topic are all required")
	}
	if o.Rate < 1 || o.Rate > 10000 {
		return nil, fmt.Errorf("fuzz: a producer rate of %d records/s is not between 1 and 10000", o.Rate)
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	all, err := advertised(ctx, o.Bootstrap[0])
	if err != nil {
		return nil, err
	}
	apis := fuzzTargets{all: all, body: slices.DeleteFunc(slices.Clone(all), func(a apiRange) bool { return slices.Contains(fuzzExcluded, a.key) })}
	rep := &FuzzReport{Seed: o.Seed, Requests: map[string]int64{}}
	for _, pid := range o.PIDs {
		rep.RSSBefore = append(rep.RSSBefore, residentBytes(pid))
	}
	panicsBefore := countPanics(o.Logs)

	pctx, stopProducer := context.WithCancel(ctx)
	prod, err := startFuzzProducer(pctx, o)
	if err != nil {
		stopProducer()
		return nil, err
	}
	start := time.Now()
	var st fuzzStats
	stopProgress := pace.Progress(o.Progress, 250*time.Millisecond, func() string {
		return fmt.Sprintf("fuzz: %d/%d connections, %d requests, %d answered, %d closed by the broker, %d produced   ",
			st.connections.Load(), o.Connections, st.requests(), st.answered.Load(), st.closed.Load(), prod.acked.Load())
	})
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for w := range o.Concurrency {
		rng := rand.New(rand.NewPCG(o.Seed, uint64(w)))
		wg.Go(func() {
			for ctx.Err() == nil && next.Add(1) <= int64(o.Connections) {
				fuzzConnection(ctx, o, apis, rng, &st)
			}
		})
	}
	wg.Wait()
	stopProgress()
	stopProducer()
	prod.wait()
	rep.Duration = time.Since(start)
	rep.Connections = st.connections.Load()
	for i, k := range FuzzKinds {
		rep.Requests[k] = st.sent[i].Load()
	}
	rep.Answered, rep.ClosedByBroker, rep.Unanswered = st.answered.Load(), st.closed.Load(), st.unanswered.Load()
	rep.Produced, rep.ProduceFailed = prod.acked.Load(), prod.failed.Load()
	if e := prod.firstErr.Load(); e != nil {
		rep.FirstProduceError = *e
	}
	for _, pid := range o.PIDs {
		rep.RSSAfter = append(rep.RSSAfter, residentBytes(pid))
	}
	rep.Panics = countPanics(o.Logs) - panicsBefore
	for _, b := range o.Bootstrap {
		if _, err := advertised(ctx, b); err != nil {
			rep.Unreachable = append(rep.Unreachable, b)
		}
	}
	return rep, ctx.Err()
}

// advertised asks a broker for its ApiVersions.
func advertised(ctx context.Context, addr string) ([]apiRange, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cl, err := wire.Dial(ctx, addr, "zkafka-chaos-fuzz")
	if err != nil {
		return nil, fmt.Errorf("fuzz: %s: %w", addr, err)
	}
	defer cl.Close()
	resp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		return nil, fmt.Errorf("fuzz: ApiVersions of %s: %w", addr, err)
	}
	var out []apiRange
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		if kmsg.RequestForKey(k.ApiKey) != nil {
			out = append(out, apiRange{k.ApiKey, k.MinVersion, k.MaxVersion})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fuzz: %s advertises no API", addr)
	}
	return out, nil
}

type fuzzStats struct {
	connections, answered, closed, unanswered atomic.Int64
	sent                                      [5]atomic.Int64 // per FuzzKinds index
}

func (s *fuzzStats) requests() int64 {
	var n int64
	for i := range s.sent {
		n += s.sent[i].Load()
	}
	return n
}

// fuzzConnection opens one connection and sends up to o.PerConn fuzzed requests on it, each
// followed by a read of the answer; it ends early when the broker closes it or does not answer.
func fuzzConnection(ctx context.Context, o FuzzOptions, apis fuzzTargets, rng *rand.Rand, st *fuzzStats) {
	addr := o.Bootstrap[rng.IntN(len(o.Bootstrap))]
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return
	}
	defer conn.Close()
	st.connections.Add(1)
	for i := range o.PerConn {
		kind := rng.IntN(len(FuzzKinds))
		frame, complete := fuzzFrame(rng, apis, FuzzKinds[kind], o.Topic, int32(i))
		st.sent[kind].Add(1)
		if err := conn.SetDeadline(time.Now().Add(o.ReadTimeout)); err != nil {
			return
		}
		if _, err := conn.Write(frame); err != nil {
			st.closed.Add(1)
			return
		}
		if !complete {
			// The broker closes a frame it will not read, or waits for the rest until the
			// deadline; either way this connection is done.
			awaitClose(conn, st)
			return
		}
		if _, err := wire.ReadFrame(conn, 64<<20); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				st.unanswered.Add(1)
			} else {
				st.closed.Add(1)
			}
			return
		}
		st.answered.Add(1)
	}
}

// awaitClose reads until the broker closes the connection or the deadline passes.
func awaitClose(conn net.Conn, st *fuzzStats) {
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		st.unanswered.Add(1)
		return
	}
	st.closed.Add(1)
}

// fuzzFrame builds one request of a kind; complete is false when the frame's size prefix claims
// more bytes than follow, so no answer can come.
func fuzzFrame(rng *rand.Rand, apis fuzzTargets, kind, topic string, corrID int32) (frame []byte, complete bool) {
	pick := func(from []apiRange) []byte {
		a := from[rng.IntN(len(from))]
		req := kmsg.RequestForKey(a.key)
		if rng.IntN(2) == 0 {
			fill(rng, reflect.ValueOf(req).Elem(), topic, 0)
		}
		req.SetVersion(a.min + int16(rng.IntN(int(a.max-a.min)+1)))
		return wire.AppendRequest(nil, corrID, "zkafka-chaos-fuzz", req)
	}
	switch kind {
	case FuzzValid:
		return pick(apis.body), true
	case FuzzMutated:
		return resize(mutate(rng, pick(apis.body))), true
	case FuzzHeader:
		switch rng.IntN(3) {
		case 0: // an API key nobody has
			f := pick(apis.all)
			binary.BigEndian.PutUint16(f[4:], uint16(1000+rng.IntN(30000)))
			return f, true
		case 1: // a version past the advertised range
			f := pick(apis.all)
			binary.BigEndian.PutUint16(f[6:], uint16(int16(binary.BigEndian.Uint16(f[6:]))+100+int16(rng.IntN(1000))))
			return f, true
		default: // a client id length that lies, so the body is parsed from the wrong place
			f := pick(apis.body)
			binary.BigEndian.PutUint16(f[12:], uint16([]int16{-2, 0, 0x7fff, int16(len(f))}[rng.IntN(4)]))
			return f, true
		}
	case FuzzFrame:
		f := pick(apis.all)
		switch rng.IntN(3) {
		case 0:
			binary.BigEndian.PutUint32(f, uint32(int32(-1-rng.IntN(1<<20))))
		case 1:
			binary.BigEndian.PutUint32(f, uint32(1<<30+rng.IntN(1<<30)))
		default:
			binary.BigEndian.PutUint32(f, uint32(len(f)-4+1+rng.IntN(1<<16)))
		}
		return f, false
	default: // FuzzRandom
		body := make([]byte, rng.IntN(512))
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		return resize(append(make([]byte, 4), body...)), true
	}
}

// fill gives a kmsg request (or a part of one) values a hostile or broken client might send, so
// that requests reach the handlers' logic and not only the parser: names of real topics and bad
// ones, ids and sizes at the extremes, arrays of a few elements. Version fields are left for
// SetVersion and tags empty.
func fill(rng *rand.Rand, v reflect.Value, topic string, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[kmsg.Tags]() {
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && !(depth == 0 && f.Name == "Version") {
				fill(rng, v.Field(i), topic, depth+1)
			}
		}
	case reflect.Pointer:
		if rng.IntN(4) == 0 || depth > 6 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), topic, depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rng.IntN(96))
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			v.SetBytes(b)
			return
		}
		n := rng.IntN(4)
		if depth > 6 {
			n = 0
		}
		sl := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(rng, sl.Index(i), topic, depth+1)
		}
		v.Set(sl)
	case reflect.Array:
		for i := range v.Len() {
			fill(rng, v.Index(i), topic, depth+1)
		}
	case reflect.String:
		v.SetString(fuzzStrings(topic)[rng.IntN(len(fuzzStrings(topic)))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		choices := []int64{0, 1, -1, 2, int64(rng.IntN(10)), 1<<(bits-1) - 1, -1 << (bits - 1)}
		v.SetInt(choices[rng.IntN(len(choices))])
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rng.Uint64() >> (64 - v.Type().Bits()))
	case reflect.Float64:
		v.SetFloat([]float64{0, -1, 1e308}[rng.IntN(3)])
	}
}

// fuzzStrings are the strings fill chooses from.
func fuzzStrings(topic string) []string {
	return []string{topic, "__consumer_offsets", "__transaction_state", "", "fuzz-group", "../../x", "a/b",
		strings.Repeat("x", 300), "\x00\xff", "TOPIC.with_dots"}
}

// mutate corrupts the frame after its size prefix: bytes flipped, a 16- or 32-bit field
// overwritten with an extreme (array lengths and sizes are where parsers trust input), the frame
// cut short, or random bytes appended.
func mutate(rng *rand.Rand, f []byte) []byte {
	extremes32 := []uint32{0, 0x7fffffff, 0xffffffff, 0x80000000, 0x00010000}
	extremes16 := []uint16{0, 0x7fff, 0xffff, 0x8000}
	for range 1 + rng.IntN(4) {
		if len(f) <= 8 {
			break
		}
		at := 4 + rng.IntN(len(f)-4)
		switch rng.IntN(5) {
		case 0:
			f[at] ^= byte(1 + rng.IntN(255))
		case 1:
			if at+4 <= len(f) {
				binary.BigEndian.PutUint32(f[at:], extremes32[rng.IntN(len(extremes32))])
			}
		case 2:
			if at+2 <= len(f) {
				binary.BigEndian.PutUint16(f[at:], extremes16[rng.IntN(len(extremes16))])
			}
		case 3:
			f = f[:at]
		default:
			extra := make([]byte, 1+rng.IntN(64))
			for i := range extra {
				extra[i] = byte(rng.Uint32())
			}
			f = append(f, extra...)
		}
	}
	return f
}

// resize writes the frame's true size into its prefix.
func resize(f []byte) []byte {
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	return f
}

// fuzzProducer writes to the fuzz topic while the attack runs.
type fuzzProducer struct {
	cl       *kgo.Client
	acked    atomic.Int64
	failed   atomic.Int64
	firstErr atomic.Pointer[string]
	done     chan struct{}
}

func startFuzzProducer(ctx context.Context, o FuzzOptions) (*fuzzProducer, error) {
	// A record not acknowledged within the delivery timeout fails (and fails the run) instead of
	// being retried for ever.
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.Bootstrap...), kgo.DefaultProduceTopic(o.Topic), kgo.ClientID("zkafka-chaos-fuzz-producer"),
		kgo.RecordDeliveryTimeout(time.Minute))
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(cctx, 3, -1, nil, o.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		cl.Close()
		return nil, fmt.Errorf("fuzz: create %s: %w", o.Topic, err)
	}
	p := &fuzzProducer{cl: cl, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var inflight sync.WaitGroup
		t := time.NewTicker(time.Second / time.Duration(o.Rate))
		defer t.Stop()
		for seq := 0; ; seq++ {
			select {
			case <-ctx.Done():
				inflight.Wait()
				return
			case <-t.C:
			}
			inflight.Add(1)
			// The producer's own context: records sent before the attack ends are awaited.
			cl.Produce(context.Background(), kgo.StringRecord(strconv.Itoa(seq)), func(_ *kgo.Record, err error) {
				defer inflight.Done()
				if err != nil {
					if p.failed.Add(1) == 1 {
						s := err.Error()
						p.firstErr.Store(&s)
					}
					return
				}
				p.acked.Add(1)
			})
		}
	}()
	return p, nil
}

func (p *fuzzProducer) wait() {
	<-p.done
	p.cl.Close()
}

// residentBytes is a process's resident set size (VmRSS), 0 when it cannot be read.
func residentBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// handlerPanic is what the broker's listener logs when it recovers a handler's panic.
const handlerPanic = "Request handler panicked"

// countPanics counts handlerPanic lines in the files (missing ones count none).
func countPanics(files []string) int {
	n := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		n += bytes.Count(b, []byte(handlerPanic))
	}
	return n
}
