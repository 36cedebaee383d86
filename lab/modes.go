package lab

import (
	"fmt"
	"strings"
	"time"
)

// Mode is a way of running a consumer group.
type Mode struct {
	Name   string
	Legacy bool // the 0.8 ZooKeeper consumer
	// Consumer is KIP-848's consumer group protocol (group.protocol=consumer):
	// the coordinator assigns, with Strategy as group.remote.assignor.
	Consumer bool
	Strategy string // partition.assignment.strategy, or the consumer protocol's group.remote.assignor
	Static   bool   // group.instance.id set (KIP-345)
	Teaches  string
}

// AllModes are the modes `lab list` offers, in the order runs use.
var AllModes = []Mode{
	{Name: "legacy-range", Legacy: true, Strategy: "range", Teaches: "0.8 ZooKeeper consumer: every member watches /consumers/<g>/ids and rebalances itself; every rebalance stops everyone"},
	{Name: "legacy-roundrobin", Legacy: true, Strategy: "roundrobin", Teaches: "the same herd with 0.8's roundrobin assignor"},
	{Name: "eager-range", Strategy: "range", Teaches: "group coordinator, eager: all members revoke everything, then JoinGroup/SyncGroup (stop-the-world)"},
	{Name: "eager-roundrobin", Strategy: "roundrobin", Teaches: "eager with the roundrobin assignor: more partitions move"},
	{Name: "eager-sticky", Strategy: "sticky", Teaches: "eager with the sticky assignor: few partitions move, but all still stop"},
	{Name: "cooperative", Strategy: "cooperative-sticky", Teaches: "KIP-429: members keep what they own; only moved partitions stop, at the cost of a second round"},
	{Name: "static-eager", Strategy: "range", Static: true, Teaches: "KIP-345 with eager: a restart within session.timeout.ms causes no rebalance; a crash is noticed only after it"},
	{Name: "static-cooperative", Strategy: "cooperative-sticky", Static: true, Teaches: "KIP-345 and KIP-429 together"},
	{Name: "consumer", Consumer: true, Strategy: "uniform", Teaches: "KIP-848: the coordinator assigns and moves partitions one by one; " +
		"no JoinGroup, no SyncGroup, no group-wide barrier: a member revokes what moves and keeps fetching the rest"},
	{Name: "static-consumer", Consumer: true, Strategy: "uniform", Static: true, Teaches: "KIP-848 with group.instance.id: " +
		"a restart within the session timeout gets the same partitions back"},
}

// Scenario is a script of actions on a group's members.
type Scenario struct {
	Name    string
	Teaches string
	// Initial is the number of members started before the scenario.
	Initial func(o Options) int
	// Steps are the actions, one every Options.Step.
	Steps func(o Options) []Step
	// LegacyOnly and CoordinatorOnly scenarios act on what only one kind
	// of member has.
	LegacyOnly, CoordinatorOnly bool
	// KillsBrokers scenarios need Options.Brokers.
	KillsBrokers bool
}

// Step is one scenario action.
type Step struct {
	// MarkJoin, MarkLeave, MarkKill, MarkRestart, MarkStall, MarkExpire,
	// MarkCut, MarkKillBroker or MarkRestartBroker
	Action string
	Member int // 1-based; none for the broker actions
	// Stall is how long a MarkStall member stops processing, or a MarkCut
	// member's network stays cut.
	Stall time.Duration
}

// AllScenarios are the scenarios `lab list` offers.
var AllScenarios = []Scenario{
	{
		Name:    "scale-out",
		Teaches: "1 → N members joining one by one: the herd of watch notifications (legacy), stop-the-world (eager), two rounds moving only what moves (cooperative)",
		Initial: func(Options) int { return 1 },
		Steps: func(o Options) []Step {
			var s []Step
			for m := 2; m <= o.Members; m++ {
				s = append(s, Step{Action: MarkJoin, Member: m})
			}
			return s
		},
	},
	{
		Name:    "scale-in",
		Teaches: "N → 1 members leaving gracefully (LeaveGroup, or the ids znode deleted): each leave is one rebalance",
		Initial: func(o Options) int { return o.Members },
		Steps: func(o Options) []Step {
			var s []Step
			for m := o.Members; m >= 2; m-- {
				s = append(s, Step{Action: MarkLeave, Member: m})
			}
			return s
		},
	},
	{
		Name:    "crash",
		Teaches: "kill -9 of a member: nothing happens until session.timeout.ms (or zookeeper.session.timeout.ms) expires; its uncommitted records are processed again",
		Initial: func(o Options) int { return o.Members },
		Steps:   func(o Options) []Step { return []Step{{Action: MarkKill, Member: 2}} },
	},
	{
		Name:    "rolling-restart",
		Teaches: "restart every member in turn: 2 rebalances per member, or none with static membership (restart within session.timeout.ms)",
		Initial: func(o Options) int { return o.Members },
		Steps: func(o Options) []Step {
			var s []Step
			for m := 1; m <= o.Members; m++ {
				s = append(s, Step{Action: MarkRestart, Member: m})
			}
			return s
		},
	},
	{
		Name:    "slow-consumer",
		Teaches: "one member's processing exceeds max.poll.interval.ms: it is removed, its commit fails (\"The coordinator is not aware of this member\") and its records are processed again",
		Initial: func(o Options) int { return o.Members },
		Steps: func(o Options) []Step {
			return []Step{{Action: MarkStall, Member: 1, Stall: o.MaxPollInterval + 2*o.HeartbeatInterval + time.Second}}
		},
	},
}

