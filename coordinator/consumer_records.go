package coordinator

// The records of consumer-protocol groups in __consumer_offsets, in Kafka
// 4.0's schemas (group-coordinator/src/main/resources/common/message):
// keys are non-flexible (an int16 record type, int16-length strings);
// values are an int16 version (0) and a flexible struct (compact strings
// and arrays, 16-byte UUIDs, a tagged-field section after every struct).
//
//	3  ConsumerGroupMetadata            group → group epoch
//	4  ConsumerGroupPartitionMetadata   group → subscribed topics: id, name, partition count
//	5  ConsumerGroupMemberMetadata      group, member → instance and rack ids, client id and
//	                                    host, subscription, rebalance timeout, assignor
//	6  ConsumerGroupTargetAssignmentMetadata  group → target assignment epoch
//	7  ConsumerGroupTargetAssignmentMember    group, member → target partitions
//	8  ConsumerGroupCurrentMemberAssignment   group, member → member epoch, previous epoch,
//	                                    state, assigned and pending-revocation partitions
//	16 ConsumerGroupRegularExpression   group, regex → resolved topics (read, not written:
//	                                    regexes resolve at each heartbeat here)

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"time"
)

// The record types (key versions) of consumer groups.
const (
	consumerGroupMetadataType          = 3
	consumerGroupPartitionMetadataType = 4
	consumerGroupMemberMetadataType    = 5
	consumerGroupTargetMetadataType    = 6
	consumerGroupTargetMemberType      = 7
	consumerGroupCurrentAssignmentType = 8
	consumerGroupRegularExpressionType = 16
	consumerGroupRecordValueVersion    = 0
)

var errBadRecord = errors.New("malformed consumer group record")

// recordWriter appends Kafka's encodings.
type recordWriter struct{ b []byte }

func (w *recordWriter) int8(v int8)   { w.b = append(w.b, byte(v)) }
func (w *recordWriter) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *recordWriter) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *recordWriter) uuid(v [16]byte) {
	w.b = append(w.b, v[:]...)
}
func (w *recordWriter) uvarint(v int) { w.b = binary.AppendUvarint(w.b, uint64(v)) }

// string is a non-flexible (int16-length) string, as keys have.
func (w *recordWriter) string(s string) {
	w.int16(int16(len(s)))
	w.b = append(w.b, s...)
}

func (w *recordWriter) compactString(s string) {
	w.uvarint(len(s) + 1)
	w.b = append(w.b, s...)
}

// compactNullableString writes "" as null.
func (w *recordWriter) compactNullableString(s string) {
	if s == "" {
		w.uvarint(0)
		return
	}
	w.compactString(s)
}

func (w *recordWriter) tags() { w.uvarint(0) }

// topicPartitions writes an assignment as an array of {TopicId, Partitions}
// structs, topics in id order.
func (w *recordWriter) topicPartitions(a assignment) {
	topics := slices.SortedFunc(maps.Keys(a), compareTopicIDs)
	w.uvarint(len(topics) + 1)
	for _, t := range topics {
		w.uuid(t)
		w.uvarint(len(a[t]) + 1)
		for _, p := range a[t] {
			w.int32(p)
		}
		w.tags()
	}
}

// recordReader reads them back; the first failure sticks.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errBadRecord
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *recordReader) int8() int8 {
	if b := r.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *recordReader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *recordReader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *recordReader) uuid() (u [16]byte) {
	copy(u[:], r.take(16))
	return u
}

func (r *recordReader) uvarint() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b)) {
		r.err = errBadRecord
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *recordReader) string() string {
	return string(r.take(int(r.int16())))
}

// compactString reads a compact (nullable) string; null reads as "".
func (r *recordReader) compactString() string {
	n := r.uvarint()
	if n == 0 {
		return ""
	}
	return string(r.take(n - 1))
}

// tags skips a tagged-field section.
func (r *recordReader) tags() {
	for range r.uvarint() {
		r.uvarint()
		r.take(r.uvarint())
	}
}

func (r *recordReader) arrayLen() int {
	n := r.uvarint()
	if n == 0 {
		return 0
	}
	return n - 1
}

func (r *recordReader) topicPartitions() assignment {
	a := assignment{}
	for range r.arrayLen() {
		t := r.uuid()
		for range r.arrayLen() {
			a.add(t, r.int32())
		}
		r.tags()
	}
	return a
}

func (r *recordReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = errBadRecord
	}
	return r.err
}

func consumerGroupKey(recordType int16, group string, member ...string) []byte {
	var w recordWriter
	w.int16(recordType)
	w.string(group)
	for _, m := range member {
		w.string(m)
	}
	return w.b
}

func valueWriter() *recordWriter {
	w := &recordWriter{}
	w.int16(consumerGroupRecordValueVersion)
	return w
}

func epochValue(epoch int32) []byte {
	w := valueWriter()
	w.int32(epoch)
	w.tags()
	return w.b
}

