package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
//	  10.A.B.1:<zk port> into 127.0.0.1:<zk port> (ZooKeeper listens on loopback only;
//	  route_localnet lets the veth reach it)
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

func (n *network) build() error {
	zk := strconv.Itoa(n.l.ZKPort)
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
		iifname "%s" ip daddr %s tcp dport %s dnat to 127.0.0.1:%s
	}
}
`, n.prefix, n.uplink(), n.gateway(), zk, zk)
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
	zk := strconv.Itoa(n.l.ZKPort)
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

// healAll removes every cut.
func (n *network) healAll() error {
	var errs []error
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
