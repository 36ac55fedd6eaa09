package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ilmek-go/ilmek/spec"
)

// cfgTestPkg is a test-only package covering every mapping of
// ConfigSchema. The tests write it, with a go.mod of its own, to a temporary
// directory and load it with LoadBindings, the loader of --config.
const cfgTestPkg = `package cfgtest

import (
	"encoding/json"
	"time"

	"example.com/cfgtest/other"
)

type Level string

type Inner struct {
	Name string ` + "`json:\"name\"`" + `
}

type Tree struct {
	Label    string ` + "`json:\"label\"`" + `
	Children []Tree ` + "`json:\"children,omitempty\"`" + `
}

type Embedded struct {
	Shared int ` + "`json:\"shared\"`" + `
	Base2  string
}

type hidden struct{ X int }

type Text struct{ s string }

func (t *Text) UnmarshalText(b []byte) error { t.s = string(b); return nil }

type All struct {
	Embedded
	S          string            ` + "`json:\"s\"`" + `
	B          bool              ` + "`json:\"b\"`" + `
	I          int               ` + "`json:\"i\"`" + `
	I8         int8              ` + "`json:\"i8\"`" + `
	I16        int16
	I32        int32             ` + "`json:\"i32,omitempty\"`" + `
	I64        int64             ` + "`json:\"i64,omitempty\"`" + `
	U          uint              ` + "`json:\"u,omitempty\"`" + `
	U8         uint8             ` + "`json:\"u8\"`" + `
	U16        uint16            ` + "`json:\"u16,omitempty\"`" + `
	U32        uint32            ` + "`json:\"u32,omitempty\"`" + `
	U64        uint64            ` + "`json:\"u64,omitempty\"`" + `
	F32        float32           ` + "`json:\"f32\"`" + `
	F64        float64           ` + "`json:\"f64,omitempty\"`" + `
	Level      Level             ` + "`json:\"level\"`" + `
	Strs       []string          ` + "`json:\"strs\"`" + `
	Bytes      []byte            ` + "`json:\"bytes,omitempty\"`" + `
	Arr        [2]int            ` + "`json:\"arr,omitempty\"`" + `
	Map        map[string]int    ` + "`json:\"map\"`" + `
	LevelMap   map[Level]bool    ` + "`json:\"level_map,omitempty\"`" + `
	IntMap     map[int]string    ` + "`json:\"int_map,omitempty\"`" + `
	Ptr        *int              ` + "`json:\"ptr\"`" + `
	PtrStruct  *Inner            ` + "`json:\"ptr_struct,omitempty\"`" + `
	Inner      Inner             ` + "`json:\"inner\"`" + `
	Inners     []Inner           ` + "`json:\"inners,omitempty\"`" + `
	OtherInner other.Inner       ` + "`json:\"other_inner,omitempty\"`" + `
	Tree       Tree              ` + "`json:\"tree,omitempty\"`" + `
	Self       *All              ` + "`json:\"self,omitempty\"`" + `
	Any        any               ` + "`json:\"any,omitempty\"`" + `
	Iface      error             ` + "`json:\"iface,omitempty\"`" + `
	When       time.Time         ` + "`json:\"when,omitempty\"`" + `
	WhenPtr    *time.Time        ` + "`json:\"when_ptr,omitempty\"`" + `
	Dur        time.Duration     ` + "`json:\"dur,omitempty\"`" + `
	Raw        json.RawMessage   ` + "`json:\"raw,omitempty\"`" + `
	Text       Text              ` + "`json:\"text,omitempty\"`" + `
	Anon       struct{ A int }   ` + "`json:\"anon,omitempty\"`" + `
	Hidden     hidden            ` + "`json:\"hidden,omitempty\"`" + `
	C          complex128        ` + "`json:\"c,omitempty\"`" + `
	Ch         chan int          ` + "`json:\"-\"`" + `
	Zero       string            ` + "`json:\"zero,omitzero\"`" + `
	Dash       string            ` + "`json:\"-,\"`" + `
	unexported int
	NoTag      string
}
`

const cfgOtherPkg = `package other

type Inner struct {
	V int ` + "`json:\"v\"`" + `
}
`

