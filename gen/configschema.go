package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/types"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// Config schemas. For a node type bound to a Go type (--config
// NODETYPE=GOTYPE), ConfigSchema writes the JSON Schema (draft 2020-12) of
// the configs the generator accepts for it, so that a visual builder can
// render a form and check a node's config before storing it. The schema
// follows the rules by which the generator checks stored configs (see
// bound.go), which are encoding/json's:
//
//   - A struct is an object with one property per field encoding/json
//     decodes into: exported fields named by their json tag or their Go
//     name, "-" skipped, the fields of embedded structs promoted. Unknown
//     keys are refused (additionalProperties: false), as the generator
//     refuses them. A field is required unless its tag says omitempty or
//     omitzero. A named struct is described once under $defs and referred
//     to, so recursive types work.
//   - string → string; bool → boolean; every integer type → integer with
//     the type's minimum and maximum; float32 and float64 → number with the
//     type's range; a slice → an array of its element (or null); an array
//     [N]T → an array of at most N elements; a map with string keys → an
//     object whose values are the element type (or null); a pointer → its
//     element or null; any → no constraint; time.Time → a date-time string.
//   - What the generator cannot write as a Go literal — a value of a type
//     that decodes itself (UnmarshalJSON, UnmarshalText) other than
//     time.Time, a map without string keys, an anonymous struct, a
//     non-empty interface, a complex number, a channel or a function, an
//     unexported named type — is a property that must be left out
//     ({"not": {}}), never required.
//
// Where the schema is stricter than the generator: keys must be written
// exactly as named (encoding/json and the generator also accept them in
// another case), fields without omitempty are required (the generator
// leaves an absent field at its zero value), and null is offered only for
// pointers, slices, maps and any (the generator also reads null as "leave
// the zero value"). Where it is looser: a JSON Schema cannot see how
// a number is written, so 1.0 or 1e3 pass as integers though encoding/json
// refuses them for an integer field; and the date-time format of a
// time.Time is an annotation in draft 2020-12, so a validator may accept a
// string the generator refuses (time.Time's own UnmarshalJSON decides).

