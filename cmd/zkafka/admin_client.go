package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/security"
)

// adminTimeout bounds one tool invocation's broker or ZooKeeper work, like
// the Java admin client's default.api.timeout.ms (60 s) but shorter, so a
// wrong address fails within a teaching session's patience.
const adminTimeout = 30 * time.Second

// optionSpec declares one option of a Kafka tool as joptsimple does: its
// name without the dashes, whether it takes an argument, and what the help
// prints for it. Build one with flagOpt or argOpt.
type optionSpec struct {
	name        string
	hasArg      bool
	optionalArg bool   // the argument may be left out (withOptionalArg)
	arg         string // what the argument is (describedAs)
	argType     string // its type in the help (ofType); "" is String
	def         string // the default the help shows (defaultsTo)
	desc        string
}

// toolOptions are the parsed options of a Kafka tool, parsed the way
// joptsimple (the parser of Kafka's Scala tools) does: "--name value" or
// "--name=value", and an option may repeat. Kafka 2.8's tools turn
// joptsimple's abbreviations off (CommandDefaultOptions), so a prefix of a
// name is not recognized.
type toolOptions struct {
	values map[string][]string
}

// parseToolOptions parses args against specs. Its errors read as
// joptsimple's messages, which Kafka's tools print. An optional argument is
// taken from the next word only when that is not an option.
func parseToolOptions(args []string, specs []optionSpec) (toolOptions, error) {
	o := toolOptions{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
			return o, fmt.Errorf("Found non-option argument %q", arg)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		spec, err := lookupOption(name, specs)
		if err != nil {
			return o, err
		}
		switch {
		case spec.optionalArg:
			// joptsimple also takes a negative number for a numeric
			// argument (OptionalArgumentOptionSpec.detectOptionArgument).
			if !hasValue && i+1 < len(args) && (!strings.HasPrefix(args[i+1], "-") || spec.numeric(args[i+1])) {
				i++
				value = args[i]
			}
		case !spec.hasArg && hasValue:
			return o, fmt.Errorf("Option %s does not take an argument", spec.name)
		case spec.hasArg && !hasValue:
			if i+1 >= len(args) {
				return o, fmt.Errorf("Option %s requires an argument", spec.name)
			}
			i++
			value = args[i]
		}
		o.values[spec.name] = append(o.values[spec.name], value)
	}
	return o, nil
}

// numeric reports whether the option's argument is a number and v is one.
func (s optionSpec) numeric(v string) bool {
	if s.argType != "Long" && s.argType != "Integer" {
		return false
	}
	_, err := strconv.ParseInt(v, 10, 64)
	return err == nil
}

// lookupOption finds the option named exactly name.
func lookupOption(name string, specs []optionSpec) (optionSpec, error) {
	for _, s := range specs {
		if s.name == name {
			return s, nil
		}
	}
	return optionSpec{}, fmt.Errorf("%s is not a recognized option", name)
}

func (o toolOptions) has(name string) bool { return len(o.values[name]) > 0 }

// value is the option's last value, "" when absent.
func (o toolOptions) value(name string) string {
	v := o.values[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// all is every value of a repeatable option.
func (o toolOptions) all(name string) []string { return o.values[name] }

// count is how many of names were given.
func (o toolOptions) count(names ...string) int {
	n := 0
	for _, name := range names {
		if o.has(name) {
			n++
		}
	}
	return n
}

// usageError is a command-line mistake: Kafka's CommandLineUtils prints the
// message (and the usage) and exits with status 1.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// checkRequired fails with Kafka's "Missing required argument" message when
// one of names is absent.
func (o toolOptions) checkRequired(names ...string) error {
	for _, n := range names {
		if !o.has(n) {
			return usageErrorf("Missing required argument \"[%s]\"", n)
		}
	}
	return nil
}

// checkInvalid fails when one of invalid was given together with option,
// with Kafka's CommandLineUtils.checkInvalidArgs message.
func (o toolOptions) checkInvalid(option string, invalid ...string) error {
	if !o.has(option) {
		return nil
	}
	for _, n := range invalid {
		if o.has(n) {
			return usageErrorf("Option \"[%s]\" can't be used with option \"[%s]\"", option, n)
		}
	}
	return nil
}

// parseInt32Option reads an integer option with joptsimple's conversion
// message on bad input.
func (o toolOptions) int32Option(name string) (int32, error) {
	var v int32
	if _, err := fmt.Sscan(o.value(name), &v); err != nil || fmt.Sprint(v) != strings.TrimSpace(o.value(name)) {
		return 0, usageErrorf("Cannot parse argument '%s' of option %s", o.value(name), name)
	}
	return v, nil
}

// dialAdmin returns a kgo client on the bootstrap servers and its kadm
// wrapper; the caller closes the kgo client. commandConfig, when not empty,
// is the tool's --command-config file, whose security configs the client
// connects with.
func dialAdmin(bootstrap, commandConfig string) (*kgo.Client, *kadm.Client, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.ClientID("adminclient-1"), kgo.RetryTimeout(adminTimeout)}
	if commandConfig != "" {
		props, err := brokerconfig.ReadPropertiesFile(commandConfig)
		if err != nil {
			return nil, nil, err
		}
		sec, err := securityOpts(props)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, sec...)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("bootstrap servers %q: %w", bootstrap, err)
	}
	return cl, kadm.NewClient(cl), nil
}

