package gen

import (
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/skills"
	"github.com/ilmek-go/ilmek/spec"
)

// TestBuiltinFieldsMatch: the config types LoadBindings makes for the
// built-in node types without loading a package are the node families'
// own, field by field: name, Go type and tag, and no method (a method
// such as UnmarshalJSON would change how a config is checked).
func TestBuiltinFieldsMatch(t *testing.T) {
	real := map[string]reflect.Type{
		"mcp_tool":     reflect.TypeFor[mcp.ToolConfig](),
		"mcp_resource": reflect.TypeFor[mcp.ResourceConfig](),
		"a2a_call":     reflect.TypeFor[a2a.CallConfig](),
		"skill":        reflect.TypeFor[skills.SkillConfig](),
		"skills":       reflect.TypeFor[skills.CatalogConfig](),
	}
	if len(real) != len(BuiltinConfigs) || len(builtinFields) != len(BuiltinConfigs) {
		t.Fatalf("%d real types and %d described for %d BuiltinConfigs: add the new type to all three", len(real), len(builtinFields), len(BuiltinConfigs))
	}
	for typ, rt := range real {
		if got, want := BuiltinConfigs[typ], rt.PkgPath()+"."+rt.Name(); got != want {
			t.Errorf("BuiltinConfigs[%q] = %s, want %s", typ, got, want)
		}
		if n := reflect.PointerTo(rt).NumMethod(); n != 0 {
			t.Errorf("%s has %d methods; builtinType makes it without", rt, n)
		}
		named, ok := builtinType(typ, map[string]*types.Package{}).(*types.Named)
		if !ok {
			t.Fatalf("builtinType(%q) is not a named type", typ)
		}
		if err := emittable(named); err != nil {
			t.Errorf("builtinType(%q): %v", typ, err)
		}
		if got := named.Obj().Pkg().Path() + "." + named.Obj().Name(); got != BuiltinConfigs[typ] {
			t.Errorf("builtinType(%q) is %s, want %s", typ, got, BuiltinConfigs[typ])
		}
		st := named.Underlying().(*types.Struct)
		if st.NumFields() != rt.NumField() {
			t.Errorf("%s: %d fields described, the type has %d", rt, st.NumFields(), rt.NumField())
			continue
		}
		for i := range rt.NumField() {
			rf, f := rt.Field(i), st.Field(i)
			wantType := strings.ReplaceAll(rf.Type.String(), "interface {}", "any")
			if f.Name() != rf.Name || types.TypeString(f.Type(), nil) != wantType || st.Tag(i) != string(rf.Tag) {
				t.Errorf("%s field %d: described %s %s `%s`, the type has %s %s `%s`",
					rt, i, f.Name(), types.TypeString(f.Type(), nil), st.Tag(i), rf.Name, wantType, rf.Tag)
			}
		}
	}
}

// builtinChannelsDoc uses mcp_tool and skill with channels it does not
// declare (to, argumentsFrom, and skill's default "instructions").
const builtinChannelsDoc = `{"name": "g", "channels": {"x": {}},
  "nodes": [{"id": "t", "type": "mcp_tool", "config": {"server": "s", "tool": "x", "to": "nochan", "argumentsFrom": "nope"}},
    {"id": "s", "type": "skill", "config": {"skill": "pdf"}}],
  "edges": [{"from": "__start__", "to": "t"}, {"from": "t", "to": "s"}, {"from": "s", "to": "__end__"}]}`

// builtinChannelsErrors are the diagnostics of builtinChannelsDoc, as
// nodes.Check places them.
var builtinChannelsErrors = []string{
	`g.json:2:90: nodes[0].config.to: node "t" writes channel "nochan", which the document does not declare; declare the channel or name a declared one in "to"`,
	`g.json:2:117: nodes[0].config.argumentsFrom: node "t" reads channel "nope" (argumentsFrom), which the document does not declare; declare the channel or name a declared one`,
	`g.json:3:44: nodes[1].config: node "s" (type "skill") writes channel "instructions" by default, which the document does not declare; declare channel "instructions", or set "to" to a declared channel`,
}

