package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// topology is where the brokers' network can be cut: each broker has a network namespace of its
// own (Local makes them; Docker's containers have them), reached through a gateway on this machine.
type topology interface {
	// brokerAddr is broker b's address and port as the other brokers reach it.
	brokerAddr(b int32) (ip string, port int)
	// zkAddrs are the ZooKeeper servers' addresses (host:port) as the brokers reach them.
	zkAddrs() []string
	// zkTarget is where a proxy on this machine reaches the server at zkAddrs()[i].
	zkTarget(i int) string
	// gateway is this machine's address on the brokers' network, where a proxy listens.
	gateway() string
	// nft runs an nftables script inside broker b's namespace.
	nft(b int32, script string) error
	// enter makes the namespaces ready before the first fault; leave undoes it.
	enter(ctx context.Context, awaitWhole func(context.Context) error) error
	leave(ctx context.Context, awaitWhole func(context.Context) error) error
}

// network cuts and slows brokers' traffic with nftables rules inside their namespaces. Nothing
// leaves the machine. In each namespace the table "inet zkafka-chaos" holds a cut's drop rules
// (input and output chains) and the table "ip zkafka-slow" the redirects of a slow fault.
type network struct {
	brokers []int32
	t       topology
	h       *History
	cuts    map[int32]string
	proxy   *proxy // the slow fault's, while one runs
}

func newNetwork(brokers []int32, t topology, h *History) *network {
	return &network{brokers: brokers, t: t, h: h, cuts: map[int32]string{}}
}

// chaosTable is the nftables table inside each namespace that cuts fill.
const chaosTable = "zkafka-chaos"

func (n *network) enter(ctx context.Context, awaitWhole func(context.Context) error) error {
	return n.t.enter(ctx, awaitWhole)
}

// leave heals everything and undoes the namespaces' preparation.
func (n *network) leave(ctx context.Context, awaitWhole func(context.Context) error) error {
	return errors.Join(n.healAll(), n.t.leave(ctx, awaitWhole))
}

// zkMatch is one nftables match per ZooKeeper server, of its address and port as destination
// (dir "d") or source ("s").
func (n *network) zkMatch(dir string) []string {
	var out []string
	for _, a := range n.t.zkAddrs() {
		host, port, _ := net.SplitHostPort(a)
		out = append(out, fmt.Sprintf("ip %saddr %s tcp %sport %s", dir, host, dir, port))
	}
	return out
}

// rules replaces broker b's drop rules with those of a cut ("" for none).
func (n *network) rules(b int32, cut string) error {
	var others []string
	for _, o := range n.brokers {
		if o != b {
			ip, _ := n.t.brokerAddr(o)
			others = append(others, ip)
		}
	}
	peers := "{ " + strings.Join(others, ", ") + " }"
	drop := func(ms []string) []string {
		for i := range ms {
			ms[i] += " drop"
		}
		return ms
	}
	var in, out []string
	switch cut {
	case "":
	case "isolated-leader":
		in = append([]string{"ip saddr " + peers + " drop"}, drop(n.zkMatch("s"))...)
		out = append([]string{"ip daddr " + peers + " drop"}, drop(n.zkMatch("d"))...)
	case "from-followers":
		in = []string{"ip saddr " + peers + " drop"}
		out = []string{"ip daddr " + peers + " drop"}
	case "from-zookeeper":
		in, out = drop(n.zkMatch("s")), drop(n.zkMatch("d"))
	case "from-everything":
		in = []string{`iifname != "lo" drop`}
		out = []string{`oifname != "lo" drop`}
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
	if err := n.t.nft(b, script); err != nil {
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
	for _, b := range n.brokers {
		errs = append(errs, n.rules(b, ""))
	}
	return errors.Join(errs...)
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
		a, err := p.listen(n.t.gateway(), target)
		if err != nil {
			return 0, err
		}
		return a.Port, nil
	}
	plan := map[int32][]redirect{}
	bIP, bPort := n.t.brokerAddr(b)
	for _, o := range n.brokers {
		if o == b {
			continue
		}
		ip, port := n.t.brokerAddr(o)
		v, err := via(net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			p.close()
			return err
		}
		plan[b] = append(plan[b], redirect{ip, strconv.Itoa(port), v})
		if v, err = via(net.JoinHostPort(bIP, strconv.Itoa(bPort))); err != nil {
			p.close()
			return err
		}
		plan[o] = append(plan[o], redirect{bIP, strconv.Itoa(bPort), v})
	}
	for i, a := range n.t.zkAddrs() {
		v, err := via(n.t.zkTarget(i))
		if err != nil {
			p.close()
			return err
		}
		host, port, _ := net.SplitHostPort(a)
		plan[b] = append(plan[b], redirect{host, port, v})
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
			fmt.Fprintf(&nat, "\t\tip daddr %s tcp dport %s dnat to %s:%d\n", r.addr, r.port, n.t.gateway(), r.via)
			// What still goes to the old destination after the redirect belongs to a connection
			// made before it.
			fmt.Fprintf(&reset, "\t\tip daddr %s tcp dport %s reject with tcp reset\n", r.addr, r.port)
		}
		script += fmt.Sprintf("table ip %s {\n\tchain to_proxy {\n\t\ttype nat hook output priority -100; policy accept;\n%s\t}\n"+
			"\tchain old_connections {\n\t\ttype filter hook output priority filter; policy accept;\n%s\t}\n}\n", slowTable, nat.String(), reset.String())
	}
	return n.t.nft(ns, script)
}

// unslow takes the brokers' links out of the proxy. The proxy closes first, its listeners and then
// every connection it relayed, while the redirect rules are still in place: a change of a
// namespace's nat table (a flush or a delete) stops the translation of its live redirected
// connections, so a close sent after it never reaches the broker, which then waits on a dead fetch
// or ZooKeeper connection until its own timeout. Closed first, the brokers see the closes at once;
// what they reconnect in the moment before the rules go is refused, and retried, direct.
func (n *network) unslow() error {
	if n.proxy != nil {
		n.proxy.close()
		n.proxy = nil
	}
	var errs []error
	for _, b := range n.brokers {
		errs = append(errs, n.redirects(b, nil))
	}
	return errors.Join(errs...)
}
