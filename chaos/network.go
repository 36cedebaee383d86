package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// network puts each broker of the local cluster in a network namespace of its own, so a fault can cut
// one broker's traffic with nftables rules inside its namespace while the rest of the machine is
// untouched. Nothing leaves the machine:
//
//	namespace <p>-hub: a bridge br0 joining every broker's veth and the uplink to the root namespace.
//	  The bridge is not in the root namespace because a Docker engine there sets the FORWARD policy
//	  to DROP and br_netfilter sends bridged frames through it: brokers on a root bridge could not
//	  reach each other.
//	root namespace: <p>gw (a veth pair with "uplink" on the hub's bridge), address 10.A.B.1/24 (A.B
//	  from ZooKeeper's port, so two clusters differ); an nftables table "ip <p>" turns
//	  10.A.B.1:<zk port> into 127.0.0.1:<zk port> for every ZooKeeper server's client port
//	  (ZooKeeper listens on loopback only; route_localnet lets the veth reach it)
//	namespace <p>-N: eth0 (a veth pair with vN on the hub's bridge) at 10.A.B.(10+N), a default route
//	  via 10.A.B.1, and an nftables table "inet zkafka-chaos" whose input and output chains a fault fills
//	  with drop rules
//
// where <p> is "zkc" and ZooKeeper's port. cluster.sh starts broker N inside <p>-N when
// $DATA/run/broker-N.netns names it, listening on and advertising its namespace address; clients on
// this machine (the chaos workload, kcat with that address) reach it through 10.A.B.1.
type network struct {
	l      *Local
	h      *History
	prefix string // zkc<zk port>
	subnet string // 10.A.B
	cuts   map[int32]string
	proxy  *proxy // the slow fault's, while one runs
}

func newNetwork(l *Local, h *History) *network {
	return &network{
		l: l, h: h,
		prefix: "zkc" + strconv.Itoa(l.ZKPort),
		subnet: fmt.Sprintf("10.%d.%d", l.ZKPort>>8&0xff, l.ZKPort&0xff),
		cuts:   map[int32]string{},
	}
}

func (n *network) hub() string             { return n.prefix + "-hub" }
func (n *network) uplink() string          { return n.prefix + "gw" }
func (n *network) gateway() string         { return n.subnet + ".1" }
func (n *network) ns(b int32) string       { return n.prefix + "-" + strconv.Itoa(int(b)) }
func (n *network) veth(b int32) string     { return "v" + strconv.Itoa(int(b)) }
func (n *network) brokerIP(b int32) string { return n.subnet + "." + strconv.Itoa(10+int(b)) }

// chaosTable is the nftables table inside each namespace that cuts fill.
const chaosTable = "zkafka-chaos"

