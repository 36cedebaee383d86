package zktest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/freeport"
	"github.com/zkafka/zkafka/internal/zkclient"
)

// Where the Debian "zookeeper" package puts its jars.
const (
	zookeeperJar = "/usr/share/java/zookeeper.jar"
	javaDir      = "/usr/share/java"
)

const (
	readyTimeout  = 30 * time.Second
	readyInterval = 50 * time.Millisecond
	stopTimeout   = 10 * time.Second
)

// ErrNotInstalled reports that ZooKeeper or Java is missing on this machine.
var ErrNotInstalled = errors.New("zktest: ZooKeeper is not installed (need java and " + zookeeperJar +
	"); run ./scripts/test.sh, which installs it")

// Options configure a test ZooKeeper server.
type Options struct {
	// TickTime is ZooKeeper's basic time unit. The minimum session timeout is 2*TickTime, so a short
	// tick lets tests expire sessions quickly. Zero means 200ms.
	TickTime time.Duration
	// Port is the client port on 127.0.0.1. Zero picks a free port.
	Port int
	// SASLUsers, when set, are the users (name to password) the server authenticates with SASL
	// DIGEST-MD5: its JAAS "Server" context's DigestLoginModule user_<name> options, with the
	// SASL authentication provider, so ACLs may name sasl:<name>.
	SASLUsers map[string]string
	// TLS, when set, opens a secure client port too (Server.SecureConnect), on Netty, that
	// requires client certificates and makes them the sessions' x509 identities.
	TLS *TLSOptions
	// MaxHeap is the JVM's -Xmx; empty means 64m, which a test's few thousand znodes fit in
	// (benchmarks of tens of thousands of partitions need more).
	MaxHeap string
	// Benchmark runs the JVM as ZooKeeper runs in production (both JIT compilers, the default
	// collector) instead of tuned for a test's quick start; a benchmark measures ZooKeeper's speed.
	Benchmark bool
}

// TLSOptions are the server's key and trust stores (JKS or PKCS12 files, one password).
type TLSOptions struct {
	KeyStore, TrustStore, Password string
}

// Server is a running (or stopped) standalone ZooKeeper.
type Server struct {
	// Connect is the connection string for zkclient.Config.Connect ("127.0.0.1:<port>"), without
	// a chroot.
	Connect string
	// SecureConnect is the TLS client port's connection string, when Options.TLS is set.
	SecureConnect string

	dir  string
	port int
	// jvmArgs are the -D options the server's configuration needs.
	jvmArgs   []string
	maxHeap   string
	benchmark bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been reaped
}

// Start launches a ZooKeeper server in tb.TempDir() and stops it when the test ends. It fails the
// test (it never skips) when ZooKeeper is not installed.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout+5*time.Second)
	defer cancel()
	s, err := StartServer(ctx, tb.TempDir(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			// What the server logged is often what explains a failure seen only on a loaded machine.
			tb.Logf("zktest: ZooKeeper's log %s ends:\n%s", s.logPath(), s.logTail())
		}
		if err := s.Stop(); err != nil {
			tb.Errorf("zktest: stop ZooKeeper: %v", err)
		}
	})
	return s
}

