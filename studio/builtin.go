package studio

import (
	"embed"
	"encoding/json"

	"github.com/ilmek-go/ilmek/spec"
)

// The built-in node types' config schemas, written by ilmekgen at go
// generate time (the studio does not import gen or the node packages).
//
//go:generate sh -c "go tool ilmekgen schema --config mcp_tool=github.com/ilmek-go/ilmek/nodes/mcp.ToolConfig > builtin/mcp_tool.jsonschema"
//go:generate sh -c "go tool ilmekgen schema --config mcp_resource=github.com/ilmek-go/ilmek/nodes/mcp.ResourceConfig > builtin/mcp_resource.jsonschema"
//go:generate sh -c "go tool ilmekgen schema --config a2a_call=github.com/ilmek-go/ilmek/nodes/a2a.CallConfig > builtin/a2a_call.jsonschema"
//go:generate sh -c "go tool ilmekgen schema --config skill=github.com/ilmek-go/ilmek/nodes/skills.SkillConfig > builtin/skill.jsonschema"
//go:generate sh -c "go tool ilmekgen schema --config skills=github.com/ilmek-go/ilmek/nodes/skills.CatalogConfig > builtin/skills.jsonschema"
//go:embed builtin/*.jsonschema
var builtinSchemas embed.FS

// builtins describe the node types of the engine's packages (nodes/mcp,
// nodes/a2a, nodes/skills) and the runtime's "subgraph" (whose schema
// spec.SubgraphConfigSchema gives, what `ilmekgen schema --config
// subgraph` prints): a registry type of one of these names that
// Config.NodeTypes does not describe is listed with this description and
// its config schema, marked Builtin.
var builtins = map[string]NodeType{
	"mcp_tool":     {Category: "mcp", Description: "Calls a tool of an MCP server"},
	"mcp_resource": {Category: "mcp", Description: "Reads a resource of an MCP server"},
	"a2a_call":     {Category: "a2a", Description: "Sends a message to an A2A agent and keeps its answer"},
	"skill":        {Category: "skills", Description: "Writes one skill's instructions to a channel"},
	"skills":       {Category: "skills", Description: "Writes the catalog of skills to a channel"},
	"subgraph":     {Category: "subgraphs", Description: "Runs another published graph to its end, mapping channels in and out"},
}

// builtin returns the description of a built-in type, if name is one.
func builtin(name string) (NodeType, bool) {
	t, ok := builtins[name]
	if !ok {
		return NodeType{}, false
	}
	t.Type, t.Builtin = name, true
	if name == spec.SubgraphType {
		t.ConfigSchema = json.RawMessage(spec.SubgraphConfigSchema())
	} else if b, err := builtinSchemas.ReadFile("builtin/" + name + ".jsonschema"); err == nil {
		t.ConfigSchema = json.RawMessage(b)
	}
	return t, true
}
