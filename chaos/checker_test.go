package chaos

import (
	"slices"
	"testing"
)

// hist builds histories for the checker's tests.
type hist struct{ ops []Op }

func (h *hist) fault(t float64, seq int, name string) *hist {
	h.ops = append(h.ops, Op{T: t, Type: OpFault, Seq: seq, Fault: name, Target: "broker 1"})
	return h
}

// produce records producer's seq sent at t to partition, acknowledged at offset (-1: failed).
func (h *hist) produce(t float64, producer, acks string, seq int64, partition int32, offset int64) *hist {
	op := Op{T: t + 0.01, Type: OpProduce, Acks: acks, Sent: t, Rec: &Rec{Producer: producer, Seq: seq, Partition: partition, Offset: offset}}
	if offset < 0 {
		op.Err = "REQUEST_TIMED_OUT"
	}
	h.ops = append(h.ops, op)
	return h
}

func (h *hist) process(producer string, seq int64, partition int32, offset int64) *hist {
	h.ops = append(h.ops, Op{T: 50, Type: OpProcess, Member: "m1", Rec: &Rec{Producer: producer, Seq: seq, Partition: partition, Offset: offset}})
	return h
}

func (h *hist) read(producer string, seq int64, partition int32, offset int64) *hist {
	h.ops = append(h.ops, Op{T: 60, Type: OpRead, Rec: &Rec{Producer: producer, Seq: seq, Partition: partition, Offset: offset}})
	return h
}

func (h *hist) readEnd(partition int32, offset int64, err string) *hist {
	h.ops = append(h.ops, Op{T: 61, Type: OpReadEnd, Partition: partition, Offset: offset, Err: err})
	return h
}

func (h *hist) committed(t float64, partition int32, offset int64) *hist {
	h.ops = append(h.ops, Op{T: t, Type: OpCommitted, Partition: partition, Offset: offset})
	return h
}

func (h *hist) check() CheckResult {
	c := NewChecker()
	for _, op := range h.ops {
		c.Add(op)
	}
	return c.Result()
}

// healthy is a history where w1 sent three records to partition 0, all acknowledged, read and
// processed once, in order.
func healthy() *hist {
	h := &hist{}
	h.produce(1, "w1", "all", 0, 0, 0).produce(2, "w1", "all", 1, 0, 1).produce(3, "w1", "all", 2, 0, 2)
	h.process("w1", 0, 0, 0).process("w1", 1, 0, 1).process("w1", 2, 0, 2)
	h.committed(4, 0, 2).committed(5, 0, 3)
	return h
}

func TestCheckerPassesAHealthyHistory(t *testing.T) {
	h := healthy()
	h.read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 2, 0, 2).readEnd(0, 3, "")
	res := h.check()
	if res.Verdict() != "PASS" || res.AcksAll.Acked != 3 || res.AcksAll.Sent != 3 || len(res.Findings) != 0 {
		t.Fatalf("got %s, acked %d of %d, findings %v, failures %v", res.Verdict(), res.AcksAll.Acked, res.AcksAll.Sent, res.Findings, res.Failures)
	}
}

