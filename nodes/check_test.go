package nodes_test

import (
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/spec"
)

func TestCheck(t *testing.T) {
	doc := `{
  "name": "g",
  "channels": {"hits": {}, "question": {}, "instructions": {}},
  "nodes": [
    {"id": "search", "type": "mcp_tool", "config": {"server": "github", "tool": "github__search", "argumentsFrom": "query", "to": "hits"}},
    {"id": "readme", "type": "mcp_resource", "config": {"server": "github", "uri": "file:///README.md"}},
    {"id": "ask", "type": "a2a_call", "config": {"agent": "desk", "textFrom": "question", "to": "answr"}},
    {"id": "brief", "type": "skill", "config": {"skill": "pdf"}},
    {"id": "catalog", "type": "skills"},
    {"id": "mine", "type": "llm", "config": {"to": "nowhere"}}
  ],
  "edges": [{"from": "__start__", "to": "search"}, {"from": "search", "to": "__end__"}]
}`
	g, diags := spec.Decode("g.json", []byte(doc))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range nodes.Check(g) {
		got = append(got, d.String())
	}
	want := []string{
		`g.json:5:116: nodes[0].config.argumentsFrom: node "search" reads channel "query" (argumentsFrom), which the document does not declare; declare the channel or name a declared one`,
		`g.json:6:56: nodes[1].config: node "readme" (type "mcp_resource") writes channel "result" by default, which the document does not declare; declare channel "result", or set "to" to a declared channel`,
		`g.json:7:97: nodes[2].config.to: node "ask" writes channel "answr", which the document does not declare; declare the channel or name a declared one in "to"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
