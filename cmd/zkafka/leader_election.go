package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

var leaderElectionOptions = []optionSpec{
	argOpt("bootstrap-server", "host:port", "A hostname and port for the broker to connect to, in the form host:port. Multiple comma separated URLs can be given. REQUIRED."),
	argOpt("admin.config", "config file", "Configuration properties files to pass to the admin client"),
	argOpt("path-to-json-file", "Path to JSON file", "The JSON file with the list  of partition for which leader elections should be performed. This is an example format. \n"+
		`{"partitions":`+"\n\t"+`[{"topic": "foo", "partition": 1},`+"\n\t"+` {"topic": "foobar", "partition": 2}]`+"\n}\n"+
		"Not allowed if --all-topic-partitions or --topic flags are specified."),
	argOpt("topic", "topic name", "Name of topic for which to perform an election. Not allowed if --path-to-json-file or --all-topic-partitions is specified."),
	argOpt("partition", "partition id", "Partition id for which to perform an election. REQUIRED if --topic is specified.").typed("Integer"),
	flagOpt("all-topic-partitions", "Perform election on all of the eligible topic partitions based on the type of election (see the --election-type flag). "+
		"Not allowed if --topic or --path-to-json-file is specified."),
	argOpt("election-type", "election type", `Type of election to attempt. Possible values are "preferred" for preferred leader election or "unclean" for unclean leader election. `+
		"If preferred election is selection, the election is only performed if the current leader is not the preferred leader for the topic partition. "+
		"If unclean election is selected, the election is only performed if there are no leader for the topic partition. REQUIRED.").typed("[PREFERRED,UNCLEAN]"),
	helpOption,
}

// runLeaderElection is kafka-leader-election.sh: an ElectLeaders request for
// one partition, the partitions of a JSON file, or every partition.
func runLeaderElection(args []string, stdout, stderr io.Writer) int {
	if opts, err := parseToolOptions(args, leaderElectionOptions); err == nil && helpNeeded(args, opts,
		"This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are preferred replicas and unclean replicas.",
		leaderElectionOptions, stderr) {
		return 1
	}
	return finishElection(leaderElection(args, stdout), stderr)
}