func TestCheckerFindings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() *hist
		kind  string
		pass  bool // the finding is reported but does not fail the run
		count func(CheckResult) int
	}{
		{"lost", func() *hist {
			return healthy().fault(1.5, 1, "kill/controller").read("w1", 0, 0, 0).read("w1", 2, 0, 1).readEnd(0, 2, "")
		}, FindLost, false, func(r CheckResult) int { return r.AcksAll.Lost }},
		{"duplicated", func() *hist {
			return healthy().read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 1, 0, 2).read("w1", 2, 0, 3).readEnd(0, 4, "")
		}, FindDuplicated, false, func(r CheckResult) int { return r.AcksAll.Duplicated }},
		{"reordered", func() *hist {
			return healthy().read("w1", 0, 0, 0).read("w1", 2, 0, 1).read("w1", 1, 0, 2).readEnd(0, 3, "")
		}, FindReordered, false, func(r CheckResult) int { return r.AcksAll.Reordered }},
		{"never sent", func() *hist {
			return healthy().read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 2, 0, 2).read("w9", 0, 0, 3).readEnd(0, 4, "")
		}, FindNeverSent, false, func(r CheckResult) int { return r.NeverSent }},
		{"unverified", func() *hist {
			return healthy().read("w1", 0, 0, 0).read("w1", 1, 0, 1).readEnd(0, 2, "read to 2 of 3: context deadline exceeded")
		}, FindUnverified, false, func(r CheckResult) int { return r.Unverified }},
		{"committed backwards", func() *hist {
			return healthy().committed(6, 0, 1).read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 2, 0, 2).readEnd(0, 3, "")
		}, FindCommittedBackwards, false, func(r CheckResult) int { return r.CommittedBackwards }},
		{"stale committed offset of a deposed coordinator is reported, not failed", func() *hist {
			h := healthy()
			h.ops = append(h.ops, Op{T: 6, Type: OpCommitted, Partition: 0, Offset: 1, Broker: 2, Note: "stale: broker 2 answered while ZooKeeper named broker 3"})
			return h.read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 2, 0, 2).readEnd(0, 3, "")
		}, FindStaleCommitted, true, func(r CheckResult) int { return r.StaleCommitted }},
		{"an answer of an unacknowledged commit, then the acknowledged one, is reported, not failed", func() *hist {
			h := healthy()
			h.ops = append(h.ops, Op{T: 3.5, Type: OpCommit, Member: "m1", Partition: 0, Offset: 2}, Op{T: 4.6, Type: OpCommit, Member: "m1", Partition: 0, Offset: 3, Err: "NOT_COORDINATOR"})
			return h.committed(6, 0, 2).read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 2, 0, 2).readEnd(0, 3, "")
		}, FindUnackedCommitted, true, func(r CheckResult) int { return r.UnackedCommitted }},
		{"an acknowledged commit taken back fails", func() *hist {
			h := healthy()
			h.ops = append(h.ops, Op{T: 4.6, Type: OpCommit, Member: "m1", Partition: 0, Offset: 3})
			return h.committed(6, 0, 2).read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 2, 0, 2).readEnd(0, 3, "")
		}, FindCommittedBackwards, false, func(r CheckResult) int { return r.CommittedBackwards }},
		{"never processed", func() *hist {
			h := &hist{}
			h.produce(1, "w1", "all", 0, 0, 0).produce(2, "w1", "all", 1, 0, 1).process("w1", 0, 0, 0)
			return h.read("w1", 0, 0, 0).read("w1", 1, 0, 1).readEnd(0, 2, "")
		}, FindNeverProcessed, false, func(r CheckResult) int { return r.NeverProcessed }},
		{"acknowledged at another offset", func() *hist {
			h := &hist{}
			h.produce(1, "w1", "all", 0, 0, 0).produce(2, "w1", "all", 1, 0, 5).process("w1", 0, 0, 0).process("w1", 1, 0, 1)
			return h.read("w1", 0, 0, 0).read("w1", 1, 0, 1).readEnd(0, 2, "")
		}, FindWrongOffset, false, func(r CheckResult) int { return r.AcksAll.WrongOffset }},
		{"acks=1 loss is reported, not failed", func() *hist {
			h := &hist{}
			h.produce(1, "a1", "1", 0, 0, 0).produce(2, "a1", "1", 1, 0, 1).process("a1", 0, 0, 0)
			return h.read("a1", 0, 0, 0).readEnd(0, 1, "")
		}, FindLost, true, func(r CheckResult) int { return r.AcksOne.Lost }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.build().check()
			if n := tc.count(res); n != 1 {
				t.Errorf("count = %d, want 1 (findings %v)", n, res.Findings)
			}
			if !slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Kind == tc.kind }) {
				t.Errorf("no %s finding in %v", tc.kind, res.Findings)
			}
			if got := res.Verdict(); (got == "PASS") != tc.pass {
				t.Errorf("verdict %s (failures %v)", got, res.Failures)
			}
		})
	}
}

// A failed produce may or may not be in the log: present or absent, it is no finding.
func TestCheckerFailedRecordsAreIndeterminate(t *testing.T) {
	h := &hist{}
	h.produce(1, "w1", "all", 0, 0, 0).produce(2, "w1", "all", 1, 0, -1).produce(3, "w1", "all", 2, 0, -1).produce(4, "w1", "all", 3, 0, 2)
	h.process("w1", 0, 0, 0).process("w1", 1, 0, 1).process("w1", 3, 0, 2)
	h.read("w1", 0, 0, 0).read("w1", 1, 0, 1).read("w1", 3, 0, 2).readEnd(0, 3, "")
	res := h.check()
	if res.Verdict() != "PASS" || res.AcksAll.Failed != 2 || res.AcksAll.Acked != 2 {
		t.Fatalf("got %s, failed %d, acked %d, findings %v", res.Verdict(), res.AcksAll.Failed, res.AcksAll.Acked, res.Findings)
	}
}

