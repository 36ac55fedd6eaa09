package jsonconv

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Normalize returns v in the form encoding/json decodes v's JSON encoding
// to: nil, bool, float64, string, []any or map[string]any, recursively.
// A value already in that form is returned as it is, not copied; a list or
// object is copied only when a value in it changes form. Numbers convert
// as their encoding reads back (a float32 by its shortest 32-bit text); a
// value encoding/json cannot encode (NaN, an infinity, a Go channel, a
// failing MarshalJSON) is an error.
func Normalize(v any) (any, error) {
	n, _, err := normalize(v)
	return n, err
}

// normalize is Normalize that also says whether the result differs from v.
func normalize(v any) (any, bool, error) {
	switch x := v.(type) {
	case nil, bool:
		return v, false, nil
	case string:
		if utf8.ValidString(x) {
			return v, false, nil
		}
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return v, false, nil
		}
	case int:
		return float64(x), true, nil
	case int64:
		return float64(x), true, nil
	case int32:
		return float64(x), true, nil
	case float32:
		if f := float64(x); !math.IsNaN(f) && !math.IsInf(f, 0) {
			f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
			return f, true, nil
		}
	case []any:
		return normalizeList(x)
	case map[string]any:
		return normalizeObject(x)
	}
	n, err := ToAny(v)
	return n, true, err
}

// normalizeList normalises the elements of l, copying l at its first
// element that changes form.
func normalizeList(l []any) (any, bool, error) {
	var out []any
	for i, e := range l {
		n, changed, err := normalize(e)
		if err != nil {
			return nil, false, err
		}
		if changed && out == nil {
			out = make([]any, len(l))
			copy(out, l[:i])
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return l, false, nil
	}
	return out, true, nil
}

// normalizeObject normalises the members of m, copying m when a member
// changes form or a key is not valid UTF-8 (encoding/json replaces its bad
// bytes).
func normalizeObject(m map[string]any) (any, bool, error) {
	var out map[string]any
	for k, e := range m {
		if !utf8.ValidString(k) {
			n, err := ToAny(m)
			return n, true, err
		}
		n, changed, err := normalize(e)
		if err != nil {
			return nil, false, err
		}
		if changed && out == nil {
			out = make(map[string]any, len(m))
			for k2, e2 := range m {
				out[k2] = e2
			}
		}
		if out != nil {
			out[k] = n
		}
	}
	if out == nil {
		return m, false, nil
	}
	return out, true, nil
}

// PlainKeys reports whether no key of m changes when encoding/json writes
// it (no control character, quote, backslash, <, >, &, U+2028, U+2029 or
// invalid UTF-8): the encoder's order of m's members is then the order of
// their encoded keys' bytes.
func PlainKeys[V any](m map[string]V) bool {
	for k := range m {
		if !PlainKey(k) {
			return false
		}
	}
	return true
}

// PlainKey reports whether encoding/json writes k between quotes as it is.
func PlainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
		if c >= 0x80 {
			return plainUTF8(k[i:])
		}
	}
	return true
}

// plainUTF8 is PlainKey of a string past its first non-ASCII byte.
func plainUTF8(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r == '\u2028', r == '\u2029':
			return false
		case r < 0x80 && !PlainKey(string(r)):
			return false
		}
	}
	return true
}
