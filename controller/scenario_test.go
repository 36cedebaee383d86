package controller

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/internal/clocktest"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Scenario tests: the controller's decisions, driven by scripts in testdata/scenarios against
// an in-memory ZooKeeper (fakezk_test.go), a fake clock and fake broker channels, one event at
// a time on the test's goroutine, so each run is deterministic and takes milliseconds. A script
// is a sequence of steps, each a command, a "----" line and the output expected: the znodes the
// controllers wrote (and transactions that failed), the requests they sent, and each
// controller becoming active or not. Lines starting with # and blank lines between steps are
// comments. Run with -update to rewrite the expected output from what the controllers did.
//
// Commands (brokers are named by id, partitions as t-0):
//
//	brokers 1 2 3                   register brokers (each on its own session)
//	topic t 0=1,2,3 1=2,3,1         create /brokers/topics/t with that assignment
//	start 1 ... [key=value ...]     start brokers' controllers (delete.topic.enable,
//	                                unclean.leader.election.enable, auto.leader.rebalance.enable,
//	                                feature.versioning: inter.broker.protocol.version >= 2.7)
//	kill 2                          close broker 2's session: /brokers/ids/2 (and /controller if
//	                                it holds it) go; its controller, if any, is gone
//	restart 2                       register broker 2 again on a new session
//	expire 1                        broker 1's session expires; its client gets a new one, the
//	                                broker registers again and its controller is told
//	isr t-0 1,2                     the leader writes a new ISR and an ISR change notification
//	shutdown 2                      ControlledShutdown of broker 2, answered by the controller
//	preferred t-0 ...               create /admin/preferred_replica_election
//	reassign t-0=3,2 ...            create /admin/reassign_partitions
//	edit-reassign t-0=3,2 ...       overwrite /admin/reassign_partitions, as a user might
//	alter t-0=3,2 ...               AlterPartitionReassignments, answered by the controller
//	znode /path data                write a znode as a user or an older broker might
//	delete-topic t                  create /admin/delete_topics/t
//	topic-config t key=value ...    write /config/topics/t and tell the controllers
//	epoch-bump                      another controller's election moves /controller_epoch on
//	                                behind the active controller's back
//	tick 5s                         advance the clock, firing due timers
//	get /path                       print a znode's data ("no node" if missing)
//	ls /path                        print a znode's children

var update = flag.Bool("update", false, "rewrite the expected output of testdata/scenarios/*.txt")

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/scenarios")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) { runScenarioFile(t, file) })
	}
}

// step is one command of a script and its expected output.
type step struct {
	pre  []string // comment and blank lines before the command, kept when rewriting
	cmd  string
	line int // of the command, for messages
	want string
}

// parseScript splits a script into steps; trailing comment lines are returned apart.
func parseScript(text string) ([]step, []string, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var steps []step
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		st := step{pre: pre, cmd: strings.TrimSpace(l), line: i + 1}
		pre = nil
		i++
		if i >= len(lines) || lines[i] != "----" {
			return nil, nil, fmt.Errorf("line %d: %q is not followed by ----", st.line, st.cmd)
		}
		var want []string
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
			want = append(want, lines[i])
		}
		st.want = strings.Join(want, "\n")
		steps = append(steps, st)
	}
	return steps, pre, nil
}

