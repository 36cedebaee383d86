package brokerconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/kafka"
)

// Type is the type of a Kafka config (ConfigDef.Type), numbered as
// DescribeConfigs v3 reports it in config_type.
type Type int8

// The config types, in DescribeConfigs' numbering.
const (
	TypeUnknown Type = iota
	TypeBoolean
	TypeString
	TypeInt
	TypeShort
	TypeLong
	TypeDouble
	TypeList
	TypeClass
	TypePassword
)

func (t Type) String() string {
	names := [...]string{"UNKNOWN", "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}
	if int(t) < len(names) {
		return names[t]
	}
	return "UNKNOWN"
}

// ValueError is Kafka's ConfigException: a value that does not parse or is
// out of range. The alter APIs answer it with INVALID_REQUEST and the
// resource in front of the message, as Kafka's admin manager does.
type ValueError struct{ msg string }

func (e *ValueError) Error() string { return e.msg }

// InvalidConfigError is Kafka's InvalidConfigurationException: a topic
// config that is unknown or conflicts with another, answered with
// INVALID_CONFIG and the message as it is.
type InvalidConfigError struct{ msg string }

func (e *InvalidConfigError) Error() string { return e.msg }

// Unwrap lets errors.Is match the Kafka code.
func (e *InvalidConfigError) Unwrap() error { return kerr.InvalidConfig }

func invalidConfig(format string, args ...any) error {
	return &InvalidConfigError{msg: fmt.Sprintf(format, args...)}
}

func invalidValue(name, value, reason string) error {
	return &ValueError{msg: fmt.Sprintf("Invalid value %s for configuration %s: %s", value, name, reason)}
}

// validator checks a parsed value (in its normalized string form).
type validator func(name, value string) error

var listSeparator = regexp.MustCompile(`\s*,\s*`)

// ParseValue parses a value as Kafka's ConfigDef does for its type
// (surrounding spaces trimmed, booleans in any case, lists split on commas)
// and returns it the way Kafka prints the parsed value.
func ParseValue(name string, t Type, value string) (string, error) {
	v := strings.TrimSpace(value)
	switch t {
	case TypeBoolean:
		switch {
		case strings.EqualFold(v, "true"):
			return "true", nil
		case strings.EqualFold(v, "false"):
			return "false", nil
		}
		return "", invalidValue(name, value, "Expected value to be either true or false")
	case TypeInt, TypeShort, TypeLong:
		bits := map[Type]int{TypeInt: 32, TypeShort: 16, TypeLong: 64}[t]
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			return "", invalidValue(name, value, "Not a number of type "+t.String())
		}
		return strconv.FormatInt(n, 10), nil
	case TypeDouble:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", invalidValue(name, value, "Not a number of type DOUBLE")
		}
		return kafka.JavaDouble(f), nil
	case TypeList:
		if v == "" {
			return "", nil
		}
		return strings.Join(listSeparator.Split(v, -1), ","), nil
	}
	return v, nil
}

// SplitListValue splits a normalized list value; the empty string is the
// empty list.
func SplitListValue(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func atLeast(min int64) validator {
	return func(name, v string) error {
		if n, _ := strconv.ParseInt(v, 10, 64); n < min {
			return invalidValue(name, v, fmt.Sprintf("Value must be at least %d", min))
		}
		return nil
	}
}

func between(min, max float64) validator {
	return func(name, v string) error {
		f, _ := strconv.ParseFloat(v, 64)
		switch {
		case f < min:
			return invalidValue(name, v, "Value must be at least "+strconv.FormatFloat(min, 'f', -1, 64))
		case f > max:
			return invalidValue(name, v, "Value must be no more than "+strconv.FormatFloat(max, 'f', -1, 64))
		}
		return nil
	}
}

func oneOf(valid ...string) validator {
	return func(name, v string) error {
		if !slices.Contains(valid, v) {
			return invalidValue(name, v, "String must be one of: "+strings.Join(valid, ", "))
		}
		return nil
	}
}

func listOf(valid ...string) validator {
	return func(name, v string) error {
		for _, e := range SplitListValue(v) {
			if !slices.Contains(valid, e) {
				return invalidValue(name, e, "String must be one of: "+strings.Join(valid, ", "))
			}
		}
		return nil
	}
}

var throttledReplica = regexp.MustCompile(`^\d+:\d+$`)

// validThrottledReplicas accepts "*" alone or partition:broker pairs.
func validThrottledReplicas(name, v string) error {
	entries := SplitListValue(v)
	if len(entries) == 1 && entries[0] == "*" {
		return nil
	}
	for _, e := range entries {
		if !throttledReplica.MatchString(e) {
			return invalidValue(name, v, name+" must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
		}
	}
	return nil
}

// messageFormatVersions are the inter-broker/message format versions Kafka
// 2.8 knows, by their short name.
var messageFormatVersions = []string{
	"0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0",
	"1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
}

// RecordVersion is the magic of the message format a valid
// message.format.version names, as Kafka's ApiVersion.recordVersion: v0
// before 0.10.0, v1 for 0.10.x, v2 (record batches) from 0.11.0 on.
func RecordVersion(v string) int8 {
	switch {
	case strings.HasPrefix(v, "0.8.") || strings.HasPrefix(v, "0.9."):
		return 0
	case strings.HasPrefix(v, "0.10."):
		return 1
	}
	return 2
}

// validMessageFormatVersion accepts a version as Kafka's ApiVersion does: its
// first two components (three for 0.x) name a known version, so "2.8",
// "2.8-IV1" and "2.8.1" are all 2.8.
func validMessageFormatVersion(name, v string) error {
	short, _, _ := strings.Cut(v, "-")
	parts := strings.Split(short, ".")
	n := 2
	if strings.HasPrefix(short, "0.") {
		n = 3
	}
	if len(parts) >= n && slices.Contains(messageFormatVersions, strings.Join(parts[:n], ".")) {
		return nil
	}
	return invalidValue(name, v, fmt.Sprintf("Version `%s` is not a valid version", v))
}
