package jsonconv

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/spec"
)

// The rules and messages of stored configs: the generator checks a config
// against a Go type it binds (go/types) and against the type it infers,
// and runtime.DecodeConfig checks it against the type it decodes into
// (reflect), with these same functions, so both refuse the same configs
// with the same words.

// Problem is one refusal of a stored config value, at a JSON path.
type Problem struct {
	Path string
	Msg  string
}

// Kind names the JSON kind of a value decoded with UseNumber.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	}
	return "an object"
}

// WantKind is the message of a value of the wrong JSON kind for typ.
func WantKind(want, typ string, v any) string {
	return fmt.Sprintf("want %s for %s, got %s", want, typ, Kind(v))
}

// NotAField is the message of an object key no field of typ accepts.
func NotAField(key, typ string, fields []string) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = strconv.Quote(f)
	}
	return fmt.Sprintf("key %s is not a field of %s (its keys: %s)", strconv.Quote(key), typ, strings.Join(names, ", "))
}

// FitInt checks that n fits an integer of bits bits (unsigned or not) and
// returns the message when it does not.
func FitInt(n json.Number, bits int, unsigned bool, typ string) string {
	var err error
	if unsigned {
		_, err = strconv.ParseUint(string(n), 10, bits)
	} else {
		_, err = strconv.ParseInt(string(n), 10, bits)
	}
	if err != nil {
		return fmt.Sprintf("%s does not fit %s: encoding/json wants an integer in its range", n, typ)
	}
	return ""
}

// FitFloat checks that n fits a float of bits bits and returns the message
// when it does not.
func FitFloat(n json.Number, bits int, typ string) string {
	if _, err := strconv.ParseFloat(string(n), bits); err != nil {
		return fmt.Sprintf("%s does not fit %s", n, typ)
	}
	return ""
}

// IsInteger reports whether n is written as an integer (no fraction, no
// exponent).
func IsInteger(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

// FitUntyped checks a number of a value whose type is inferred or any: an
// integer must fit int64 (the type inference gives it) and every number a
// float64.
func FitUntyped(n json.Number) string {
	if IsInteger(n) {
		if msg := FitInt(n, 64, false, "int64"); msg != "" {
			return msg
		}
	}
	return FitFloat(n, 64, "float64")
}

// CheckUntyped appends a problem for every number in v (decoded with
// UseNumber) that FitUntyped refuses.
func CheckUntyped(v any, path string, probs *[]Problem) {
	switch x := v.(type) {
	case json.Number:
		if msg := FitUntyped(x); msg != "" {
			*probs = append(*probs, Problem{Path: path, Msg: msg})
		}
	case []any:
		for i, it := range x {
			CheckUntyped(it, spec.PathIndex(path, i), probs)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			CheckUntyped(x[k], spec.PathKey(path, k), probs)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// TypeName writes t as the generator names Go types: named types qualified
// by their import path.
func TypeName(t reflect.Type) string {
	if t.Name() != "" {
		if t.PkgPath() != "" {
			return t.PkgPath() + "." + t.Name()
		}
		return t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + TypeName(t.Elem())
	case reflect.Slice:
		return "[]" + TypeName(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), TypeName(t.Elem()))
	case reflect.Map:
		return "map[" + TypeName(t.Key()) + "]" + TypeName(t.Elem())
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return "any"
		}
	}
	return t.String()
}

// CheckValue appends a problem for everything in v (a config value decoded
// with UseNumber) that the generator refuses for Go type t: a value of the
// wrong JSON kind, an object key no field accepts, a number out of its
// type's range. Types that decode themselves are left to their decoder.
func CheckValue(t reflect.Type, v any, path string, probs *[]Problem) {
	fail := func(msg string) { *probs = append(*probs, Problem{Path: path, Msg: msg}) }
	if t == timeType {
		if v == nil {
			return
		}
		s, ok := v.(string)
		if !ok {
			fail("want an RFC 3339 string for time.Time, got " + Kind(v))
			return
		}
		raw, _ := json.Marshal(s)
		var tm time.Time
		if err := tm.UnmarshalJSON(raw); err != nil {
			fail(fmt.Sprintf("%s is not a time.Time: %v; write it in RFC 3339, e.g. \"2024-05-01T10:00:00Z\"", strconv.Quote(s), err))
		}
		return
	}
	if pt := reflect.PointerTo(t); pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return
	}
	if v == nil {
		return
	}
	typ := TypeName(t)
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() > 0 {
			fail(fmt.Sprintf("cannot decode %s into interface type %s", Kind(v), typ))
			return
		}
		CheckUntyped(v, path, probs)
	case reflect.Pointer:
		CheckValue(t.Elem(), v, path, probs)
	case reflect.String:
		if _, ok := v.(string); !ok {
			fail(WantKind("a string", typ, v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			fail(WantKind("a boolean", typ, v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := v.(json.Number)
		if !ok {
			fail(WantKind("a number", typ, v))
			return
		}
		unsigned := t.Kind() >= reflect.Uint
		if msg := FitInt(n, t.Bits(), unsigned, typ); msg != "" {
			fail(msg)
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			fail(WantKind("a number", typ, v))
			return
		}
		if msg := FitFloat(n, t.Bits(), typ); msg != "" {
			fail(msg)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			fail(WantKind("an array", typ, v))
			return
		}
		if t.Kind() == reflect.Array && len(arr) > t.Len() {
			fail(fmt.Sprintf("array of %d elements does not fit %s", len(arr), typ))
			return
		}
		for i, it := range arr {
			CheckValue(t.Elem(), it, spec.PathIndex(path, i), probs)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			fail(WantKind("an object", typ, v))
			return
		}
		for _, k := range sortedKeys(obj) {
			CheckValue(t.Elem(), obj[k], spec.PathKey(path, k), probs)
		}
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			fail(WantKind("an object", typ, v))
			return
		}
		fields := structFields(t)
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.name
		}
		for _, k := range sortedKeys(obj) {
			f := matchField(fields, k)
			if f == nil {
				*probs = append(*probs, Problem{Path: spec.PathKey(path, k), Msg: NotAField(k, typ, names)})
				continue
			}
			CheckValue(f.typ, obj[k], spec.PathKey(path, k), probs)
		}
	default:
		fail(fmt.Sprintf("type %s cannot hold a stored config value", typ))
	}
}

type field struct {
	name string
	typ  reflect.Type
}

// structFields lists the fields encoding/json decodes into, by the rule
// the generator's jsonFields applies to go/types (ReflectFields).
func structFields(t reflect.Type) []field {
	fs := ReflectFields(t, false)
	out := make([]field, len(fs))
	for i, f := range fs {
		out[i] = field{name: f.Name, typ: t.FieldByIndex(f.Index).Type}
	}
	return out
}

func matchField(fields []field, key string) *field {
	for i := range fields {
		if fields[i].name == key {
			return &fields[i]
		}
	}
	for i := range fields {
		if strings.EqualFold(fields[i].name, key) {
			return &fields[i]
		}
	}
	return nil
}
