package nodes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/runtime"
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
    {"id": "mine", "type": "llm", "config": {"to": "nowhere"}},
    {"id": "blank", "type": "a2a_call", "config": {"agent": "desk", "text": "hi", "textFrom": "", "to": ""}}
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
		// Empty names, which the factory refuses only when the graph is built.
		`g.json:11:95: nodes[6].config.textFrom: node "blank": "textFrom" is an empty channel name; name a declared channel, or leave "textFrom" out`,
		`g.json:11:105: nodes[6].config.to: node "blank": "to" is an empty channel name; name a declared channel, or leave "to" out to write "result"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDiagnose(t *testing.T) {
	doc := `{
  "name": "g",
  "channels": {"hits": {}},
  "nodes": [
    {"id": "search", "type": "probe", "config": {"server": "gitlab", "to": "hits"}},
    {"id": "typo", "type": "probe", "config": {"servr": "github"}},
    {"id": "broken", "type": "probe", "config": {"server": "boom"}},
    {"id": "fine", "type": "probe", "config": {"server": "github"}},
    {"id": "other", "type": "mcp_resource", "config": {"server": "github", "uri": "file:///a"}}
  ],
  "edges": [{"from": "__start__", "to": "search"}, {"from": "search", "to": "__end__"}]
}`
	g, diags := spec.Decode("g.json", []byte(doc))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	reg := runtime.Registry{"probe": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct {
			Server string `json:"server"`
			To     string `json:"to,omitempty"`
		}
		if err := runtime.DecodeConfig(n, &cfg); err != nil {
			return nil, err
		}
		switch cfg.Server {
		case "github":
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
		case "boom":
			return nil, errors.New("the server is down")
		}
		return nil, &nodes.ConfigError{Node: n.ID, Type: n.Type, Path: "config.server", Msg: "names an unknown server", Fix: "connect it", Err: nodes.ErrUnknownName}
	}}
	var got []string
	for _, d := range nodes.Diagnose(g, reg) {
		got = append(got, d.String())
	}
	want := []string{
		`g.json:5:60: nodes[0].config.server: node "search": config.server names an unknown server; connect it`,
		`g.json:6:57: nodes[1].config.servr: node "typo": config.servr: key "servr" is not a field`,
		`g.json:7:30: nodes[2].type: node "broken": the server is down`,
		`g.json:9:55: nodes[4].config: node "other" (type "mcp_resource") writes channel`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("diagnostic %d:\n got %s\nwant %s…", i, got[i], want[i])
		}
	}
}

// TestDiagnoseReportsAnEmptyNameOnce: an empty channel name that the
// factory refuses and Check finds too is one diagnostic, the factory's.
func TestDiagnoseReportsAnEmptyNameOnce(t *testing.T) {
	g, diags := spec.Decode("g.json", []byte(`{"name": "g", "channels": {"result": {}},
  "nodes": [{"id": "r", "type": "mcp_resource", "config": {"server": "github", "uri": "file:///a", "to": ""}}],
  "edges": [{"from": "__start__", "to": "r"}, {"from": "r", "to": "__end__"}]}`))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	reg := runtime.Registry{"mcp_resource": func(n spec.Node) (runtime.NodeFunc, error) {
		return nil, &nodes.ConfigError{Node: n.ID, Type: n.Type, Path: "config.to", Msg: "is an empty channel name", Fix: "name the channel to write"}
	}}
	got := nodes.Diagnose(g, reg)
	if len(got) != 1 || got[0].Path != "nodes[0].config.to" || !strings.Contains(got[0].Message, "config.to is an empty channel name") {
		t.Errorf("diagnostics %v, want the factory's one at nodes[0].config.to", got)
	}
}
