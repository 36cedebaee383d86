package main

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/security"
)

// These tests check, without a Docker engine, that what the compose files say
// agrees with the broker's config parser, its CLI and the Dockerfile;
// internal/dockertest runs them.

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string                                `yaml:"image"`
	Build       any                                   `yaml:"build"`
	Hostname    string                                `yaml:"hostname"`
	Profiles    []string                              `yaml:"profiles"`
	Ports       []string                              `yaml:"ports"`
	Environment map[string]string                     `yaml:"environment"`
	Healthcheck struct{ Test []string }               `yaml:"healthcheck"`
	DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
	Volumes     []string                              `yaml:"volumes"`
	Command     []string                              `yaml:"command"`
	Entrypoint  []string                              `yaml:"entrypoint"`
}

func readCompose(t *testing.T, names ...string) composeFile {
	t.Helper()
	var merged composeFile
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		var f composeFile
		if err := yaml.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		merged = mergeCompose(merged, f)
	}
	return merged
}

// mergeCompose applies an override file as compose does for the fields used
// here: maps merge key by key, other set fields replace.
func mergeCompose(base, over composeFile) composeFile {
	if base.Services == nil {
		base.Services = map[string]composeService{}
		base.Volumes = map[string]any{}
	}
	maps.Copy(base.Volumes, over.Volumes)
	for name, o := range over.Services {
		s, ok := base.Services[name]
		if !ok {
			base.Services[name] = o
			continue
		}
		if s.Environment == nil {
			s.Environment = map[string]string{}
		}
		maps.Copy(s.Environment, o.Environment)
		if s.DependsOn == nil {
			s.DependsOn = map[string]struct{ Condition string }{}
		}
		maps.Copy(s.DependsOn, o.DependsOn)
		if o.Image != "" {
			s.Image = o.Image
		}
		if o.Hostname != "" {
			s.Hostname = o.Hostname
		}
		if o.Ports != nil {
			s.Ports = o.Ports
		}
		if o.Healthcheck.Test != nil {
			s.Healthcheck = o.Healthcheck
		}
		if o.Volumes != nil {
			s.Volumes = o.Volumes
		}
		if o.Command != nil {
			s.Command = o.Command
		}
		base.Services[name] = s
	}
	return base
}

var interpolation = regexp.MustCompile(`\$\{([A-Z0-9_]+):-([^}]*)\}`)

// environ renders a service's environment as os.Environ does, with compose's
// ${VAR:-default} taking its default.
func (s composeService) environ() []string {
	var env []string
	for k, v := range s.Environment {
		env = append(env, k+"="+interpolation.ReplaceAllString(v, "$2"))
	}
	return env
}

func TestDockerCompose(t *testing.T) {
	t.Run("single", func(t *testing.T) { checkCompose(t, readCompose(t, "docker-compose.yml"), 1) })
	t.Run("ensemble", func(t *testing.T) {
		checkCompose(t, readCompose(t, "docker-compose.yml", "docker-compose.ensemble.yml"), 3)
	})
}

