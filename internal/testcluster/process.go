package testcluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/freeport"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zktest"
)

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary builds cmd/zkafka once per test binary and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "zkafka-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "zkafka")
		cmd := exec.Command("go", "build", "-o", build.path, "./cmd/zkafka")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/zkafka: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// Process is a broker running as its own zkafka process, for tests that must
// kill -9 it.
type Process struct {
	t     testing.TB
	props map[string]string
	dir   string
	cmd   *exec.Cmd
	log   *logBuffer
	done  chan struct{}
}

// logBuffer collects a process's output; Log may read it while the process
// still writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FreePort returns a port on 127.0.0.1 that was free a moment ago, outside the kernel's ephemeral
// range and reserved until the test ends (see package freeport).
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePortRun(t, 1)
}

// FreePortRun returns the first of n consecutive ports on 127.0.0.1 that were free a moment ago, for
// a cluster whose brokers listen on a base port and the ports after it.
func FreePortRun(t testing.TB, n int) int {
	t.Helper()
	base, release, err := freeport.Reserve(n, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return base
}

// StartProcess writes props to a server.properties and runs
// `zkafka broker` on it until the test ends (or Kill/Terminate).
func StartProcess(t testing.TB, props map[string]string) *Process {
	t.Helper()
	p := &Process{t: t, props: props, dir: t.TempDir()}
	p.start()
	t.Cleanup(func() { p.Kill() })
	// The broker's own account of a failed test: a restart that never registered says why only here.
	t.Cleanup(func() {
		if t.Failed() {
			lines := strings.Split(strings.TrimRight(p.log.String(), "\n"), "\n")
			t.Logf("broker %s, the last lines of its latest run:\n%s", props["broker.id"], strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return p
}

func (p *Process) start() {
	p.t.Helper()
	var b bytes.Buffer
	keys := make([]string, 0, len(p.props))
	for k := range p.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, p.props[k])
	}
	path := filepath.Join(p.dir, "server.properties")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.log = &logBuffer{}
	p.cmd = exec.Command(Binary(p.t), "broker", path)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
}

// Restart starts the process again with the same properties.
func (p *Process) Restart() { p.start() }

// Kill sends SIGKILL and waits for the process to exit.
func (p *Process) Kill() { p.signal(syscall.SIGKILL) }

// Terminate sends SIGTERM and waits for a clean exit.
func (p *Process) Terminate() { p.signal(syscall.SIGTERM) }

// Pause stops the process (SIGSTOP) without ending it: its connections and
// ZooKeeper session stay open but it does nothing, like a stuck broker. The
// session expires if it stays paused past the session timeout.
func (p *Process) Pause() {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGSTOP)
	// The signal is only queued when kill returns; a thread running on the
	// other core may go on for a moment. Wait until every thread is stopped,
	// so nothing the process does can land after Pause.
	wait.For(p.t, 10*time.Second, "the broker process to stop", func() bool { return zktest.ProcessStopped(p.cmd.Process.Pid) })
}

// Resume continues a paused process (SIGCONT).
func (p *Process) Resume() { p.cmd.Process.Signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Errorf("broker process ignored %v for 30s; log:\n%s", sig, p.log)
	}
}

// Exited reports whether the process has exited, and its exit code.
func (p *Process) Exited() (bool, int) {
	select {
	case <-p.done:
		return true, p.cmd.ProcessState.ExitCode()
	default:
		return false, 0
	}
}

// Pid is the process id of the latest start.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Log returns what the process (since its latest start) wrote so far.
func (p *Process) Log() string { return p.log.String() }
