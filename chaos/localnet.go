package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// localNet puts each broker of the local cluster in a network namespace of its own, so a fault can cut
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
//	  via 10.A.B.1, and the tables a fault fills (see network)
//
// where <p> is "zkc" and ZooKeeper's port. cluster.sh starts broker N inside <p>-N when
// $DATA/run/broker-N.netns names it, listening on and advertising its namespace address; clients on
// this machine (the chaos workload, kcat with that address) reach it through 10.A.B.1.
type localNet struct {
	l      *Local
	h      *History
	prefix string // zkc<zk port>
	subnet string // 10.A.B
}

func newLocalNet(l *Local, h *History) *localNet {
	return &localNet{
		l: l, h: h,
		prefix: "zkc" + strconv.Itoa(l.ZKPort),
		subnet: fmt.Sprintf("10.%d.%d", l.ZKPort>>8&0xff, l.ZKPort&0xff),
	}
}

func (n *localNet) hub() string             { return n.prefix + "-hub" }
func (n *localNet) uplink() string          { return n.prefix + "gw" }
func (n *localNet) gateway() string         { return n.subnet + ".1" }
func (n *localNet) ns(b int32) string       { return n.prefix + "-" + strconv.Itoa(int(b)) }
func (n *localNet) veth(b int32) string     { return "v" + strconv.Itoa(int(b)) }
func (n *localNet) brokerIP(b int32) string { return n.subnet + "." + strconv.Itoa(10+int(b)) }

func (n *localNet) brokerAddr(b int32) (string, int) { return n.brokerIP(b), n.l.Port(b) }

// zkAddrs: the brokers reach every server at the gateway, on its own client port.
func (n *localNet) zkAddrs() []string {
	var out []string
	for i := range max(n.l.ZKServers, 1) {
		out = append(out, net.JoinHostPort(n.gateway(), strconv.Itoa(n.l.ZKClientPort(i+1))))
	}
	return out
}

func (n *localNet) zkTarget(i int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.l.ZKClientPort(i+1)))
}

func (n *localNet) nft(b int32, script string) error {
	return execute(script, "ip", "netns", "exec", n.ns(b), "nft", "-f", "-")
}

// enter builds the namespaces and moves the brokers into them. They move together — every broker
// stopped with a controlled shutdown, then all started in their namespaces — because a broker in a
// namespace cannot reach one still listening on the machine's loopback.
func (n *localNet) enter(ctx context.Context, awaitWhole func(context.Context) error) error {
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
func (n *localNet) restartAll(ctx context.Context, awaitWhole func(context.Context) error, between func(int32) error) error {
	for i := len(n.l.BrokerIDs) - 1; i >= 0; i-- {
		if err := n.l.Stop(ctx, n.l.BrokerIDs[i]); err != nil {
			return err
		}
	}
	for _, b := range n.l.BrokerIDs {
		if err := between(b); err != nil {
			return err
		}
	}
	if err := forEach(n.l.BrokerIDs, func(b int32) error { return n.l.Start(ctx, b) }); err != nil {
		return err
	}
	return awaitWhole(ctx)
}

// zkPorts is the nftables set of every ZooKeeper client port.
func (n *localNet) zkPorts() string {
	var ports []string
	for i := range max(n.l.ZKServers, 1) {
		ports = append(ports, strconv.Itoa(n.l.ZKClientPort(i+1)))
	}
	return "{ " + strings.Join(ports, ", ") + " }"
}

func (n *localNet) build() error {
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
	for _, b := range n.l.BrokerIDs {
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
	}
	return nil
}

// leave moves the brokers back to the machine's own network, together, and removes the
// namespaces, the hub and the nftables table.
func (n *localNet) leave(ctx context.Context, awaitWhole func(context.Context) error) error {
	n.h.Add(Op{Type: OpNote, Note: "moving the brokers back from their network namespaces"})
	err := n.restartAll(ctx, awaitWhole, func(b int32) error {
		if err := os.Remove(n.l.netnsFile(b)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	})
	n.teardown()
	return err
}

// teardown removes whatever of the namespaces, the hub, its uplink and the table exists.
func (n *localNet) teardown() {
	for _, b := range n.l.BrokerIDs {
		_ = execute("", "ip", "netns", "del", n.ns(b)) // absent is fine
	}
	_ = execute("", "ip", "netns", "del", n.hub())
	_ = execute("", "ip", "link", "del", n.uplink())
	_ = execute("", "nft", "delete", "table", "ip", n.prefix)
}