func leaderElection(args []string, stdout io.Writer) error {
	opts, err := parseToolOptions(args, leaderElectionOptions)
	if err != nil {
		return err
	}
	var missing []string
	for _, name := range []string{"election-type", "bootstrap-server"} {
		if !opts.has(name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("Missing required option(s): %s", strings.Join(missing, ", "))
	}
	if opts.count("topic", "all-topic-partitions", "path-to-json-file") != 1 {
		return errors.New("One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file")
	}
	switch {
	case opts.has("topic") && !opts.has("partition"):
		return errors.New("Missing required option(s): partition")
	case !opts.has("topic") && opts.has("partition"):
		return errors.New("Option partition is only allowed if topic is used")
	}
	var electionType int8
	switch strings.ToUpper(opts.value("election-type")) {
	case "PREFERRED":
	case "UNCLEAN":
		electionType = 1
	default:
		return fmt.Errorf("Cannot parse argument '%s' of option election-type", opts.value("election-type"))
	}
	var partitions []kafka.TopicPartition // nil: every partition
	switch {
	case opts.has("path-to-json-file"):
		if partitions, err = readElectionFile(opts.value("path-to-json-file"), "Replica election data"); err != nil {
			return err
		}
	case opts.has("topic"):
		p, err := opts.int32Option("partition")
		if err != nil {
			return err
		}
		partitions = []kafka.TopicPartition{{Topic: opts.value("topic"), Partition: p}}
	}
	cl, _, err := dialAdmin(opts.value("bootstrap-server"), opts.value("admin.config"))
	if err != nil {
		return err
	}
	defer cl.Close()
	results, err := electLeaders(cl, electionType, partitions)
	if err != nil {
		return err
	}
	kind := map[int8]string{0: "PREFERRED", 1: "UNCLEAN"}[electionType]
	return printElection(stdout, results,
		"Successfully completed leader election ("+kind+") for partitions %s\n",
		"Valid replica already elected for partitions %s\n",
		"Error completing leader election ("+kind+") for partition: %s: %s\n",
		"%d replica(s) could not be elected")
}

var preferredReplicaElectionOptions = []optionSpec{
	argOpt("path-to-json-file", "list of partitions for which preferred replica leader election needs to be triggered",
		"The JSON file with the list of partitions for which preferred replica leader election should be done, in the following format - \n"+
			`{"partitions":`+"\n\t"+`[{"topic": "foo", "partition": 1},`+"\n\t"+` {"topic": "foobar", "partition": 2}]`+"\n}\n"+
			"Defaults to all existing partitions"),
	argOpt("zookeeper", "urls", "DEPRECATED. The connection string for the zookeeper connection in the form host:port. Multiple URLS can be given to allow fail-over. "+
		"Replaced by --bootstrap-server, REQUIRED unless --bootstrap-server is given."),
	argOpt("bootstrap-server", "host:port", "A hostname and port for the broker to connect to, in the form host:port. Multiple comma-separated URLs can be given. "+
		"REQUIRED unless --zookeeper is given."),
	argOpt("admin.config", "config file", "Admin client config properties file to pass to the admin client when --bootstrap-server is given."),
	helpOption,
}

// runPreferredReplicaElection is Kafka 2.8's deprecated
// kafka-preferred-replica-election.sh: ElectLeaders with --bootstrap-server,
// or the /admin/preferred_replica_election znode the controller watches
// with --zookeeper.
func runPreferredReplicaElection(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405")
	if opts, err := parseToolOptions(args, preferredReplicaElectionOptions); err == nil && helpNeeded(args, opts,
		"This tool helps to causes leadership for each partition to be transferred back to the 'preferred replica', it can be used to balance leadership among the servers.",
		preferredReplicaElectionOptions, stderr) {
		return 1
	}
	return finishElection(preferredReplicaElection(args, stdout), stderr)
}

func preferredReplicaElection(args []string, stdout io.Writer) error {
	opts, err := parseToolOptions(args, preferredReplicaElectionOptions)
	if err != nil {
		return err
	}
	if opts.has("bootstrap-server") == opts.has("zookeeper") {
		return usageErrorf("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided")
	}
	var partitions []kafka.TopicPartition
	if opts.has("path-to-json-file") {
		if partitions, err = readElectionFile(opts.value("path-to-json-file"), "Preferred replica election data"); err != nil {
			return err
		}
	}
	if opts.has("zookeeper") {
		fmt.Fprintln(stdout, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
		fmt.Fprintln(stdout, "Use --bootstrap-server instead to specify a broker to connect to.")
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		zkc, err := dialZooKeeper(ctx, opts.value("zookeeper"))
		if err != nil {
			return err
		}
		defer zkc.Close()
		return writePreferredReplicaElection(zkc, partitions, stdout)
	}
	cl, _, err := dialAdmin(opts.value("bootstrap-server"), opts.value("admin.config"))
	if err != nil {
		return err
	}
	defer cl.Close()
	results, err := electLeaders(cl, 0, partitions)
	if err != nil {
		return err
	}
	return printElection(stdout, results,
		"Successfully completed preferred leader election for partitions %s\n",
		"Preferred replica already elected for partitions %s\n",
		"Error completing preferred leader election for partition: %s: %s\n",
		"%d preferred replica(s) could not be elected")
}

// writePreferredReplicaElection is the --zookeeper path: the requested
// partitions that exist (all of them without a JSON file) go into
// /admin/preferred_replica_election; the others are reported as skipped.
func writePreferredReplicaElection(zkc *zkclient.Client, requested []kafka.TopicPartition, stdout io.Writer) error {
	existing, err := zkPartitions(zkc)
	if err != nil {
		return err
	}
	valid, invalid := existing, []kafka.TopicPartition(nil)
	if requested != nil {
		valid = nil
		for _, tp := range requested {
			if slices.Contains(existing, tp) {
				valid = append(valid, tp)
			} else {
				invalid = append(invalid, tp)
			}
		}
	}
	admin := newAdminZk(zkc)
	if err := admin.WritePreferredReplicaElection(valid); err != nil {
		if errors.Is(err, adminzk.ErrPreferredElectionInProgress) {
			pending := "?"
			if d, ok, err := admin.PendingPreferredReplicaElection(); ok && err == nil {
				pending = joinPartitions(d.Partitions, ",")
			}
			return fmt.Errorf("Preferred replica leader election currently in progress for %s. Aborting operation", pending)
		}
		return err
	}
	fmt.Fprintf(stdout, "Created preferred replica election path with %s\n", joinPartitions(valid, ","))
	// Kafka prints the Scala Set itself here: "Set(t-0, t-1)".
	fmt.Fprintf(stdout, "Successfully started preferred replica election for partitions Set(%s)\n", joinPartitions(valid, ", "))
	for _, tp := range invalid {
		fmt.Fprintf(stdout, "Skipping preferred replica leader election for partition %s since it doesn't exist.\n", tp.String())
	}
	return nil
}

// zkPartitions lists every partition of every topic in ZooKeeper, in order.
func zkPartitions(zkc *zkclient.Client) ([]kafka.TopicPartition, error) {
	topics, _, err := zkc.Children(zkpaths.BrokerTopics)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	slices.Sort(topics)
	var all []kafka.TopicPartition
	for _, t := range topics {
		a, err := zkTopicAssignment(zkc, t)
		if err != nil {
			return nil, err
		}
		for _, p := range a.PartitionIDs() {
			all = append(all, kafka.TopicPartition{Topic: t, Partition: p})
		}
	}
	return all, nil
}

// zkTopicAssignment reads /brokers/topics/<topic>; a missing topic is an
// error wrapping zk.ErrNoNode.
func zkTopicAssignment(zkc *zkclient.Client, topic string) (zkpaths.TopicAssignment, error) {
	data, _, err := zkc.Get(zkpaths.TopicPath(topic))
	if err != nil {
		return zkpaths.TopicAssignment{}, fmt.Errorf("read topic %s: %w", topic, err)
	}
	return zkpaths.DecodeTopicAssignment(data)
}

// readElectionFile reads {"partitions":[{"topic":"t","partition":0},...]}
// with the messages of Kafka's parsers; what names the data in them.
func readElectionFile(path, what string) ([]kafka.TopicPartition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is empty", what)
	}
	raw, ok := doc["partitions"]
	if !ok {
		if what == "Preferred replica election data" {
			return nil, fmt.Errorf("%s is empty", what)
		}
		return nil, fmt.Errorf("%s is missing \"partitions\" field", what)
	}
	var entries []struct {
		Topic     *string `json:"topic"`
		Partition *int32  `json:"partition"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("%s: partitions: %w", what, err)
	}
	var tps, dups []kafka.TopicPartition
	for i, e := range entries {
		if e.Topic == nil || e.Partition == nil {
			return nil, fmt.Errorf("%s: partitions[%d] needs topic and partition", what, i)
		}
		tp := kafka.TopicPartition{Topic: *e.Topic, Partition: *e.Partition}
		if slices.Contains(tps, tp) {
			if !slices.Contains(dups, tp) {
				dups = append(dups, tp)
			}
			continue
		}
		tps = append(tps, tp)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("%s contains duplicate partitions: %s", what, joinPartitions(dups, ","))
	}
	return tps, nil
}

// electionResult is one partition's answer to ElectLeaders.
type electionResult struct {
	tp  kafka.TopicPartition
	err error // nil: elected
}

// electLeaders sends ElectLeaders to the controller; nil partitions means
// every partition (a null topic list).
func electLeaders(cl *kgo.Client, electionType int8, partitions []kafka.TopicPartition) ([]electionResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType = electionType
	req.TimeoutMillis = int32(adminTimeout.Milliseconds() / 2)
	if partitions != nil {
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for _, tp := range partitions {
			i := slices.IndexFunc(req.Topics, func(t kmsg.ElectLeadersRequestTopic) bool { return t.Topic == tp.Topic })
			if i < 0 {
				req.Topics = append(req.Topics, kmsg.ElectLeadersRequestTopic{Topic: tp.Topic})
				i = len(req.Topics) - 1
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
		}
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("Error while making request: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	var results []electionResult
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			r := electionResult{tp: kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}}
			if p.ErrorCode != 0 {
				r.err = brokerError(kerr.ErrorForCode(p.ErrorCode), p.ErrorMessage)
			}
			results = append(results, r)
		}
	}
	slices.SortFunc(results, func(a, b electionResult) int { return kafka.Compare(a.tp, b.tp) })
	return results, nil
}

// printElection prints Kafka's three groups: elected, already elected
// (ELECTION_NOT_NEEDED), failed; failures make the command fail. Kafka 2.8
// printed the elected set on the "already elected" line by mistake (fixed
// in later versions); we print the partitions the line is about.
func printElection(stdout io.Writer, results []electionResult, okFormat, noopFormat, errFormat, failFormat string) error {
	var ok, noop []kafka.TopicPartition
	var failed []electionResult
	for _, r := range results {
		switch {
		case r.err == nil:
			ok = append(ok, r.tp)
		case errors.Is(r.err, kerr.ElectionNotNeeded):
			noop = append(noop, r.tp)
		default:
			failed = append(failed, r)
		}
	}
	if len(ok) > 0 {
		fmt.Fprintf(stdout, okFormat, joinPartitions(ok, ", "))
	}
	if len(noop) > 0 {
		fmt.Fprintf(stdout, noopFormat, joinPartitions(noop, ", "))
	}
	for _, r := range failed {
		fmt.Fprintf(stdout, errFormat, r.tp.String(), javaException(r.err))
	}
	if len(failed) > 0 {
		return fmt.Errorf(failFormat, len(failed))
	}
	return nil
}

// finishElection prints a failure's message as the exception Kafka's
// election tools die with, without its stack trace.
func finishElection(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, err)
	return 1
}

// brokerError is a Kafka error code with the message the broker sent, or
// the code's default message when it sent none, as the Java client's
// exceptions carry.
func brokerError(code error, msg *string) error {
	var ke *kerr.Error
	if m := derefOr(msg, ""); m != "" || !errors.As(code, &ke) {
		return &messageError{msg: m, code: code}
	}
	return &messageError{msg: ke.Description, code: code}
}

// javaException renders an error the way the Java client's exception
// prints: the class Kafka has for its code, then its message.
func javaException(err error) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err.Error()
	}
	class, ok := javaExceptionClasses[ke.Code]
	if !ok {
		var b strings.Builder
		for word := range strings.SplitSeq(strings.ToLower(ke.Message), "_") {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
		class = strings.TrimSuffix(b.String(), "Exception") + "Exception"
	}
	msg := err.Error()
	if msg == "" || msg == ke.Error() {
		msg = ke.Description
	}
	return fmt.Sprintf("org.apache.kafka.common.errors.%s: %s", class, msg)
}

// javaExceptionClasses are the codes whose exception class is not named after
// the code (Kafka's Errors table).
var javaExceptionClasses = map[int16]string{
	kerr.DelegationTokenAuthDisabled.Code:        "DelegationTokenDisabledException",
	kerr.DelegationTokenRequestNotAllowed.Code:   "UnsupportedByAuthenticationException",
	kerr.DelegationTokenAuthorizationFailed.Code: "DelegationTokenAuthorizationException",
	kerr.UnknownServerError.Code:                 "UnknownServerException",
	kerr.RequestTimedOut.Code:                    "TimeoutException",
	kerr.KafkaStorageError.Code:                  "KafkaStorageException",

	kerr.TopicAuthorizationFailed.Code:           "TopicAuthorizationException",
	kerr.GroupAuthorizationFailed.Code:           "GroupAuthorizationException",
	kerr.ClusterAuthorizationFailed.Code:         "ClusterAuthorizationException",
	kerr.TransactionalIDAuthorizationFailed.Code: "TransactionalIdAuthorizationException",
}

func derefOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

func joinPartitions(tps []kafka.TopicPartition, sep string) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return strings.Join(s, sep)
}
