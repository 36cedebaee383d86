package zkpaths

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Subscription patterns of a legacy consumer registration.
const (
	PatternStatic    = "static"     // a fixed list of topics
	PatternWhiteList = "white_list" // topics matching a regex
	PatternBlackList = "black_list" // topics not matching a regex
)

// ConsumerRegistration is the data of the ephemeral
// /consumers/<g>/ids/<consumerId>, written by a 0.8.2 high-level consumer:
//
//	{"version":1,"subscription":{"orders":2},"pattern":"static","timestamp":"1419960000000"}
//
// For a wildcard subscription the single key of "subscription" is the regex.
type ConsumerRegistration struct {
	Subscription map[string]int32 // topic (or regex) → number of streams
	Pattern      string           // PatternStatic, PatternWhiteList or PatternBlackList
	Timestamp    int64            // registration time, epoch milliseconds
}

// Encode returns the version-1 JSON; an empty Pattern is written as static.
func (c ConsumerRegistration) Encode() []byte {
	sub := newObject()
	for _, topic := range slices.Sorted(maps.Keys(c.Subscription)) {
		sub.int(topic, int64(c.Subscription[topic]))
	}
	pattern := c.Pattern
	if pattern == "" {
		pattern = PatternStatic
	}
	return newObject().int("version", 1).raw("subscription", sub.bytes()).
		str("pattern", pattern).long("timestamp", c.Timestamp).bytes()
}

// DecodeConsumerRegistration reads a consumer registration. As in Kafka, only
// "subscription" and "pattern" are required, and a pattern other than
// white_list or black_list means a static subscription. The map of the result
// is never nil.
func DecodeConsumerRegistration(data []byte) (ConsumerRegistration, error) {
	o, err := parseObject("consumer registration", data)
	if err != nil {
		return ConsumerRegistration{}, err
	}
	var version int
	if ok, err := o.optional("version", &version); err != nil {
		return ConsumerRegistration{}, err
	} else if ok && version < 1 {
		return ConsumerRegistration{}, malformed(o.kind, "unsupported version %d", version)
	}
	c := ConsumerRegistration{Subscription: map[string]int32{}}
	if err := o.required("subscription", &c.Subscription); err != nil {
		return ConsumerRegistration{}, err
	}
	if err := o.required("pattern", &c.Pattern); err != nil {
		return ConsumerRegistration{}, err
	}
	if c.Pattern != PatternWhiteList && c.Pattern != PatternBlackList {
		c.Pattern = PatternStatic
	}
	if c.Timestamp, _, err = o.optionalLong("timestamp"); err != nil {
		return ConsumerRegistration{}, err
	}
	return c, nil
}

// NewConsumerID returns a legacy consumer id,
// "<group>_<host>-<epoch ms>-<8 random hex digits>", e.g.
// "mygroup_host1-1419960000000-1a2b3c4d".
//
// Consumers of a group, and their threads, are ordered by plain string
// comparison (slices.Sort), as Kafka's String.compareTo orders them; the two
// agree for ASCII ids.
func NewConsumerID(group, host string, now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never returns an error
	return fmt.Sprintf("%s_%s-%d-%s", group, host, now.UnixMilli(), hex.EncodeToString(r[:]))
}

// ConsumerThreadID returns the id of stream i of a consumer,
// "<consumerId>-<i>". It is also the data of the owner znodes the consumer
// claims. Sorted as strings, "…-10" comes before "…-2", as in Kafka.
func ConsumerThreadID(consumerID string, i int) string {
	return consumerID + "-" + strconv.Itoa(i)
}

// EncodeConsumerOffset returns the data of /consumers/<g>/offsets/<t>/<p>:
// the next offset to consume as a bare decimal.
//
//	42
func EncodeConsumerOffset(offset int64) []byte {
	return strconv.AppendInt(nil, offset, 10)
}

// DecodeConsumerOffset reads a committed legacy consumer offset.
func DecodeConsumerOffset(data []byte) (int64, error) {
	offset, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: consumer offset %q is not a decimal long", ErrMalformed, data)
	}
	return offset, nil
}
