package gen

import (
	"github.com/dave/jennifer/jen"

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