// securityOpts are the kgo options of a client with these properties: TLS
// and SASL as security.ClientSecurity reads them from security.protocol,
// ssl.* and sasl.*.
func securityOpts(props map[string]string) ([]kgo.Opt, error) {
	sec, err := security.ClientSecurity(props)
	if err != nil {
		return nil, err
	}
	var opts []kgo.Opt
	if sec.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(sec.TLS))
	}
	if sec.SASL != nil {
		opts = append(opts, kgo.SASL(sec.SASL))
	}
	return opts, nil
}

// dialZooKeeper opens a session for a tool's --zookeeper mode. As 2.8's tools do, it
// authenticates with SASL when KAFKA_OPTS names a JAAS file with a Client context, and then
// creates znodes with secure ACLs.
func dialZooKeeper(ctx context.Context, connect string) (*zkclient.Client, error) {
	return dialZooKeeperSecure(ctx, connect, "", nil)
}

// dialZooKeeperSecure is dialZooKeeper with a --zk-tls-config-file (TLS to ZooKeeper, whose
// client certificate also makes the ACLs secure) and, for kafka-acls' --authorizer-properties,
// zookeeper.set.acl given rather than implied by the login.
func dialZooKeeperSecure(ctx context.Context, connect, tlsConfigFile string, setACL *bool) (*zkclient.Client, error) {
	tlsProps, err := zkTLSConfigFile(tlsConfigFile)
	if err != nil {
		return nil, err
	}
	zkSec, err := security.ZooKeeperClientSecurity(tlsProps, setACL)
	if err != nil {
		return nil, err
	}
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect, SessionTimeout: adminTimeout, Logger: zap.NewNop(),
		SASL: zkSec.Login, TLS: zkSec.TLS, SecureACLs: zkSec.SecureACLs})
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper %s: %w", connect, err)
	}
	return zkc, nil
}

// zkTLSConfigFile reads a --zk-tls-config-file: its zookeeper.clientCnxnSocket and
// zookeeper.ssl.* properties, the others ignored as Kafka ignores them; none without a file.
func zkTLSConfigFile(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := brokerconfig.ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	props := map[string]string{}
	for k, v := range all {
		if k == "zookeeper.clientCnxnSocket" || strings.HasPrefix(k, "zookeeper.ssl.") {
			props[k] = v
		}
	}
	return props, nil
}

// kafkaMessage is what Kafka's tools print for err: a broker's error message
// when it sent one, else the exception's own text (kerr's description).
// kgo puts a broker's message after the code (a SaslAuthenticate answer's
// "Authentication failed during authentication due to invalid credentials
// with SASL mechanism SCRAM-SHA-256"); the message alone is the Java
// exception's.
func kafkaMessage(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) && err.Error() == ke.Error() {
		return ke.Description
	}
	if ke != nil {
		if msg, ok := strings.CutPrefix(err.Error(), ke.Error()+": "); ok {
			return msg
		}
	}
	return err.Error()
}

// finishTool ends a tool the way Kafka's do: a usage error prints its
// message; any other error prints "Error while executing <what> command :
// <message>". Both exit 1. Kafka prints these on stdout; we use stderr so
// that scripts reading stdout see only results.
func finishTool(err error, what string, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, ue.msg)
		return 1
	}
	fmt.Fprintf(stderr, "Error while executing %s command : %s\n", what, kafkaMessage(err))
	return 1
}

// sortedKeys returns a map's keys in order.
func sortedKeys[K interface{ ~int32 | ~string }, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// joinInt32s prints ids as Kafka's mkString(",") does.
func joinInt32s(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// messageError is a Kafka error code with the message the broker (or the
// tool) attached, which is what Kafka's exceptions print.
type messageError struct {
	msg  string
	code error
}

func (e *messageError) Error() string { return e.msg }
func (e *messageError) Unwrap() error { return e.code }