// ConfigSchema returns the JSON Schema (draft 2020-12) of the configs of
// node type nodeType bound to b (a Binding from LoadBindings), indented,
// with properties in field order. It fails, naming the binding and the
// fix, when b's type cannot be bound (it is unexported, generic or local),
// as Generate would.
func ConfigSchema(nodeType string, b Binding) ([]byte, error) {
	what := bindingWhat(true, nodeType, b.Expr)
	if b.Type == nil {
		return nil, fmt.Errorf("%s: the binding has no type; resolve it with LoadBindings", what)
	}
	if err := emittable(b.Type); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	root := b.Type
	for {
		p, ok := types.Unalias(root).(*types.Pointer)
		if !ok {
			break
		}
		root = p.Elem() // a null config is the document's business
	}
	if name := selfDecoding(root); name != "" {
		return nil, fmt.Errorf("%s: type %s decodes itself with %s, so ilmekgen cannot write a stored config of it as a Go literal; bind a plain struct", what, typeString(root), name)
	}
	sb := &schemaBuilder{defs: map[*types.Named]*schemaDef{}}
	if n, ok := types.Unalias(root).(*types.Named); ok {
		if _, isStruct := n.Underlying().(*types.Struct); isStruct {
			sb.root = n
		}
	}
	top := &jsonObject{}
	top.set("$schema", "https://json-schema.org/draft/2020-12/schema")
	top.set("title", fmt.Sprintf("config of node type %s", quote(nodeType)))
	top.set("description", fmt.Sprintf("The config of ilmek node type %s, bound to Go type %s (%s). "+
		"Keys are the json names of the fields, written exactly; a field without omitempty is required; "+
		"ilmekgen refuses a key no field accepts and a value of the wrong JSON kind. "+
		"Not checked here: that an integer is written without a fraction or exponent (1, not 1.0 or 1e0).",
		quote(nodeType), typeString(b.Type), what))
	var body *jsonObject
	if sb.root != nil {
		body = sb.structSchema(sb.root, sb.root.Underlying().(*types.Struct))
	} else {
		body = sb.schema(root)
	}
	top.merge(body)
	if len(sb.order) > 0 {
		sb.nameDefs()
		defs := &jsonObject{}
		for _, d := range sb.order {
			defs.set(d.name, d.schema)
		}
		top.set("$defs", defs)
	}
	var buf bytes.Buffer
	writeJSON(&buf, top, "")
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// LoadConfigSchema resolves goType as `--config nodeType=goType` does (one
// packages.Load in cfg.Dir, with the module there resolving import paths)
// and returns ConfigSchema of the result. Its errors name the binding, what
// is wrong and, where there is one, the fix.
func LoadConfigSchema(nodeType, goType string, cfg LoadConfig) ([]byte, error) {
	if nodeType == "" {
		return nil, fmt.Errorf("%s: the node type is empty; write --config NODETYPE=GOTYPE", bindingWhat(true, nodeType, goType))
	}
	// LoadBindings binds configs of node types a spec uses: give it a spec
	// with one node of the type.
	g := &spec.Graph{Nodes: []spec.Node{{ID: "config", Type: nodeType}}}
	b, diags := LoadBindings(g, BindingSpec{Configs: map[string]string{nodeType: goType}}, cfg)
	if diags.HasErrors() {
		var errs []error
		for _, d := range diags {
			if d.Severity != spec.SeverityError {
				continue
			}
			msg, hint := d.Message, d.Hint
			if hint == "" {
				hint = "GOTYPE is a type with its full import path, e.g. example.com/shop.LLMOptions, resolved in the module of " + loadDirName(cfg.Dir)
			}
			// The hint goes after the first line, before any load errors.
			first, rest, _ := strings.Cut(msg, "\n")
			msg = first + "; " + hint
			if rest != "" {
				msg += "\n" + rest
			}
			errs = append(errs, errors.New(msg))
		}
		return nil, errors.Join(errs...)
	}
	return ConfigSchema(nodeType, b.Configs[nodeType])
}

// loadDirName names the directory packages are loaded in, for messages.
func loadDirName(dir string) string {
	if dir == "" {
		return "the current directory"
	}
	return dir
}

// schemaBuilder writes the schema of one bound type.
type schemaBuilder struct {
	root  *types.Named // the bound struct type, the schema's top level ("#")
	defs  map[*types.Named]*schemaDef
	order []*schemaDef // in first-use order
}

// schemaDef is a named struct type described under $defs.
type schemaDef struct {
	t      *types.Named
	name   string // assigned by nameDefs, once all are known
	schema *jsonObject
}

// schemaRef is a "$ref" to a $defs entry, written once the entry is named.
type schemaRef struct{ def *schemaDef }

// never is the schema of a value the generator cannot write: the key must
// be left out.
func never(why string) *jsonObject {
	o := &jsonObject{}
	o.set("description", why+"; leave the key out")
	o.set("not", &jsonObject{})
	return o
}

func isNever(o *jsonObject) bool { _, ok := o.get("not"); return ok }

// schema describes the JSON values the generator accepts for type t.
func (sb *schemaBuilder) schema(t types.Type) *jsonObject {
	if isTime(t) {
		o := &jsonObject{}
		o.set("type", "string")
		o.set("format", "date-time")
		return o
	}
	if name := selfDecoding(t); name != "" {
		return never(fmt.Sprintf("Go type %s decodes itself with %s, so ilmekgen cannot write a stored value of it as a Go literal", typeString(t), name))
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		if err := emittable(n); err != nil {
			return never(fmt.Sprintf("ilmekgen cannot write a stored value of Go type %s (%v)", typeString(t), err))
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Interface:
		if u.Empty() {
			return &jsonObject{} // any JSON value
		}
		return never(fmt.Sprintf("Go type %s is a non-empty interface, which encoding/json cannot decode into", typeString(t)))
	case *types.Pointer:
		return nullable(sb.schema(u.Elem()))
	case *types.Basic:
		return basicSchema(t, u)
	case *types.Slice:
		o := &jsonObject{}
		o.set("type", []any{"array", "null"})
		o.set("items", sb.schema(u.Elem()))
		return o
	case *types.Array:
		o := &jsonObject{}
		o.set("type", "array")
		o.set("items", sb.schema(u.Elem()))
		o.set("maxItems", json.Number(strconv.FormatInt(u.Len(), 10)))
		return o
	case *types.Map:
		if !isStringKind(u.Key()) {
			return never(fmt.Sprintf("Go type %s has non-string keys, and ilmekgen writes only string-keyed maps", typeString(t)))
		}
		o := &jsonObject{}
		o.set("type", []any{"object", "null"})
		o.set("additionalProperties", sb.schema(u.Elem()))
		return o
	case *types.Struct:
		n, ok := types.Unalias(t).(*types.Named)
		if !ok {
			return never(fmt.Sprintf("an anonymous struct (%s) cannot be written as a Go literal by ilmekgen; use a named type", typeString(t)))
		}
		if n == sb.root {
			o := &jsonObject{}
			o.set("$ref", "#")
			return o
		}
		d := sb.defs[n]
		if d == nil {
			d = &schemaDef{t: n}
			sb.defs[n] = d
			sb.order = append(sb.order, d)
			d.schema = sb.structSchema(n, u)
		}
		o := &jsonObject{}
		o.set("$ref", schemaRef{d})
		return o
	}
	return never(fmt.Sprintf("Go type %s cannot hold a stored config value", typeString(t)))
}

// structSchema describes the named struct n (whose underlying type is s) as
// an object of its json fields.
func (sb *schemaBuilder) structSchema(n *types.Named, s *types.Struct) *jsonObject {
	o := &jsonObject{}
	o.set("$comment", "Go type "+typeString(n))
	o.set("type", "object")
	props := &jsonObject{}
	var required []any
	for _, f := range jsonFields(s) {
		fs := sb.schema(f.typ)
		if why := promotedThrough(s, f.index); why != "" {
			fs = never(why)
		}
		props.set(f.name, fs)
		if !isNever(fs) && f.required {
			required = append(required, f.name)
		}
	}
	o.set("properties", props)
	if len(required) > 0 {
		o.set("required", required)
	}
	o.set("additionalProperties", false)
	return o
}

// promotedThrough says why the generator cannot set a field promoted from
// an embedded struct at index path idx of s ("" when it can): it writes a
// literal of every embedded struct on the way, which must be a named,
// exported type.
func promotedThrough(s *types.Struct, idx []int) string {
	for _, i := range idx[:len(idx)-1] {
		f := s.Field(i)
		if err := emittable(f.Type()); err != nil {
			return fmt.Sprintf("the field is promoted from embedded %s, of which ilmekgen cannot write a literal (%v)", f.Name(), err)
		}
		s = f.Type().Underlying().(*types.Struct)
	}
	return ""
}

// isTime reports whether t is time.Time.
func isTime(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Time"
}

// basicSchema describes the basic type u (which t may name).
func basicSchema(t types.Type, u *types.Basic) *jsonObject {
	o := &jsonObject{}
	info := u.Info()
	switch {
	case info&types.IsString != 0:
		o.set("type", "string")
	case info&types.IsBoolean != 0:
		o.set("type", "boolean")
	case info&types.IsInteger != 0:
		bits, unsigned := intBits(u.Kind())
		o.set("type", "integer")
		if unsigned {
			o.set("minimum", json.Number("0"))
			o.set("maximum", json.Number(strconv.FormatUint(1<<bits-1, 10)))
		} else {
			o.set("minimum", json.Number(strconv.FormatInt(-1<<(bits-1), 10)))
			o.set("maximum", json.Number(strconv.FormatInt(1<<(bits-1)-1, 10)))
		}
	case info&types.IsFloat != 0:
		o.set("type", "number")
		limit := "1.7976931348623157e+308"
		if u.Kind() == types.Float32 {
			limit = "3.4028234663852886e+38"
		}
		o.set("minimum", json.Number("-"+limit))
		o.set("maximum", json.Number(limit))
	default:
		return never(fmt.Sprintf("Go type %s cannot hold a stored config value", typeString(t)))
	}
	return o
}

// nullable lets s also accept null.
func nullable(s *jsonObject) *jsonObject {
	if isNever(s) {
		o := &jsonObject{}
		o.set("type", "null")
		return o
	}
	switch typ, _ := s.get("type"); typ := typ.(type) {
	case string:
		c := s.clone()
		c.set("type", []any{typ, "null"})
		return c
	case []any:
		for _, k := range typ {
			if k == "null" {
				return s
			}
		}
		c := s.clone()
		c.set("type", append(append([]any(nil), typ...), "null"))
		return c
	}
	if len(s.keys) == 0 {
		return s // any value, null included
	}
	o := &jsonObject{}
	null := &jsonObject{}
	null.set("type", "null")
	o.set("anyOf", []any{s, null})
	return o
}

// nameDefs names the $defs entries: by the type's name, qualified by its
// package's name when two types share a name, numbered when even that
// repeats. Names are made of letters, digits, '_' and '.', so a $ref needs
// no escaping. (Generic types are never entries: they cannot be bound.)
func (sb *schemaBuilder) nameDefs() {
	count := map[string]int{}
	for _, d := range sb.order {
		count[defName(d.t.Obj().Name())]++
	}
	used := map[string]bool{}
	for _, d := range sb.order {
		name := defName(d.t.Obj().Name())
		qualified := defName(d.t.Obj().Pkg().Name() + "." + d.t.Obj().Name())
		if count[name] > 1 {
			name = qualified
		}
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s_%d", qualified, i)
		}
		used[name] = true
		d.name = name
	}
}

// defName keeps the letters, digits, '_' and '.' of s and writes every
// other character as '_'.
func defName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

// jsonObject is a JSON object that keeps its keys in insertion order, so
// that a schema lists properties in field order.
type jsonObject struct {
	keys []string
	vals map[string]any
}

func (o *jsonObject) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *jsonObject) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *jsonObject) clone() *jsonObject {
	c := &jsonObject{}
	for _, k := range o.keys {
		c.set(k, o.vals[k])
	}
	return c
}

