package quota

import (
	"errors"
	"testing"
	"time"
)

// TestStrictMutationQuota: a full bucket (quota × samples × window) takes
// any mutation, even one that puts it in debt; then the strict quota refuses
// until the refill clears the debt, with Kafka's throttle -tokens/quota.
func TestStrictMutationQuota(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := newManager(c)
	if m.Mutation(Anonymous, "app", true) != nil {
		t.Fatal("a mutation quota without controller_mutation_rate set")
	}
	var unbounded *Mutation
	if err := unbounded.Record(1 << 20); err != nil || unbounded.ThrottleTime() != 0 {
		t.Fatal("the nil quota is not unbounded")
	}
	set(m, "clients/app", ControllerMutationRate, "2") // burst 2 × 11 × 1 s = 22
	q := m.Mutation(Anonymous, "app", true)
	if err := q.Record(30); err != nil || q.ThrottleTime() != 0 {
		t.Fatalf("a full bucket refused or throttled 30 mutations: %v, %v", err, q.ThrottleTime())
	}
	// 22 - 30 = -8 tokens: 4 s of refill at 2/s.
	q = m.Mutation(Anonymous, "app", true)
	if err := q.Record(1); !errors.Is(err, ErrThrottlingQuotaExceeded) || q.ThrottleTime() != 4*time.Second {
		t.Fatalf("in debt: %v, throttle %v; want the refusal and 4s", err, q.ThrottleTime())
	}
	c.advance(time.Second)
	if got := q.ThrottleTime(); got != 3*time.Second {
		t.Fatalf("a second after the violation: throttle %v, want 3s", got)
	}
	c.advance(3 * time.Second)
	q = m.Mutation(Anonymous, "app", true)
	if err := q.Record(1); err != nil {
		t.Fatalf("once the debt is refilled: %v", err)
	}
	if other := m.Mutation(Anonymous, "other", true); other != nil {
		t.Fatal("another client id shares app's quota")
	}
}

// TestPermissiveMutationQuota: an older request version's quota takes every
// mutation and throttles the client for the debt.
func TestPermissiveMutationQuota(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := newManager(c)
	set(m, "clients/app", ControllerMutationRate, "1") // burst 11
	q := m.Mutation(Anonymous, "app", false)
	for range 3 {
		if err := q.Record(5); err != nil {
			t.Fatalf("a permissive quota refused: %v", err)
		}
	}
	if got := q.ThrottleTime(); got != 4*time.Second {
		t.Fatalf("11 - 15 = -4 tokens at 1/s: throttle %v, want 4s", got)
	}
}
