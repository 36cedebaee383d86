package kafka

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// TopicPartition names one partition (Kafka's TopicPartition). It is
// comparable, so it keys maps.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is Kafka's "<topic>-<partition>", also a partition's log directory name.
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// Compare orders partitions by topic name, then partition number: the order
// of Kafka's tools and of files such as the offset checkpoints. It suits
// slices.SortFunc.
func Compare(a, b TopicPartition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// ParseTopicPartition reads "<topic>-<partition>". Topics may contain '-', so
// the partition is what follows the last one.
func ParseTopicPartition(s string) (TopicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return TopicPartition{}, fmt.Errorf("%q is not <topic>-<partition>", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 || s[i+1] == '+' {
		return TopicPartition{}, fmt.Errorf("%q is not <topic>-<partition>", s)
	}
	return TopicPartition{Topic: s[:i], Partition: int32(p)}, nil
}
