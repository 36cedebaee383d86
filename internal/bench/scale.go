package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/chaos"
	"github.com/zkafka/zkafka/internal/pace"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// ScaleOptions is a scale run (`zkafka bench partitions N`) against the cluster scripts/cluster.sh
// runs: Local's brokers, killed, stopped and started through cluster.sh.
type ScaleOptions struct {
	Cluster     *chaos.Local
	Partitions  int   // in all, spread over Topics topics
	Topics      int   // default 1 per 1,000 partitions
	Replication int16 // default 3
	Prefix      string
	// StepTimeout bounds each step's wait.
	StepTimeout time.Duration
}

// ScaleStep is one timed step of a scale run.
type ScaleStep struct {
	Name   string
	Took   time.Duration
	Detail string
}

// ProcessUsage is a process's resident memory and open files.
type ProcessUsage struct {
	RSS   int64 // bytes
	Files int
}

// ScaleResult is what a scale run measured.
type ScaleResult struct {
	Partitions int
	Steps      []ScaleStep
	// Before and After are each broker's usage before the topics were created and after the
	// cluster had them all in sync; Controller is the broker that was controller then.
	Before, After map[int32]ProcessUsage
	Controller    int32
	// ZKHeapBefore and ZKHeapAfter are ZooKeeper's live heap (after a full GC), -1 when jcmd is
	// missing.
	ZKHeapBefore, ZKHeapAfter int64
}

// scaleView is one broker's metadata of the run's topics.
type scaleView struct {
	controller int32
	partitions map[string][]kmsg.MetadataResponseTopicPartition
}

