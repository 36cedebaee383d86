package dockertest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/freeport"
	"github.com/zkafka/zkafka/internal/wait"
)

// RequireEnv names the variable that turns a missing Docker engine from a
// skip into a failure.
const RequireEnv = "ZKAFKA_REQUIRE_DOCKER"

// Root is the repository's top directory, where the compose files are.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var engine struct {
	once    sync.Once
	err     error
	compose []string // "docker compose" (v2) or "docker-compose" (v1)
}

// RequireEngine skips t, in one line, when no Docker engine answers, or fails
// it when RequireEnv is set.
func RequireEngine(t testing.TB) {
	t.Helper()
	engine.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
			engine.err = fmt.Errorf("no Docker engine answers (docker info: %v: %s)", err, firstLine(out))
			return
		}
		if exec.CommandContext(ctx, "docker", "compose", "version").Run() == nil {
			engine.compose = []string{"docker", "compose"}
		} else if _, err := exec.LookPath("docker-compose"); err == nil {
			engine.compose = []string{"docker-compose"}
		} else {
			engine.err = fmt.Errorf("a Docker engine answers but neither `docker compose` nor docker-compose is installed")
		}
	})
	if engine.err == nil {
		return
	}
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%v, and %s is set", engine.err, RequireEnv)
	}
	t.Skip(engine.err)
}

// ComposeCommand is the compose command line of this machine: "docker
// compose" when the v2 plugin is there, else "docker-compose".
func ComposeCommand(t testing.TB) []string {
	t.Helper()
	RequireEngine(t)
	return engine.compose
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

var images struct {
	once sync.Once
	err  error
}

// BuildImages runs scripts/docker-images.sh once per test binary: the broker
// and ZooKeeper images of docker-compose.offline.yml, from the engine's cache
// when it has them.
func BuildImages(t testing.TB) {
	t.Helper()
	RequireEngine(t)
	images.once.Do(func() {
		start := time.Now()
		cmd := exec.Command("./scripts/docker-images.sh")
		cmd.Dir = Root()
		out, err := cmd.CombinedOutput()
		if err != nil {
			images.err = fmt.Errorf("scripts/docker-images.sh: %v\n%s", err, out)
			return
		}
		t.Logf("scripts/docker-images.sh took %v", time.Since(start).Round(time.Second))
	})
	if images.err != nil {
		t.Fatal(images.err)
	}
}

// The compose files of the two topologies and of the secure cluster, on the
// offline images.
var (
	Single   = []string{"docker-compose.yml", "docker-compose.offline.yml"}
	Ensemble = []string{"docker-compose.yml", "docker-compose.ensemble.yml", "docker-compose.offline.yml", "docker-compose.ensemble-offline.yml"}
	Secure   = []string{"docker-compose.yml", "docker-compose.secure.yml", "docker-compose.offline.yml", "docker-compose.secure-offline.yml"}
)

// Project is one compose project: its own name, so its containers, networks
// and volumes are its own, and its own host ports.
type Project struct {
	t     testing.TB
	Name  string
	Files []string // absolute paths, in order
	// BrokerPorts are the host ports of kafka1..3's EXTERNAL listeners;
	// ZooKeeperPorts those of zookeeper (and zoo2, zoo3 in the ensemble).
	BrokerPorts    [3]int
	ZooKeeperPorts [3]int
	uiPort         int
	// DashboardPort is the host port of the ui service (zkafka ui).
	DashboardPort int
}

// reservePort picks a host port for a project to publish, free on every interface as Docker binds
// them, and held until the test ends (after its `down -v`), so two projects never publish one port.
func reservePort(t testing.TB) int {
	t.Helper()
	port, release, err := freeport.Reserve(1, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return port
}

// NewProject prepares a project of files (relative to the repository) plus
// a generated override that gives every broker sessionTimeout as its
// ZooKeeper session timeout and a healthcheck every 2 s instead of 5 s (the
// same check), builds the images and registers `down -v` for the end of the
// test. Nothing is started yet.
func NewProject(t testing.TB, files []string, sessionTimeout time.Duration) *Project {
	t.Helper()
	BuildImages(t)
	p := &Project{t: t, Name: fmt.Sprintf("zkafkatest%08x", rand.Uint32())}
	for _, f := range files {
		p.Files = append(p.Files, filepath.Join(Root(), f))
	}
	var override strings.Builder
	override.WriteString("services:\n")
	for n := 1; n <= 3; n++ {
		fmt.Fprintf(&override, "  kafka%d:\n    environment:\n      KAFKA_ZOOKEEPER_SESSION_TIMEOUT_MS: %q\n", n, strconv.Itoa(int(sessionTimeout.Milliseconds())))
		override.WriteString("    healthcheck:\n      interval: 2s\n")
	}
	p.Override("test-settings.yml", override.String())
	for i := range 3 {
		p.BrokerPorts[i] = reservePort(t)
		p.ZooKeeperPorts[i] = reservePort(t)
	}
	p.uiPort = reservePort(t)
	p.DashboardPort = reservePort(t)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := p.Compose(time.Minute, "logs", "--no-color", "--tail", "60")
			t.Logf("%s logs:\n%s", p.Name, out)
		}
		if out, err := p.Compose(3*time.Minute, "down", "-v", "--remove-orphans", "--timeout", "5"); err != nil {
			t.Errorf("%s down -v: %v\n%s", p.Name, err, out)
		}
	})
	return p
}

