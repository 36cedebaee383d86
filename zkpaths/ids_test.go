package zkpaths

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewUUIDs(t *testing.T) {
	seen := map[string]bool{}
	for _, id := range []string{NewClusterID(), NewClusterID(), NewTopicID(), NewTopicID()} {
		if len(id) != 22 || strings.HasPrefix(id, "-") {
			t.Fatalf("id %q: want 22 characters, not starting with '-'", id)
		}
		u, err := ParseUUID(id)
		if err != nil {
			t.Fatalf("id %q does not decode: %v", id, err)
		}
		if u[6]>>4 != 4 || u[8]>>6 != 2 {
			t.Fatalf("id %q is not a version-4 RFC 4122 UUID: % x", id, u)
		}
		if seen[id] {
			t.Fatalf("id %q drawn twice", id)
		}
		seen[id] = true
	}
}

func TestValidateTopicName(t *testing.T) {
	long := strings.Repeat("a", MaxTopicNameLength)
	for _, ok := range []string{"orders", "a.b_c-D9", "__consumer_offsets", long, "..."} {
		if err := ValidateTopicName(ok); err != nil {
			t.Errorf("ValidateTopicName(%q) = %v", ok, err)
		}
	}
	tests := []struct{ name, want string }{
		{"", "Topic name is illegal, it can't be empty"},
		{".", `Topic name cannot be "." or ".."`},
		{"..", `Topic name cannot be "." or ".."`},
		{long + "a", "Topic name is illegal, it can't be longer than 249 characters, topic name: " + long + "a"},
		{"a/b", `Topic name "a/b" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`},
		{"ordérs", `Topic name "ordérs" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`},
		{"a b", `Topic name "a b" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`},
	}
	for _, tc := range tests {
		err := ValidateTopicName(tc.name)
		if !errors.Is(err, ErrInvalidTopicName) || err.Error() != tc.want {
			t.Errorf("ValidateTopicName(%q) = %v, want %q matching ErrInvalidTopicName", tc.name, err, tc.want)
		}
	}
}

func TestTopicNamesCollide(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"a.b", "a_b", true},
		{"a_b", "a.b", true},
		{"a.b", "a.b", false},
		{"a.b", "a-b", false},
	}
	for _, tc := range tests {
		if got := TopicNamesCollide(tc.a, tc.b); got != tc.want {
			t.Errorf("TopicNamesCollide(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestConsumerIDs(t *testing.T) {
	now := time.UnixMilli(1419960000000)
	id := NewConsumerID("mygroup", "host1", now)
	if !regexp.MustCompile(`^mygroup_host1-1419960000000-[0-9a-f]{8}$`).MatchString(id) {
		t.Fatalf("NewConsumerID = %q", id)
	}
	if other := NewConsumerID("mygroup", "host1", now); other == id {
		t.Fatalf("two consumer ids alike: %q", id)
	}

	// Kafka orders thread ids as plain strings: "-10" before "-2".
	var threads []string
	for i := range 12 {
		threads = append(threads, ConsumerThreadID("g_a", i))
	}
	slices.Sort(threads)
	want := []string{"g_a-0", "g_a-1", "g_a-10", "g_a-11", "g_a-2", "g_a-3", "g_a-4", "g_a-5", "g_a-6", "g_a-7", "g_a-8", "g_a-9"}
	if !slices.Equal(threads, want) {
		t.Fatalf("sorted thread ids = %q\nwant %q", threads, want)
	}
}
