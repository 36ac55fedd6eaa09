package runtime

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Expects is what an interrupt's answer must be (checkpoint.Expects):
// Interrupt[T] records it with the pending interrupt, and Resume checks
// every answer against it before anything is written.
type Expects = checkpoint.Expects

var expectsCache sync.Map // reflect.Type -> *Expects

// expectsOf returns the Expects of T, built once per type.
func expectsOf[T any]() *Expects {
	t := reflect.TypeFor[T]()
	if e, ok := expectsCache.Load(t); ok {
		return e.(*Expects)
	}
	raw, _ := json.Marshal(schemaOf(t, t, map[reflect.Type]bool{}))
	name := t.String()
	if t.PkgPath() != "" {
		name = t.PkgPath() + "." + t.Name()
	}
	e, _ := expectsCache.LoadOrStore(t, &Expects{Type: name, Schema: raw})
	return e.(*Expects)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// schemaOf is the JSON Schema of the values encoding/json decodes into t.
// seen holds the struct types being described; a reference back to root
// (the type the schema is of) is "$ref": "#".
func schemaOf(t, root reflect.Type, seen map[reflect.Type]bool) map[string]any {
	if t.PkgPath() == "time" && t.Name() == "Time" {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	if t.Kind() != reflect.Interface && (reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return map[string]any{"type": "integer", "minimum": int64(-1) << (bits - 1), "maximum": int64(1)<<(bits-1) - 1}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0, "maximum": uint64(math.MaxUint64) >> (64 - t.Bits())}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Pointer:
		return schemaOf(t.Elem(), root, seen)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice && !reflect.PointerTo(t.Elem()).Implements(jsonUnmarshaler) && !reflect.PointerTo(t.Elem()).Implements(textUnmarshaler) {
			// encoding/json decodes a base64 string, and also an array of
			// bytes.
			return map[string]any{"type": []string{"string", "array"}, "contentEncoding": "base64", "items": schemaOf(t.Elem(), root, seen)}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), root, seen)}
	case reflect.Map:
		m := map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), root, seen)}
		k := t.Key()
		if k.Kind() != reflect.String && !reflect.PointerTo(k).Implements(textUnmarshaler) {
			switch k.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				m["propertyNames"] = map[string]any{"pattern": "^-?[0-9]+$"}
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				m["propertyNames"] = map[string]any{"pattern": "^[0-9]+$"}
			}
		}
		return m
	case reflect.Struct:
		if seen[t] {
			if t == root {
				return map[string]any{"$ref": "#"}
			}
			return map[string]any{"type": "object"} // recursive: checked when decoded
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		structFields(t, func(name string, ft reflect.Type, quoted bool) {
			if quoted && quotable(ft) {
				props[name] = map[string]any{"type": "string"} // `json:",string"`
				return
			}
			props[name] = schemaOf(ft, root, seen)
		})
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{} // interfaces: any value
}

// structFields calls f for each JSON field of struct type t, as
// encoding/json names them (tags, embedded structs promoted).
func structFields(t reflect.Type, f func(name string, ft reflect.Type, quoted bool)) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				structFields(et, f)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f(name, ft, strings.Contains(","+opts+",", ",string,"))
	}
}

// quotable reports whether the ",string" option applies to t: encoding/json
// then expects the value inside a JSON string.
func quotable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// checkAnswer reports why the JSON value raw does not fit schema, naming
// the place in the value, or nil. It checks what the schemas of schemaOf
// say, with encoding/json's leniency: null fits everything, and object
// members match properties case-insensitively.
func checkAnswer(schema, raw json.RawMessage) error {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil // not ours to judge: the node decodes it
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return fits(s, s, v, "answer")
}

func fits(root, s map[string]any, v any, at string) error {
	if v == nil {
		return nil
	}
	if s["$ref"] == "#" {
		s = root
	}
	typ, _ := s["type"].(string)
	if alts, ok := s["type"].([]any); ok {
		// Several types: the one of v's kind, if listed.
		typ = ""
		for _, a := range alts {
			if name, _ := a.(string); name == jsonKind(v) {
				typ = name
			}
		}
		if typ == "" {
			return fmt.Errorf("%s is %s, want one of %v", at, kindOf(v), alts)
		}
	}
	want := func() error { return fmt.Errorf("%s is %s, want %s", at, kindOf(v), typ) }
	switch typ {
	case "":
		return nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return want()
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return want()
		}
		if s["contentEncoding"] == "base64" {
			if _, err := base64.StdEncoding.DecodeString(str); err != nil {
				return fmt.Errorf("%s is not base64: %v", at, err)
			}
		}
		if s["format"] == "date-time" {
			var tm time.Time
			if err := tm.UnmarshalText([]byte(str)); err != nil {
				return fmt.Errorf("%s is not an RFC 3339 date-time: %v", at, err)
			}
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return want()
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return want()
		}
		lo, hi := bound(s["minimum"]), bound(s["maximum"])
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			if float64(i) < lo || float64(i) > hi {
				return fmt.Errorf("%s is %s, out of the range %.0f to %.0f", at, n, lo, hi)
			}
		} else if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
			if float64(u) > hi {
				return fmt.Errorf("%s is %s, out of the range %.0f to %.0f", at, n, lo, hi)
			}
		} else {
			return fmt.Errorf("%s is %s, want an integer", at, n)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return want()
		}
		items, _ := s["items"].(map[string]any)
		for i, e := range a {
			if err := fits(root, items, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "object":
		o, ok := v.(map[string]any)
		if !ok {
			return want()
		}
		keys := slices.Sorted(maps.Keys(o))
		if pn, ok := s["propertyNames"].(map[string]any); ok {
			if pat, ok := pn["pattern"].(string); ok {
				re, err := regexp.Compile(pat)
				for _, k := range keys {
					if err == nil && !re.MatchString(k) {
						return fmt.Errorf("%s has the member %q, want names matching %s", at, k, pat)
					}
				}
			}
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			for _, k := range keys {
				if err := fits(root, ap, o[k], at+"."+k); err != nil {
					return err
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for _, k := range keys {
			ps := property(props, k)
			if ps == nil {
				continue // encoding/json ignores unknown members
			}
			if err := fits(root, ps, o[k], at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// property finds the schema of member k as encoding/json matches it: the
// exact name, else a case-insensitive one.
func property(props map[string]any, k string) map[string]any {
	if p, ok := props[k].(map[string]any); ok {
		return p
	}
	for name, p := range props {
		if strings.EqualFold(name, k) {
			m, _ := p.(map[string]any)
			return m
		}
	}
	return nil
}

func bound(v any) float64 {
	f, _ := v.(float64)
	return f
}

// jsonKind is the JSON Schema type name of v's kind ("integer" never).
func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func kindOf(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}
