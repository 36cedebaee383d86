package broker

// The broker's side of the transaction coordinator: its configuration from
// server.properties, the Log over this broker's __transaction_state
// partitions (coordinatorLog, shared with the group coordinator), the
// producer id blocks, the marker sender (partition leaders from the
// metadata cache, WriteTxnMarkers over one inter-broker connection per
// leader), and the creation of __transaction_state on first use.

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/transaction"
	"github.com/zkafka/zkafka/wire"
)

// transactionTopic is Kafka's internal topic for transaction metadata.
const transactionTopic = "__transaction_state"

// txnConfigOf reads the transaction coordinator's settings (Kafka's names
// and defaults, which brokerconfig holds).
func txnConfigOf(c *brokerconfig.Config, log *zap.Logger) (transaction.Config, error) {
	p := brokerconfig.NewReader(c.Properties)
	cfg := transaction.DefaultConfig()
	cfg.TransactionTopicPartitions = p.Int32("transaction.state.log.num.partitions")
	cfg.TransactionMaxTimeout = p.Ms("transaction.max.timeout.ms")
	cfg.TransactionalIDExpiration = p.Ms("transactional.id.expiration.ms")
	cfg.AbortTimedOutTransactionsInterval = p.Ms("transaction.abort.timed.out.transaction.cleanup.interval.ms")
	cfg.RemoveExpiredTransactionalIDsInterval = p.Ms("transaction.remove.expired.transaction.cleanup.interval.ms")
	cfg.LoadBufferSize = p.Int32("transaction.state.log.load.buffer.size")
	cfg.RequestTimeout = c.RequestTimeout
	cfg.Logger = log
	if err := p.Err(); err != nil {
		return cfg, err
	}
	if cfg.TransactionTopicPartitions <= 0 {
		return cfg, fmt.Errorf("transaction.state.log.num.partitions must be at least 1: %w", brokerconfig.ErrConfig)
	}
	return cfg, nil
}

// transactionTopicSpec is __transaction_state as Kafka's
// transactionTopicConfigs creates it: compacted, uncompressed, no unclean
// leader election, transaction.state.log.min.isr (at most the replication
// factor it gets, see ensureInternalTopic) and
// transaction.state.log.segment.bytes.
func (s *Server) transactionTopicSpec() internalTopicSpec {
	p := brokerconfig.NewReader(s.cfg.Properties)
	return internalTopicSpec{
		name:              transactionTopic,
		partitions:        p.Int32("transaction.state.log.num.partitions"),
		replicationFactor: int16(p.Int32("transaction.state.log.replication.factor")),
		rfConfig:          "transaction.state.log.replication.factor",
		configs: map[string]string{
			"cleanup.policy":                 "compact",
			"compression.type":               "uncompressed",
			"unclean.leader.election.enable": "false",
			"segment.bytes":                  strconv.FormatInt(p.Int64("transaction.state.log.segment.bytes"), 10),
		},
		minInsync: p.Int32("transaction.state.log.min.isr"),
	}
}

// startTransactionCoordinator builds and starts the coordinator (KafkaServer
// starts it after the group coordinator).
func (s *Server) startTransactionCoordinator() error {
	cfg, err := txnConfigOf(s.cfg, s.log.Named("transaction-coordinator"))
	if err != nil {
		return err
	}
	cfg.Clock = s.clock
	if s.producerIDs, err = newProducerIDManager(s.zk, s.brokerID, s.log.Named("producer-id-manager")); err != nil {
		return err
	}
	s.markerSender = &markerSender{s: s, clients: map[int32]*wire.Client{}}
	s.txnCoordinator = transaction.New(cfg, coordinatorLog{s.replicas, transactionTopic}, s.producerIDs, s.markerSender)
	s.txnCoordinator.Start()
	return nil
}

// TransactionCoordinator returns the broker's transaction coordinator.
func (s *Server) TransactionCoordinator() *transaction.Coordinator { return s.txnCoordinator }

// markerSender is transaction.MarkerSender: leaders from the metadata
// cache, and one connection per leader broker on the inter-broker listener
// (Kafka's TransactionMarkerChannelManager network client).
type markerSender struct {
	s *Server

	mu      sync.Mutex
	clients map[int32]*wire.Client
}

func (m *markerSender) PartitionLeader(topic string, partition int32) (int32, bool) {
	_, parts, ok := m.s.metadata.Topic(topic)
	if !ok {
		return -1, false
	}
	pm, ok := parts[partition]
	if !ok {
		return -1, false
	}
	for _, b := range m.s.metadata.AliveBrokers() {
		if b.ID == pm.Leader {
			return pm.Leader, true
		}
	}
	return -1, true
}

func (m *markerSender) WriteTxnMarkers(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	cl, err := m.client(ctx, broker)
	if err != nil {
		return nil, err
	}
	resp, err := cl.Request(ctx, req)
	if err != nil {
		m.mu.Lock()
		if m.clients[broker] == cl {
			delete(m.clients, broker)
		}
		m.mu.Unlock()
		cl.Close()
		return nil, err
	}
	return resp.(*kmsg.WriteTxnMarkersResponse), nil
}

func (m *markerSender) client(ctx context.Context, broker int32) (*wire.Client, error) {
	m.mu.Lock()
	cl, ok := m.clients[broker]
	m.mu.Unlock()
	if ok {
		return cl, nil
	}
	addr, ok := m.s.replicas.brokerAddr(broker)
	if !ok {
		return nil, fmt.Errorf("no address for broker %d", broker)
	}
	cl, err := wire.DialSecure(ctx, addr, "broker-"+strconv.Itoa(int(m.s.brokerID))+"-txn-marker-sender", m.s.interBroker)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.clients[broker]; ok {
		cl.Close()
		return old, nil
	}
	m.clients[broker] = cl
	return cl, nil
}

// close closes every connection, once the coordinator has stopped.
func (m *markerSender) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, cl := range m.clients {
		cl.Close()
		delete(m.clients, id)
	}
}
