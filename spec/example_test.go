package spec_test

import (
	"fmt"

	"github.com/ilmek-go/ilmek/spec"
)

func ExampleDecode() {
	doc := `{
  "name": "support",
  "channels": { "messages": { "reducer": "append" } },
  "nodes": [ { "id": "agent", "type": "llm" } ],
  "edges": [
    { "from": "__start__", "to": "agent" },
    { "from": "agent", "to": "__end__", "wen": { "channel": "intent", "eq": "stop" } },
    { "from": "agent", "to": "checkout", "when": { "channel": "intent", "eq": "buy" } }
  ]
}`
	g, diags := spec.Decode("support.json", []byte(doc))
	for _, d := range diags {
		fmt.Println(d)
	}
	fmt.Println("accepted:", g != nil)
	// Output:
	// support.json:7:41: edges[1].wen: unknown member "wen" in edge "agent" -> "__end__"; did you mean "when"? the known members here are from, to, when; put a builder's own data in a member named "x-…"; a member of a newer version of the format needs a newer ilmek
	// support.json:8:30: edges[2].to: edge "agent" -> unknown node "checkout"; declare a node with that id, or point the edge at an existing node
	// support.json:8:63: edges[2].when.channel: predicate references channel "intent", which this spec does not declare; declare it under "channels", e.g. "intent": {}
	// accepted: false
}

func ExampleGraph_Encode() {
	g := &spec.Graph{
		Name:     "support",
		NameKind: spec.Set,
		Channels: []spec.Channel{{Name: "intent"}, {Name: "messages", Reducer: spec.Append}},
		Nodes:    []spec.Node{{ID: "agent", Type: "llm", Config: []byte(`{"tools":["search"],"model":"m"}`)}},
		Edges: []spec.Edge{
			{From: spec.Start, To: "agent"},
			{From: "agent", To: spec.End, When: &spec.Predicate{
				Channel: "intent", Op: spec.OpEq, Value: spec.Literal{Kind: spec.LitString, Str: "buy"},
			}},
		},
	}
	fmt.Print(string(g.Encode()))
	// Output:
	// {
	//   "name": "support",
	//   "channels": {
	//     "intent": {},
	//     "messages": {
	//       "reducer": "append"
	//     }
	//   },
	//   "nodes": [
	//     {
	//       "id": "agent",
	//       "type": "llm",
	//       "config": {
	//         "model": "m",
	//         "tools": [
	//           "search"
	//         ]
	//       }
	//     }
	//   ],
	//   "edges": [
	//     {
	//       "from": "__start__",
	//       "to": "agent"
	//     },
	//     {
	//       "from": "agent",
	//       "to": "__end__",
	//       "when": {
	//         "channel": "intent",
	//         "eq": "buy"
	//       }
	//     }
	//   ]
	// }
}

func ExampleGraph_Pos() {
	doc := `{
  "nodes": [
    { "id": "agent", "type": "llm", "config": { "model": "gpt", "tools": ["search", "shell"] } }
  ],
  "edges": [ { "from": "__start__", "to": "agent" } ]
}`
	g, _ := spec.Decode("agent.json", []byte(doc))
	// A code generator reports its own finding at the document's position.
	path := spec.PathIndex("nodes[0].config.tools", 1)
	fmt.Printf("%s: %s: tool \"shell\" is not allowed\n", g.Pos(path), path)
	// Output:
	// agent.json:3:85: nodes[0].config.tools[1]: tool "shell" is not allowed
}

func ExampleJSONEqual() {
	eq, err := spec.JSONEqual(
		[]byte(`{"n": 1.0, "big": 12345678901234567890123, "s": "\u00e9"}`),
		[]byte(`{"s": "é", "big": 1.2345678901234567890123e22, "n": 1}`))
	fmt.Println(eq, err)
	eq, _ = spec.JSONEqual([]byte(`9007199254740993`), []byte(`9007199254740992`))
	fmt.Println(eq)
	// Output:
	// true <nil>
	// false
}
