package mcp_test

import (
	"context"
	"fmt"
	"maps"

	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
	"github.com/ilmek-go/ilmek/runtime"
)

// A document names an MCP tool; the registry resolves it against the
// connected toolbox when the graph is built, and the call is journaled.
func ExampleRegistry() {
	ctx := context.Background()
	script, _ := mcptest.Load("../../conformance/testdata/upstream/mcp/server.json")
	gh, err := mcp.Connect(ctx, "github", mcptest.NewSession(script)) // any mcp.Session: mcpsdk adapts the official SDK's
	if err != nil {
		fmt.Println(err)
		return
	}
	doc := []byte(`{
  "name": "triage",
  "channels": {"query": {}, "hits": {}},
  "nodes": [{"id": "search", "type": "mcp_tool",
             "config": {"server": "github", "tool": "github__search", "argumentsFrom": "query", "to": "hits", "text": true}}],
  "edges": [{"from": "__start__", "to": "search"}, {"from": "search", "to": "__end__"}]
}`)
	reg := runtime.Registry{}
	maps.Copy(reg, mcp.Registry(gh))
	g, err := runtime.Load("triage.json", doc, reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := g.Invoke(ctx, runtime.Values{"query": map[string]any{"q": "ilmek"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.State["hits"])
	// Output:
	// 3 results
	// ilmek, mekik, chativa
}