// Override adds a compose file with the given text after the project's
// files, as a user's own -f override would come last.
func (p *Project) Override(name, yaml string) {
	p.t.Helper()
	path := filepath.Join(p.t.TempDir(), name)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.Files = append(p.Files, path)
}

// Env is the environment compose runs in: the project's name, files and
// ports, as a user would export them.
func (p *Project) Env() []string {
	env := append(os.Environ(),
		"COMPOSE_PROJECT_NAME="+p.Name,
		"COMPOSE_FILE="+strings.Join(p.Files, string(os.PathListSeparator)),
		"ZKAFKA_ZK_PORT="+strconv.Itoa(p.ZooKeeperPorts[0]),
		"ZKAFKA_ZK_PORT_2="+strconv.Itoa(p.ZooKeeperPorts[1]),
		"ZKAFKA_ZK_PORT_3="+strconv.Itoa(p.ZooKeeperPorts[2]),
		"ZKAFKA_UI_PORT="+strconv.Itoa(p.uiPort),
		"ZKAFKA_DASHBOARD_PORT="+strconv.Itoa(p.DashboardPort),
	)
	for i, port := range p.BrokerPorts {
		env = append(env, fmt.Sprintf("ZKAFKA_PORT_%d=%d", i+1, port))
	}
	return env
}

// Compose runs a compose subcommand of the project, returning its stdout
// and stderr together.
func (p *Project) Compose(timeout time.Duration, args ...string) (string, error) {
	return p.ComposeInput(timeout, "", args...)
}

// ComposeInput is Compose with stdin.
func (p *Project) ComposeInput(timeout time.Duration, stdin string, args ...string) (string, error) {
	cmdline := append(append([]string{}, ComposeCommand(p.t)...), args...)
	return run(timeout, Root(), p.Env(), stdin, cmdline...)
}

// MustCompose is Compose, failing the test on an error.
func (p *Project) MustCompose(timeout time.Duration, args ...string) string {
	p.t.Helper()
	out, err := p.Compose(timeout, args...)
	if err != nil {
		p.t.Fatalf("compose %v: %v\n%s", args, err, out)
	}
	return out
}

// Up starts the services (all but the optional ones when none are named)
// and waits until every container of them reports healthy.
func (p *Project) Up(services ...string) {
	p.t.Helper()
	p.MustCompose(5*time.Minute, append([]string{"up", "-d"}, services...)...)
	p.WaitHealthy(services...)
}

// WaitHealthy polls the healthcheck status of the services' containers (all
// the project's when none are named), as `docker compose ps` shows it, until
// every one is healthy.
func (p *Project) WaitHealthy(services ...string) {
	p.t.Helper()
	ids := strings.Fields(p.MustCompose(time.Minute, append([]string{"ps", "-a", "-q"}, services...)...))
	if len(ids) == 0 {
		p.t.Fatalf("no containers for %v", services)
	}
	for _, id := range ids {
		var last string
		wait.For(p.t, 3*time.Minute, "container "+id[:12]+" healthy", func() bool {
			out, err := Docker(p.t, time.Minute, "inspect", "--format", "{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}", id)
			last = strings.TrimSpace(out)
			if err == nil && strings.Contains(last, " exited") {
				logs, _ := Docker(p.t, time.Minute, "logs", "--tail", "40", id)
				p.t.Fatalf("%s while starting:\n%s", last, logs)
			}
			return err == nil && strings.HasSuffix(last, " running healthy")
		})
	}
}

// For returns the project as seen by t, a subtest of the one that made it.
func (p *Project) For(t testing.TB) *Project {
	q := *p
	q.t = t
	return &q
}

func (p *Project) logs(service string) string {
	out, _ := p.Compose(time.Minute, "logs", "--no-color", "--tail", "40", service)
	return out
}

// Container returns the id of the service's container.
func (p *Project) Container(service string) string {
	p.t.Helper()
	id := strings.TrimSpace(p.MustCompose(time.Minute, "ps", "-a", "-q", service))
	if id == "" || strings.Contains(id, "\n") {
		p.t.Fatalf("service %s has containers %q, want one", service, id)
	}
	return id
}

// Network is the full name of one of the project's networks.
func (p *Project) Network(name string) string { return p.Name + "_" + name }

// Volume is the full name of one of the project's volumes.
func (p *Project) Volume(name string) string { return p.Name + "_" + name }

// Docker runs a docker command.
func Docker(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	RequireEngine(t)
	return run(timeout, Root(), os.Environ(), "", append([]string{"docker"}, args...)...)
}

// MustDocker is Docker, failing the test on an error.
func MustDocker(t testing.TB, timeout time.Duration, args ...string) string {
	t.Helper()
	out, err := Docker(t, timeout, args...)
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return out
}

func run(timeout time.Duration, dir string, env []string, stdin string, cmdline ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdline[0], cmdline[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%v: timed out after %v", cmdline, timeout)
	}
	return out.String(), err
}
