package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ZKMode asks ZooKeeper server i (0 for a single server) for its mode with the "srvr" four-letter
// word.
func (l *Local) ZKMode(i int) (string, error) {
	return zkMode(net.JoinHostPort("127.0.0.1", strconv.Itoa(l.ZKClientPort(i))))
}

// zkSyncTimeout is syncLimit × tickTime from the first server's zoo.cfg (10 s in
// config/zookeeper.cfg, and when unreadable).
func (l *Local) zkSyncTimeout() time.Duration {
	name := "zookeeper"
	if l.Ensemble() {
		name = "zookeeper-1"
	}
	b, err := os.ReadFile(filepath.Join(l.Data, name, "zoo.cfg"))
	if err != nil {
		return 10 * time.Second
	}
	return syncTimeout(string(b))
}

// syncTimeout is syncLimit × tickTime of a zoo.cfg, with ZooKeeper's sample values (2000, 5) for
// what it does not set.
func syncTimeout(cfg string) time.Duration {
	tick, limit := 2000, 5
	for _, line := range strings.Split(cfg, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(k) {
		case "tickTime":
			tick = n
		case "syncLimit":
			limit = n
		}
	}
	return time.Duration(tick*limit) * time.Millisecond
}

// quorum splits a ZooKeeper ensemble: one server is cut from the other servers' quorum and election
// traffic while the brokers still reach it, so the minority server stops serving and the majority
// goes on (electing a new leader when the minority one led).
//
// Every server listens on 127.0.0.1, so addresses cannot tell one server's connections from
// another's. Each server runs in a cgroup v2 of its own instead (cluster.sh starts server I in the
// cgroup $DATA/run/zookeeper-I.cgroup names; the chaos run restarts the servers into them one at a
// time, keeping the quorum), and an nftables table "inet <p>-quorum" in the machine's namespace
// drops, for a cut server k:
//
//	output: everything to or from k's quorum and election ports (other servers' connections to k,
//	  and k's answers on them), and whatever a socket of k's cgroup sends to another server's
//	  quorum or election port (k's own connections to them)
//	input: whatever comes from another server's quorum or election port to a socket of k's cgroup
//	  (the other servers' answers on k's connections)
//
// The cgroups sit at the top of the hierarchy (level 1 in nftables' terms).
type quorum struct {
	l      *Local
	h      *History
	prefix string // zkc<zk port>
	root   string // the cgroup v2 mount
	nftDir string // the mount's path below /sys/fs/cgroup, where nftables resolves cgroup paths
	cut    int    // the cut server, 0 for none
}

// nftCgroupRoot is where nftables looks up the paths of "socket cgroupv2" rules.
const nftCgroupRoot = "/sys/fs/cgroup"

func newQuorum(l *Local, h *History) (quorumCutter, error) {
	root, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(nftCgroupRoot, root)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("cgroup v2 is mounted at %s, outside %s where nftables looks its paths up", root, nftCgroupRoot)
	}
	return &quorum{l: l, h: h, prefix: "zkc" + strconv.Itoa(l.ZKPort), root: root, nftDir: rel}, nil
}

// cgroup2Mount finds the cgroup v2 hierarchy's mount point in /proc/self/mountinfo.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		for j, fld := range fields {
			if fld == "-" && j+1 < len(fields) && fields[j+1] == "cgroup2" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted (zk-split tells the servers' traffic apart by cgroup)")
}

func (q *quorum) cgroupName(i int) string { return q.prefix + "-zk" + strconv.Itoa(i) }
func (q *quorum) cgroupFile(i int) string {
	return filepath.Join(q.l.runDir(), "zookeeper-"+strconv.Itoa(i)+".cgroup")
}
func (q *quorum) table() string { return q.prefix + "-quorum" }

// enter makes a cgroup per server and restarts the servers into them, one at a time: the other
// two keep the quorum, and the brokers' sessions move to them.
func (q *quorum) enter(ctx context.Context) error {
	q.teardown()
	q.h.Add(Op{Type: OpNote, Note: fmt.Sprintf("restarting the ZooKeeper servers one at a time into cgroups %s-zkI", q.prefix)})
	for _, i := range q.l.ZKServerIDs() {
		dir := filepath.Join(q.root, q.cgroupName(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("make cgroup %s: %w", dir, err)
		}
		if err := os.WriteFile(q.cgroupFile(i), []byte(dir+"\n"), 0o644); err != nil {
			return err
		}
		if _, err := q.l.Script(ctx, "restart", target(ZKServer(i))); err != nil {
			return err
		}
		if err := awaitEnsemble(ctx, q.l, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// split cuts server k from the other servers.
func (q *quorum) split(k int) error {
	own := func(i int) string {
		p, e := q.l.ZKQuorumPorts(i)
		return strconv.Itoa(p) + ", " + strconv.Itoa(e)
	}
	var others []string
	for _, i := range q.l.ZKServerIDs() {
		if i != k {
			others = append(others, own(i))
		}
	}
	script := fmt.Sprintf(`table inet %[1]s
delete table inet %[1]s
table inet %[1]s {
	chain output {
		type filter hook output priority filter; policy accept;
		tcp dport { %[2]s } drop
		tcp sport { %[2]s } drop
		socket cgroupv2 level 1 "%[3]s" tcp dport { %[4]s } drop
	}
	chain input {
		type filter hook input priority filter; policy accept;
		socket cgroupv2 level 1 "%[3]s" tcp sport { %[4]s } drop
	}
}
`, q.table(), own(k), filepath.Join(q.nftDir, q.cgroupName(k)), strings.Join(others, ", "))
	if err := execute(script, "nft", "-f", "-"); err != nil {
		return err
	}
	q.cut = k
	return nil
}

// heal removes the cut.
func (q *quorum) heal() error {
	if err := execute("", "nft", "delete", "table", "inet", q.table()); err != nil && q.cut != 0 {
		return err
	}
	q.cut = 0
	return nil
}

// leave heals the cut and forgets the cgroups: the servers stay in them until they next restart
// (a cgroup is removed once it is empty), which changes nothing else about them.
func (q *quorum) leave() error {
	err := q.heal()
	for _, i := range q.l.ZKServerIDs() {
		if rerr := os.Remove(q.cgroupFile(i)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// teardown removes what a run killed midway left: the table, and the cgroups no process is in.
func (q *quorum) teardown() {
	_ = execute("", "nft", "delete", "table", "inet", q.table()) // absent is fine
	for _, i := range q.l.ZKServerIDs() {
		_ = os.Remove(filepath.Join(q.root, q.cgroupName(i))) // busy or absent is fine
	}
}