// RunScale creates the partitions, then times a kill -9 of the controller until every live broker
// knows a live leader for every partition, the killed broker's restart until it is back in every
// ISR, and the controlled shutdown of a broker leading a third of the partitions. It leaves the
// topics behind for the caller to delete or inspect.
func RunScale(ctx context.Context, o ScaleOptions, log io.Writer) (*ScaleResult, error) {
	l := o.Cluster
	if o.Replication == 0 {
		o.Replication = 3
	}
	if o.Topics == 0 {
		o.Topics = max(1, o.Partitions/1000)
	}
	if o.Prefix == "" {
		o.Prefix = fmt.Sprintf("zkafka-scale-%d", time.Now().UnixMilli())
	}
	if o.StepTimeout == 0 {
		o.StepTimeout = 10 * time.Minute
	}
	if o.Partitions < o.Topics || o.Topics < 1 {
		return nil, fmt.Errorf("partitions (%d) must be at least the topics (%d), and both positive", o.Partitions, o.Topics)
	}
	for _, id := range l.Brokers() {
		if !l.Running(id) {
			return nil, fmt.Errorf("broker %d of cluster.sh's cluster (%s) is not running: start it with scripts/cluster.sh up", id, l.Data)
		}
	}
	res := &ScaleResult{Partitions: o.Partitions}
	var err error
	if res.Before, err = usage(l); err != nil {
		return nil, err
	}
	res.ZKHeapBefore = zkLiveHeap(ctx, l)

	topics := map[string]int32{}
	per, extra := o.Partitions/o.Topics, o.Partitions%o.Topics
	for i := range o.Topics {
		n := per
		if i < extra {
			n++
		}
		topics[fmt.Sprintf("%s-%d", o.Prefix, i)] = int32(n)
	}
	var progress atomic.Value
	progress.Store("")
	stop := pace.Progress(log, time.Second, func() string { return progress.Load().(string) })
	defer stop()
	step := func(name string, run func() (string, error)) error {
		start := time.Now()
		progress.Store(name + " …")
		detail, err := run()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		took := time.Since(start)
		res.Steps = append(res.Steps, ScaleStep{name, took, detail})
		progress.Store(fmt.Sprintf("%s: %v", name, took.Round(time.Millisecond)))
		return nil
	}
	everyBroker := func(live []int32, cond func(v scaleView) bool) error {
		return pace.Until(ctx, o.StepTimeout, func() bool {
			for _, id := range live {
				v, err := viewOf(ctx, l.Addr(id), topics)
				if err != nil || !cond(v) {
					return false
				}
			}
			return true
		})
	}
	all := l.Brokers()

	if err := step(fmt.Sprintf("create %d partitions in %d topics, RF %d", o.Partitions, o.Topics, o.Replication), func() (string, error) {
		if err := createScaleTopics(ctx, l, topics, o.Replication); err != nil {
			return "", err
		}
		return "every broker knows a leader of each", everyBroker(all, func(v scaleView) bool {
			return v.each(topics, func(p kmsg.MetadataResponseTopicPartition) bool { return p.Leader >= 0 })
		})
	}); err != nil {
		return nil, err
	}
	if err := step("every replica in sync", func() (string, error) {
		return "", everyBroker(all, func(v scaleView) bool {
			return v.each(topics, func(p kmsg.MetadataResponseTopicPartition) bool { return len(p.ISR) == int(o.Replication) })
		})
	}); err != nil {
		return nil, err
	}
	v, err := viewOf(ctx, l.Addr(all[0]), topics)
	if err != nil {
		return nil, err
	}
	res.Controller = v.controller
	if res.After, err = usage(l); err != nil {
		return nil, err
	}
	res.ZKHeapAfter = zkLiveHeap(ctx, l)

	ctrl := v.controller
	live := slices.DeleteFunc(slices.Clone(all), func(id int32) bool { return id == ctrl })
	if err := step(fmt.Sprintf("kill -9 the controller (broker %d, leading %d): every live broker knows a live leader", ctrl, v.leading(ctrl)), func() (string, error) {
		killed := time.Now()
		if err := l.Kill(ctx, ctrl); err != nil {
			return "", err
		}
		if err := everyBroker(live, func(v scaleView) bool {
			return v.each(topics, func(p kmsg.MetadataResponseTopicPartition) bool { return p.Leader >= 0 && p.Leader != ctrl })
		}); err != nil {
			return "", err
		}
		done := time.Now()
		reg, err := controllerRegistration(ctx, l)
		if err != nil {
			return "", err
		}
		// The new controller's election time is in its registration, on this machine's clock.
		elected := time.UnixMilli(reg.Timestamp)
		return fmt.Sprintf("broker %d elected %.3f s after the kill (the dead session's expiry), every leader known %.3f s after that",
			reg.BrokerID, elected.Sub(killed).Seconds(), done.Sub(elected).Seconds()), nil
	}); err != nil {
		return nil, err
	}
	if err := step(fmt.Sprintf("restart broker %d after kill -9: listening (log recovery)", ctrl), func() (string, error) {
		return "", l.Start(ctx, ctrl)
	}); err != nil {
		return nil, err
	}
	if err := step(fmt.Sprintf("broker %d back in every ISR", ctrl), func() (string, error) {
		return "", everyBroker(all, func(v scaleView) bool {
			return v.each(topics, func(p kmsg.MetadataResponseTopicPartition) bool { return slices.Contains(p.ISR, ctrl) })
		})
	}); err != nil {
		return nil, err
	}
	if err := step("preferred leader election of every partition", func() (string, error) {
		if err := electPreferred(ctx, l, topics); err != nil {
			return "", err
		}
		return "", everyBroker(all, func(v scaleView) bool {
			return v.each(topics, func(p kmsg.MetadataResponseTopicPartition) bool {
				return len(p.Replicas) > 0 && p.Leader == p.Replicas[0]
			})
		})
	}); err != nil {
		return nil, err
	}
	v, err = viewOf(ctx, l.Addr(all[0]), topics)
	if err != nil {
		return nil, err
	}
	// A broker that is not the controller, as in Kafka 1.1's published figure.
	var victim int32 = -1
	for _, id := range all {
		if id != v.controller {
			victim = id
			break
		}
	}
	rest := slices.DeleteFunc(slices.Clone(all), func(id int32) bool { return id == victim })
	// Two figures from one SIGTERM: the leaders' move, which Kafka's published figure measures, and
	// the process's exit once its logs are closed.
	name := fmt.Sprintf("controlled shutdown of broker %d (leading %d): leaders moved", victim, v.leading(victim))
	progress.Store(name + " …")
	start := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- l.Stop(ctx, victim) }()
	err = everyBroker(rest, func(v scaleView) bool {
		return v.each(topics, func(p kmsg.MetadataResponseTopicPartition) bool { return p.Leader >= 0 && p.Leader != victim })
	})
	moved := time.Since(start)
	err = errors.Join(err, <-stopped)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res.Steps = append(res.Steps, ScaleStep{Name: name, Took: moved},
		ScaleStep{Name: fmt.Sprintf("broker %d's process exited after SIGTERM (logs closed)", victim), Took: time.Since(start)})
	if err := step(fmt.Sprintf("start broker %d again", victim), func() (string, error) {
		return "", l.Start(ctx, victim)
	}); err != nil {
		return nil, err
	}
	return res, nil
}

