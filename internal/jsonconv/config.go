package jsonconv

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
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

// Problem is one refusal of a stored config value, at a JSON path: Msg
// in the generator's words, and the same in parts (runtime.ConfigProblem
// documents them).
type Problem struct {
	Path string
	Msg  string
	// Kind is what is wrong: one of the Problem* constants, "" for
	// anything else.
	Kind     string
	GoType   string
	Want     string
	Got      string
	Key      string
	Keys     []string
	Min, Max string
}

// The kinds of Problem.
const (
	ProblemWrongKind  = "wrong-kind"
	ProblemUnknownKey = "unknown-key"
	ProblemOutOfRange = "out-of-range"
)

// wrongKind is the problem of a value v of the wrong JSON kind for typ,
// which wants a value of kind want.
func wrongKind(path, want, typ string, v any) Problem {
	return Problem{Path: path, Msg: WantKind(want, typ, v), Kind: ProblemWrongKind, GoType: typ, Want: want, Got: Kind(v)}
}

// intRange is the range of an integer of bits bits, in decimal.
func intRange(bits int, unsigned bool) (lo, hi string) {
	if unsigned {
		return "0", strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
	}
	return strconv.FormatInt(math.MinInt64>>(64-bits), 10), strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
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
			pr := Problem{Path: path, Msg: msg, Kind: ProblemOutOfRange, GoType: "float64", Got: string(x)}
			if IsInteger(x) && FitInt(x, 64, false, "int64") != "" {
				pr.GoType = "int64"
				pr.Min, pr.Max = intRange(64, false)
			}
			*probs = append(*probs, pr)
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
	want := func(kind, typ string) { *probs = append(*probs, wrongKind(path, kind, typ, v)) }
	if t == timeType {
		if v == nil {
			return
		}
		s, ok := v.(string)
		if !ok {
			*probs = append(*probs, wrongKind(path, "an RFC 3339 string", "time.Time", v))
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
			want("a string", typ)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			want("a boolean", typ)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		unsigned := t.Kind() >= reflect.Uint
		lo, hi := intRange(t.Bits(), unsigned)
		n, ok := v.(json.Number)
		if !ok {
			pr := wrongKind(path, "a number", typ, v)
			pr.Min, pr.Max = lo, hi
			*probs = append(*probs, pr)
			return
		}
		if msg := FitInt(n, t.Bits(), unsigned, typ); msg != "" {
			*probs = append(*probs, Problem{Path: path, Msg: msg, Kind: ProblemOutOfRange, GoType: typ, Got: string(n), Min: lo, Max: hi})
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			want("a number", typ)
			return
		}
		if msg := FitFloat(n, t.Bits(), typ); msg != "" {
			*probs = append(*probs, Problem{Path: path, Msg: msg, Kind: ProblemOutOfRange, GoType: typ, Got: string(n)})
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			want("an array", typ)
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
			want("an object", typ)
			return
		}
		for _, k := range sortedKeys(obj) {
			CheckValue(t.Elem(), obj[k], spec.PathKey(path, k), probs)
		}
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			want("an object", typ)
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
				*probs = append(*probs, Problem{Path: spec.PathKey(path, k), Msg: NotAField(k, typ, names),
					Kind: ProblemUnknownKey, GoType: typ, Key: k, Keys: names})
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