func runScenarioFile(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	steps, trailer, err := parseScript(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	s := newScenario(t)
	defer s.close()
	var rewritten strings.Builder
	for _, st := range steps {
		got, err := s.run(st.cmd)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", file, st.line, st.cmd, err)
		}
		if *update {
			for _, l := range st.pre {
				rewritten.WriteString(l + "\n")
			}
			rewritten.WriteString(st.cmd + "\n----\n")
			if got != "" {
				rewritten.WriteString(got + "\n")
			}
			continue
		}
		if got != st.want {
			t.Errorf("%s:%d: %s\n--- got\n%s\n--- want\n%s", file, st.line, st.cmd, got, st.want)
		}
	}
	if *update {
		for _, l := range trailer {
			rewritten.WriteString(l + "\n")
		}
		if err := os.WriteFile(file, []byte(rewritten.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scenario is one script's world: the fake ZooKeeper, the brokers' sessions, their
// controllers (run by the test goroutine, not by Start), and the output being collected.
type scenario struct {
	t       *testing.T
	zk      *fakeZK
	clock   *clocktest.Fake
	admin   *fakeSession
	brokers map[int32]*fakeSession
	ctls    map[int32]*Controller
	status  map[int32]string // each controller's last reported status
	logger  *zap.Logger
	ctx     context.Context
	cancel  context.CancelFunc

	processing int32 // the controller whose event is being processed, 0 for none
	out        []outLine
}

// outLine is one line of output; requests to several brokers with the same content share one.
type outLine struct {
	from int32
	to   []int32
	api  string // empty for lines that are not requests
	text string
}

func newScenario(t *testing.T) *scenario {
	s := &scenario{
		t:       t,
		zk:      newFakeZK(),
		clock:   clocktest.New(time.Date(2021, 4, 19, 0, 0, 0, 0, time.UTC)),
		brokers: map[int32]*fakeSession{},
		ctls:    map[int32]*Controller{},
		status:  map[int32]string{},
		logger:  zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.admin = s.zk.session()
	for _, p := range zkpaths.PersistentPaths {
		if err := s.admin.createAll(p); err != nil {
			t.Fatal(err)
		}
	}
	s.zk.onWrite = s.recordWrite
	s.zk.onReject = s.recordReject
	return s
}

func (s *scenario) close() {
	s.cancel()
	for _, c := range s.ctls {
		c.resign()
	}
}

// controllerOf returns the id of the controller on session, 0 if none.
func (s *scenario) controllerOf(session int64) int32 {
	for id, c := range s.ctls {
		if c.store.(*fakeSession).id == session {
			return id
		}
	}
	return 0
}

func (s *scenario) recordWrite(w fakeWrite) {
	id := s.controllerOf(w.session)
	if id == 0 || id != s.processing {
		return
	}
	text := "zk " + w.op + " " + w.path
	if len(w.data) > 0 {
		text += " " + string(w.data)
	}
	s.out = append(s.out, outLine{from: id, text: text})
}

func (s *scenario) recordReject(session int64, ops []any, err error) {
	id := s.controllerOf(session)
	if id == 0 || id != s.processing {
		return
	}
	var parts []string
	for _, op := range ops {
		switch o := op.(type) {
		case *zk.CheckVersionRequest:
			parts = append(parts, fmt.Sprintf("check %s@%d", o.Path, o.Version))
		case *zk.SetDataRequest:
			parts = append(parts, fmt.Sprintf("set %s@%d", o.Path, o.Version))
		case *zk.CreateRequest:
			parts = append(parts, "create "+o.Path)
		case *zk.DeleteRequest:
			parts = append(parts, fmt.Sprintf("delete %s@%d", o.Path, o.Version))
		}
	}
	s.out = append(s.out, outLine{from: id, text: fmt.Sprintf("zk failed (%v): %s", err, strings.Join(parts, ", "))})
}

// recordRequest adds a request to the output, merged with the previous line if that was the
// same request from the same controller to a broker before this one (a batch sends in broker
// order, so a second batch starts a new line).
func (s *scenario) recordRequest(from, to int32, req kmsg.Request) {
	api, text := summarize(req)
	if n := len(s.out); n > 0 {
		last := &s.out[n-1]
		if last.from == from && last.api == api && last.text == text && to > last.to[len(last.to)-1] {
			last.to = append(last.to, to)
			return
		}
	}
	s.out = append(s.out, outLine{from: from, to: []int32{to}, api: api, text: text})
}

// summarize describes a request readably, leaving out what differs per recipient (the broker
// epoch).
func summarize(req kmsg.Request) (api, text string) {
	var b strings.Builder
	switch r := req.(type) {
	case *kmsg.LeaderAndISRRequest:
		fmt.Fprintf(&b, "LeaderAndIsr controller_epoch=%d", r.ControllerEpoch)
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				fmt.Fprintf(&b, "\n  %s-%d leader=%d leader_epoch=%d isr=%s replicas=%s", t.Topic, p.Partition,
					p.Leader, p.LeaderEpoch, joinIDs(p.ISR), joinIDs(p.Replicas))
				if len(p.AddingReplicas) > 0 {
					fmt.Fprintf(&b, " adding=%s", joinIDs(p.AddingReplicas))
				}
				if len(p.RemovingReplicas) > 0 {
					fmt.Fprintf(&b, " removing=%s", joinIDs(p.RemovingReplicas))
				}
				if p.IsNew {
					b.WriteString(" is_new")
				}
			}
		}
		return "LeaderAndIsr", b.String()
	case *kmsg.UpdateMetadataRequest:
		var live []int32
		for _, l := range r.LiveBrokers {
			live = append(live, l.ID)
		}
		fmt.Fprintf(&b, "UpdateMetadata controller_epoch=%d live=%s", r.ControllerEpoch, joinIDs(live))
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				fmt.Fprintf(&b, "\n  %s-%d leader=%d leader_epoch=%d isr=%s replicas=%s", t.Topic, p.Partition,
					p.Leader, p.LeaderEpoch, joinIDs(p.ISR), joinIDs(p.Replicas))
				if len(p.OfflineReplicas) > 0 {
					fmt.Fprintf(&b, " offline=%s", joinIDs(p.OfflineReplicas))
				}
			}
		}
		return "UpdateMetadata", b.String()
	case *kmsg.StopReplicaRequest:
		fmt.Fprintf(&b, "StopReplica controller_epoch=%d", r.ControllerEpoch)
		for _, t := range r.Topics {
			for _, p := range t.PartitionStates {
				fmt.Fprintf(&b, "\n  %s-%d leader_epoch=%d", t.Topic, p.Partition, p.LeaderEpoch)
				if p.Delete {
					b.WriteString(" delete")
				}
			}
		}
		return "StopReplica", b.String()
	}
	return kmsg.NameForKey(req.Key()), kmsg.NameForKey(req.Key())
}

// run executes one command and returns its output.
func (s *scenario) run(cmd string) (string, error) {
	s.out = nil
	fields := strings.Fields(cmd)
	if err := s.exec(fields[0], fields[1:]); err != nil {
		return "", err
	}
	s.drain()
	var lines []string
	for _, l := range s.out {
		prefix := ""
		if l.from != 0 {
			prefix = fmt.Sprintf("c%d ", l.from)
		}
		if l.api != "" {
			prefix += "-> " + joinIDs(l.to) + " "
		}
		lines = append(lines, prefix+l.text)
	}
	return strings.Join(lines, "\n"), nil
}

// drain processes the controllers' queued events, one event per controller in id order in
// turn, until every queue is empty. Fake watches, channels and timers enqueue synchronously, so
// an empty queue means nothing is left to do.
func (s *scenario) drain() {
	for steps := 0; ; steps++ {
		if steps > 100000 {
			s.t.Fatal("the controllers never settled")
		}
		busy := false
		for _, id := range slices.Sorted(maps.Keys(s.ctls)) {
			c := s.ctls[id]
			if c.events.len() == 0 {
				continue
			}
			busy = true
			qe, _ := c.events.pop(s.ctx)
			s.processing = id
			c.process(qe)
			s.processing = 0
			s.reportStatus(id)
		}
		if !busy {
			return
		}
	}
}

// reportStatus adds a line when a controller became active or stopped being active.
func (s *scenario) reportStatus(id int32) {
	status := "not active"
	if c := s.ctls[id]; c.IsActive() {
		status = fmt.Sprintf("active, epoch %d", c.Epoch())
	}
	if status != s.status[id] {
		s.out = append(s.out, outLine{from: id, text: status})
		s.status[id] = status
	}
}

func (s *scenario) exec(name string, args []string) error {
	switch name {
	case "brokers":
		for _, a := range args {
			id, err := parseID(a)
			if err != nil {
				return err
			}
			if err := s.register(id); err != nil {
				return err
			}
		}
	case "restart":
		id, err := oneID(args)
		if err != nil {
			return err
		}
		return s.register(id)
	case "kill":
		id, err := oneID(args)
		if err != nil {
			return err
		}
		sess, ok := s.brokers[id]
		if !ok {
			return fmt.Errorf("broker %d is not running", id)
		}
		if c, ok := s.ctls[id]; ok {
			c.resign()
			delete(s.ctls, id)
			delete(s.status, id)
		}
		delete(s.brokers, id)
		s.zk.closeSession(sess.id)
	case "topic":
		if len(args) < 2 {
			return errors.New("usage: topic <name> <partition>=<replicas> ...")
		}
		a := zkpaths.TopicAssignment{TopicID: fixedTopicID(args[0]), Partitions: map[int32][]int32{}}
		for _, p := range args[1:] {
			partition, replicas, ok := strings.Cut(p, "=")
			if !ok {
				return fmt.Errorf("bad partition %q", p)
			}
			n, err := parseID(partition)
			if err != nil {
				return err
			}
			if a.Partitions[n], err = parseIDs(replicas); err != nil {
				return err
			}
		}
		_, err := s.admin.Create(zkpaths.TopicPath(args[0]), a.Encode(), 0, nil)
		return err
	case "start":
		var ids []int32
		for len(args) > 0 && !strings.Contains(args[0], "=") {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			ids, args = append(ids, id), args[1:]
		}
		if len(ids) == 0 {
			return errors.New("usage: start <broker> ... [key=value ...]")
		}
		for _, id := range ids {
			if err := s.start(id, args); err != nil {
				return err
			}
		}
	case "expire":
		id, err := oneID(args)
		if err != nil {
			return err
		}
		return s.expire(id)
	case "isr":
		return s.changeISR(args)
	case "shutdown":
		id, err := oneID(args)
		if err != nil {
			return err
		}
		c := s.activeController()
		if c == nil {
			return errors.New("no active controller")
		}
		reply := submit(c, "ControlledShutdown", func() ([]kafka.TopicPartition, error) { return c.doControlledShutdown(id, -1) })
		s.drain()
		r := <-reply
		text := fmt.Sprintf("ControlledShutdown of %d: remaining %v", id, r.v)
		if r.err != nil {
			text = fmt.Sprintf("ControlledShutdown of %d: %v", id, r.err)
		}
		s.out = append(s.out, outLine{text: text})
	case "preferred":
		var req zkpaths.PreferredReplicaElectionData
		for _, a := range args {
			tp, err := parseTP(a)
			if err != nil {
				return err
			}
			req.Partitions = append(req.Partitions, kafka.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
		}
		_, err := s.admin.Create(zkpaths.PreferredReplicaElection, req.Encode(), 0, nil)
		return err
	case "reassign":
		req, err := parseReassignments(args)
		if err != nil {
			return err
		}
		_, err = s.admin.Create(zkpaths.ReassignPartitions, req.Encode(), 0, nil)
		return err
	case "alter":
		req, err := parseReassignments(args)
		if err != nil {
			return err
		}
		c := s.activeController()
		if c == nil {
			return errors.New("no active controller")
		}
		requests := map[kafka.TopicPartition][]int32{}
		for _, p := range req.Partitions {
			requests[kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.Replicas
		}
		reply := submit(c, "AlterPartitionReassignments", func() (map[kafka.TopicPartition]error, error) {
			return c.alterReassignments(requests)
		})
		s.drain()
		r := <-reply
		if r.err != nil {
			s.out = append(s.out, outLine{text: fmt.Sprintf("AlterPartitionReassignments: %v", r.err)})
			break
		}
		for _, tp := range slices.SortedFunc(maps.Keys(r.v), kafka.Compare) {
			result := "ok"
			if err := r.v[tp]; err != nil {
				result = err.Error()
			}
			s.out = append(s.out, outLine{text: fmt.Sprintf("AlterPartitionReassignments %s: %s", tp, result)})
		}
	case "edit-reassign":
		req, err := parseReassignments(args)
		if err != nil {
			return err
		}
		_, err = s.admin.Set(zkpaths.ReassignPartitions, req.Encode(), -1)
		return err
	case "znode":
		if len(args) != 2 {
			return errors.New("usage: znode <path> <data>")
		}
		_, err := s.admin.Set(args[0], []byte(args[1]), -1)
		if errors.Is(err, zk.ErrNoNode) {
			_, err = s.admin.Create(args[0], []byte(args[1]), 0, nil)
		}
		return err
	case "delete-topic":
		if len(args) != 1 {
			return errors.New("usage: delete-topic <topic>")
		}
		_, err := s.admin.Create(zkpaths.DeleteTopicPath(args[0]), nil, 0, nil)
		return err
	case "topic-config":
		if len(args) < 1 {
			return errors.New("usage: topic-config <topic> key=value ...")
		}
		cfg := zkpaths.EntityConfig{Config: map[string]string{}}
		for _, kv := range args[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("bad config %q", kv)
			}
			cfg.Config[k] = v
		}
		if err := s.admin.createAll(zkpaths.TopicConfigPath(args[0])); err != nil {
			return err
		}
		if _, err := s.admin.Set(zkpaths.TopicConfigPath(args[0]), cfg.Encode(), -1); err != nil {
			return err
		}
		for _, c := range s.ctls {
			c.TopicConfigChanged(args[0])
		}
	case "epoch-bump":
		data, _, err := s.admin.Get(zkpaths.ControllerEpoch)
		if err != nil {
			return err
		}
		epoch, err := zkpaths.DecodeControllerEpoch(data)
		if err != nil {
			return err
		}
		_, err = s.admin.Set(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(epoch+1), -1)
		return err
	case "tick":
		if len(args) != 1 {
			return errors.New("usage: tick <duration>")
		}
		d, err := time.ParseDuration(args[0])
		if err != nil {
			return err
		}
		s.clock.Advance(d)
	case "get":
		if len(args) != 1 {
			return errors.New("usage: get <path>")
		}
		data, _, err := s.admin.Get(args[0])
		switch {
		case errors.Is(err, zk.ErrNoNode):
			s.out = append(s.out, outLine{text: "no node"})
		case err != nil:
			return err
		default:
			s.out = append(s.out, outLine{text: string(data)})
		}
	case "ls":
		if len(args) != 1 {
			return errors.New("usage: ls <path>")
		}
		children, _, err := s.admin.Children(args[0])
		if err != nil {
			return err
		}
		s.out = append(s.out, outLine{text: "[" + strings.Join(children, " ") + "]"})
	default:
		return fmt.Errorf("unknown command %q", name)
	}
	return nil
}

// parseReassignments parses t-0=3,2 ... into the data of /admin/reassign_partitions.
func parseReassignments(args []string) (zkpaths.ReassignPartitionsData, error) {
	var req zkpaths.ReassignPartitionsData
	for _, a := range args {
		p, replicas, ok := strings.Cut(a, "=")
		if !ok {
			return req, fmt.Errorf("bad reassignment %q", a)
		}
		tp, err := parseTP(p)
		if err != nil {
			return req, err
		}
		ids, err := parseIDs(replicas)
		if err != nil {
			return req, err
		}
		req.Partitions = append(req.Partitions, zkpaths.PartitionReplicas{Topic: tp.Topic, Partition: tp.Partition, Replicas: ids})
	}
	return req, nil
}

// register registers a broker on a new session, as a broker does at start-up.
func (s *scenario) register(id int32) error {
	if _, ok := s.brokers[id]; ok {
		return fmt.Errorf("broker %d is already running", id)
	}
	return s.registerOn(id, s.zk.session())
}

// registerOn registers a broker on sess.
func (s *scenario) registerOn(id int32, sess *fakeSession) error {
	reg := zkpaths.BrokerRegistration{
		ID: id,
		Endpoints: []zkpaths.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: zkpaths.SecurityProtocolPlaintext,
			Host: "broker" + strconv.Itoa(int(id)), Port: 9092}},
		JmxPort:   -1,
		Timestamp: s.clock.Now().UnixMilli(),
	}
	if _, err := sess.Create(zkpaths.BrokerPath(id), reg.Encode(), zk.FlagEphemeral, nil); err != nil {
		return err
	}
	s.brokers[id] = sess
	return nil
}