// controllerRegistration reads /controller.
func controllerRegistration(ctx context.Context, l *chaos.Local) (zkpaths.ControllerRegistration, error) {
	zk, err := zkclient.Connect(ctx, zkclient.Config{Connect: l.ZooKeeper()})
	if err != nil {
		return zkpaths.ControllerRegistration{}, err
	}
	defer zk.Close()
	data, _, err := zk.Get(zkpaths.Controller)
	if err != nil {
		return zkpaths.ControllerRegistration{}, fmt.Errorf("read %s: %w", zkpaths.Controller, err)
	}
	return zkpaths.DecodeControllerRegistration(data)
}

// viewOf asks the broker at addr for the run's topics.
func viewOf(ctx context.Context, addr string, topics map[string]int32) (scaleView, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, addr, "zkafka-bench-scale")
	if err != nil {
		return scaleView{}, err
	}
	defer c.Close()
	req := kmsg.NewPtrMetadataRequest()
	for t := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, mt)
	}
	resp, err := c.Request(ctx, req)
	if err != nil {
		return scaleView{}, err
	}
	m := resp.(*kmsg.MetadataResponse)
	v := scaleView{controller: m.ControllerID, partitions: map[string][]kmsg.MetadataResponseTopicPartition{}}
	for _, t := range m.Topics {
		if t.ErrorCode == 0 && t.Topic != nil {
			v.partitions[*t.Topic] = t.Partitions
		}
	}
	return v, nil
}

// each reports whether every partition of topics is in the view and meets cond.
func (v scaleView) each(topics map[string]int32, cond func(kmsg.MetadataResponseTopicPartition) bool) bool {
	for t, n := range topics {
		ps := v.partitions[t]
		if len(ps) != int(n) {
			return false
		}
		for _, p := range ps {
			if p.ErrorCode != 0 || !cond(p) {
				return false
			}
		}
	}
	return true
}

// leading counts the partitions broker id leads in the view.
func (v scaleView) leading(id int32) int {
	n := 0
	for _, ps := range v.partitions {
		for _, p := range ps {
			if p.Leader == id {
				n++
			}
		}
	}
	return n
}

func adminClient(l *chaos.Local) (*kadm.Client, error) {
	var seeds []string
	for _, id := range l.Brokers() {
		seeds = append(seeds, l.Addr(id))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("zkafka-bench-scale"), kgo.RequestTimeoutOverhead(time.Minute))
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

// createScaleTopics creates the topics, a hundred to a request.
func createScaleTopics(ctx context.Context, l *chaos.Local, topics map[string]int32, rf int16) error {
	adm, err := adminClient(l)
	if err != nil {
		return err
	}
	defer adm.Close()
	adm.SetTimeoutMillis(int32((5 * time.Minute).Milliseconds()))
	names := slices.Sorted(maps.Keys(topics))
	for chunk := range slices.Chunk(names, 100) {
		byCount := map[int32][]string{}
		for _, t := range chunk {
			byCount[topics[t]] = append(byCount[topics[t]], t)
		}
		for n, ts := range byCount {
			resp, err := adm.CreateTopics(ctx, n, rf, nil, ts...)
			if err != nil {
				return err
			}
			if err := resp.Error(); err != nil {
				return err
			}
		}
	}
	return nil
}

// electPreferred runs a preferred leader election of every partition of topics.
func electPreferred(ctx context.Context, l *chaos.Local, topics map[string]int32) error {
	adm, err := adminClient(l)
	if err != nil {
		return err
	}
	defer adm.Close()
	set := kadm.TopicsSet{}
	for t, n := range topics {
		for p := range n {
			set.Add(t, p)
		}
	}
	results, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		return err
	}
	for _, ps := range results {
		for _, r := range ps {
			// ELECTION_NOT_NEEDED: already led by its preferred replica.
			if r.Err != nil && !strings.Contains(r.Err.Error(), "ELECTION_NOT_NEEDED") {
				return fmt.Errorf("%s-%d: %w", r.Topic, r.Partition, r.Err)
			}
		}
	}
	return nil
}

