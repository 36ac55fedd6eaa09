package runtime

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Expects is what an interrupt's answer must be: the Go type the asking
// node decodes it into, and that type's JSON Schema. Interrupt[T] records
// it with the pending interrupt (PendingInterrupt.Expects), so a user
// interface can build a form from the schema, and Resume checks every
// answer against it before anything is written.
type Expects struct {
	// Type is the Go type's name, e.g. "bool" or "example.com/shop.Decision".
	Type string `json:"type"`
	// Schema is the JSON Schema (draft 2020-12) of the JSON values that
	// decode into Type. null decodes into every type (to its zero value)
	// and is always accepted; a type that decodes itself (a
	// json.Unmarshaler or encoding.TextUnmarshaler other than time.Time)
	// accepts any value here and is checked when its node decodes it.
	Schema json.RawMessage `json:"schema"`
}

var expectsCache sync.Map // reflect.Type -> *Expects

// expectsOf returns the Expects of T, built once per type.
func expectsOf[T any]() *Expects {
	t := reflect.TypeFor[T]()
	if e, ok := expectsCache.Load(t); ok {
		return e.(*Expects)
	}
	raw, _ := json.Marshal(schemaOf(t, map[reflect.Type]bool{}))
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
func schemaOf(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
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
		return schemaOf(t.Elem(), seen)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), seen)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), seen)}
	case reflect.Struct:
		if seen[t] {
			return map[string]any{"type": "object"} // recursive: checked when decoded
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		structFields(t, func(name string, ft reflect.Type) { props[name] = schemaOf(ft, seen) })
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{} // interfaces: any value
}

// structFields calls f for each JSON field of struct type t, as
// encoding/json names them (tags, embedded structs promoted).
func structFields(t reflect.Type, f func(name string, ft reflect.Type)) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
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
		f(name, ft)
	}
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
	return fits(s, v, "answer")
}

func fits(s map[string]any, v any, at string) error {
	if v == nil {
		return nil
	}
	typ, _ := s["type"].(string)
	want := func() error { return fmt.Errorf("%s is %s, want %s", at, kindOf(v), typ) }
	switch typ {
	case "":
		return nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return want()
		}
	case "string":
		if _, ok := v.(string); !ok {
			return want()
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
			if err := fits(items, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "object":
		o, ok := v.(map[string]any)
		if !ok {
			return want()
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			for k, e := range o {
				if err := fits(ap, e, at+"."+k); err != nil {
					return err
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, e := range o {
			ps := property(props, k)
			if ps == nil {
				continue // encoding/json ignores unknown members
			}
			if err := fits(ps, e, at+"."+k); err != nil {
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
