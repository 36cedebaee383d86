package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/internal/pace"
)

// Docker is the cluster docker-compose.yml runs (with docker-compose.ensemble.yml, a ZooKeeper
// ensemble): services kafka1–3 and zookeeper (zoo2, zoo3). Containers are killed with docker kill,
// stopped (a controlled shutdown) with docker stop, paused with docker pause (the cgroup freezer, as
// silent as SIGSTOP), and their traffic is cut or slowed with nftables inside each container's
// network namespace (nsenter). Compose finds the project as it does for the user: from Root and
// Env (COMPOSE_PROJECT_NAME, COMPOSE_FILE); the host ports are the compose file's variables.
type Docker struct {
	Root        string   // where compose runs: the repository
	Env         []string // the environment compose runs with
	Compose     []string // "docker compose", or "docker-compose"
	BrokerPorts []int    // host ports of kafka1–3 (ZKAFKA_PORT_1..3)
	ZKPorts     []int    // host ports of zookeeper, zoo2, zoo3 (ZKAFKA_ZK_PORT, _2, _3); one without the ensemble
	project     string
	ids         map[string]string // container ids by service
}

// NewDocker finds the running Docker cluster that compose in root with env manages.
func NewDocker(ctx context.Context, root string, env []string) (*Docker, error) {
	d := &Docker{Root: root, Env: env, ids: map[string]string{}}
	if exec.CommandContext(ctx, "docker", "compose", "version").Run() == nil {
		d.Compose = []string{"docker", "compose"}
	} else if _, err := exec.LookPath("docker-compose"); err == nil {
		d.Compose = []string{"docker-compose"}
	} else {
		return nil, errors.New("neither `docker compose` nor docker-compose is installed")
	}
	for i, k := range []string{"ZKAFKA_PORT_1", "ZKAFKA_PORT_2", "ZKAFKA_PORT_3"} {
		p, err := envInt(env, k, 9092+i)
		if err != nil {
			return nil, err
		}
		d.BrokerPorts = append(d.BrokerPorts, p)
	}
	services, err := d.compose(ctx, "ps", "--services")
	if err != nil {
		return nil, err
	}
	zks := 1
	if slices.Contains(strings.Fields(services), "zoo2") {
		zks = 3
	}
	for i, k := range []string{"ZKAFKA_ZK_PORT", "ZKAFKA_ZK_PORT_2", "ZKAFKA_ZK_PORT_3"}[:zks] {
		p, err := envInt(env, k, 2181+i)
		if err != nil {
			return nil, err
		}
		d.ZKPorts = append(d.ZKPorts, p)
	}
	for _, s := range d.services(0) {
		if _, err := d.container(ctx, s); err != nil {
			return nil, err
		}
	}
	for _, b := range d.Brokers() {
		if _, err := d.container(ctx, d.service(b)); err != nil {
			return nil, err
		}
	}
	d.project, err = docker(ctx, "inspect", "--format", `{{index .Config.Labels "com.docker.compose.project"}}`, d.ids["kafka1"])
	if err != nil {
		return nil, err
	}
	return d, nil
}

// docker runs a docker command and returns its trimmed output.
func docker(ctx context.Context, args ...string) (string, error) {
	out, err := command(ctx, "", nil, "", "docker", "docker", args...)
	return strings.TrimSpace(out), err
}

func (d *Docker) compose(ctx context.Context, args ...string) (string, error) {
	out, err := command(ctx, d.Root, d.Env, "", strings.Join(d.Compose, " "), d.Compose[0], append(slices.Clone(d.Compose[1:]), args...)...)
	return strings.TrimSpace(out), err
}

// container is the id of service's container (it stays the same across kills and starts).
func (d *Docker) container(ctx context.Context, service string) (string, error) {
	if id, ok := d.ids[service]; ok {
		return id, nil
	}
	id, err := d.compose(ctx, "ps", "-a", "-q", service)
	if err != nil {
		return "", err
	}
	if id == "" || strings.Contains(id, "\n") {
		return "", fmt.Errorf("service %s has containers %q, want one (docker compose up -d first)", service, id)
	}
	d.ids[service] = id
	return id, nil
}

// service is the compose service of broker or server n.
func (d *Docker) service(n int32) string {
	switch {
	case n > 0:
		return "kafka" + strconv.Itoa(int(n))
	case n == -1 || n == 0:
		return "zookeeper"
	}
	return "zoo" + strconv.Itoa(int(-n))
}

