package chaos

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Local is the cluster scripts/cluster.sh runs: ZooKeeper (one server or an ensemble) and brokers
// 1–3 as processes, with their pid files, logs and data under Data. Every process change goes through
// cluster.sh, so the tool and a user at the terminal see and do the same things. The ZKAFKA_*
// variables that select a second cluster (ZKAFKA_BASE_PORT, ZKAFKA_ZK_PORT, ZKAFKA_ZK_SERVERS,
// ZKAFKA_DATA, ZKAFKA_BIN) are read from Env.
//
// A process is named by an int32: broker N by N, ZooKeeper (every server of it) by 0, and server I
// of an ensemble by ZKServer(I).
type Local struct {
	Root      string   // the repository: Root/scripts/cluster.sh
	Data      string   // ZKAFKA_DATA, absolute
	BasePort  int      // broker N listens on BasePort+N-1
	ZKPort    int      // ZooKeeper's (the first server's) client port on 127.0.0.1
	ZKServers int      // ZKAFKA_ZK_SERVERS: 1, or the ensemble's size
	BrokerIDs []int32  // 1, 2, 3
	Env       []string // the environment cluster.sh runs with
}

// Ensemble reports whether ZooKeeper is an ensemble.
func (l *Local) Ensemble() bool { return l.ZKServers > 1 }

// ZKServerIDs are the ensemble's server ids, 1..ZKServers (none for a single server).
func (l *Local) ZKServerIDs() []int {
	var ids []int
	for i := 1; l.Ensemble() && i <= l.ZKServers; i++ {
		ids = append(ids, i)
	}
	return ids
}

// ZKClientPort is server i's client port (i 0 or 1 for a single server).
func (l *Local) ZKClientPort(i int) int { return l.ZKPort + max(i, 1) - 1 }

// ZKQuorumPorts are server i's quorum (follower to leader) and leader-election ports, as
// cluster.sh writes them into every server's zoo.cfg.
func (l *Local) ZKQuorumPorts(i int) (quorum, election int) {
	return l.ZKPort + l.ZKServers + i - 1, l.ZKPort + 2*l.ZKServers + i - 1
}

// NewLocal describes the cluster that cluster.sh in root runs with environment env (os.Environ()
// for the user's).
func NewLocal(root string, env []string) (*Local, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "scripts", "cluster.sh")); err != nil {
		return nil, fmt.Errorf("no scripts/cluster.sh in %s (run from the repository, or give --root): %w", root, err)
	}
	l := &Local{Root: root, BasePort: 9092, ZKPort: 2181, ZKServers: 1, BrokerIDs: []int32{1, 2, 3}, Env: env}
	l.Data = filepath.Join(root, "data")
	if d := envValue(env, "ZKAFKA_DATA"); d != "" {
		l.Data = d
		if !filepath.IsAbs(d) {
			l.Data = filepath.Join(root, d)
		}
	}
	for _, v := range []struct {
		key string
		dst *int
	}{{"ZKAFKA_BASE_PORT", &l.BasePort}, {"ZKAFKA_ZK_PORT", &l.ZKPort}, {"ZKAFKA_ZK_SERVERS", &l.ZKServers}} {
		n, err := envInt(env, v.key, *v.dst)
		if err != nil {
			return nil, err
		}
		*v.dst = n
	}
	return l, nil
}

// envValue is key's value in env, "" when unset. The last value counts, as os/exec passes it on to
// cluster.sh or compose: a caller overrides a variable of its own environment by appending it.
func envValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// envInt is key's value in env as a number, def when unset.
func envInt(env []string, key string, def int) (int, error) {
	s := envValue(env, key)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", key, s, err)
	}
	return n, nil
}

// Brokers are broker ids 1–3.
func (l *Local) Brokers() []int32 { return l.BrokerIDs }

func (l *Local) network(h *History) (topology, error) { return newLocalNet(l, h), nil }

func (l *Local) quorum(h *History) (quorumCutter, error) { return newQuorum(l, h) }

// Port is broker n's port.
func (l *Local) Port(n int32) int { return l.BasePort + int(n) - 1 }

