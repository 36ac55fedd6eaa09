package mcptest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
)

// A scripted MCP server as a session for tests: the tools it lists and
// what each call answers; Reduce connects it as the toolbox "github" and
// calls every exposed tool, as the conformance suite compares them.
func ExampleNewSession() {
	s, err := mcptest.Parse([]byte(`{
  "tools": [{"name": "search", "description": "Search repositories.", "inputSchema": {"type": "object"}}],
  "calls": {"search": {"content": [{"type": "text", "text": "3 results"}]}},
  "resources": [{"uri": "repo://readme", "name": "README"}],
  "resourceContents": {"repo://readme": [{"uri": "repo://readme", "text": "# README"}]}
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := mcptest.Reduce(context.Background(), mcptest.NewSession(s))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := json.Marshal(map[string]any{"tools": out["tools"], "calls": out["calls"], "resource": out["resource"]})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"calls":{"github__search":{"text":"3 results","isError":false,"content":[{"type":"text","text":"3 results"}]}},"resource":"# README","tools":[{"name":"github__search","remoteName":"search","description":"Search repositories.","inputSchema":{"type":"object"}}]}
}
