package bench

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every kgo client and kfake cluster a run starts must be stopped by the time it returns.
	goleak.VerifyTestMain(m)
}

// testRecords keeps each run well under a second on a shared 2-core machine.
const testRecords = 2000

func newCluster(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(kversion.V2_8_0()))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// storedRecords counts the records the cluster holds for topic, independently of the run.
func storedRecords(t *testing.T, c *kfake.Cluster, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(testContext(t, 5*time.Second), topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

func checkResult(t *testing.T, res Result, target string, records, size int) {
	t.Helper()
	if res.Target != target {
		t.Errorf("Target = %q, want %q", res.Target, target)
	}
	if res.Records != records {
		t.Errorf("Records = %d, want %d", res.Records, records)
	}
	if want := int64(records) * int64(size); res.Bytes != want {
		t.Errorf("Bytes = %d, want %d", res.Bytes, want)
	}
	if res.ProduceDuration <= 0 || res.ConsumeDuration <= 0 {
		t.Errorf("durations produce %v consume %v, want both positive", res.ProduceDuration, res.ConsumeDuration)
	}
	for name, rate := range map[string]float64{
		"ProduceRecordsPerSec": res.ProduceRecordsPerSec, "ProduceMBPerSec": res.ProduceMBPerSec,
		"ConsumeRecordsPerSec": res.ConsumeRecordsPerSec, "ConsumeMBPerSec": res.ConsumeMBPerSec,
	} {
		if rate <= 0 {
			t.Errorf("%s = %v, want > 0", name, rate)
		}
	}
	if got, want := res.ProduceMBPerSec, res.ProduceRecordsPerSec*float64(size)/1e6; !near(got, want) {
		t.Errorf("ProduceMBPerSec = %v, want %v (rec/s × size)", got, want)
	}
	if res.P50 <= 0 || res.P99 < res.P50 || res.P99 > res.ProduceDuration {
		t.Errorf("latency p50 %v p99 %v (produce took %v), want 0 < p50 ≤ p99 ≤ duration", res.P50, res.P99, res.ProduceDuration)
	}
}

func near(a, b float64) bool { return a > b*0.999 && a < b*1.001 }

func TestRunAgainstKfake(t *testing.T) {
	loads := []Options{
		{Acks: "all", Compression: "none"},
		{Acks: "1", Compression: "lz4", Linger: time.Millisecond},
		{Acks: "0", Compression: "zstd", RecordSize: 37},
		{Acks: "all", Compression: "snappy", Idempotent: true},
		{Acks: "all", Compression: "gzip", Partitions: 1},
	}
	for _, load := range loads {
		t.Run(load.Acks+"-"+load.Compression, func(t *testing.T) {
			c := newCluster(t)
			opts := load
			opts.Brokers = c.ListenAddrs()
			opts.Topic = "bench-test"
			opts.Records = testRecords
			if opts.Partitions == 0 {
				opts.Partitions = 3
			}
			var log bytes.Buffer
			res, err := Run(testContext(t, 8*time.Second), opts, &log)
			if err != nil {
				t.Fatalf("Run: %v\nlog:\n%s", err, &log)
			}
			size := opts.RecordSize
			if size == 0 {
				size = DefaultRecordSize
			}
			checkResult(t, res, strings.Join(opts.Brokers, ","), testRecords, size)
			if got := storedRecords(t, c, opts.Topic); got != testRecords {
				t.Errorf("cluster holds %d records, want %d", got, testRecords)
			}
			if !strings.Contains(log.String(), "created topic") {
				t.Errorf("log lacks the topic creation:\n%s", &log)
			}
		})
	}
}

func TestRunReusesExistingTopic(t *testing.T) {
	c := newCluster(t)
	ctx := testContext(t, 8*time.Second)
	opts := Options{Brokers: c.ListenAddrs(), Topic: "reused", Records: testRecords, Partitions: 2}
	if _, err := Run(ctx, opts, nil); err != nil {
		t.Fatalf("first Run: %v", err)
	}
	// A second run with other-sized values must read only its own records:
	// reading the first run's values would fail the byte check.
	opts.RecordSize = 10
	var log bytes.Buffer
	res, err := Run(ctx, opts, &log)
	if err != nil {
		t.Fatalf("second Run: %v\nlog:\n%s", err, &log)
	}
	checkResult(t, res, strings.Join(opts.Brokers, ","), testRecords, 10)
	if got := storedRecords(t, c, opts.Topic); got != 2*testRecords {
		t.Errorf("cluster holds %d records, want %d", got, 2*testRecords)
	}
	if !strings.Contains(log.String(), "reusing existing topic") {
		t.Errorf("log does not mention the reused topic:\n%s", &log)
	}
	if strings.Contains(log.String(), "more records than produced") {
		t.Errorf("second run read records it did not produce:\n%s", &log)
	}
}

func TestRunProduceErrorAborts(t *testing.T) {
	c := newCluster(t)
	// Larger than kgo's default batch limit, so every record fails.
	opts := Options{Brokers: c.ListenAddrs(), Records: 5, RecordSize: 2 << 20, Partitions: 1}
	_, err := Run(testContext(t, 8*time.Second), opts, nil)
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("Run error = %v, want MESSAGE_TOO_LARGE", err)
	}
	if !strings.Contains(err.Error(), "produce aborted after 0 of 5 records") {
		t.Errorf("error %q does not say how far produce got", err)
	}
}

func TestRunFailsWhenRecordsDoNotArrive(t *testing.T) {
	c := newCluster(t)
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, errors.New("fetch dropped by test"), true // closes the connection
	})
	opts := Options{Brokers: c.ListenAddrs(), Records: 100, Partitions: 1}
	_, err := Run(testContext(t, 1500*time.Millisecond), opts, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run error = %v, want deadline exceeded", err)
	}
	if !strings.Contains(err.Error(), "consumed 0 of 100 records") {
		t.Errorf("error %q does not report the shortfall", err)
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, "no bootstrap brokers"},
		{Options{Brokers: []string{"x:1"}, Acks: "2"}, "acks must be 0, 1 or all"},
		{Options{Brokers: []string{"x:1"}, Compression: "brotli"}, "compression must be"},
		{Options{Brokers: []string{"x:1"}, Acks: "1", Idempotent: true}, "idempotent produce requires acks=all"},
		{Options{Brokers: []string{"x:1"}, Records: -1}, "records must be positive"},
	} {
		_, err := Run(t.Context(), tc.opts, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) error = %v, want it to contain %q", tc.opts, err, tc.want)
		}
	}
}