// execute runs a command (ip, nft, sysctl, mount), with stdin when it is not empty.
func execute(stdin string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// enter builds the namespaces and moves the brokers into them. They move together — every broker
// stopped with a controlled shutdown, then all started in their namespaces — because a broker in a
// namespace cannot reach one still listening on the machine's loopback.
func (n *network) enter(ctx context.Context, awaitWhole func(context.Context) error) error {
	n.teardown() // what a run killed midway left
	if err := n.build(); err != nil {
		n.teardown()
		return err
	}
	n.h.Add(Op{Type: OpNote, Note: fmt.Sprintf("moving the brokers into network namespaces %s-N (%s.1N)", n.prefix, n.subnet)})
	return n.restartAll(ctx, awaitWhole, func(b int32) error {
		line := fmt.Sprintf("%s %s %s\n", n.ns(b), n.brokerIP(b), n.gateway())
		return os.WriteFile(n.l.netnsFile(b), []byte(line), 0o644)
	})
}

// restartAll stops every broker (the last first, as cluster.sh down does), calls between for each,
// starts them all and waits until the cluster is whole.
func (n *network) restartAll(ctx context.Context, awaitWhole func(context.Context) error, between func(int32) error) error {
	for i := len(n.l.Brokers) - 1; i >= 0; i-- {
		if err := n.l.Stop(ctx, n.l.Brokers[i]); err != nil {
			return err
		}
	}
	for _, b := range n.l.Brokers {
		if err := between(b); err != nil {
			return err
		}
	}
	if err := forEach(n.l.Brokers, func(b int32) error { return n.l.Start(ctx, b) }); err != nil {
		return err
	}
	return awaitWhole(ctx)
}

// zkPorts is the nftables set of every ZooKeeper client port.
func (n *network) zkPorts() string {
	var ports []string
	for i := range max(n.l.ZKServers, 1) {
		ports = append(ports, strconv.Itoa(n.l.ZKClientPort(i+1)))
	}
	return "{ " + strings.Join(ports, ", ") + " }"
}

func (n *network) build() error {
	hub := n.hub()
	steps := [][]string{
		{"ip", "netns", "add", hub},
		{"ip", "-n", hub, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", hub, "link", "set", "br0", "up"},
		{"ip", "link", "add", n.uplink(), "type", "veth", "peer", "name", "uplink", "netns", hub},
		{"ip", "-n", hub, "link", "set", "uplink", "master", "br0", "up"},
		{"ip", "addr", "add", n.gateway() + "/24", "dev", n.uplink()},
		{"ip", "link", "set", n.uplink(), "up"},
		{"sysctl", "-qw", "net.ipv4.conf." + n.uplink() + ".route_localnet=1"},
	}
	for _, s := range steps {
		if err := execute("", s[0], s[1:]...); err != nil {
			return err
		}
	}
	nat := fmt.Sprintf(`table ip %s {
	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "%s" ip daddr %s tcp dport %s dnat to 127.0.0.1
	}
}
`, n.prefix, n.uplink(), n.gateway(), n.zkPorts())
	if err := execute(nat, "nft", "-f", "-"); err != nil {
		return err
	}
	for _, b := range n.l.Brokers {
		ns := n.ns(b)
		steps := [][]string{
			{"ip", "netns", "add", ns},
			{"ip", "-n", hub, "link", "add", n.veth(b), "type", "veth", "peer", "name", "eth0", "netns", ns},
			{"ip", "-n", hub, "link", "set", n.veth(b), "master", "br0", "up"},
			{"ip", "-n", ns, "addr", "add", n.brokerIP(b) + "/24", "dev", "eth0"},
			{"ip", "-n", ns, "link", "set", "eth0", "up"},
			{"ip", "-n", ns, "link", "set", "lo", "up"},
			{"ip", "-n", ns, "route", "add", "default", "via", n.gateway()},
		}
		for _, s := range steps {
			if err := execute("", s[0], s[1:]...); err != nil {
				return err
			}
		}
		if err := n.rules(b, ""); err != nil {
			return err
		}
	}
	return nil
}

// rules replaces broker b's drop rules with those of a cut ("" for none).
func (n *network) rules(b int32, cut string) error {
	others := []string{}
	for _, o := range n.l.Brokers {
		if o != b {
			others = append(others, n.brokerIP(o))
		}
	}
	peers := "{ " + strings.Join(others, ", ") + " }"
	zk := n.zkPorts()
	var in, out []string
	switch cut {
	case "":
	case "isolated-leader":
		in = []string{"ip saddr " + peers + " drop", "ip saddr " + n.gateway() + " tcp sport " + zk + " drop"}
		out = []string{"ip daddr " + peers + " drop", "ip daddr " + n.gateway() + " tcp dport " + zk + " drop"}
	case "from-followers":
		in = []string{"ip saddr " + peers + " drop"}
		out = []string{"ip daddr " + peers + " drop"}
	case "from-zookeeper":
		in = []string{"ip saddr " + n.gateway() + " tcp sport " + zk + " drop"}
		out = []string{"ip daddr " + n.gateway() + " tcp dport " + zk + " drop"}
	case "from-everything":
		in = []string{`iifname "eth0" drop`}
		out = []string{`oifname "eth0" drop`}
	default:
		return fmt.Errorf("unknown cut %q", cut)
	}
	chain := func(name, hook string, rules []string) string {
		s := fmt.Sprintf("\tchain %s {\n\t\ttype filter hook %s priority filter; policy accept;\n", name, hook)
		for _, r := range rules {
			s += "\t\t" + r + "\n"
		}
		return s + "\t}\n"
	}
	// Declaring the table first makes the delete succeed when it does not exist yet.
	script := fmt.Sprintf("table inet %s\ndelete table inet %s\ntable inet %s {\n%s%s}\n",
		chaosTable, chaosTable, chaosTable, chain("input", "input", in), chain("output", "output", out))
	if err := execute(script, "ip", "netns", "exec", n.ns(b), "nft", "-f", "-"); err != nil {
		return err
	}
	if cut == "" {
		delete(n.cuts, b)
	} else {
		n.cuts[b] = cut
	}
	return nil
}

// cut applies a cut to broker b.
func (n *network) cut(b int32, cut string) error { return n.rules(b, cut) }

// heal removes broker b's cut.
func (n *network) heal(b int32) error { return n.rules(b, "") }

// healAll removes every cut and redirect.
func (n *network) healAll() error {
	errs := []error{n.unslow()}
	for _, b := range n.l.Brokers {
		errs = append(errs, n.rules(b, ""))
	}
	return errors.Join(errs...)
}

// leave moves the brokers back to the machine's own network, together, and removes the
// namespaces, the hub and the nftables table.
func (n *network) leave(ctx context.Context, awaitWhole func(context.Context) error) error {
	n.h.Add(Op{Type: OpNote, Note: "moving the brokers back from their network namespaces"})
	err := errors.Join(n.healAll(), n.restartAll(ctx, awaitWhole, func(b int32) error {
		if err := os.Remove(n.l.netnsFile(b)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}))
	n.teardown()
	return err
}

// teardown removes whatever of the namespaces, the hub, its uplink and the table exists.
func (n *network) teardown() {
	for _, b := range n.l.Brokers {
		_ = execute("", "ip", "netns", "del", n.ns(b)) // absent is fine
	}
	_ = execute("", "ip", "netns", "del", n.hub())
	_ = execute("", "ip", "link", "del", n.uplink())
	_ = execute("", "nft", "delete", "table", "ip", n.prefix)
}

// slowTable is the nftables table inside a namespace that sends a slowed broker's connections
// through the proxy.
const slowTable = "zkafka-slow"

// redirect is one destination a namespace reaches through the proxy instead.
type redirect struct {
	addr, port string // where the traffic was going
	via        int    // the proxy's port on the gateway
}

// slow sends broker b's traffic to and from the other brokers and ZooKeeper through a proxy with
// imp: in b's namespace every connection to a peer's or ZooKeeper's port, and in each peer's
// namespace every connection to b, is redirected (DNAT) to a proxy listener on the gateway, which
// relays it to where it was going. Connections made before are reset, so the brokers reconnect
// through the proxy at once. Clients on this machine still reach b directly.
func (n *network) slow(b int32, imp impairment, seed uint64) error {
	p := newProxy(imp, seed)
	via := func(target string) (int, error) {
		a, err := p.listen(n.gateway(), target)
		if err != nil {
			return 0, err
		}
		return a.Port, nil
	}
	plan := map[int32][]redirect{}
	for _, o := range n.l.Brokers {
		if o == b {
			continue
		}
		port := strconv.Itoa(n.l.Port(o))
		v, err := via(net.JoinHostPort(n.brokerIP(o), port))
		if err != nil {
			p.close()
			return err
		}
		plan[b] = append(plan[b], redirect{n.brokerIP(o), port, v})
		port = strconv.Itoa(n.l.Port(b))
		if v, err = via(net.JoinHostPort(n.brokerIP(b), port)); err != nil {
			p.close()
			return err
		}
		plan[o] = append(plan[o], redirect{n.brokerIP(b), port, v})
	}
	for i := range max(n.l.ZKServers, 1) {
		port := strconv.Itoa(n.l.ZKClientPort(i + 1))
		v, err := via(net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			p.close()
			return err
		}
		plan[b] = append(plan[b], redirect{n.gateway(), port, v})
	}
	n.proxy = p
	for ns, rs := range plan {
		if err := n.redirects(ns, rs); err != nil {
			return err
		}
	}
	return nil
}

// redirects replaces broker ns's slow table with rs (none: the table goes).
func (n *network) redirects(ns int32, rs []redirect) error {
	script := fmt.Sprintf("table ip %s\ndelete table ip %s\n", slowTable, slowTable)
	if len(rs) > 0 {
		var nat, reset strings.Builder
		for _, r := range rs {
			fmt.Fprintf(&nat, "\t\tip daddr %s tcp dport %s dnat to %s:%d\n", r.addr, r.port, n.gateway(), r.via)
			// What still goes to the old destination after the redirect belongs to a connection
			// made before it.
			fmt.Fprintf(&reset, "\t\tip daddr %s tcp dport %s reject with tcp reset\n", r.addr, r.port)
		}
		script += fmt.Sprintf("table ip %s {\n\tchain to_proxy {\n\t\ttype nat hook output priority -100; policy accept;\n%s\t}\n"+
			"\tchain old_connections {\n\t\ttype filter hook output priority filter; policy accept;\n%s\t}\n}\n", slowTable, nat.String(), reset.String())
	}
	return execute(script, "ip", "netns", "exec", n.ns(ns), "nft", "-f", "-")
}

// unslow removes every redirect and closes the proxy, ending the connections it relayed: the
// brokers reconnect directly.
func (n *network) unslow() error {
	var errs []error
	for _, b := range n.l.Brokers {
		errs = append(errs, n.redirects(b, nil))
	}
	if n.proxy != nil {
		n.proxy.close()
		n.proxy = nil
	}
	return errors.Join(errs...)
}
