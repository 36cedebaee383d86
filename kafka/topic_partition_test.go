package kafka

import (
	"math"
	"slices"
	"testing"
)

func TestParseTopicPartition(t *testing.T) {
	tests := []struct {
		name string
		want TopicPartition
		ok   bool
	}{
		{"orders-0", TopicPartition{"orders", 0}, true},
		{"my-topic-12", TopicPartition{"my-topic", 12}, true},
		{"a-b-c-3", TopicPartition{"a-b-c", 3}, true},
		{"__consumer_offsets-49", TopicPartition{"__consumer_offsets", 49}, true},
		{"orders", TopicPartition{}, false},
		{"-0", TopicPartition{}, false},
		{"orders-", TopicPartition{}, false},
		{"orders--1", TopicPartition{"orders-", 1}, true}, // topics may end in a dash
		{"orders-x", TopicPartition{}, false},
		{"orders-+1", TopicPartition{}, false},
	}
	for _, tt := range tests {
		got, err := ParseTopicPartition(tt.name)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTopicPartition(%q) = %v, %v", tt.name, got, err)
		}
		if tt.ok && got.String() != tt.name {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

func TestCompare(t *testing.T) {
	got := []TopicPartition{{"b", 0}, {"a", 10}, {"a", 2}, {"a-1", 0}, {"a", -1}, {"b", math.MaxInt32}}
	slices.SortFunc(got, Compare)
	want := []TopicPartition{{"a", -1}, {"a", 2}, {"a", 10}, {"a-1", 0}, {"b", 0}, {"b", math.MaxInt32}}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}