// usage reads every broker's resident memory and open files from /proc.
func usage(l *chaos.Local) (map[int32]ProcessUsage, error) {
	out := map[int32]ProcessUsage{}
	for _, id := range l.Brokers() {
		pid, err := l.Pid(id)
		if err != nil {
			return nil, err
		}
		u, err := processUsage(pid)
		if err != nil {
			return nil, fmt.Errorf("broker %d: %w", id, err)
		}
		out[id] = u
	}
	return out, nil
}

func processUsage(pid int) (ProcessUsage, error) {
	var u ProcessUsage
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return u, fmt.Errorf("VmRSS %q: %w", rest, err)
			}
			u.RSS = kb << 10
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return u, err
	}
	u.Files = len(fds)
	return u, nil
}

// heapUsed is the "used" figure of jcmd's GC.heap_info.
var heapUsed = regexp.MustCompile(`used (\d+)K`)

// zkLiveHeap is ZooKeeper's heap in use right after a full GC (jcmd GC.run, then GC.heap_info), or
// -1 when jcmd cannot tell.
func zkLiveHeap(ctx context.Context, l *chaos.Local) int64 {
	pid, err := l.Pid(0)
	if err != nil {
		return -1
	}
	p := strconv.Itoa(pid)
	if err := exec.CommandContext(ctx, "jcmd", p, "GC.run").Run(); err != nil {
		return -1
	}
	out, err := exec.CommandContext(ctx, "jcmd", p, "GC.heap_info").Output()
	if err != nil {
		return -1
	}
	m := heapUsed.FindSubmatch(bytes.TrimSpace(out))
	if m == nil {
		return -1
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		return -1
	}
	return kb << 10
}

// WriteScale prints a scale run's steps and the resources per 1,000 partitions.
func WriteScale(w io.Writer, r *ScaleResult) {
	fmt.Fprintf(w, "%d partitions\n", r.Partitions)
	for _, s := range r.Steps {
		fmt.Fprintf(w, "  %-90s %10.3f s", s.Name, s.Took.Seconds())
		if s.Detail != "" {
			fmt.Fprintf(w, "  (%s)", s.Detail)
		}
		fmt.Fprintln(w)
	}
	per := float64(r.Partitions) / 1000
	for _, id := range slices.Sorted(maps.Keys(r.After)) {
		b, a := r.Before[id], r.After[id]
		role := ""
		if id == r.Controller {
			role = " (controller)"
		}
		fmt.Fprintf(w, "  broker %d%s: RSS %.0f → %.0f MB (%.2f MB per 1,000 partitions), open files %d → %d (%.2f per partition)\n",
			id, role, mb(b.RSS), mb(a.RSS), mb(a.RSS-b.RSS)/per, b.Files, a.Files, float64(a.Files-b.Files)/float64(r.Partitions))
	}
	if r.ZKHeapBefore >= 0 && r.ZKHeapAfter >= 0 {
		fmt.Fprintf(w, "  ZooKeeper live heap: %.0f → %.0f MB (%.2f MB per 1,000 partitions)\n",
			mb(r.ZKHeapBefore), mb(r.ZKHeapAfter), mb(r.ZKHeapAfter-r.ZKHeapBefore)/per)
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