// cfgTestAll loads cfgtest.All once, as --config all=example.com/cfgtest.All.
var cfgTestAll = sync.OnceValues(func() (Binding, error) {
	dir, err := os.MkdirTemp("", "ilmek-configschema-")
	if err != nil {
		return Binding{}, err
	}
	files := map[string]string{
		"go.mod":         "module example.com/cfgtest\n\ngo 1.26\n",
		"cfgtest.go":     cfgTestPkg,
		"other/other.go": cfgOtherPkg,
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return Binding{}, err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return Binding{}, err
		}
	}
	defer os.RemoveAll(dir)
	g := &spec.Graph{Nodes: []spec.Node{{ID: "n", Type: "all"}}}
	b, diags := LoadBindings(g, BindingSpec{Configs: map[string]string{"all": "example.com/cfgtest.All"}}, LoadConfig{Dir: dir})
	if diags.HasErrors() {
		return Binding{}, fmt.Errorf("loading example.com/cfgtest.All: %v", diags)
	}
	return b.Configs["all"], nil
})

// compileSchema compiles a schema with the validator the spec package's
// tests use, checking it against the draft 2020-12 meta-schema.
func compileSchema(t *testing.T, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v\n%s", err, schema)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("config.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("config.json")
	if err != nil {
		t.Fatalf("the schema does not compile as draft 2020-12: %v\n%s", err, schema)
	}
	return sch
}

func unmarshalAny(t *testing.T, data []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return v
}