// StartServer writes a configuration into dir, starts ZooKeeper and waits until it serves
// requests. The caller must Stop (or Kill) it.
func StartServer(ctx context.Context, dir string, opts Options) (*Server, error) {
	classpath, err := classPath()
	if err != nil {
		return nil, err
	}
	if opts.TickTime == 0 {
		opts.TickTime = 200 * time.Millisecond
	}
	if opts.TickTime < time.Millisecond {
		return nil, fmt.Errorf("zktest: tick time %v is below ZooKeeper's 1ms resolution", opts.TickTime)
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	dataDir := filepath.Join(dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("zktest: create data dir: %w", err)
	}
	cfg := config(opts.TickTime, dataDir, port)
	s := &Server{
		Connect:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		dir:       dir,
		port:      port,
		maxHeap:   cmp.Or(opts.MaxHeap, "64m"),
		benchmark: opts.Benchmark,
	}
	if opts.SASLUsers != nil {
		jaas := filepath.Join(dir, "zookeeper_jaas.conf")
		if err := os.WriteFile(jaas, []byte(serverJAAS(opts.SASLUsers)), 0o600); err != nil {
			return nil, fmt.Errorf("zktest: write JAAS file: %w", err)
		}
		cfg += "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n"
		s.jvmArgs = append(s.jvmArgs, "-Djava.security.auth.login.config="+jaas)
	}
	if opts.TLS != nil {
		securePort, err := freePort()
		if err != nil {
			return nil, err
		}
		s.SecureConnect = net.JoinHostPort("127.0.0.1", strconv.Itoa(securePort))
		cfg += fmt.Sprintf(`secureClientPort=%d
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=%s
ssl.keyStore.password=%s
ssl.trustStore.location=%s
ssl.trustStore.password=%s
ssl.clientAuth=need
authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider
`, securePort, opts.TLS.KeyStore, opts.TLS.Password, opts.TLS.TrustStore, opts.TLS.Password)
	}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("zktest: write config: %w", err)
	}
	if err := s.start(ctx, classpath); err != nil {
		return nil, err
	}
	return s, nil
}

// config renders a standalone zoo.cfg. maxSessionTimeout is raised above ZooKeeper's default of
// 20*tickTime so that the session timeout a client asks for (Kafka's 18s default, or a short test
// value) is the one it gets.
func config(tick time.Duration, dataDir string, port int) string {
	return fmt.Sprintf(`tickTime=%d
initLimit=10
syncLimit=5
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
maxSessionTimeout=60000
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,stat,mntr,conf
`, tick.Milliseconds(), dataDir, port)
}

// serverJAAS is a ZooKeeper server's JAAS file with users for SASL DIGEST-MD5.
func serverJAAS(users map[string]string) string {
	var b strings.Builder
	b.WriteString("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required")
	for _, name := range slices.Sorted(maps.Keys(users)) {
		fmt.Fprintf(&b, "\n  user_%s=%q", name, users[name])
	}
	b.WriteString(";\n};\n")
	return b.String()
}

// classPath finds the ZooKeeper jar and an SLF4J binding. slf4j-simple at WARN keeps the log file
// small but still explains a failed start; slf4j-nop is the quiet fallback; with neither, SLF4J
// only prints a warning and ZooKeeper runs without logs.
func classPath() (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", ErrNotInstalled
	}
	if _, err := os.Stat(zookeeperJar); err != nil {
		return "", ErrNotInstalled
	}
	cp := zookeeperJar
	// Netty's codec and resolver, which its handler needs for the secure port, are missing from
	// the class path in Debian's zookeeper.jar manifest.
	for _, jar := range []string{"netty-codec.jar", "netty-resolver.jar"} {
		if p := filepath.Join(javaDir, jar); fileExists(p) {
			cp += ":" + p
		}
	}
	for _, binding := range []string{"slf4j-simple.jar", "slf4j-nop.jar"} {
		if p := filepath.Join(javaDir, binding); fileExists(p) {
			return cp + ":" + p, nil
		}
	}
	return cp, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// freePort picks an unused port on 127.0.0.1 outside the ephemeral range. Its reservation ends at
// once, as ZooKeeper binds it within the second: another test drawing the same port then fails to
// listen on it. Should both bind-less windows meet, the start fails with the bind error from the log
// rather than hanging.
func freePort() (int, error) {
	port, release, err := freeport.Reserve(1, "127.0.0.1")
	if err != nil {
		return 0, err
	}
	release()
	return port, nil
}

// Addr is the client address, host:port, for raw TCP and four-letter words.
func (s *Server) Addr() string { return s.Connect }

// Dir is the directory holding zoo.cfg, the data directory and zookeeper.log.
func (s *Server) Dir() string { return s.dir }

