package broker

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

// producerIDManager hands out producer ids for InitProducerId from blocks of
// zkpaths.ProducerIDBlockSize claimed in /latest_producer_id_block, as
// Kafka's ZooKeeper-mode ProducerIdManager: read the last block and its
// zkVersion, write the next block conditionally on that version, and start
// over when another broker claimed one first. The first block is claimed when
// the broker starts (Kafka 2.8 claims it in the manager's constructor), so
// every start of every broker moves /latest_producer_id_block on.
type producerIDManager struct {
	zk       *zkclient.Client
	brokerID int32
	log      *zap.Logger

	mu        sync.Mutex
	next, end int64 // the current block's next id and last id; next > end when none is left
}

// maxBlockClaimAttempts bounds the retries when other brokers keep winning
// the conditional write.
const maxBlockClaimAttempts = 100

// newProducerIDManager claims the broker's first block.
func newProducerIDManager(zkc *zkclient.Client, brokerID int32, log *zap.Logger) (*producerIDManager, error) {
	m := &producerIDManager{zk: zkc, brokerID: brokerID, log: log, next: 0, end: -1}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.claimBlock(); err != nil {
		return nil, err
	}
	return m, nil
}

// GenerateProducerID returns a producer id no other broker or earlier call
// got (the transaction coordinator's ProducerIDGenerator).
func (m *producerIDManager) GenerateProducerID() (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next > m.end {
		if err := m.claimBlock(); err != nil {
			return 0, err
		}
	}
	id := m.next
	m.next++
	return id, nil
}

func (m *producerIDManager) claimBlock() error {
	for range maxBlockClaimAttempts {
		data, stat, err := m.zk.Get(zkpaths.LatestProducerIDBlock)
		if err != nil {
			return fmt.Errorf("read %s: %w", zkpaths.LatestProducerIDBlock, err)
		}
		block, err := zkpaths.NextProducerIDBlock(data, m.brokerID)
		if err != nil {
			return fmt.Errorf("%s: %w", zkpaths.LatestProducerIDBlock, err)
		}
		if _, err := m.zk.Set(zkpaths.LatestProducerIDBlock, block.Encode(), stat.Version); err != nil {
			if errors.Is(err, zk.ErrBadVersion) {
				continue
			}
			return fmt.Errorf("write %s: %w", zkpaths.LatestProducerIDBlock, err)
		}
		m.next, m.end = block.BlockStart, block.BlockEnd
		m.log.Info("Claimed a producer id block", zap.Int64("block-start", block.BlockStart), zap.Int64("block-end", block.BlockEnd))
		return nil
	}
	return fmt.Errorf("claim a producer id block: %d conflicting writes in a row", maxBlockClaimAttempts)
}