// merge sets every member of p in o.
func (o *jsonObject) merge(p *jsonObject) {
	for _, k := range p.keys {
		o.set(k, p.vals[k])
	}
}

// writeJSON writes v indented by two spaces, without HTML escaping. v is a
// *jsonObject, []any, string, bool, json.Number or schemaRef.
func writeJSON(b *bytes.Buffer, v any, indent string) {
	switch v := v.(type) {
	case *jsonObject:
		if len(v.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range v.keys {
			b.WriteString(indent + "  ")
			writeString(b, k)
			b.WriteString(": ")
			writeJSON(b, v.vals[k], indent+"  ")
			if i < len(v.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		// Arrays of scalars (type lists, required) stay on one line.
		flat := true
		for _, e := range v {
			if _, ok := e.(*jsonObject); ok {
				flat = false
			}
		}
		if flat {
			b.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					b.WriteString(", ")
				}
				writeJSON(b, e, indent)
			}
			b.WriteByte(']')
			return
		}
		b.WriteString("[\n")
		for i, e := range v {
			b.WriteString(indent + "  ")
			writeJSON(b, e, indent+"  ")
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case string:
		writeString(b, v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(string(v))
	case schemaRef:
		writeString(b, "#/$defs/"+v.def.name)
	default:
		panic(fmt.Sprintf("gen: writeJSON of %T", v))
	}
}

// writeString writes s as a JSON string, leaving <, > and & as they are.
func writeString(b *bytes.Buffer, s string) {
	var e bytes.Buffer
	enc := json.NewEncoder(&e)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	b.Write(bytes.TrimSuffix(e.Bytes(), []byte("\n")))
}
