package zkpaths

import "math"

// ProducerIDBlockSize is how many producer ids a broker takes at a time.
const ProducerIDBlockSize = 1000

// ProducerIDBlock is the data of /latest_producer_id_block: the last block of
// producer ids handed out, both ends inclusive, the ends written as JSON
// strings (a Kafka quirk):
//
//	{"version":1,"broker":1,"block_start":"1000","block_end":"1999"}
type ProducerIDBlock struct {
	BrokerID   int32
	BlockStart int64
	BlockEnd   int64
}

// Encode returns the version-1 JSON.
func (b ProducerIDBlock) Encode() []byte {
	return newObject().int("version", 1).int("broker", int64(b.BrokerID)).
		long("block_start", b.BlockStart).long("block_end", b.BlockEnd).bytes()
}

// DecodeProducerIDBlock reads /latest_producer_id_block.
func DecodeProducerIDBlock(data []byte) (ProducerIDBlock, error) {
	o, err := parseObject("producer id block", data)
	if err != nil {
		return ProducerIDBlock{}, err
	}
	if _, err := o.version(); err != nil {
		return ProducerIDBlock{}, err
	}
	var b ProducerIDBlock
	if err := o.required("broker", &b.BrokerID); err != nil {
		return ProducerIDBlock{}, err
	}
	if b.BlockStart, err = o.requiredLong("block_start"); err != nil {
		return ProducerIDBlock{}, err
	}
	if b.BlockEnd, err = o.requiredLong("block_end"); err != nil {
		return ProducerIDBlock{}, err
	}
	if b.BlockStart < 0 || b.BlockEnd < b.BlockStart {
		return ProducerIDBlock{}, malformed(o.kind, "invalid block [%d, %d]", b.BlockStart, b.BlockEnd)
	}
	return b, nil
}

// NextProducerIDBlock returns the block brokerID should claim after the one
// in current, the present data of /latest_producer_id_block: [0, 999] when
// the znode is empty, else the ProducerIDBlockSize ids after the current end.
// The caller writes it back conditionally on the zkVersion it read, and
// starts over on a version conflict.
func NextProducerIDBlock(current []byte, brokerID int32) (ProducerIDBlock, error) {
	if len(current) == 0 {
		return ProducerIDBlock{BrokerID: brokerID, BlockStart: 0, BlockEnd: ProducerIDBlockSize - 1}, nil
	}
	prev, err := DecodeProducerIDBlock(current)
	if err != nil {
		return ProducerIDBlock{}, err
	}
	if prev.BlockEnd > math.MaxInt64-ProducerIDBlockSize {
		return ProducerIDBlock{}, ErrProducerIDsExhausted
	}
	return ProducerIDBlock{BrokerID: brokerID, BlockStart: prev.BlockEnd + 1, BlockEnd: prev.BlockEnd + ProducerIDBlockSize}, nil
}
