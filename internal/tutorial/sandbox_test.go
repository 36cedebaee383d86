package tutorial

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// sandbox is a copy of the repository's user-facing layout (scripts/,
// config/, bin/zkafka) in a temporary directory, with its own ports.
type sandbox struct {
	t        testing.TB
	root     string
	basePort int // broker N listens on basePort+N-1
	zkPort   int
	env      []string
}

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	root := t.TempDir()
	for _, dir := range []string{"scripts", "config", "bin"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFiles(t, filepath.Join(repo, "scripts"), filepath.Join(root, "scripts"), "*.sh")
	copyFiles(t, filepath.Join(repo, "config"), filepath.Join(root, "config"), "*")
	// A killed broker leaves when its ZooKeeper session expires: 6 s here
	// instead of the files' 18 s, to keep the tests short.
	for n := 1; n <= 3; n++ {
		path := filepath.Join(root, "config", fmt.Sprintf("server-%d.properties", n))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		short := strings.Replace(string(data), "zookeeper.session.timeout.ms=18000", "zookeeper.session.timeout.ms=6000", 1)
		if short == string(data) {
			t.Fatalf("%s does not set zookeeper.session.timeout.ms=18000", path)
		}
		if err := os.WriteFile(path, []byte(short), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The scripts rebuild bin/zkafka only when a .go file is newer; the
	// sandbox has none, so they run this test's build.
	copyFile(t, testcluster.Binary(t), filepath.Join(root, "bin", "zkafka"), 0o755)

	s := &sandbox{t: t, root: root, zkPort: testcluster.FreePort(t), basePort: testcluster.FreePortRun(t, 3)}
	s.env = append(os.Environ(),
		"ZKAFKA_BASE_PORT="+strconv.Itoa(s.basePort),
		"ZKAFKA_ZK_PORT="+strconv.Itoa(s.zkPort),
		"ZKAFKA_BIN="+filepath.Join(root, "bin", "zkafka"),
	)
	// Whatever happens, nothing this sandbox started outlives the test.
	t.Cleanup(func() {
		out, err := s.run(2*time.Minute, "./scripts/cluster.sh down")
		if err != nil {
			t.Errorf("cluster.sh down at cleanup: %v\n%s", err, out)
		}
	})
	return s
}

// run runs a bash command line in the sandbox root, returning stdout and
// stderr together.
func (s *sandbox) run(timeout time.Duration, cmdline string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", cmdline)
	cmd.Dir = s.root
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%q: timed out after %v", cmdline, timeout)
	}
	return out.String(), err
}

// mustRun fails the test unless the command succeeds.
func (s *sandbox) mustRun(timeout time.Duration, cmdline string) string {
	s.t.Helper()
	out, err := s.run(timeout, cmdline)
	if err != nil {
		s.t.Fatalf("%s: %v\n%s", cmdline, err, out)
	}
	return out
}

func copyFiles(t testing.TB, from, to, pattern string) {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(from, pattern))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no %s in %s: %v", pattern, from, err)
	}
	for _, m := range matches {
		info, err := os.Stat(m)
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, m, filepath.Join(to, filepath.Base(m)), info.Mode().Perm())
	}
}

func copyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}