func TestPayloadsAreIncompressible(t *testing.T) {
	const records, size = 10000, 100
	p := newPayloads(records, size, false)
	var all bytes.Buffer
	for i := range records {
		v := p.value(i)
		if len(v) != size {
			t.Fatalf("value %d has %d bytes, want %d", i, len(v), size)
		}
		all.Write(v)
	}
	var compressed bytes.Buffer
	w, _ := flate.NewWriter(&compressed, flate.BestCompression)
	w.Write(all.Bytes())
	w.Close()
	if compressed.Len() < all.Len()*99/100 {
		t.Errorf("%d value bytes deflate to %d; want incompressible", all.Len(), compressed.Len())
	}
}

// TestCompressiblePayloads are text that deflates to under a half, and
// still differ from one record to the next.
func TestCompressiblePayloads(t *testing.T) {
	const records, size = 10000, 100
	p := newPayloads(records, size, true)
	var all bytes.Buffer
	for i := range records {
		all.Write(p.value(i))
	}
	if bytes.Equal(p.value(0), p.value(1)) {
		t.Error("consecutive values are equal")
	}
	var compressed bytes.Buffer
	w, _ := flate.NewWriter(&compressed, flate.DefaultCompression)
	w.Write(all.Bytes())
	w.Close()
	if compressed.Len() > all.Len()/2 {
		t.Errorf("%d value bytes deflate to %d; want under a half", all.Len(), compressed.Len())
	}
	if !bytes.HasPrefix(all.Bytes(), []byte(`"`)) || bytes.IndexByte(all.Bytes(), 0) >= 0 {
		t.Errorf("values are not the text runs: %q", all.Bytes()[:40])
	}
}

func TestPayloadsWrapInsideLargePool(t *testing.T) {
	p := newPayloads(1<<20, 1000, false) // 1 GB of values from a bounded pool
	if len(p.pool) != maxPoolBytes {
		t.Fatalf("pool holds %d bytes, want %d", len(p.pool), maxPoolBytes)
	}
	for _, i := range []int{0, 1, maxPoolBytes / 1000, 1<<20 - 1} {
		if v := p.value(i); len(v) != 1000 {
			t.Errorf("value %d has %d bytes", i, len(v))
		}
	}
	if bytes.Equal(p.value(0), p.value(1)) {
		t.Error("consecutive values are equal")
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, ms(i))
	}
	for _, tc := range []struct {
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{nil, 0.5, 0},
		{[]time.Duration{ms(7)}, 0.99, ms(7)},
		{hundred, 0.50, ms(50)},
		{hundred, 0.99, ms(99)},
		{hundred, 1, ms(100)},
		{[]time.Duration{ms(1), ms(2), ms(3)}, 0.5, ms(2)},
	} {
		if got := percentile(tc.sorted, tc.q); got != tc.want {
			t.Errorf("percentile(%d values, %v) = %v, want %v", len(tc.sorted), tc.q, got, tc.want)
		}
	}
}

// TestRunPacedByRate holds the producer to --rate: record i is not sent
// more than the pacer's millisecond of slack before i/rate seconds, so the
// run cannot be faster than that (it may be slower on a loaded machine), and
// every record still arrives.
func TestRunPacedByRate(t *testing.T) {
	c := newCluster(t)
	const rate = 4000
	opts := Options{Brokers: c.ListenAddrs(), Topic: "paced", Records: testRecords, Partitions: 3, Rate: rate}
	var log bytes.Buffer
	res, err := Run(testContext(t, 8*time.Second), opts, &log)
	if err != nil {
		t.Fatalf("Run: %v\nlog:\n%s", err, &log)
	}
	if floor := pacedFloor(testRecords, rate); res.ProduceDuration < floor {
		t.Errorf("%d records at %d/s produced in %v, faster than the %v the rate allows", testRecords, rate, res.ProduceDuration, floor)
	}
	checkResult(t, res, strings.Join(opts.Brokers, ","), testRecords, DefaultRecordSize)
}