// ZooKeeper is the connect string of the cluster's ZooKeeper, every server, from this machine.
func (l *Local) ZooKeeper() string { return l.zkConnect("127.0.0.1") }

// zkConnect is the connect string of every server, reached at host.
func (l *Local) zkConnect(host string) string {
	var s []string
	for i := range max(l.ZKServers, 1) {
		s = append(s, net.JoinHostPort(host, strconv.Itoa(l.ZKClientPort(i+1))))
	}
	return strings.Join(s, ",")
}

// LogDir is broker n's log.dirs.
func (l *Local) LogDir(n int32) string { return filepath.Join(l.Data, "broker-"+strconv.Itoa(int(n))) }

// LogFile is the file cluster.sh writes broker n's log to.
func (l *Local) LogFile(n int32) string {
	return filepath.Join(l.Data, "logs", "broker-"+strconv.Itoa(int(n))+".log")
}

// Addr is broker n's address from this machine: 127.0.0.1, or its address in the network namespace
// its netns file names.
func (l *Local) Addr(n int32) string {
	host := "127.0.0.1"
	if b, err := os.ReadFile(l.netnsFile(n)); err == nil {
		if f := strings.Fields(string(b)); len(f) == 3 {
			host = f[1]
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(l.Port(n)))
}

// netnsFile is where cluster.sh looks for broker n's network namespace.
func (l *Local) netnsFile(n int32) string {
	return filepath.Join(l.runDir(), "broker-"+strconv.Itoa(int(n))+".netns")
}

// runDir holds the pid files (and the namespace files cluster.sh reads).
func (l *Local) runDir() string { return filepath.Join(l.Data, "run") }

// Script runs scripts/cluster.sh with args and returns its output.
func (l *Local) Script(ctx context.Context, args ...string) (string, error) {
	return command(ctx, l.Root, l.Env, "", "cluster.sh", filepath.Join(l.Root, "scripts", "cluster.sh"), args...)
}

// target is cluster.sh's name for process n: broker N, zk, or zkI.
func target(n int32) string {
	switch {
	case n == 0:
		return "zk"
	case n < 0:
		return "zk" + strconv.Itoa(int(-n))
	}
	return strconv.Itoa(int(n))
}

// pidName is the name of process n's pid file.
func pidName(n int32) string {
	switch {
	case n == 0:
		return "zookeeper"
	case n < 0:
		return "zookeeper-" + strconv.Itoa(int(-n))
	}
	return "broker-" + strconv.Itoa(int(n))
}

// Kill kill -9s process n.
func (l *Local) Kill(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "kill", target(n))
	return err
}

// Start starts process n and waits until it listens.
func (l *Local) Start(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "start", target(n))
	return err
}

// Stop stops broker n with SIGTERM: a controlled shutdown.
func (l *Local) Stop(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "stop", target(n))
	return err
}

// Restart stops broker n (SIGTERM: a controlled shutdown) and starts it again.
func (l *Local) Restart(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "restart", target(n))
	return err
}

// Pause SIGSTOPs process n: alive but silent.
func (l *Local) Pause(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "pause", target(n))
	return err
}

// Resume SIGCONTs process n.
func (l *Local) Resume(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "resume", target(n))
	return err
}

// Pid reads the pid file of process n (a single ZooKeeper server for 0).
func (l *Local) Pid(n int32) (int, error) {
	name := pidName(n)
	b, err := os.ReadFile(filepath.Join(l.runDir(), name+".pid"))
	if err != nil {
		return 0, fmt.Errorf("%s is not running: %w", name, err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Running reports whether process n has a live process, paused or not; for ZooKeeper (0), every
// server of it.
func (l *Local) Running(n int32) bool {
	if n == 0 && l.Ensemble() {
		for _, i := range l.ZKServerIDs() {
			if !l.Running(ZKServer(i)) {
				return false
			}
		}
		return true
	}
	pid, err := l.Pid(n)
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	return err == nil && !bytes.Contains(b, []byte("\nState:\tZ"))
}