func checkCompose(t *testing.T, f composeFile, zookeepers int) {
	dataDir := dockerfileLogDirs(t)
	zkByHost := map[string]composeService{}
	myIDs := map[string]string{}
	for name, s := range f.Services {
		if s.Image != "zookeeper:3.8" {
			continue
		}
		zkByHost[s.Hostname] = s
		myIDs[s.Environment["ZOO_MY_ID"]] = s.Hostname
		if s.Environment["ZOO_ADMINSERVER_ENABLED"] != "false" {
			t.Errorf("%s: the AdminServer should be off (ZOO_ADMINSERVER_ENABLED)", name)
		}
		if !slices.Contains(strings.Split(s.Environment["ZOO_4LW_COMMANDS_WHITELIST"], ","), "srvr") {
			t.Errorf("%s: srvr, which the healthcheck uses, is not whitelisted", name)
		}
		if !slices.Equal(s.Healthcheck.Test, []string{"CMD", "zkServer.sh", "status"}) {
			t.Errorf("%s: healthcheck %v", name, s.Healthcheck.Test)
		}
	}
	if len(zkByHost) != zookeepers || len(myIDs) != zookeepers {
		t.Fatalf("%d ZooKeeper services with %d distinct ZOO_MY_IDs, want %d", len(zkByHost), len(myIDs), zookeepers)
	}
	if zookeepers > 1 {
		for id, host := range myIDs {
			entry := fmt.Sprintf("server.%s=%s:2888:3888;2181", id, host)
			for _, s := range zkByHost {
				if !slices.Contains(strings.Fields(s.Environment["ZOO_SERVERS"]), entry) {
					t.Errorf("%s: ZOO_SERVERS %q lacks %q", s.Hostname, s.Environment["ZOO_SERVERS"], entry)
				}
			}
		}
	}

	hostPorts := map[string]string{}
	var zkConnect string
	for n := 1; n <= 3; n++ {
		name := fmt.Sprintf("kafka%d", n)
		s, ok := f.Services[name]
		if !ok {
			t.Fatalf("no %s service", name)
		}
		if s.Hostname != name || s.Build == nil {
			t.Errorf("%s: hostname %q, build %v", name, s.Hostname, s.Build)
		}
		env := s.environ()
		for _, kv := range env {
			if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, envPrefix) {
				t.Errorf("%s: %s is not a KAFKA_* variable", name, k)
			}
		}
		props, err := brokerProperties("", env, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(props) != len(s.Environment) {
			t.Errorf("%s: %d variables gave %d properties: %v", name, len(s.Environment), len(props), props)
		}
		cfg, err := brokerconfig.New(props)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cfg.Unknown) > 0 {
			t.Errorf("%s: keys the broker does not know: %v", name, cfg.Unknown)
		}
		if cfg.BrokerID != int32(n) {
			t.Errorf("%s: broker.id %d", name, cfg.BrokerID)
		}
		if zkConnect == "" {
			zkConnect = cfg.ZooKeeperConnect
		}

		// INTERNAL: the service name on one container port, for brokers and containers.
		internal, ok := cfg.AdvertisedListener("INTERNAL")
		if !ok || internal.Host != name || cfg.InterBrokerListenerName != "INTERNAL" {
			t.Errorf("%s: INTERNAL advertised as %v, inter.broker.listener.name %s", name, internal, cfg.InterBrokerListenerName)
		}
		// EXTERNAL: localhost on the published host port, which maps to
		// the port the listener binds in the container.
		external, ok := cfg.AdvertisedListener("EXTERNAL")
		if !ok || external.Host != "localhost" {
			t.Errorf("%s: EXTERNAL advertised as %v", name, external)
		}
		bound := map[string]int32{}
		for _, l := range cfg.Listeners {
			bound[l.Name] = l.Port
		}
		if bound["INTERNAL"] != internal.Port {
			t.Errorf("%s: listeners %v do not bind the advertised INTERNAL port %d", name, cfg.Listeners, internal.Port)
		}
		wantPort := fmt.Sprintf("%d:%d", external.Port, bound["EXTERNAL"])
		if len(s.Ports) != 1 || interpolation.ReplaceAllString(s.Ports[0], "$2") != wantPort {
			t.Errorf("%s: ports %v, want [%s]", name, s.Ports, wantPort)
		}
		if other, dup := hostPorts[wantPort]; dup {
			t.Errorf("%s and %s publish the same port %s", name, other, wantPort)
		}
		hostPorts[wantPort] = name

		// Every ZooKeeper server it connects to is a service it waits for.
		for _, hp := range strings.Split(cfg.ZooKeeperConnect, ",") {
			host, port, err := net.SplitHostPort(hp)
			if _, isZK := zkByHost[host]; err != nil || !isZK || port != "2181" {
				t.Errorf("%s: zookeeper.connect entry %q is not a ZooKeeper service's client port", name, hp)
				continue
			}
			if s.DependsOn[host].Condition != "service_healthy" {
				t.Errorf("%s: depends_on %s is %+v, want condition service_healthy", name, host, s.DependsOn[host])
			}
		}
		if got := len(strings.Split(cfg.ZooKeeperConnect, ",")); got != zookeepers {
			t.Errorf("%s: zookeeper.connect %q names %d servers, want %d", name, cfg.ZooKeeperConnect, got, zookeepers)
		}

		// The healthcheck is our CLI against the INTERNAL listener.
		hc := s.Healthcheck.Test
		if len(hc) < 3 || hc[0] != "CMD" || hc[1] != "zkafka" || hc[2] != "broker-health" {
			t.Fatalf("%s: healthcheck %v is not [CMD zkafka broker-health ...]", name, hc)
		}
		if want := fmt.Sprintf("localhost:%d", internal.Port); !slices.Contains(hc, want) {
			t.Errorf("%s: healthcheck %v does not check %s", name, hc, want)
		}
		var stdout, stderr bytes.Buffer
		if code := run(append(slices.Clone(hc[2:]), "--timeout", "200ms"), &stdout, &stderr); code == 2 {
			t.Errorf("%s: healthcheck %v is a usage error: %s", name, hc, stderr.String())
		}

		// The data survives in a named volume that holds the image's log.dirs.
		if len(s.Volumes) != 1 {
			t.Fatalf("%s: volumes %v", name, s.Volumes)
		}
		vol, target, _ := strings.Cut(s.Volumes[0], ":")
		if _, ok := f.Volumes[vol]; !ok || !strings.HasPrefix(dataDir, target+"/") {
			t.Errorf("%s: volume %s (declared: %v) at %s does not hold log.dirs %s", name, vol, ok, target, dataDir)
		}
	}

	zn := f.Services["zoonavigator"]
	if !slices.Equal(zn.Profiles, []string{"ui"}) || zn.Environment["CONNECTION_ZKAFKA_CONN"] != zkConnect ||
		zn.Environment["AUTO_CONNECT_CONNECTION_ID"] != "ZKAFKA" {
		t.Errorf("zoonavigator: profiles %v, environment %v; want profile ui connected to %s", zn.Profiles, zn.Environment, zkConnect)
	}

	// The dashboard follows the brokers' ZooKeeper, asks the INTERNAL listeners, and is published on
	// the host's loopback only, as zkafka ui's default address would be.
	ui := f.Services["ui"]
	wantCommand := []string{"ui", "--zookeeper", zkConnect, "--bootstrap-server", "kafka1:19092,kafka2:19092,kafka3:19092", "--listen", "0.0.0.0:8080"}
	if !slices.Equal(ui.Profiles, []string{"ui"}) || !slices.Equal(ui.Command, wantCommand) || ui.Build == nil {
		t.Errorf("ui: profiles %v, command %v, build %v; want profile ui, command %v", ui.Profiles, ui.Command, ui.Build, wantCommand)
	}
	if len(ui.Ports) != 1 || interpolation.ReplaceAllString(ui.Ports[0], "$2") != "127.0.0.1:8080:8080" {
		t.Errorf("ui: ports %v, want [127.0.0.1:8080:8080]", ui.Ports)
	}
}