// pacedFloor is the least time records take at rate: the last is due
// (records-1)/rate seconds after the first, and the pacer sends a record
// early by up to a millisecond rather than set a timer for less.
func pacedFloor(records, rate int) time.Duration {
	return time.Duration(records-1)*time.Second/time.Duration(rate) - time.Millisecond
}

func TestMedianResult(t *testing.T) {
	rs := []Result{
		{Records: 5, ProduceRecordsPerSec: 30, P99: 3 * time.Millisecond, E2EP50: 9},
		{Records: 5, ProduceRecordsPerSec: 10, P99: 1 * time.Millisecond, E2EP50: 7},
		{Records: 5, ProduceRecordsPerSec: 20, P99: 8 * time.Millisecond, E2EP50: 1},
	}
	m := medianResult(rs)
	if m.Records != 5 || m.ProduceRecordsPerSec != 20 || m.P99 != 3*time.Millisecond || m.E2EP50 != 7 {
		t.Errorf("median of three = %+v, want each figure's middle value", m)
	}
	m = medianResult(rs[:2])
	if m.ProduceRecordsPerSec != 20 || m.P99 != 2*time.Millisecond {
		t.Errorf("median of two = %+v, want the mean of the two", m)
	}
}

// TestRunEndToEnd measures latency from enqueue to consumption at a rate,
// on an existing topic too (the consumer starts at its end).
func TestRunEndToEnd(t *testing.T) {
	c := newCluster(t)
	for _, topic := range []string{"e2e", "e2e"} {
		res, err := RunAgainst(testContext(t, 30*time.Second), Options{Mode: ModeE2E, Topic: topic, Records: testRecords, Rate: 10000},
			nil, "kfake", c.ListenAddrs())
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.E2EP50 <= 0 || res.E2EP99 < res.E2EP50 || res.E2EP999 < res.E2EP99 || res.E2EMax < res.E2EP999 || res.E2EMax > res.ProduceDuration {
			t.Errorf("latencies p50 %v p99 %v p99.9 %v max %v over %v, want 0 < p50 ≤ p99 ≤ p99.9 ≤ max ≤ the run",
				res.E2EP50, res.E2EP99, res.E2EP999, res.E2EMax, res.ProduceDuration)
		}
		if res.ProduceDuration < pacedFloor(testRecords, 10000) {
			t.Errorf("run took %v, faster than its rate allows", res.ProduceDuration)
		}
		if res.ConsumeRecordsPerSec != 0 || res.P50 != 0 {
			t.Errorf("an end-to-end run reported produce latency %v or a consume rate %v", res.P50, res.ConsumeRecordsPerSec)
		}
	}
	// The warm-up record of each run, and every timed one.
	if n := storedRecords(t, c, "e2e"); n != 2*(testRecords+1) {
		t.Errorf("topic holds %d records, want %d", n, 2*(testRecords+1))
	}
}

// TestRunProduceOnly does not read the records back.
func TestRunProduceOnly(t *testing.T) {
	c := newCluster(t)
	res, err := RunAgainst(testContext(t, 30*time.Second), Options{Mode: ModeProduce, Topic: "p", Records: testRecords}, nil, "kfake", c.ListenAddrs())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ProduceRecordsPerSec <= 0 || res.ConsumeDuration != 0 || res.ConsumeRecordsPerSec != 0 {
		t.Errorf("produce-only run: produce %v rec/s, consume %v in %v; want produce only", res.ProduceRecordsPerSec, res.ConsumeRecordsPerSec, res.ConsumeDuration)
	}
	if n := storedRecords(t, c, "p"); n != testRecords {
		t.Errorf("topic holds %d records, want %d", n, testRecords)
	}
}

// A CreateTopics answered REQUEST_TIMED_OUT created the topic all the same
// (the controller took it; its leaders came late): the run measures it and,
// with DeleteTopic, deletes it.
func TestRunTopicCreationTimedOut(t *testing.T) {
	c := newCluster(t)
	ctx := testContext(t, 10*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "slow"); err != nil {
		t.Fatal(err)
	}
	c.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		resp := req.(*kmsg.CreateTopicsRequest).ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, rt := range req.(*kmsg.CreateTopicsRequest).Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode = rt.Topic, kerr.RequestTimedOut.Code
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	var log bytes.Buffer
	res, err := Run(ctx, Options{Brokers: c.ListenAddrs(), Topic: "slow", Records: testRecords, Partitions: 2, DeleteTopic: true}, &log)
	if err != nil {
		t.Fatalf("Run: %v\nlog:\n%s", err, &log)
	}
	checkResult(t, res, strings.Join(c.ListenAddrs(), ","), testRecords, DefaultRecordSize)
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("slow") {
		t.Errorf("the run's topic is still there:\n%s", &log)
	}
}
