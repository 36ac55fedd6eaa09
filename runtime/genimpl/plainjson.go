package genimpl

import (
	"strconv"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// The encoding of the values a superstep writes most often (integers,
// booleans, plain ASCII strings and lists of them) without encoding/json:
// no boxing that escapes, no reflection. The bytes are those json.Marshal
// writes (TestPlainJSONIsMarshal); anything else, or a string json.Marshal
// would escape, goes through encoding/json.

// addValue writes v, encoded by plainJSON when it can, else by json.Marshal.
func addValue[T any](w *Writes, cw checkpoint.ChannelWrite, v T) {
	if w.err != nil {
		return
	}
	var room [64]byte
	if b, ok := plainJSON(room[:0], any(v)); ok {
		cw.Value = append(w.spare()[:0], b...)
		w.dst = append(w.dst, cw)
		return
	}
	w.add(cw, v)
}

// plainJSON appends the JSON of v to b when v is of a type it encodes
// (ok false: use encoding/json). v does not escape.
func plainJSON(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return plainString(b, x)
	case []int:
		return plainList(b, x, func(b []byte, e int) ([]byte, bool) { return strconv.AppendInt(b, int64(e), 10), true })
	case []int64:
		return plainList(b, x, func(b []byte, e int64) ([]byte, bool) { return strconv.AppendInt(b, e, 10), true })
	case []bool:
		return plainList(b, x, func(b []byte, e bool) ([]byte, bool) { return strconv.AppendBool(b, e), true })
	case []string:
		return plainList(b, x, plainString)
	}
	return b, false
}

// plainList appends the JSON array of xs (null for a nil slice, as
// encoding/json writes it).
func plainList[E any](b []byte, xs []E, one func([]byte, E) ([]byte, bool)) ([]byte, bool) {
	if xs == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = one(b, x); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// plainString appends s quoted when json.Marshal writes it unescaped:
// printable ASCII other than '"', '\\' and the HTML characters '<', '>'
// and '&'.
func plainString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}