// dockerfileLogDirs checks the Dockerfile's promises (static, non-root,
// multi-arch, healthcheck through our CLI) and returns its KAFKA_LOG_DIRS.
func dockerfileLogDirs(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	for _, want := range []string{
		"FROM --platform=$BUILDPLATFORM golang:1.26 AS build",
		"CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH",
		"USER 65532:65532",
		`CMD ["/usr/local/bin/zkafka", "broker-health"`,
		`ENTRYPOINT ["/usr/local/bin/zkafka"]`,
		`CMD ["broker"]`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	m := regexp.MustCompile(`(?m)^ENV KAFKA_LOG_DIRS=(\S+)$`).FindStringSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile sets no KAFKA_LOG_DIRS")
	}
	if key, ok := envKey("KAFKA_LOG_DIRS"); !ok || key != "log.dirs" {
		t.Fatalf("KAFKA_LOG_DIRS maps to %q", key)
	}
	return m[1]
}

// TestDockerComposeOffline checks that the offline overrides only swap
// images: every service they name exists in the files they override, and
// they set nothing but image and build.
func TestDockerComposeOffline(t *testing.T) {
	for _, tc := range []struct {
		override string
		base     []string
	}{
		{"docker-compose.offline.yml", []string{"docker-compose.yml"}},
		{"docker-compose.ensemble-offline.yml", []string{"docker-compose.yml", "docker-compose.ensemble.yml"}},
		{"docker-compose.secure-offline.yml", []string{"docker-compose.yml", "docker-compose.secure.yml"}},
	} {
		base := readCompose(t, tc.base...)
		data, err := os.ReadFile(filepath.Join("..", "..", tc.override))
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Services map[string]map[string]any `yaml:"services"`
		}
		if err := yaml.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", tc.override, err)
		}
		if len(f.Services) == 0 {
			t.Errorf("%s names no services", tc.override)
		}
		for name, s := range f.Services {
			if _, ok := base.Services[name]; !ok {
				t.Errorf("%s: service %s is not in %v", tc.override, name, tc.base)
			}
			for key := range s {
				if key != "image" && key != "build" {
					t.Errorf("%s: %s sets %s; an offline override only swaps image and build", tc.override, name, key)
				}
			}
			if img, _ := s["image"].(string); !strings.HasSuffix(img, ":offline") {
				t.Errorf("%s: %s's image %q is not one of scripts/docker-images.sh's", tc.override, name, img)
			}
		}
	}
}

