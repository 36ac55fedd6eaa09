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

	"github.com/ilmek-go/ilmek/internal/jsonconv"
	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Expects is what an interrupt's answer must be (checkpoint.Expects):
// Interrupt[T] records it with the pending interrupt, and Resume checks
// every answer against it, exactly, before anything is written.
type Expects = checkpoint.Expects

var expectsCache sync.Map // reflect.Type -> *Expects

// expectsOf returns the Expects of T, built once per type.
func expectsOf[T any]() *Expects {
	t := reflect.TypeFor[T]()
	if e, ok := expectsCache.Load(t); ok {
		return e.(*Expects)
	}
	raw, _ := json.Marshal(schemaFor(t))
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

// schemaFor is the JSON Schema of the answers a node asking for t
// accepts. A struct type that refers back to itself is "$ref": "#" when
// it is t, else described once under "$defs".
func schemaFor(t reflect.Type) map[string]any {
	b := &schemaBuilder{root: t, seen: map[reflect.Type]bool{}, defs: map[reflect.Type]string{}, used: map[string]bool{}}
	s := b.schema(t)
	if len(b.order) > 0 {
		defs := map[string]any{}
		for i := 0; i < len(b.order); i++ { // building a def may add more
			d := b.order[i]
			b.seen = map[reflect.Type]bool{}
			defs[b.defs[d]] = b.structSchema(d)
		}
		s["$defs"] = defs
	}
	return s
}

// schemaBuilder writes the schema of one answer type.
type schemaBuilder struct {
	root  reflect.Type
	seen  map[reflect.Type]bool   // the struct types being described
	defs  map[reflect.Type]string // recursive struct types → their $defs name
	order []reflect.Type          // defs in first-use order
	used  map[string]bool
}

// schema is the JSON Schema of the values t accepts.
func (b *schemaBuilder) schema(t reflect.Type) map[string]any {
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
		return nullable(b.schema(t.Elem()))
	case reflect.Slice, reflect.Array:
		types := []string{"array"}
		if t.Kind() == reflect.Slice {
			types = append(types, "null")
		}
		m := map[string]any{"type": types, "items": b.schema(t.Elem())}
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(jsonUnmarshaler) && !reflect.PointerTo(t.Elem()).Implements(textUnmarshaler) {
			// encoding/json decodes a base64 string, and also an array of
			// bytes.
			m["type"], m["contentEncoding"] = []string{"string", "array", "null"}, "base64"
		}
		if len(types) == 1 {
			m["type"] = "array"
		}
		return m
	case reflect.Map:
		m := map[string]any{"type": []string{"object", "null"}, "additionalProperties": b.schema(t.Elem())}
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
		if b.seen[t] {
			if t == b.root {
				return map[string]any{"$ref": "#"}
			}
			return map[string]any{"$ref": "#/$defs/" + b.def(t)}
		}
		if name, ok := b.defs[t]; ok {
			return map[string]any{"$ref": "#/$defs/" + name}
		}
		return b.structSchema(t)
	}
	return map[string]any{} // interfaces: any value, null included
}

// structSchema describes struct type t as an object of its JSON members,
// by the rule of the generator's config schemas (jsonconv.Fields).
func (b *schemaBuilder) structSchema(t reflect.Type) map[string]any {
	b.seen[t] = true
	defer delete(b.seen, t)
	props := map[string]any{}
	required := []string{}
	for _, f := range jsonconv.ReflectFields(t, true) {
		sf := t.FieldByIndex(f.Index)
		ft := sf.Type
		var ps map[string]any
		if f.Quoted && quotable(ft) {
			ps = map[string]any{"type": "string"} // `json:",string"`
		} else {
			ps = b.schema(ft)
		}
		// `title:"..."` and `description:"..."` label the member for a
		// form that asks a person for the answer (the server's inbox).
		if v := sf.Tag.Get("title"); v != "" {
			ps = maps.Clone(ps)
			ps["title"] = v
		}
		if v := sf.Tag.Get("description"); v != "" {
			ps = maps.Clone(ps)
			ps["description"] = v
		}
		props[f.Name] = ps
		if f.Required {
			required = append(required, f.Name)
		}
	}
	m := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

// def names the $defs entry of recursive struct type t, adding it.
func (b *schemaBuilder) def(t reflect.Type) string {
	if name, ok := b.defs[t]; ok {
		return name
	}
	base := strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, t.String())
	name := base
	for i := 2; b.used[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	b.used[name] = true
	b.defs[t] = name
	b.order = append(b.order, t)
	return name
}

// nullable lets s also accept null.
func nullable(s map[string]any) map[string]any {
	switch typ := s["type"].(type) {
	case string:
		c := maps.Clone(s)
		c["type"] = []string{typ, "null"}
		return c
	case []string:
		if slices.Contains(typ, "null") {
			return s
		}
		c := maps.Clone(s)
		c["type"] = append(slices.Clone(typ), "null")
		return c
	}
	if len(s) == 0 {
		return s // any value, null included
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
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
// the place in the value, or nil. It checks what the schemas of schemaFor
// say, as a JSON Schema validator would: null only where the type lists
// it, object members by their exact names, required members present and
// no others.
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
	switch ref, _ := s["$ref"].(string); {
	case ref == "#":
		s = root
	case strings.HasPrefix(ref, "#/$defs/"):
		defs, _ := root["$defs"].(map[string]any)
		s, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		var first error
		for _, a := range alts {
			as, _ := a.(map[string]any)
			err := fits(root, as, v, at)
			if err == nil {
				return nil
			}
			if first == nil && (v != nil || as["type"] != "null") {
				first = err
			}
		}
		return first
	}
	typ, _ := s["type"].(string)
	if alts, ok := s["type"].([]any); ok {
		// Several types: the one of v's kind, if listed.
		typ = ""
		for _, a := range alts {
			name, _ := a.(string)
			if name == jsonKind(v) || name == "integer" && jsonKind(v) == "number" {
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
	case "null":
		if v != nil {
			return want()
		}
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
		return fitsObject(root, s, o, at)
	}
	return nil
}

// fitsObject checks the members of object o against object schema s.
func fitsObject(root, s map[string]any, o map[string]any, at string) error {
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
	props, _ := s["properties"].(map[string]any)
	names := slices.Sorted(maps.Keys(props))
	for _, k := range keys {
		if ps, ok := props[k].(map[string]any); ok {
			if err := fits(root, ps, o[k], at+"."+k); err != nil {
				return err
			}
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case map[string]any:
			if err := fits(root, ap, o[k], at+"."+k); err != nil {
				return err
			}
		case bool:
			if !ap {
				return fmt.Errorf("%s has no member %q; %smembers are named exactly as listed: %s", at, k, suggest.DidYouMean(k, names), quotedList(names))
			}
		}
	}
	req, _ := s["required"].([]any)
	for _, r := range req {
		if name, _ := r.(string); name != "" {
			if _, ok := o[name]; !ok {
				return fmt.Errorf("%s lacks the required member %q; give every member whose json tag says neither omitempty nor omitzero", at, name)
			}
		}
	}
	return nil
}

// quotedList writes names as "a", "b", "c", or "none".
func quotedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
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