func partitionMetadataValue(metadata map[string]topicMetadata) []byte {
	w := valueWriter()
	names := slices.Sorted(maps.Keys(metadata))
	w.uvarint(len(names) + 1)
	for _, name := range names {
		w.uuid(metadata[name].id)
		w.compactString(name)
		w.int32(metadata[name].partitions)
		w.uvarint(1) // PartitionMetadata, deprecated: empty
		w.tags()
	}
	w.tags()
	return w.b
}

func memberMetadataValue(m *consumerMember) []byte {
	w := valueWriter()
	w.compactNullableString(m.instanceID)
	w.compactNullableString(m.rackID)
	w.compactString(m.clientID)
	w.compactString(m.clientHost)
	w.uvarint(len(m.subscribedNames) + 1)
	for _, n := range m.subscribedNames {
		w.compactString(n)
	}
	w.compactString(m.subscribedRegex)
	w.int32(int32(m.rebalanceTimeout.Milliseconds()))
	w.compactNullableString(m.serverAssignor)
	w.tags()
	return w.b
}

func targetMemberValue(a assignment) []byte {
	w := valueWriter()
	w.topicPartitions(a)
	w.tags()
	return w.b
}

func currentAssignmentValue(m memberAssignment) []byte {
	w := valueWriter()
	w.int32(m.epoch)
	w.int32(m.previousEpoch)
	w.int8(int8(m.state))
	w.topicPartitions(m.assigned)
	w.topicPartitions(m.pending)
	w.tags()
	return w.b
}

// consumerSnapshot is what a consumer group's records hold, to tell which
// records a change needs. Members are copied by value and nothing is
// cloned: a member's assignments, subscribed names and targets are replaced
// when they change, never changed in place, so a snapshot costs a map copy
// per heartbeat and record values are encoded only for what changed.
type consumerSnapshot struct {
	epoch, assignmentEpoch int32
	metadata               map[string]topicMetadata
	members                map[string]consumerMember
	target                 map[string]assignment
}

func (cg *consumerGroup) snapshot() consumerSnapshot {
	s := consumerSnapshot{epoch: cg.epoch, assignmentEpoch: cg.assignmentEpoch, metadata: maps.Clone(cg.metadata),
		members: make(map[string]consumerMember, len(cg.members)), target: maps.Clone(cg.target)}
	for id, m := range cg.members {
		s.members[id] = *m
	}
	return s
}

// sameMemberMetadata reports whether two versions of a member hold the same
// record 5 (ConsumerGroupMemberMetadata).
func sameMemberMetadata(a, b *consumerMember) bool {
	return a.instanceID == b.instanceID && a.rackID == b.rackID && a.clientID == b.clientID && a.clientHost == b.clientHost &&
		slices.Equal(a.subscribedNames, b.subscribedNames) && a.subscribedRegex == b.subscribedRegex &&
		a.rebalanceTimeout == b.rebalanceTimeout && a.serverAssignor == b.serverAssignor
}

// consumerRecords are the records that take a consumer group's stored
// state from before to after, in Kafka 4.0's order: the removed members'
// tombstones (current assignment, target, metadata), then the members'
// metadata, the subscription metadata, the group epoch, the targets and the
// target epoch, and the members' current assignments.
func consumerRecords(group string, before, after consumerSnapshot) []Record {
	var out []Record
	put := func(typ int16, value []byte, member ...string) {
		out = append(out, Record{Key: consumerGroupKey(typ, group, member...), Value: value})
	}
	for _, id := range slices.Sorted(maps.Keys(before.members)) {
		if _, ok := after.members[id]; !ok {
			put(consumerGroupCurrentAssignmentType, nil, id)
			put(consumerGroupTargetMemberType, nil, id)
			put(consumerGroupMemberMetadataType, nil, id)
		}
	}
	ids := slices.Sorted(maps.Keys(after.members))
	for _, id := range ids {
		m := after.members[id]
		if old, ok := before.members[id]; !ok || !sameMemberMetadata(&old, &m) {
			put(consumerGroupMemberMetadataType, memberMetadataValue(&m), id)
		}
	}
	if !maps.Equal(before.metadata, after.metadata) {
		put(consumerGroupPartitionMetadataType, partitionMetadataValue(after.metadata))
	}
	if before.epoch != after.epoch {
		put(consumerGroupMetadataType, epochValue(after.epoch))
	}
	for _, id := range slices.Sorted(maps.Keys(after.target)) {
		if _, member := after.members[id]; !member {
			continue
		}
		if old, ok := before.target[id]; !ok || !old.equal(after.target[id]) {
			put(consumerGroupTargetMemberType, targetMemberValue(after.target[id]), id)
		}
	}
	if before.assignmentEpoch != after.assignmentEpoch {
		put(consumerGroupTargetMetadataType, epochValue(after.assignmentEpoch))
	}
	for _, id := range ids {
		m := after.members[id]
		if old, ok := before.members[id]; !ok || !old.current().equal(m.current()) {
			put(consumerGroupCurrentAssignmentType, currentAssignmentValue(m.current()), id)
		}
	}
	return out
}