// expire ends a broker's session as ZooKeeper does when it stops hearing from it, then plays
// what the broker's ZooKeeper client does: the expiry callback, a new session, the broker's
// re-registration, and the new-session callback.
func (s *scenario) expire(id int32) error {
	sess, ok := s.brokers[id]
	if !ok {
		return fmt.Errorf("broker %d is not running", id)
	}
	s.zk.closeSession(sess.id)
	c := s.ctls[id]
	if c != nil {
		c.onSessionExpired()
	}
	s.zk.reopen(sess)
	delete(s.brokers, id)
	if err := s.registerOn(id, sess); err != nil {
		return err
	}
	if c != nil {
		c.enqueue(registerBrokerAndReelectEvent{})
	}
	return nil
}

// start starts a controller on a broker's session, driven by drain instead of its own loop.
func (s *scenario) start(id int32, opts []string) error {
	sess, ok := s.brokers[id]
	if !ok {
		return fmt.Errorf("broker %d is not running", id)
	}
	if _, ok := s.ctls[id]; ok {
		return fmt.Errorf("broker %d already runs a controller", id)
	}
	cfg := Config{BrokerID: id, Logger: s.logger, InterBrokerListener: DefaultInterBrokerListener,
		LeaderImbalancePerBrokerPercentage: 10, LeaderImbalanceCheckInterval: 300 * time.Second, FeatureVersioning: true}
	for _, o := range opts {
		k, v, ok := strings.Cut(o, "=")
		b, err := strconv.ParseBool(v)
		if !ok || err != nil {
			return fmt.Errorf("bad option %q", o)
		}
		switch k {
		case "delete.topic.enable":
			cfg.DeleteTopicEnable = b
		case "unclean.leader.election.enable":
			cfg.UncleanLeaderElection = b
		case "auto.leader.rebalance.enable":
			cfg.AutoLeaderRebalance = b
		case "feature.versioning": // inter.broker.protocol.version >= 2.7
			cfg.FeatureVersioning = b
		default:
			return fmt.Errorf("unknown option %q", k)
		}
	}
	c := newController(cfg, s.clock, 1)
	c.store = sess
	c.newChannels = func(context.Context, *zap.Logger) brokerChannels {
		return &fakeChannels{s: s, from: id, live: map[int32]bool{}}
	}
	c.loopCtx = s.ctx
	s.ctls[id] = c
	c.enqueue(startupEvent{})
	return nil
}