// TestConfigSchemaBoundGolden checks the schema of every config binding of
// testdata/golden/bound and that every stored config of its spec is valid
// under the schema of its node type.
func TestConfigSchemaBoundGolden(t *testing.T) {
	dir := filepath.Join(moduleRoot(t), "testdata", "golden", "bound")
	data, err := os.ReadFile(filepath.Join(dir, "bindings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bs BindingSpec
	if err := json.Unmarshal(data, &bs); err != nil {
		t.Fatal(err)
	}
	if len(bs.Configs) == 0 {
		t.Fatal("bindings.json binds no config")
	}
	doc, err := os.ReadFile(filepath.Join(dir, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, diags := spec.Decode("spec.json", doc)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, nodeType := range sortedKeys(bs.Configs) {
		out, err := LoadConfigSchema(nodeType, bs.Configs[nodeType], LoadConfig{Dir: dir})
		if err != nil {
			t.Fatalf("%s: %v", nodeType, err)
		}
		sch := compileSchema(t, out)
		checked := 0
		for i, n := range g.Nodes {
			if n.Type != nodeType || n.Config == nil {
				continue
			}
			checked++
			if err := sch.Validate(unmarshalAny(t, n.Config)); err != nil {
				t.Errorf("nodes[%d].config (%s) is not valid under the schema of %s:\n%v\n%s", i, n.ID, nodeType, err, out)
			}
		}
		if checked == 0 {
			t.Errorf("no stored config of type %s was checked", nodeType)
		}
	}
	// The llm config, pinned: fields in order (promoted fields last, as
	// encoding/json lists them), omitempty not required, the shared struct
	// under $defs.
	out, err := LoadConfigSchema("llm", bs.Configs["llm"], LoadConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema     string                     `json:"$schema"`
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional *bool                      `json:"additionalProperties"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != "https://json-schema.org/draft/2020-12/schema" || got.Type != "object" || got.Additional == nil || *got.Additional {
		t.Errorf("top level: $schema %q, type %q, additionalProperties %v", got.Schema, got.Type, got.Additional)
	}
	if want := []string{"model", "temperature", "max_tokens", "tools", "extra", "since", "retries"}; !slices.Equal(got.Required, want) {
		t.Errorf("required %v, want %v", got.Required, want)
	}
	order := []string{`"model"`, `"temperature"`, `"max_tokens"`, `"tools"`, `"stop"`, `"extra"`, `"seed"`, `"since"`, `"until"`, `"retries"`}
	last := -1
	for _, key := range order {
		i := bytes.Index(out, []byte(key+": "))
		if i < last {
			t.Errorf("property %s out of field order", key)
		}
		last = i
	}
	if _, ok := got.Defs["Tool"]; !ok || len(got.Defs) != 1 {
		t.Errorf("$defs %v, want Tool alone", sortedKeys(got.Defs))
	}
	again, _ := LoadConfigSchema("llm", bs.Configs["llm"], LoadConfig{Dir: dir})
	if !bytes.Equal(out, again) {
		t.Error("ConfigSchema is not stable")
	}
}

// TestConfigSchemaMappings pins the schema of every field kind of
// cfgtest.All.
func TestConfigSchemaMappings(t *testing.T) {
	b, err := cfgTestAll()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ConfigSchema("all", b)
	if err != nil {
		t.Fatal(err)
	}
	compileSchema(t, out)
	var got struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
		Defs       map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	never := func(why string) string {
		return `{"description": "` + why + `; leave the key out", "not": {}}`
	}
	tests := []struct {
		field string
		want  string // the property's schema; "" when the field is no property
	}{
		{"s", `{"type": "string"}`},
		{"b", `{"type": "boolean"}`},
		{"i", `{"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}`},
		{"i8", `{"type": "integer", "minimum": -128, "maximum": 127}`},
		{"I16", `{"type": "integer", "minimum": -32768, "maximum": 32767}`},
		{"i32", `{"type": "integer", "minimum": -2147483648, "maximum": 2147483647}`},
		{"i64", `{"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}`},
		{"u", `{"type": "integer", "minimum": 0, "maximum": 18446744073709551615}`},
		{"u8", `{"type": "integer", "minimum": 0, "maximum": 255}`},
		{"u16", `{"type": "integer", "minimum": 0, "maximum": 65535}`},
		{"u32", `{"type": "integer", "minimum": 0, "maximum": 4294967295}`},
		{"u64", `{"type": "integer", "minimum": 0, "maximum": 18446744073709551615}`},
		{"f32", `{"type": "number", "minimum": -3.4028234663852886e+38, "maximum": 3.4028234663852886e+38}`},
		{"f64", `{"type": "number", "minimum": -1.7976931348623157e+308, "maximum": 1.7976931348623157e+308}`},
		{"level", `{"type": "string"}`},
		{"strs", `{"type": ["array", "null"], "items": {"type": "string"}}`},
		{"bytes", `{"type": ["array", "null"], "items": {"type": "integer", "minimum": 0, "maximum": 255}}`},
		{"arr", `{"type": "array", "items": {"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}, "maxItems": 2}`},
		{"map", `{"type": ["object", "null"], "additionalProperties": {"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}}`},
		{"level_map", `{"type": ["object", "null"], "additionalProperties": {"type": "boolean"}}`},
		{"int_map", never("Go type map[int]string has non-string keys, and ilmekgen writes only string-keyed maps")},
		{"ptr", `{"type": ["integer", "null"], "minimum": -9223372036854775808, "maximum": 9223372036854775807}`},
		{"ptr_struct", `{"anyOf": [{"$ref": "#/$defs/cfgtest.Inner"}, {"type": "null"}]}`},
		{"inner", `{"$ref": "#/$defs/cfgtest.Inner"}`},
		{"inners", `{"type": ["array", "null"], "items": {"$ref": "#/$defs/cfgtest.Inner"}}`},
		{"other_inner", `{"$ref": "#/$defs/other.Inner"}`},
		{"tree", `{"$ref": "#/$defs/Tree"}`},
		{"self", `{"anyOf": [{"$ref": "#"}, {"type": "null"}]}`},
		{"any", `{}`},
		{"iface", never("Go type error is a non-empty interface, which encoding/json cannot decode into")},
		{"when", `{"type": "string", "format": "date-time"}`},
		{"when_ptr", `{"type": ["string", "null"], "format": "date-time"}`},
		{"dur", `{"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}`},
		{"raw", never("Go type encoding/json.RawMessage decodes itself with UnmarshalJSON, so ilmekgen cannot write a stored value of it as a Go literal")},
		{"text", never("Go type example.com/cfgtest.Text decodes itself with UnmarshalText, so ilmekgen cannot write a stored value of it as a Go literal")},
		{"anon", never("an anonymous struct (struct{A int}) cannot be written as a Go literal by ilmekgen; use a named type")},
		{"hidden", never("ilmekgen cannot write a stored value of Go type example.com/cfgtest.hidden (type example.com/cfgtest.hidden is not exported)")},
		{"c", never("Go type complex128 cannot hold a stored config value")},
		{"zero", `{"type": "string"}`},
		{"-", `{"type": "string"}`},
		{"NoTag", `{"type": "string"}`},
		{"shared", `{"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}`},
		{"Base2", `{"type": "string"}`},
		{"Ch", ""},
		{"unexported", ""},
		{"Embedded", ""},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			prop, ok := got.Properties[tt.field]
			if tt.want == "" {
				if ok {
					t.Errorf("field %s is a property: %v", tt.field, prop)
				}
				return
			}
			if !ok {
				t.Fatalf("no property %s among %v", tt.field, sortedKeys(got.Properties))
			}
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, prop); diff != "" {
				t.Errorf("property %s (-want +got):\n%s", tt.field, diff)
			}
		})
	}
	if len(got.Properties) != len(tests)-3 {
		t.Errorf("%d properties, want %d: %v", len(got.Properties), len(tests)-3, sortedKeys(got.Properties))
	}
	wantRequired := []string{"s", "b", "i", "i8", "I16", "u8", "f32", "level", "strs", "map", "ptr", "inner", "-", "NoTag", "shared", "Base2"}
	if !slices.Equal(got.Required, wantRequired) {
		t.Errorf("required %v, want %v", got.Required, wantRequired)
	}
	wantDefs := map[string]string{
		"cfgtest.Inner": `{"$comment": "Go type example.com/cfgtest.Inner", "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}`,
		"other.Inner":   `{"$comment": "Go type example.com/cfgtest/other.Inner", "type": "object", "properties": {"v": {"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}}, "required": ["v"], "additionalProperties": false}`,
		"Tree":          `{"$comment": "Go type example.com/cfgtest.Tree", "type": "object", "properties": {"label": {"type": "string"}, "children": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Tree"}}}, "required": ["label"], "additionalProperties": false}`,
	}
	for name, text := range wantDefs {
		var want any
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Defs[name]); diff != "" {
			t.Errorf("$defs/%s (-want +got):\n%s", name, diff)
		}
	}
	if len(got.Defs) != len(wantDefs) {
		t.Errorf("$defs %v, want %v", sortedKeys(got.Defs), sortedKeys(wantDefs))
	}
}

// TestConfigSchemaAgreesWithGenerator validates configs of cfgtest.All
// with the schema and with the generator's own check of stored configs,
// and pins both verdicts. Where they differ, the case says why: the schema
// is stricter (required fields, exact key case, null only where Go has
// nil), or cannot see number text or check a date-time string.
func TestConfigSchemaAgreesWithGenerator(t *testing.T) {
	b, err := cfgTestAll()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ConfigSchema("all", b)
	if err != nil {
		t.Fatal(err)
	}
	sch := compileSchema(t, out)
	const base = `{"s": "x", "b": true, "i": 1, "i8": -128, "I16": 2, "u8": 255, "f32": 1.5, "level": "high",
		"strs": ["a"], "map": {"k": 1}, "ptr": 3, "inner": {"name": "n"}, "-": "dash", "NoTag": "t", "shared": 4, "Base2": "b2"}`
	tests := []struct {
		name     string
		set      string // members to set in base, as a JSON object
		del      string // a member to delete from base
		schemaOK bool
		genOK    bool
		why      string // why the verdicts differ
	}{
		{name: "base", set: `{}`, schemaOK: true, genOK: true},
		{name: "every optional", set: `{"i32": 1, "i64": -1, "u": 1, "u16": 1, "u32": 1, "u64": 18446744073709551615, "f64": 1e300, "bytes": [0, 255], "arr": [1, 2], "level_map": {"low": true}, "ptr_struct": {"name": "p"}, "inners": [{"name": "a"}], "other_inner": {"v": 1}, "tree": {"label": "a", "children": [{"label": "b", "children": null}]}, "any": {"x": [1, null]}, "dur": 5, "zero": "z"}`, schemaOK: true, genOK: true},
		{name: "nulls where Go has nil", set: `{"strs": null, "map": null, "ptr": null, "ptr_struct": null, "self": null, "any": null}`, schemaOK: true, genOK: true},
		{name: "unknown key", set: `{"nope": 1}`},
		{name: "string for an int", set: `{"i": "1"}`},
		{name: "int8 overflow", set: `{"i8": 128}`},
		{name: "negative uint8", set: `{"u8": -1}`},
		{name: "uint64 overflow", set: `{"u64": 18446744073709551616}`},
		{name: "float32 overflow", set: `{"f32": 1e39}`},
		{name: "float64 overflow", set: `{"f64": 1e400}`},
		{name: "fraction for an int", set: `{"i": 1.5}`},
		{name: "array too long", set: `{"arr": [1, 2, 3]}`},
		{name: "base64 bytes", set: `{"bytes": "AAE="}`},
		{name: "non-string-key map", set: `{"int_map": {"1": "a"}}`},
		{name: "nested unknown key", set: `{"tree": {"label": "a", "children": [{"lbl": "b"}]}}`},
		{name: "wrong kind in other package's struct", set: `{"other_inner": {"v": "1"}}`},
		{name: "self-decoding type", set: `{"raw": {}}`},
		{name: "text unmarshaler", set: `{"text": "x"}`},
		{name: "anonymous struct", set: `{"anon": {"A": 1}}`},
		{name: "non-empty interface", set: `{"iface": {}}`},
		{name: "unexported type", set: `{"hidden": {"X": 1}}`},
		{name: "complex", set: `{"c": 1}`},
		{name: "missing required key", del: "s", genOK: true, why: "the schema requires fields without omitempty; the generator leaves them zero"},
		{name: "key in another case", set: `{"S": "x"}`, del: "s", genOK: true, why: "encoding/json matches keys case-insensitively; the schema wants them exact"},
		{name: "null for an int", set: `{"i": null}`, genOK: true, why: "null leaves a non-nilable field zero; the schema offers null only where Go has nil"},
		{name: "integer written 1.0", set: `{"i": 1.0}`, schemaOK: true, why: "a JSON Schema cannot see number text: 1.0 is an integer to it"},
		{name: "time.Time", set: `{"when": "2024-05-01T10:00:00Z"}`, schemaOK: true, genOK: true},
		{name: "time.Time with an offset", set: `{"when": "2024-05-01T10:00:00.5+02:00"}`, schemaOK: true, genOK: true},
		{name: "time.Time not RFC 3339", set: `{"when": "May 1st"}`, why: "the schema's date-time format is an annotation in draft 2020-12, not an assertion", schemaOK: true},
		{name: "time.Time of the wrong kind", set: `{"when": 5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.schemaOK != tt.genOK) != (tt.why != "") {
				t.Fatal("a case whose verdicts differ must say why, and only such a case")
			}
			cfg := map[string]json.RawMessage{}
			if err := json.Unmarshal([]byte(base), &cfg); err != nil {
				t.Fatal(err)
			}
			if tt.del != "" {
				delete(cfg, tt.del)
			}
			if tt.set != "" {
				set := map[string]json.RawMessage{}
				if err := json.Unmarshal([]byte(tt.set), &set); err != nil {
					t.Fatal(err)
				}
				for k, v := range set {
					cfg[k] = v
				}
			}
			raw, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			schemaErr := sch.Validate(unmarshalAny(t, raw))
			v, err := decodeJSON(raw)
			if err != nil {
				t.Fatal(err)
			}
			_, probs := boundLit(b.Type, v, "config")
			if (schemaErr == nil) != tt.schemaOK {
				t.Errorf("schema verdict: %v, want ok=%v", schemaErr, tt.schemaOK)
			}
			if (len(probs) == 0) != tt.genOK {
				t.Errorf("generator verdict: %v, want ok=%v", probs, tt.genOK)
			}
		})
	}
}

// TestConfigSchemaErrors checks that a binding that cannot be described
// fails with a message naming the binding, what is wrong and the fix.
func TestConfigSchemaErrors(t *testing.T) {
	dir := filepath.Join(moduleRoot(t), "testdata", "golden", "bound")
	const shop = "github.com/ilmek-go/ilmek/testdata/golden/bound/shop"
	tests := []struct {
		nodeType, goType string
		want             []string
	}{
		{"llm", shop + ".Nope", []string{"--config llm=" + shop + ".Nope", "has no type Nope", "full import path"}},
		{"llm", "example.com/absent.T", []string{"--config llm=example.com/absent.T", "package example.com/absent not found"}},
		{"llm", "[3]int", []string{"--config llm=[3]int", "array types are not bindable; use a slice"}},
		{"llm", "chan int", []string{"not a bindable type name"}},
		{"", shop + ".LLMOptions", []string{"the node type is empty", "--config NODETYPE=GOTYPE"}},
	}
	for _, tt := range tests {
		t.Run(tt.nodeType+"="+tt.goType, func(t *testing.T) {
			out, err := LoadConfigSchema(tt.nodeType, tt.goType, LoadConfig{Dir: dir})
			if err == nil {
				t.Fatalf("no error; schema:\n%s", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := ConfigSchema("x", Binding{Expr: "T"}); err == nil || !strings.Contains(err.Error(), "LoadBindings") {
		t.Errorf("a binding without a type: %v", err)
	}
}