// services are the services n names: every ZooKeeper server for 0.
func (d *Docker) services(n int32) []string {
	if n != 0 || len(d.ZKPorts) == 1 {
		return []string{d.service(n)}
	}
	var out []string
	for _, i := range d.ZKServerIDs() {
		out = append(out, d.service(ZKServer(i)))
	}
	return out
}

func (d *Docker) Brokers() []int32 { return []int32{1, 2, 3} }

func (d *Docker) Addr(b int32) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(d.BrokerPorts[b-1]))
}

func (d *Docker) ZooKeeper() string {
	var s []string
	for _, p := range d.ZKPorts {
		s = append(s, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	return strings.Join(s, ",")
}

func (d *Docker) ZKServerIDs() []int {
	if len(d.ZKPorts) == 1 {
		return nil
	}
	return []int{1, 2, 3}
}

func (d *Docker) ZKMode(i int) (string, error) {
	return zkMode(net.JoinHostPort("127.0.0.1", strconv.Itoa(d.ZKPorts[max(i, 1)-1])))
}

// each runs fn for every container n names.
func (d *Docker) each(ctx context.Context, n int32, fn func(id string) error) error {
	for _, s := range d.services(n) {
		id, err := d.container(ctx, s)
		if err != nil {
			return err
		}
		if err := fn(id); err != nil {
			return err
		}
	}
	return nil
}

func (d *Docker) state(ctx context.Context, id string) (string, error) {
	return docker(ctx, "inspect", "--format", "{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}", id)
}

func (d *Docker) Kill(ctx context.Context, n int32) error {
	return d.each(ctx, n, func(id string) error {
		if _, err := docker(ctx, "kill", "--signal", "KILL", id); err != nil {
			return err
		}
		return pace.Until(ctx, 30*time.Second, func() bool {
			st, err := d.state(ctx, id)
			return err == nil && !strings.HasPrefix(st, "running") && !strings.HasPrefix(st, "paused")
		})
	})
}

// Start starts n's containers and waits until their healthchecks pass (a ZooKeeper server's once
// it serves, a broker's once it answers Metadata).
func (d *Docker) Start(ctx context.Context, n int32) error {
	if err := d.each(ctx, n, func(id string) error {
		_, err := docker(ctx, "start", id)
		return err
	}); err != nil {
		return err
	}
	return d.each(ctx, n, func(id string) error {
		var st string
		err := pace.Until(ctx, 3*time.Minute, func() bool {
			st, _ = d.state(ctx, id)
			return st == "running healthy"
		})
		if err != nil {
			return fmt.Errorf("container %.12s is %q, not healthy: %w", id, st, err)
		}
		return nil
	})
}

func (d *Docker) Stop(ctx context.Context, n int32) error {
	return d.each(ctx, n, func(id string) error {
		_, err := docker(ctx, "stop", "--time", "30", id)
		return err
	})
}

func (d *Docker) Restart(ctx context.Context, n int32) error {
	if err := d.Stop(ctx, n); err != nil {
		return err
	}
	return d.Start(ctx, n)
}

func (d *Docker) Pause(ctx context.Context, n int32) error {
	return d.each(ctx, n, func(id string) error {
		_, err := docker(ctx, "pause", id)
		return err
	})
}

// Resume unpauses n's containers; one that is not paused is left alone.
func (d *Docker) Resume(ctx context.Context, n int32) error {
	return d.each(ctx, n, func(id string) error {
		st, err := d.state(ctx, id)
		if err != nil || !strings.HasPrefix(st, "paused") {
			return err
		}
		_, err = docker(ctx, "unpause", id)
		return err
	})
}

func (d *Docker) Running(n int32) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return d.each(ctx, n, func(id string) error {
		st, err := d.state(ctx, id)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(st, "running") && !strings.HasPrefix(st, "paused") {
			return errors.New(st)
		}
		return nil
	}) == nil
}

// zkSyncTimeout reads syncLimit × tickTime from the first server's zoo.cfg (the official image's
// /conf/zoo.cfg).
func (d *Docker) zkSyncTimeout() time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := docker(ctx, "exec", d.ids["zookeeper"], "cat", "/conf/zoo.cfg")
	if err != nil {
		return 4 * time.Second // the image's defaults: tickTime 2000, syncLimit 2
	}
	return syncTimeout(cfg)
}