// activeController returns the controller that considers itself active, nil if none does.
func (s *scenario) activeController() *Controller {
	for _, c := range s.ctls {
		if c.IsActive() {
			return c
		}
	}
	return nil
}

// changeISR does what a partition leader does when its ISR changes: a conditional write of the
// state znode (same leader and leader epoch) and an ISR change notification.
func (s *scenario) changeISR(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: isr <topic-partition> <replicas>")
	}
	tp, err := parseTP(args[0])
	if err != nil {
		return err
	}
	isr, err := parseIDs(args[1])
	if err != nil {
		return err
	}
	path := zkpaths.PartitionStatePath(tp.Topic, tp.Partition)
	data, stat, err := s.admin.Get(path)
	if err != nil {
		return err
	}
	l, err := zkpaths.DecodeLeaderAndIsr(data)
	if err != nil {
		return err
	}
	leader, ok := s.brokers[l.Leader]
	if !ok {
		return fmt.Errorf("%s has no live leader", tp)
	}
	l.ISR = isr
	if _, err := leader.Set(path, l.Encode(), stat.Version); err != nil {
		return err
	}
	n := zkpaths.IsrChangeNotificationData{Partitions: []kafka.TopicPartition{{Topic: tp.Topic, Partition: tp.Partition}}}
	_, err = leader.Create(zkpaths.IsrChangePrefix, n.Encode(), zk.FlagSequence, nil)
	return err
}