// TestBuiltinChannelsChecked: Check and Generate report, placed, every
// channel a built-in node's config names (or writes by default) that the
// document does not declare, as nodes.Check does; a document declaring
// them passes, and a built-in type name bound to the application's own
// config type is not a built-in node and is not checked. The bindings
// are loaded in a directory outside any module: the built-in config types
// need no package load.
func TestBuiltinChannelsChecked(t *testing.T) {
	declared := strings.Replace(builtinChannelsDoc, `{"x": {}}`, `{"x": {}, "nochan": {}, "nope": {}, "instructions": {}}`, 1)
	app := types.NewPackage("example.com/app", "app")
	ownName := types.NewTypeName(token.NoPos, app, "ToolOptions", nil)
	var fields []*types.Var
	var tags []string
	for _, k := range []string{"Server", "Tool", "To", "ArgumentsFrom"} {
		fields = append(fields, types.NewField(token.NoPos, app, k, types.Typ[types.String], false))
		tags = append(tags, `json:"`+strings.ToLower(k[:1])+k[1:]+`"`)
	}
	own := types.NewNamed(ownName, types.NewStruct(fields, tags), nil)
	app.Scope().Insert(ownName)
	tests := []struct {
		name string
		doc  string
		// bindings: nil loads the defaults (the built-in config types).
		bindings *Bindings
		want     []string
	}{
		{"undeclared channels", builtinChannelsDoc, nil, builtinChannelsErrors},
		{"declared channels", declared, nil, nil},
		{"mcp_tool bound to the application's own type", strings.Replace(builtinChannelsDoc, `"type": "skill"`, `"type": "other"`, 1),
			&Bindings{Configs: map[string]Binding{"mcp_tool": {Expr: "example.com/app.ToolOptions", Type: own}}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, diags := spec.Decode("g.json", []byte(tc.doc))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			b := tc.bindings
			if b == nil {
				var diags spec.Diagnostics
				if b, diags = LoadBindings(g, BindingSpec{}, LoadConfig{Dir: t.TempDir()}); len(diags) > 0 {
					t.Fatalf("LoadBindings outside a module: %v", diags)
				}
			}
			opts := Options{Package: "g", Bindings: b}
			var got []string
			for _, d := range Check(g, opts) {
				if strings.Contains(d.Message, "channel") {
					got = append(got, d.String())
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Check:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			files, diags := Generate(g, opts)
			if tc.want != nil && (files != nil || len(diags.Errors()) != len(tc.want)) {
				t.Errorf("Generate: %d files, diagnostics %v; want none and the errors of Check", len(files), diags)
			}
			if tc.want == nil && diags.HasErrors() {
				t.Errorf("Generate: %v", diags)
			}
		})
	}
}

// TestBuiltinsOutsideModule: ilmekgen check and gen of a document using
// built-in node types work in a directory that is in no Go module (they
// failed loading the node families' packages), and check reports the
// undeclared channels.
func TestBuiltinsOutsideModule(t *testing.T) {
	dir := t.TempDir()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			t.Skipf("the temporary directory is inside the module of %s", d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	ok := strings.Replace(builtinChannelsDoc, `{"x": {}}`, `{"x": {}, "nochan": {}, "nope": {}, "instructions": {}}`, 1)
	for name, doc := range map[string]string{"g.json": builtinChannelsDoc, "ok.json": ok} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		want []string // stderr lines
		rc   int
	}{
		{[]string{"check", "g.json"}, builtinChannelsErrors, 1},
		{[]string{"check", "ok.json"}, nil, 0},
		{[]string{"-o", "okgraph", "-p", "okgraph", "ok.json"}, nil, 0},
	}
	for _, tc := range tests {
		stderr, rc := ilmekgen(t, dir, tc.args...)
		if got := strings.TrimSpace(stderr); rc != tc.rc || got != strings.Join(tc.want, "\n") {
			t.Errorf("ilmekgen %s: exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", strings.Join(tc.args, " "), rc, got, tc.rc, strings.Join(tc.want, "\n"))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "okgraph", "graph.gen.go")); err != nil {
		t.Errorf("gen wrote no package: %v", err)
	}
}