// ip is a container's address on the project's cluster network, where the brokers and ZooKeeper
// reach each other. It is read each time: a restarted container may get another.
func (d *Docker) ip(ctx context.Context, service string) (string, error) {
	id, err := d.container(ctx, service)
	if err != nil {
		return "", err
	}
	return docker(ctx, "inspect", "--format", fmt.Sprintf(`{{(index .NetworkSettings.Networks "%s_cluster").IPAddress}}`, d.project), id)
}

// nsenter runs an nftables script in the network namespace of service's container.
func (d *Docker) nsenter(service, script string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := d.container(ctx, service)
	if err != nil {
		return err
	}
	pid, err := docker(ctx, "inspect", "--format", "{{.State.Pid}}", id)
	if err != nil {
		return err
	}
	if pid == "0" {
		return fmt.Errorf("%s is not running", service)
	}
	return execute(script, "nsenter", "--target", pid, "--net", "nft", "-f", "-")
}

func (d *Docker) network(h *History) (topology, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gw, err := docker(ctx, "network", "inspect", "--format", "{{(index .IPAM.Config 0).Gateway}}", d.project+"_cluster")
	if err != nil {
		return nil, err
	}
	return &dockerNet{d: d, gw: gw}, nil
}

func (d *Docker) quorum(h *History) (quorumCutter, error) { return &dockerQuorum{d: d}, nil }

// dockerNet is the Docker cluster's network: every container has its namespace already, and the
// host reaches the cluster network through its bridge's gateway address.
type dockerNet struct {
	d  *Docker
	gw string
}

// interBrokerPort is the INTERNAL listener's port of docker-compose.yml.
const interBrokerPort = 19092

func (n *dockerNet) brokerAddr(b int32) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ip, _ := n.d.ip(ctx, n.d.service(b))
	return ip, interBrokerPort
}

func (n *dockerNet) zkAddrs() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for _, s := range n.d.services(0) {
		ip, _ := n.d.ip(ctx, s)
		out = append(out, net.JoinHostPort(ip, "2181"))
	}
	return out
}

func (n *dockerNet) zkTarget(i int) string { return n.zkAddrs()[i] }
func (n *dockerNet) gateway() string       { return n.gw }

func (n *dockerNet) nft(b int32, script string) error { return n.d.nsenter(n.d.service(b), script) }

func (n *dockerNet) enter(context.Context, func(context.Context) error) error {
	for _, tool := range []string{"nsenter", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("network faults on Docker need %s on this machine: %w", tool, err)
		}
	}
	return nil
}

func (n *dockerNet) leave(context.Context, func(context.Context) error) error { return nil }

// dockerQuorum cuts a ZooKeeper container from the other servers with nftables in its own
// namespace: every packet to or from their addresses is dropped (servers only ever talk to each
// other on the quorum and election ports), while the brokers still reach it.
type dockerQuorum struct {
	d   *Docker
	cut string // the cut server's service
}

func (q *dockerQuorum) enter(context.Context) error { return nil }

func (q *dockerQuorum) split(k int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var others []string
	for _, i := range q.d.ZKServerIDs() {
		if i != k {
			ip, err := q.d.ip(ctx, q.d.service(ZKServer(i)))
			if err != nil {
				return err
			}
			others = append(others, ip)
		}
	}
	set := "{ " + strings.Join(others, ", ") + " }"
	script := fmt.Sprintf(`table inet %[1]s
delete table inet %[1]s
table inet %[1]s {
	chain input {
		type filter hook input priority filter; policy accept;
		ip saddr %[2]s drop
	}
	chain output {
		type filter hook output priority filter; policy accept;
		ip daddr %[2]s drop
	}
}
`, chaosTable, set)
	s := q.d.service(ZKServer(k))
	if err := q.d.nsenter(s, script); err != nil {
		return err
	}
	q.cut = s
	return nil
}

func (q *dockerQuorum) heal() error {
	if q.cut == "" {
		return nil
	}
	if err := q.d.nsenter(q.cut, fmt.Sprintf("table inet %[1]s\ndelete table inet %[1]s\n", chaosTable)); err != nil {
		return err
	}
	q.cut = ""
	return nil
}

func (q *dockerQuorum) leave() error { return q.heal() }
