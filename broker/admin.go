package broker

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/zkpaths"
)

// internalTopics are the topics Kafka marks internal in Metadata.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

// topicError is a Kafka error code with a message for the client.
type topicError struct {
	code *kerr.Error
	msg  string
}

func (e *topicError) Error() string { return e.msg }

// message is the error message a response carries: none when empty (Kafka's
// NOT_CONTROLLER answers to the topic admin APIs have none).
func (e *topicError) message() *string {
	if e.msg == "" {
		return nil
	}
	return &e.msg
}

// errNotController answers a topic admin request sent to a broker that is
// not the controller.
var errNotController = &topicError{code: kerr.NotController}

func (e *topicError) Unwrap() error { return e.code }

func topicErr(code *kerr.Error, format string, args ...any) error {
	return &topicError{code: code, msg: fmt.Sprintf(format, args...)}
}

// adminZk is the one path by which this broker writes admin changes to
// ZooKeeper; the client holds nothing but the session, so one per call is
// as good as one per server.
func (s *Server) adminZk() *adminzk.Client { return adminzk.New(s.zk, s.log) }

// fromAdmin turns an admin failure into the topic error with its Kafka code
// and message; other errors stay as they are.
func fromAdmin(err error) error {
	var ae *adminzk.Error
	if errors.As(err, &ae) && ae.Code != nil {
		return &topicError{code: ae.Code, msg: ae.Msg}
	}
	return err
}

// newTopic is a validated topic creation: an explicit assignment or a count
// and replication factor to assign, and the topic configs.
type newTopic struct {
	name              string
	numPartitions     int32
	replicationFactor int16
	assignment        map[int32][]int32
	configs           map[string]string
	// mutations is the requesting client's controller mutation quota, which
	// the topic's partitions count against (nil: unbounded).
	mutations *quota.Mutation
}

// createTopic creates a topic as Kafka's ZkAdminManager does: the
// assignment (computed, or the request's with known brokers), the checks of
// AdminZkClient.validateTopicCreate, the topic configs, and then the
// znodes, written by adminzk. The controller's watch on /brokers/topics does
// the rest. With validateOnly nothing is written. It returns the final
// assignment.
func (s *Server) createTopic(t newTopic, validateOnly bool) (map[int32][]int32, error) {
	if err := zkpaths.ValidateTopicName(t.name); err != nil {
		return nil, topicErr(kerr.InvalidTopicException, "%v", err)
	}
	assignment := t.assignment
	if assignment == nil {
		brokers, err := s.registeredBrokers()
		if err != nil {
			return nil, err
		}
		if adminzk.MinAssignmentBytes(t.numPartitions, t.replicationFactor) > adminzk.MaxZnodeBytes {
			return nil, topicErr(kerr.InvalidPartitions, "%d partitions with replication factor %d do not fit in one /brokers/topics znode.", t.numPartitions, t.replicationFactor)
		}
		assignment, err = controller.AssignReplicasRandom(brokers, t.numPartitions, t.replicationFactor)
		switch {
		case errors.Is(err, controller.ErrInvalidPartitions):
			return nil, topicErr(kerr.InvalidPartitions, "Number of partitions must be larger than 0.")
		case errors.Is(err, controller.ErrInvalidReplicationFactor):
			return nil, topicErr(kerr.InvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", t.replicationFactor, len(brokers))
		case err != nil:
			return nil, err
		}
	} else if err := s.checkReplicaBrokers(assignment); err != nil {
		return nil, err
	}
	admin := s.adminZk()
	if err := admin.ValidateTopicCreate(t.name, assignment); err != nil {
		return nil, fromAdmin(err)
	}
	cfg := s.defaultLogConfig()
	if err := brokerconfig.ApplyTopicConfig(&cfg, t.configs); err != nil {
		return nil, topicErr(kerr.InvalidConfig, "%v", err)
	}
	if validateOnly {
		return assignment, nil
	}
	if err := t.mutations.Record(len(assignment)); err != nil {
		return nil, throttlingQuotaExceeded()
	}
	if _, err := admin.CreateTopic(t.name, assignment, t.configs); err != nil {
		return nil, fromAdmin(err)
	}
	return assignment, nil
}

// registeredBrokers lists the ids under /brokers/ids, sorted.
func (s *Server) registeredBrokers() ([]int32, error) {
	children, _, err := s.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", zkpaths.BrokerIDs, err)
	}
	ids := make([]int32, 0, len(children))
	for _, c := range children {
		id, err := zkpaths.ParseBrokerID(c)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// checkReplicaBrokers checks that a manual replica assignment names only
// registered brokers; its shape is adminzk's to check.
func (s *Server) checkReplicaBrokers(a map[int32][]int32) error {
	brokers, err := s.registeredBrokers()
	if err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(a)) {
		for _, r := range a[p] {
			if !slices.Contains(brokers, r) {
				return topicErr(kerr.InvalidReplicaAssignment, "Unknown broker %d in replica assignment.", r)
			}
		}
	}
	return nil
}