// Each record counts under the fault during which it was sent.
func TestCheckerAttributesRecordsToFaults(t *testing.T) {
	h := healthy().fault(1.5, 1, "kill/broker").fault(2.5, 2, "pause/controller")
	h.read("w1", 0, 0, 0).read("w1", 2, 0, 2).readEnd(0, 3, "")
	res := h.check()
	want := map[string]Counts{
		"none":             {Sent: 1, Acked: 1},
		"kill/broker":      {Sent: 1, Acked: 1, Lost: 1},
		"pause/controller": {Sent: 1, Acked: 1},
	}
	for name, c := range want {
		if got := res.ByFault[name].AcksAll; got != c {
			t.Errorf("%s: %+v, want %+v", name, got, c)
		}
	}
}

func TestAvailabilityTimesEachFault(t *testing.T) {
	a := NewAvailability()
	ops := []Op{
		{T: 0, Type: OpController, Broker: 1},
		{T: 10, Type: OpFault, Seq: 1, Fault: "kill/controller"},
		{T: 10, Type: OpController, Broker: -1},
		{T: 12, Type: OpHeal, Seq: 1},
		{T: 28, Type: OpController, Broker: 2},
		{T: 29, Type: OpHealthy, Seq: 1},
		{T: 40, Type: OpFault, Seq: 2, Fault: "kill/broker"},
		{T: 41, Type: OpHeal, Seq: 2},
		{T: 42, Type: OpHealthy, Seq: 2},
	}
	// Partition 0 is led by the killed controller: nothing sent after 10 s is acknowledged before 28.5 s,
	// so the record sent at 10.1 s waited 18.4 s; partition 1 carries on. After the second fault both
	// are acknowledged within 0.1 s.
	acks := []struct {
		p           int32
		sent, acked float64
	}{
		{0, 9.9, 9.95}, {1, 9.9, 9.95}, {1, 10.1, 10.15}, {0, 10.1, 28.5}, {0, 11, 28.6},
		{0, 40.1, 40.2}, {1, 40.05, 40.1},
	}
	for _, op := range ops {
		a.Add(op)
	}
	for _, x := range acks {
		a.Add(Op{T: x.acked, Type: OpProduce, Acks: "all", Sent: x.sent, Rec: &Rec{Partition: x.p}})
	}
	fs := a.Faults()
	if len(fs) != 2 {
		t.Fatalf("%d faults", len(fs))
	}
	approx := func(got, want float64) bool { return got > want-1e-9 && got < want+1e-9 }
	if f := fs[0]; !approx(f.Unavailable, 18.4) || f.Partition != 0 || !approx(f.NoController, 18) || f.NeverRecovered {
		t.Errorf("fault 1: %+v", f)
	}
	if f := fs[1]; !approx(f.Unavailable, 0.1) || f.Partition != 0 || f.NoController != 0 {
		t.Errorf("fault 2: %+v", f)
	}
}

// TestAvailabilityStopsAtTheNextFault: a record sent during a rolling restart that is still
// unacknowledged when the next fault cuts its new leader off waits for the next fault's sake; the
// restart's figure counts its wait only up to the next fault (a 300-fault run showed rolling
// restarts "stalling" 10-13 s, each followed within a second by a pause or a cut).
func TestAvailabilityStopsAtTheNextFault(t *testing.T) {
	a := NewAvailability()
	for _, op := range []Op{
		{T: 0, Type: OpController, Broker: 1},
		{T: 100, Type: OpFault, Seq: 1, Fault: "rolling/all"},
		{T: 102, Type: OpHeal, Seq: 1},
		{T: 102.4, Type: OpHealthy, Seq: 1},
		{T: 103.3, Type: OpFault, Seq: 2, Fault: "partition/from-everything"},
		{T: 111, Type: OpHeal, Seq: 2},
		{T: 112, Type: OpHealthy, Seq: 2},
	} {
		a.Add(op)
	}
	for _, x := range []struct{ sent, acked float64 }{{100.5, 100.6}, {101.7, 115.2}, {102.2, 102.3}, {103.5, 115.2}} {
		a.Add(Op{T: x.acked, Type: OpProduce, Acks: "all", Sent: x.sent, Rec: &Rec{Partition: 2}})
	}
	fs := a.Faults()
	approx := func(got, want float64) bool { return got > want-1e-9 && got < want+1e-9 }
	if f := fs[0]; !approx(f.Unavailable, 103.3-101.7) {
		t.Errorf("rolling restart: unavailable %.2fs, want %.2fs (up to the next fault)", f.Unavailable, 103.3-101.7)
	}
	if f := fs[1]; !approx(f.Unavailable, 115.2-103.5) {
		t.Errorf("the cut: unavailable %.2fs, want %.2fs", f.Unavailable, 115.2-103.5)
	}
}