// fixedTopicID derives a topic id from the name, so outputs do not change between runs.
func fixedTopicID(name string) string {
	var u [16]byte
	copy(u[:], name)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return base64.RawURLEncoding.EncodeToString(u[:])
}

func parseID(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad id %q", s)
	}
	return int32(n), nil
}

func oneID(args []string) (int32, error) {
	if len(args) != 1 {
		return 0, errors.New("expected one broker id")
	}
	return parseID(args[0])
}

func parseIDs(s string) ([]int32, error) {
	var ids []int32
	for _, f := range strings.Split(s, ",") {
		id, err := parseID(f)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func parseTP(s string) (kafka.TopicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return kafka.TopicPartition{}, fmt.Errorf("bad partition %q, want topic-N", s)
	}
	p, err := parseID(s[i+1:])
	if err != nil {
		return kafka.TopicPartition{}, err
	}
	return kafka.TopicPartition{Topic: s[:i], Partition: p}, nil
}

// fakeChannels stands in for the channel manager: each request to a live broker is recorded
// and answered at once, without errors, by enqueuing the response event.
type fakeChannels struct {
	s    *scenario
	from int32
	live map[int32]bool
}

func (f *fakeChannels) addBroker(b liveBroker) { f.live[b.reg.ID] = true }
func (f *fakeChannels) removeBroker(id int32)  { delete(f.live, id) }
func (f *fakeChannels) shutdown()              { clear(f.live) }

func (f *fakeChannels) send(id int32, r brokerRequest) {
	if !f.live[id] {
		return
	}
	f.s.recordRequest(f.from, id, r.req)
	resp := r.req.ResponseKind()
	resp.SetVersion(r.req.GetVersion())
	if r.onResponse != nil {
		r.onResponse(resp)
	}
}
