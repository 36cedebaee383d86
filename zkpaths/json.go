package zkpaths

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Reading: Kafka's readers look every field up by name and ignore the rest, so
// data is first split into a map of raw values, and each codec asks for the
// fields it knows. A JSON null counts as absent, as it does for Kafka's
// Option-returning lookups.

// object is one znode's JSON object, split into raw fields.
type object struct {
	kind   string // what the znode holds, for error messages
	fields map[string]json.RawMessage
}

func malformed(kind, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformed, kind, fmt.Sprintf(format, args...))
}

func parseObject(kind string, data []byte) (object, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return object{}, malformed(kind, "%v", err)
	}
	if fields == nil {
		return object{}, malformed(kind, "not a JSON object")
	}
	return object{kind: kind, fields: fields}, nil
}

// optional decodes field name into v. It reports false, leaving v alone, when
// the field is absent or null.
func (o object) optional(name string, v any) (bool, error) {
	raw, ok := o.fields[name]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, malformed(o.kind, "field %q: %v", name, err)
	}
	return true, nil
}

func (o object) required(name string, v any) error {
	ok, err := o.optional(name, v)
	if err == nil && !ok {
		err = malformed(o.kind, "missing field %q", name)
	}
	return err
}

// version reads the "version" number every Kafka znode JSON carries.
func (o object) version() (int, error) {
	var v int
	if err := o.required("version", &v); err != nil {
		return 0, err
	}
	if v < 1 {
		return 0, malformed(o.kind, "unsupported version %d", v)
	}
	return v, nil
}

// optionalLong reads one of Kafka's string-encoded longs ("timestamp",
// "block_start"); a plain JSON number is accepted as well.
func (o object) optionalLong(name string) (int64, bool, error) {
	var raw json.RawMessage
	if ok, err := o.optional(name, &raw); !ok || err != nil {
		return 0, false, err
	}
	if raw[0] != '"' {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, false, malformed(o.kind, "field %q: %v", name, err)
		}
		return n, true, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, false, malformed(o.kind, "field %q: %v", name, err)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, malformed(o.kind, "field %q: %q is not a decimal long", name, s)
	}
	return n, true, nil
}

func (o object) requiredLong(name string) (int64, error) {
	n, ok, err := o.optionalLong(name)
	if err == nil && !ok {
		err = malformed(o.kind, "missing field %q", name)
	}
	return n, err
}

// partitionMap reads an object keyed by decimal partition ids, as in
// {"0":[1,2],"1":[2,3]}. With skipEmpty, partitions whose list is empty are
// dropped: for adding_replicas and removing_replicas they mean nothing. The
// result is never nil.
func (o object) partitionMap(name string, required, skipEmpty bool) (map[int32][]int32, error) {
	var raw map[string][]int32
	ok, err := o.optional(name, &raw)
	if err != nil {
		return nil, err
	}
	if !ok && required {
		return nil, malformed(o.kind, "missing field %q", name)
	}
	m := make(map[int32][]int32, len(raw))
	for key, replicas := range raw {
		p, err := ParsePartitionID(key)
		if err != nil {
			return nil, malformed(o.kind, "field %q: %v", name, err)
		}
		if skipEmpty && len(replicas) == 0 {
			continue
		}
		m[p] = replicas
	}
	return m, nil
}

// ParsePartitionID parses a partition id as it appears in a path component or
// a JSON object key: a non-negative decimal int32 in canonical form ("0", "17";
// not "-1", "+1" or "01", which would make two keys name one partition).
func ParsePartitionID(s string) (int32, error) {
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil || p < 0 || strconv.FormatInt(p, 10) != s {
		return 0, fmt.Errorf("%q is not a partition id", s)
	}
	return int32(p), nil
}

// Writing: a small builder keeps keys in the order they are added, so every
// encoding is byte-stable and reads like Kafka's own output. Nothing here can
// fail, which is why Encode methods return no error.

type jsonObject struct{ buf []byte }

func newObject() *jsonObject { return &jsonObject{buf: []byte{'{'}} }

func (o *jsonObject) key(k string) {
	if len(o.buf) > 1 {
		o.buf = append(o.buf, ',')
	}
	o.buf = appendString(o.buf, k)
	o.buf = append(o.buf, ':')
}

func (o *jsonObject) int(k string, v int64) *jsonObject {
	o.key(k)
	o.buf = strconv.AppendInt(o.buf, v, 10)
	return o
}

// long writes v the Kafka way for timestamps and producer-id blocks: as a
// JSON string.
func (o *jsonObject) long(k string, v int64) *jsonObject {
	o.key(k)
	o.buf = append(o.buf, '"')
	o.buf = strconv.AppendInt(o.buf, v, 10)
	o.buf = append(o.buf, '"')
	return o
}

func (o *jsonObject) str(k, v string) *jsonObject {
	o.key(k)
	o.buf = appendString(o.buf, v)
	return o
}

// raw writes an already encoded JSON value.
func (o *jsonObject) raw(k string, v []byte) *jsonObject {
	o.key(k)
	o.buf = append(o.buf, v...)
	return o
}

func (o *jsonObject) bytes() []byte { return append(o.buf, '}') }

func int32Array(vs []int32) []byte {
	b := []byte{'['}
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}

// partitionMapJSON writes partitions in ascending numeric order ("2" before
// "10"), which is what a person reading zkCli output expects. With skipEmpty,
// partitions whose list is empty are left out, as Kafka does for
// adding_replicas and removing_replicas.
func partitionMapJSON(m map[int32][]int32, skipEmpty bool) []byte {
	o := newObject()
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if skipEmpty && len(m[p]) == 0 {
			continue
		}
		o.raw(strconv.FormatInt(int64(p), 10), int32Array(m[p]))
	}
	return o.bytes()
}

// stringMapJSON writes a string map with keys in byte order.
func stringMapJSON(m map[string]string) []byte {
	o := newObject()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		o.str(k, m[k])
	}
	return o.bytes()
}

// appendString writes s as a JSON string. Unlike encoding/json it leaves '<',
// '>' and '&' alone, as Kafka's Jackson does: "/config/brokers/<default>" must
// read "brokers/<default>" in a notification, not "brokers/\u003cdefault\u003e".
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