// herd is the scale-out of legacy members seen from ZooKeeper's side.
var herd = Scenario{
	Name: "herd",
	Teaches: "1 → N members joining one by one, counting what each join costs: every legacy member is notified of every join " +
		"and rebalances, so the notifications per join grow with the group and the total with its square (try --members 50)",
	Initial: func(Options) int { return 1 },
	Steps:   AllScenarios[0].Steps,
}

// zkExpiry expires a legacy member's ZooKeeper session.
var zkExpiry = Scenario{
	Name: "zk-expiry",
	Teaches: "a legacy member's ZooKeeper session expires (a pause longer than zookeeper.session.timeout.ms): its znodes vanish, " +
		"everyone rebalances, it loses its partitions, registers again and rebalances once more (legacy modes only)",
	Initial:    func(o Options) int { return o.Members },
	Steps:      func(Options) []Step { return []Step{{Action: MarkExpire, Member: 2}} },
	LegacyOnly: true,
}

// networkBlip cuts a coordinator member off twice.
var networkBlip = Scenario{
	Name: "network-blip",
	Teaches: "a member's network is cut for half session.timeout.ms (nothing happens), then for longer than it (the coordinator " +
		"removes it, the group rebalances, it loses its partitions and joins again; coordinator modes only)",
	Initial: func(o Options) int { return o.Members },
	Steps: func(o Options) []Step {
		return []Step{
			{Action: MarkCut, Member: 2, Stall: o.SessionTimeout / 2},
			{Action: MarkCut, Member: 2, Stall: o.SessionTimeout + 2*o.HeartbeatInterval},
		}
	},
	CoordinatorOnly: true,
}

// brokerFailure kills the group coordinator's broker and restarts it.
var brokerFailure = Scenario{
	Name: "broker-failure",
	Teaches: "kill -9 of the group coordinator's broker (legacy modes: the leader of partition 0), then its restart: " +
		"until its ZooKeeper session expires, the partitions it replicates stop advancing (it is still in their ISR) and commits to " +
		"the coordinator fail; then it moves to the new leader of the group's __consumer_offsets partition, which loads the group, " +
		"and the members carry on in the same generation (kgo's rejoin), while legacy members, watching /brokers/ids, rebalance " +
		"at each change (needs --kill-command and --restart-command)",
	Initial: func(o Options) int { return o.Members },
	Steps: func(Options) []Step {
		return []Step{{Action: MarkKillBroker}, {Action: MarkRestartBroker}}
	},
	KillsBrokers: true,
}

func init() { AllScenarios = append(AllScenarios, herd, zkExpiry, networkBlip, brokerFailure) }

// FindMode returns the mode named name.
func FindMode(name string) (Mode, error) {
	for _, m := range AllModes {
		if m.Name == name {
			return m, nil
		}
	}
	return Mode{}, fmt.Errorf("unknown mode %q (modes: %s)", name, strings.Join(modeNames(), ", "))
}

// ParseModes reads a --modes value: "all" or a comma-separated list.
func ParseModes(s string) ([]Mode, error) {
	if s == "all" {
		return AllModes, nil
	}
	var out []Mode
	for _, name := range strings.Split(s, ",") {
		m, err := FindMode(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no modes given")
	}
	return out, nil
}

// FindScenario returns the scenario named name.
func FindScenario(name string) (Scenario, error) {
	for _, s := range AllScenarios {
		if s.Name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range AllScenarios {
		names = append(names, s.Name)
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (scenarios: %s)", name, strings.Join(names, ", "))
}

func modeNames() []string {
	var out []string
	for _, m := range AllModes {
		out = append(out, m.Name)
	}
	return out
}