// TestDockerComposeSecure checks docker-compose.secure.yml against what its
// brokers run with and against cluster.sh's secure cluster: each broker
// reads config/server-secure.properties, mounted where its command names
// it, under SASL_SSL listeners and its own key store from the secure volume;
// secure-files fills that volume and admin-user and alice-user create the
// users before any broker starts, with cluster.sh's users and the password
// the brokers log in with; the healthcheck logs in as admin.
func TestDockerComposeSecure(t *testing.T) {
	f := readCompose(t, "docker-compose.yml", "docker-compose.secure.yml")
	file := filepath.Join("..", "..", "config", "server-secure.properties")
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "cluster.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^SECURE_USERS=\(([^)]*)\)$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/cluster.sh sets no SECURE_USERS")
	}
	users := strings.Fields(string(m[1]))

	want := "/zkafka/scripts/secure-files.sh /secure kafka%d " + strings.Join(users, " ")
	if sf := f.Services["secure-files"]; !strings.Contains(strings.Join(sf.Entrypoint, " "), want) || !slices.Contains(sf.Volumes, "secure:/secure") {
		t.Errorf("secure-files: entrypoint %q, volumes %v; want it to run %q into the secure volume", sf.Entrypoint, sf.Volumes, want)
	}
	for _, login := range users {
		user, password, _ := strings.Cut(login, ":")
		s := f.Services[user+"-user"]
		wantCommand := []string{"configs", "--zookeeper", "zookeeper:2181", "--alter", "--add-config",
			"SCRAM-SHA-256=[iterations=8192,password=" + password + "]", "--entity-type", "users", "--entity-name", user}
		if !slices.Equal(s.Command, wantCommand) || s.DependsOn["zookeeper"].Condition != "service_healthy" {
			t.Errorf("%s-user: command %q, depends_on %v; want %q once ZooKeeper is healthy", user, s.Command, s.DependsOn, wantCommand)
		}
	}
	if !slices.Contains(f.Services["tools"].Volumes, "secure:/secure:ro") {
		t.Errorf("tools: volumes %v, want the secure volume at /secure", f.Services["tools"].Volumes)
	}

	for n := 1; n <= 3; n++ {
		name := fmt.Sprintf("kafka%d", n)
		s := f.Services[name]
		if len(s.Command) != 2 || s.Command[0] != "broker" || !slices.Contains(s.Volumes, "./config/server-secure.properties:"+s.Command[1]+":ro") {
			t.Fatalf("%s: command %q, volumes %v; want it to run with config/server-secure.properties, mounted", name, s.Command, s.Volumes)
		}
		props, err := brokerProperties(file, s.environ(), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg, err := brokerconfig.New(props)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cfg.Unknown) > 0 {
			t.Errorf("%s: keys the broker does not know: %v", name, cfg.Unknown)
		}
		for _, l := range cfg.AdvertisedListeners {
			if l.SecurityProtocol != "SASL_SSL" {
				t.Errorf("%s: listener %s is %s", name, l.Name, l.SecurityProtocol)
			}
		}
		inter, ok := cfg.AdvertisedListener(cfg.InterBrokerListenerName)
		if !ok || inter.Host != name {
			t.Errorf("%s: the inter-broker listener %s is advertised as %v", name, cfg.InterBrokerListenerName, inter)
		}
		jaas, err := security.ParseJaasConfig(cfg.ListenerMechanismConfig(cfg.InterBrokerListenerName, cfg.SaslMechanismInterBrokerProtocol, "sasl.jaas.config"))
		if err != nil {
			t.Fatalf("%s: the inter-broker login: %v", name, err)
		}
		if login := jaas[0].Options["username"] + ":" + jaas[0].Options["password"]; !slices.Contains(users, login) {
			t.Errorf("%s: the brokers log in as %s, which is not one of the users %v", name, login, users)
		}
		if props["ssl.keystore.location"] != fmt.Sprintf("/secure/broker-%d.pem", n) || props["ssl.truststore.location"] != "/secure/ca.pem" ||
			!slices.Contains(s.Volumes, "secure:/secure:ro") {
			t.Errorf("%s: key store %s, trust store %s, volumes %v; want its own key store and the CA of the secure volume",
				name, props["ssl.keystore.location"], props["ssl.truststore.location"], s.Volumes)
		}
		for _, dep := range []string{"secure-files", "admin-user", "alice-user"} {
			if s.DependsOn[dep].Condition != "service_completed_successfully" {
				t.Errorf("%s: depends_on %s is %+v, want condition service_completed_successfully", name, dep, s.DependsOn[dep])
			}
		}
		hc := strings.Join(s.Healthcheck.Test, " ")
		if want := fmt.Sprintf("zkafka broker-health --bootstrap-server localhost:%d --command-config /secure/admin.properties", inter.Port); !strings.Contains(hc, want) {
			t.Errorf("%s: healthcheck %q, want %q", name, hc, want)
		}
	}
}