func (s *Server) logPath() string { return filepath.Join(s.dir, "zookeeper.log") }

func (s *Server) start(ctx context.Context, classpath string) error {
	logFile, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zktest: open log: %w", err)
	}
	defer logFile.Close()

	args := []string{"-Xmx" + s.maxHeap}
	if !s.benchmark {
		args = append(args, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
	}
	args = append(args, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dzookeeper.admin.enableServer=false")
	args = append(args, s.jvmArgs...)
	args = append(args, "-cp", classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(s.dir, "zoo.cfg"))
	cmd := exec.Command("java", args...)
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Own process group so Stop and Kill reach everything the JVM starts; Pdeathsig so a test
	// binary that dies (a panic, a -timeout) does not leave a JVM behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zktest: start java: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status of a JVM we signal ourselves says nothing useful
		close(exited)
	}()

	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	if err := s.waitReady(ctx, exited); err != nil {
		_ = s.signal(syscall.SIGKILL, stopTimeout)
		return err
	}
	return nil
}

func (s *Server) waitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(readyInterval)
	defer tick.Stop()
	for {
		if serving(ctx, s.Addr()) {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("zktest: ZooKeeper on %s exited during start-up; log %s:\n%s",
				s.Addr(), s.logPath(), s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("zktest: ZooKeeper on %s not serving: %w; log %s:\n%s",
				s.Addr(), ctx.Err(), s.logPath(), s.logTail())
		case <-tick.C:
		}
	}
}

// serving reports whether the server answers "srvr" with a Mode line, which it does only once it
// accepts sessions.
func serving(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := zkclient.ServerMode(ctx, addr)
	return err == nil
}

func (s *Server) logTail() string {
	b, err := os.ReadFile(s.logPath())
	if err != nil {
		return "(" + err.Error() + ")"
	}
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// Stop shuts ZooKeeper down with SIGTERM, escalating to SIGKILL if it has not exited within 10s.
// Stopping a stopped server is a no-op.
func (s *Server) Stop() error {
	return s.signal(syscall.SIGTERM, stopTimeout)
}

// Kill ends ZooKeeper with SIGKILL, as a crash would, and waits until it has exited.
func (s *Server) Kill() error {
	return s.signal(syscall.SIGKILL, stopTimeout)
}

// Pause stops ZooKeeper with SIGSTOP: connections stay open but nothing is
// answered, as in a long GC pause. Requests in flight stay in flight.
// It returns once every thread of the JVM is stopped.
func (s *Server) Pause() error {
	if err := s.signalOnly(syscall.SIGSTOP); err != nil {
		return err
	}
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for !ProcessStopped(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("zktest: ZooKeeper did not stop after SIGSTOP")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// Resume continues a paused ZooKeeper with SIGCONT.
func (s *Server) Resume() error { return s.signalOnly(syscall.SIGCONT) }

func (s *Server) signalOnly(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("zktest: ZooKeeper is not running")
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("zktest: signal ZooKeeper: %w", err)
	}
	return nil
}

// Restart stops the server if it runs and starts it again with the same port, configuration and
// data directory.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	classpath, err := classPath()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout+5*time.Second)
	defer cancel()
	return s.start(ctx, classpath)
}

// signal sends sig to the server's process group and waits for the JVM to exit, sending SIGKILL
// if it is still there after timeout.
func (s *Server) signal(sig syscall.Signal, timeout time.Duration) error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd, s.exited = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pgid := cmd.Process.Pid
	select {
	case <-exited:
		return nil
	default:
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("zktest: signal ZooKeeper: %w", err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(timeout):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("zktest: kill ZooKeeper: %w", err)
	}
	<-exited
	return nil
}

// ProcessStopped reports whether every thread of pid is in the stopped state
// (after SIGSTOP), read from /proc.
func ProcessStopped(pid int) bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		return false
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// The state follows the parenthesised command name: "pid (comm) T ...".
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}
