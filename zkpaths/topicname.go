package zkpaths

import (
	"fmt"
	"strings"
)

// MaxTopicNameLength is the longest legal topic name. Kafka keeps 255 (the
// usual file-name limit) minus room for a partition suffix on the log
// directory name.
const MaxTopicNameLength = 249

// topicNameError carries Kafka's message and matches ErrInvalidTopicName.
type topicNameError string

func (e topicNameError) Error() string        { return string(e) }
func (e topicNameError) Is(target error) bool { return target == ErrInvalidTopicName }

// ValidateTopicName checks the rules that make a topic name a legal path
// component and log directory name: not empty, not "." or "..", at most
// MaxTopicNameLength characters, only ASCII alphanumerics, '.', '_' and '-'.
// Errors match ErrInvalidTopicName and read as Kafka's.
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return topicNameError("Topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return topicNameError(`Topic name cannot be "." or ".."`)
	case len(name) > MaxTopicNameLength:
		return topicNameError(fmt.Sprintf("Topic name is illegal, it can't be longer than %d characters, topic name: %s",
			MaxTopicNameLength, name))
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return topicNameError(fmt.Sprintf(`Topic name "%s" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`, name))
		}
	}
	return nil
}

// TopicNamesCollide reports whether two different topic names become equal
// once '.' is read as '_'. Kafka refuses to create a topic that collides with
// an existing one because both would have the same metric names.
func TopicNamesCollide(a, b string) bool {
	return a != b && strings.ReplaceAll(a, ".", "_") == strings.ReplaceAll(b, ".", "_")
}
