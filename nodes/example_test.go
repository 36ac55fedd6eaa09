package nodes_test

import (
	"fmt"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/spec"
)

// Check finds a built-in node whose config names a channel the document
// does not declare, before anything runs.
func ExampleCheck() {
	doc, diags := spec.Decode("agent.json", []byte(`{
  "name": "agent",
  "channels": {"messages": {"reducer": "append"}},
  "nodes": [{"id": "search", "type": "mcp_tool", "config": {"server": "web", "tool": "search", "argumentsFrom": "query", "to": "results"}}],
  "edges": [{"from": "__start__", "to": "search"}, {"from": "search", "to": "__end__"}]
}`))
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	for _, d := range nodes.Check(doc) {
		fmt.Println(d)
	}
	// Output:
	// agent.json:4:113: nodes[0].config.argumentsFrom: node "search" reads channel "query" (argumentsFrom), which the document does not declare; declare the channel or name a declared one
	// agent.json:4:128: nodes[0].config.to: node "search" writes channel "results", which the document does not declare; declare the channel or name a declared one in "to"
}
