package gen

import (
	"go/token"
	"go/types"
	"path"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/spec"
)

// BuiltinConfigs are the Go types of the configs of the built-in node
// types (the families of package nodes), by node type. LoadBindings binds
// every one a document uses unless the bindings bind it otherwise, so
// their configs are typed and checked when the package is generated (an
// unknown field is a placed error), and the generated Nodes has no method
// for them: its one method Builtins returns the registry the application
// builds over what it connected (mcp.Registry, a2a.Registry,
// skills.Registry), and New builds those nodes with it.
var BuiltinConfigs = map[string]string{
	"mcp_tool":     nodesPath + "/mcp.ToolConfig",
	"mcp_resource": nodesPath + "/mcp.ResourceConfig",
	"a2a_call":     nodesPath + "/a2a.CallConfig",
	"skill":        nodesPath + "/skills.SkillConfig",
	"skills":       nodesPath + "/skills.CatalogConfig",
}

// builtinField is one field of a config type of BuiltinConfigs.
type builtinField struct {
	name, typ, tag string // typ: string, bool, *string or map[string]any
}

// builtinFields are the fields of the config types of BuiltinConfigs as
// the node families declare them (TestBuiltinFieldsMatch holds the two
// equal). LoadBindings binds a built-in type from them without loading its
// package, so a document using one is checked in any directory, inside a
// Go module or not.
var builtinFields = map[string][]builtinField{
	"mcp_tool": {
		{"Server", "string", `json:"server"`},
		{"Tool", "string", `json:"tool"`},
		{"Arguments", "map[string]any", `json:"arguments,omitempty"`},
		{"ArgumentsFrom", "string", `json:"argumentsFrom,omitempty"`},
		{"To", "string", `json:"to,omitempty"`},
		{"Text", "bool", `json:"text,omitempty"`},
	},
	"mcp_resource": {
		{"Server", "string", `json:"server"`},
		{"URI", "string", `json:"uri"`},
		{"To", "string", `json:"to,omitempty"`},
	},
	"a2a_call": {
		{"Agent", "string", `json:"agent"`},
		{"Text", "*string", `json:"text,omitempty"`},
		{"TextFrom", "string", `json:"textFrom,omitempty"`},
		{"ContextFrom", "string", `json:"contextFrom,omitempty"`},
		{"TaskFrom", "string", `json:"taskFrom,omitempty"`},
		{"To", "string", `json:"to,omitempty"`},
		{"TextOnly", "bool", `json:"textOnly,omitempty"`},
	},
	"skill": {
		{"Skill", "string", `json:"skill"`},
		{"To", "string", `json:"to,omitempty"`},
	},
	"skills": {
		{"To", "string", `json:"to,omitempty"`},
		{"Intro", "*string", `json:"intro,omitempty"`},
	},
}

// builtinType returns the Go type of the config of built-in node type typ
// (BuiltinConfigs[typ]) built from builtinFields, or nil when typ is not
// built in. pkgs holds the packages already made, by path, so the types
// of one family share theirs.
func builtinType(typ string, pkgs map[string]*types.Package) types.Type {
	expr, ok := BuiltinConfigs[typ]
	if !ok {
		return nil
	}
	dot := strings.LastIndexByte(expr, '.')
	pkgPath, name := expr[:dot], expr[dot+1:]
	pkg := pkgs[pkgPath]
	if pkg == nil {
		pkg = types.NewPackage(pkgPath, path.Base(pkgPath))
		pkgs[pkgPath] = pkg
	}
	str, boolean := types.Typ[types.String], types.Typ[types.Bool]
	var fields []*types.Var
	var tags []string
	for _, f := range builtinFields[typ] {
		var t types.Type
		switch f.typ {
		case "string":
			t = str
		case "bool":
			t = boolean
		case "*string":
			t = types.NewPointer(str)
		case "map[string]any":
			t = types.NewMap(str, types.Universe.Lookup("any").Type())
		default:
			panic("gen: builtinFields: unsupported type " + f.typ)
		}
		fields = append(fields, types.NewField(token.NoPos, pkg, f.name, t, false))
		tags = append(tags, f.tag)
	}
	obj := types.NewTypeName(token.NoPos, pkg, name, nil)
	named := types.NewNamed(obj, types.NewStruct(fields, tags), nil)
	pkg.Scope().Insert(obj) // declared at package level, as the family declares it
	return named
}

// checkBuiltinChannels adds to d what nodes.Check reports of g's nodes of
// the built-in types the model builds with Nodes.Builtins: every channel
// their configs name (or write by default) that g does not declare, which
// their factories, seeing one node, cannot know. A built-in type bound to
// another config type is the application's own and is not checked.
func (m *model) checkBuiltinChannels(g *spec.Graph, d *diags) {
	builtin := map[string]bool{}
	for _, t := range m.types {
		if t.builtin {
			builtin[t.name] = true
		}
	}
	if len(builtin) == 0 {
		return
	}
	view := g
	for i, n := range g.Nodes {
		if _, ok := BuiltinConfigs[n.Type]; !ok || builtin[n.Type] {
			continue
		}
		if view == g {
			// Hide the application's own nodes of a built-in type name,
			// keeping indexes, so the positions stay the document's.
			c := *g
			c.Nodes = append([]spec.Node(nil), g.Nodes...)
			view = &c
		}
		view.Nodes[i].Type = ""
	}
	d.list = append(d.list, nodes.Check(view)...)
}

// BuiltinsMethod is the method of a generated Nodes that returns the
// registry of the built-in node types.
const BuiltinsMethod = "Builtins"

// nodesPath is the import path of the built-in node families.
const nodesPath = "github.com/ilmek-go/ilmek/nodes"

// WithBuiltins returns b with the configs of the built-in node types g
// uses bound to BuiltinConfigs, except those b binds itself.
func WithBuiltins(g *spec.Graph, b BindingSpec) BindingSpec {
	var add []string
	for _, n := range g.Nodes {
		if _, ok := BuiltinConfigs[n.Type]; !ok {
			continue
		}
		if _, bound := b.Configs[n.Type]; !bound {
			add = append(add, n.Type)
		}
	}
	if len(add) == 0 {
		return b
	}
	out := BindingSpec{Channels: b.Channels, Configs: make(map[string]string, len(b.Configs)+len(add))}
	for k, v := range b.Configs {
		out.Configs[k] = v
	}
	for _, t := range add {
		out.Configs[t] = BuiltinConfigs[t]
	}
	return out
}

// hasBuiltins reports whether a node type of the model is built in.
func (m *model) hasBuiltins() bool {
	for _, t := range m.types {
		if t.builtin {
			return true
		}
	}
	return false
}

// builtinsMethod is the Nodes method that returns the built-in types'
// registry.
func builtinsMethod() *jen.Statement {
	return jen.Id(BuiltinsMethod).Params().Qual(runtimePath, "Registry")
}

// builtinAdd builds built-in node n with the registry Builtins returns,
// from the config the spec stores (checked against its type when
// generated).
func builtinAdd(n *nodeModel) jen.Code {
	return jen.Id("b").Dot("Add").Call(jen.Int().Call(jen.Id(n.konst)), jen.Lit(n.typ.method)).Call(
		jen.Id("adapter").Dot("Registry").Call(jen.Id("n").Dot(BuiltinsMethod).Call(), jen.Int().Call(jen.Id(n.konst))))
}
