package consumer

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/zkafka/zkafka/zkpaths"
)

// internalTopics are the topics a filter skips unless exclude.internal.topics
// is false: Kafka's Topic.isInternal on a 2.8 broker (0.8.2 knew only the
// offsets topic).
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

// topicFilter is the 0.8 consumer's TopicFilter: a Whitelist consumes the
// topics its regex matches, a Blacklist those it does not match.
type topicFilter struct {
	regex string // the normalized expression, as registered in ZooKeeper
	re    *regexp.Regexp
	black bool
}

// newTopicFilter normalizes raw as TopicFilter does, so that "a, b" and
// "'a,b'" from a properties file mean a|b: commas become alternatives,
// spaces go, and quotes around the whole are stripped. Java's
// String.matches matches the whole topic name, hence the anchors. Go's
// regexp lacks some Java constructs (lookaround, backreferences): such an
// expression is refused, as Java refuses an invalid one.
func newTopicFilter(raw string, black bool) (*topicFilter, error) {
	regex := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(raw), ",", "|"), " ", "")
	regex = strings.TrimRight(strings.TrimLeft(regex, `"'`), `"'`)
	re, err := regexp.Compile(`^(?:` + regex + `)$`)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is an invalid regex", ErrInvalidConfig, regex)
	}
	return &topicFilter{regex: regex, re: re, black: black}, nil
}

// pattern is the registration's "pattern" field.
func (f *topicFilter) pattern() string {
	if f.black {
		return zkpaths.PatternBlackList
	}
	return zkpaths.PatternWhiteList
}

// allows is isTopicAllowed.
func (f *topicFilter) allows(topic string, excludeInternal bool) bool {
	if excludeInternal && internalTopics[topic] {
		return false
	}
	return f.re.MatchString(topic) != f.black
}

// filterTopics is the topics of all that f allows, in the order given.
func (f *topicFilter) filterTopics(all []string, excludeInternal bool) []string {
	var allowed []string
	for _, t := range all {
		if f.allows(t, excludeInternal) {
			allowed = append(allowed, t)
		}
	}
	return allowed
}