// consumerGroupTombstones delete an empty consumer group's records.
func consumerGroupTombstones(group string) []Record {
	return []Record{
		{Key: consumerGroupKey(consumerGroupTargetMetadataType, group)},
		{Key: consumerGroupKey(consumerGroupPartitionMetadataType, group)},
		{Key: consumerGroupKey(consumerGroupMetadataType, group)},
	}
}

// loadedConsumerGroup is a consumer group's records as read back, the last
// value of each key.
type loadedConsumerGroup struct {
	offset          int64 // of the latest group-level record, against a classic group's
	epoch           int32
	hasEpoch        bool
	assignmentEpoch int32
	metadata        map[string]topicMetadata
	members         map[string]*consumerMember
	target          map[string]assignment
}

func newLoadedConsumerGroup() *loadedConsumerGroup {
	return &loadedConsumerGroup{metadata: map[string]topicMetadata{}, members: map[string]*consumerMember{}, target: map[string]assignment{}}
}

// applyConsumerRecord reads one consumer-group record into l (a tombstone
// deletes); a record that does not parse is skipped, as Kafka skips what it
// cannot read.
func applyConsumerRecord(groups map[string]*loadedConsumerGroup, recordType int16, key, value []byte, offset int64) {
	r := recordReader{b: key[2:]}
	group := r.string()
	var member string
	switch recordType {
	case consumerGroupMemberMetadataType, consumerGroupTargetMemberType, consumerGroupCurrentAssignmentType, consumerGroupRegularExpressionType:
		member = r.string()
	}
	if r.done() != nil {
		return
	}
	l := groups[group]
	if l == nil {
		if value == nil {
			return
		}
		l = newLoadedConsumerGroup()
		groups[group] = l
	}
	memberOf := func() *consumerMember {
		m := l.members[member]
		if m == nil {
			m = &consumerMember{id: member, previousEpoch: -1, assigned: assignment{}, pendingRevocation: assignment{}}
			l.members[member] = m
		}
		return m
	}
	v := recordReader{b: value}
	if value != nil && v.int16() != consumerGroupRecordValueVersion {
		return
	}
	switch recordType {
	case consumerGroupMetadataType:
		l.offset = offset
		if value == nil {
			delete(groups, group)
			return
		}
		if epoch := v.int32(); v.err == nil {
			l.epoch, l.hasEpoch = epoch, true
		}
	case consumerGroupPartitionMetadataType:
		metadata := map[string]topicMetadata{}
		for range v.arrayLen() {
			id := v.uuid()
			name := v.compactString()
			n := v.int32()
			for range v.arrayLen() {
				v.int32()
				for range v.arrayLen() {
					v.compactString()
				}
				v.tags()
			}
			v.tags()
			metadata[name] = topicMetadata{id: id, partitions: n}
		}
		if v.tags(); v.done() == nil {
			l.metadata = metadata
		}
	case consumerGroupMemberMetadataType:
		if value == nil {
			delete(l.members, member)
			return
		}
		m := memberOf()
		instance, rack, clientID, clientHost := v.compactString(), v.compactString(), v.compactString(), v.compactString()
		var names []string
		for range v.arrayLen() {
			names = append(names, v.compactString())
		}
		regex := v.compactString()
		timeout := v.int32()
		assignor := v.compactString()
		if v.tags(); v.done() == nil {
			m.instanceID, m.rackID, m.clientID, m.clientHost = instance, rack, clientID, clientHost
			m.subscribedNames, m.subscribedRegex, m.serverAssignor = names, regex, assignor
			m.rebalanceTimeout = time.Duration(timeout) * time.Millisecond
		}
	case consumerGroupTargetMetadataType:
		if value == nil {
			l.assignmentEpoch = -1
			return
		}
		if epoch := v.int32(); v.err == nil {
			l.assignmentEpoch = epoch
		}
	case consumerGroupTargetMemberType:
		if value == nil {
			delete(l.target, member)
			return
		}
		a := v.topicPartitions()
		if v.tags(); v.done() == nil {
			l.target[member] = a
		}
	case consumerGroupCurrentAssignmentType:
		if value == nil {
			if m := l.members[member]; m != nil {
				m.epoch, m.previousEpoch, m.assigned, m.pendingRevocation = -1, -1, assignment{}, assignment{}
			}
			return
		}
		epoch, previous, state := v.int32(), v.int32(), memberState(v.int8())
		assigned, pending := v.topicPartitions(), v.topicPartitions()
		if v.tags(); v.done() == nil {
			m := memberOf()
			m.epoch, m.previousEpoch, m.assigned, m.pendingRevocation = epoch, previous, assigned, pending
			switch state {
			case memberStable, memberUnrevokedPartitions, memberUnreleasedPartitions:
				m.state = state
			default:
				m.state = memberUnknownState
			}
		}
	}
}

// group builds the consumer group the records describe.
func (l *loadedConsumerGroup) group() *consumerGroup {
	cg := newConsumerGroup()
	cg.epoch, cg.assignmentEpoch, cg.metadata, cg.target = l.epoch, l.assignmentEpoch, l.metadata, l.target
	for id, m := range l.members {
		cg.members[id] = m
		if m.instanceID != "" {
			cg.static[m.instanceID] = id
		}
	}
	return cg
}
