package chaos

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Local is the cluster scripts/cluster.sh runs: ZooKeeper and brokers 1–3 as processes, with their pid
// files, logs and data under Data. Every process change goes through cluster.sh, so the tool and a
// user at the terminal see and do the same things. The ZKAFKA_* variables that select a second
// cluster (ZKAFKA_BASE_PORT, ZKAFKA_ZK_PORT, ZKAFKA_DATA, ZKAFKA_BIN) are read from Env.
type Local struct {
	Root     string   // the repository: Root/scripts/cluster.sh
	Data     string   // ZKAFKA_DATA, absolute
	BasePort int      // broker N listens on BasePort+N-1
	ZKPort   int      // ZooKeeper's client port on 127.0.0.1
	Brokers  []int32  // 1, 2, 3
	Env      []string // the environment cluster.sh runs with
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
	// The last value of a key counts, as os/exec passes it to cluster.sh: a caller overrides a
	// variable of its own environment by appending it.
	get := func(k string) string {
		for _, kv := range slices.Backward(env) {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	l := &Local{Root: root, BasePort: 9092, ZKPort: 2181, Brokers: []int32{1, 2, 3}, Env: env}
	l.Data = filepath.Join(root, "data")
	if d := get("ZKAFKA_DATA"); d != "" {
		l.Data = d
		if !filepath.IsAbs(d) {
			l.Data = filepath.Join(root, d)
		}
	}
	for _, v := range []struct {
		key string
		dst *int
	}{{"ZKAFKA_BASE_PORT", &l.BasePort}, {"ZKAFKA_ZK_PORT", &l.ZKPort}} {
		if s := get(v.key); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("%s=%q: %w", v.key, s, err)
			}
			*v.dst = n
		}
	}
	return l, nil
}

// Port is broker n's port.
func (l *Local) Port(n int32) int { return l.BasePort + int(n) - 1 }

// ZooKeeper is the connect string of the cluster's ZooKeeper, from this machine.
func (l *Local) ZooKeeper() string { return "127.0.0.1:" + strconv.Itoa(l.ZKPort) }

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
	cmd := exec.CommandContext(ctx, filepath.Join(l.Root, "scripts", "cluster.sh"), args...)
	cmd.Dir, cmd.Env = l.Root, l.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("cluster.sh %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// target is cluster.sh's name for broker n, or zk for n = 0.
func target(n int32) string {
	if n == 0 {
		return "zk"
	}
	return strconv.Itoa(int(n))
}

// Kill kill -9s broker n (ZooKeeper for 0).
func (l *Local) Kill(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "kill", target(n))
	return err
}

// Start starts broker n (ZooKeeper for 0) and waits until it listens.
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

// Pause SIGSTOPs broker n (ZooKeeper for 0): alive but silent.
func (l *Local) Pause(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "pause", target(n))
	return err
}

// Resume SIGCONTs broker n (ZooKeeper for 0).
func (l *Local) Resume(ctx context.Context, n int32) error {
	_, err := l.Script(ctx, "resume", target(n))
	return err
}

// Pid reads the pid file of broker n (ZooKeeper for 0).
func (l *Local) Pid(n int32) (int, error) {
	name := "zookeeper"
	if n != 0 {
		name = "broker-" + strconv.Itoa(int(n))
	}
	b, err := os.ReadFile(filepath.Join(l.runDir(), name+".pid"))
	if err != nil {
		return 0, fmt.Errorf("%s is not running: %w", name, err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Running reports whether broker n (ZooKeeper for 0) has a live process, paused or not.
func (l *Local) Running(n int32) bool {
	pid, err := l.Pid(n)
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	return err == nil && !bytes.Contains(b, []byte("\nState:\tZ"))
}
