package spec

import (
	"strings"
	"testing"
)

// goGraph is a valid graph built in Go.
func goGraph() *Graph {
	return &Graph{
		Name:     "built",
		NameKind: Set,
		Channels: []Channel{{Name: "intent"}, {Name: "messages", Reducer: Append}},
		Nodes: []Node{
			{ID: "agent", Type: "llm", Config: []byte(`{"model": "m"}`)},
			{ID: "checkout", Type: "http"},
		},
		Edges: []Edge{
			{From: Start, To: "agent"},
			{From: "agent", To: "checkout", When: &Predicate{Channel: "intent", Op: OpEq, Value: Literal{Kind: LitString, Str: "buy"}}},
			{From: "checkout", To: End},
			{From: "agent", To: End, When: new(Neq("intent", "buy"))},
		},
	}
}

func TestValidateGoGraph(t *testing.T) {
	g := goGraph()
	if ds := g.Validate(); len(ds) != 0 {
		t.Fatalf("a valid graph gets diagnostics:\n%s", dump(ds))
	}
	d, ds := Decode("built.json", g.Encode())
	if d == nil || len(ds) != 0 || !Equal(g, d) {
		t.Fatalf("the encoding does not decode back:\n%s\n%s", dump(ds), g.Encode())
	}
}

func TestValidateRules(t *testing.T) {
	cases := []struct {
		name   string
		change func(g *Graph)
		sev    Severity
		path   string
		msg    string
	}{
		{"unknown reducer", func(g *Graph) { g.Channels[0].Reducer = "sum" }, SeverityError, "channels.intent.reducer", `channel "intent": unknown reducer "sum"`},
		{"unsorted channels", func(g *Graph) { g.Channels[0], g.Channels[1] = g.Channels[1], g.Channels[0] }, SeverityError, "channels.intent", `channel "intent" is out of order`},
		{"channel twice", func(g *Graph) { g.Channels[1].Name = "intent" }, SeverityError, "channels.intent", `channel "intent" is declared twice`},
		{"empty channel name", func(g *Graph) { g.Channels = append([]Channel{{}}, g.Channels...) }, SeverityError, `channels[""]`, "channel name is empty"},
		{"missing id", func(g *Graph) { g.Nodes[1].ID = "" }, SeverityError, "nodes[1].id", "node id is missing or empty"},
		{"missing type", func(g *Graph) { g.Nodes[1].Type = "" }, SeverityError, "nodes[1].type", `node "checkout" has no type`},
		{"duplicate id", func(g *Graph) { g.Nodes[1].ID = "agent" }, SeverityError, "nodes[1].id", `duplicate node "agent" (first declared at nodes[0].id)`},
		{"reserved id", func(g *Graph) { g.Nodes[1].ID = Start }, SeverityError, "nodes[1].id", `node id "__start__" is reserved`},
		{"config not JSON", func(g *Graph) { g.Nodes[0].Config = []byte(`{"a":`) }, SeverityError, "nodes[0].config", "nodes[0].config is not well-formed JSON: unexpected end of document"},
		{"config array", func(g *Graph) { g.Nodes[0].Config = []byte(`[1]`) }, SeverityError, "nodes[0].config", "node config must be an object or null, not an array"},
		{"config duplicate key", func(g *Graph) { g.Nodes[0].Config = []byte(`{"a": 1, "a": 2}`) }, SeverityError, "nodes[0].config", `duplicate key "a"`},
		{"extra not JSON", func(g *Graph) { g.Nodes[0].Extra = Extra{"x": []byte(`nope`)} }, SeverityError, "nodes[0].x", "nodes[0].x is not well-formed JSON"},
		{"extra shadows", func(g *Graph) { g.Edges[0].Extra = Extra{"when": []byte(`1`)} }, SeverityError, "edges[0].when", `Extra member "when" of edge "__start__" -> "agent" shadows a known member`},
		{"extra refused", func(g *Graph) { g.Extra = Extra{"nodez": []byte(`1`)} }, SeverityError, "nodez", `unknown member "nodez" in the document`},
		{"predicate extra refused", func(g *Graph) { g.Edges[1].When.Extra = Extra{"note": []byte(`1`)} }, SeverityError, "edges[1].when.note", `unknown member "note" in predicate`},
		{"from unknown", func(g *Graph) { g.Edges[2].From = "ghost" }, SeverityError, "edges[2].from", `edge from unknown node "ghost" -> "__end__"`},
		{"to unknown", func(g *Graph) { g.Edges[1].To = "ghost" }, SeverityError, "edges[1].to", `edge "agent" -> unknown node "ghost"`},
		{"from end", func(g *Graph) { g.Edges[2].From = End }, SeverityError, "edges[2].from", "an edge cannot leave __end__"},
		{"to start", func(g *Graph) { g.Edges[2].To = Start }, SeverityError, "edges[2].to", "an edge cannot reach __start__"},
		{"no entry", func(g *Graph) { g.Edges = g.Edges[1:] }, SeverityError, "edges", "graph has no entry edge"},
		{"undeclared channel", func(g *Graph) { g.Edges[1].When.Channel = "missing" }, SeverityError, "edges[1].when.channel",
			`predicate references channel "missing", which this spec does not declare`},
		{"no operator", func(g *Graph) { g.Edges[1].When.Op = "" }, SeverityError, "edges[1].when", "predicate has no operator"},
		{"unknown operator", func(g *Graph) { g.Edges[1].When.Op = "equals" }, SeverityError, "edges[1].when", `predicate has unknown operator "equals"`},
		{"gt string", func(g *Graph) { g.Edges[1].When.Op = OpGt }, SeverityError, "edges[1].when.gt", "gt literal must be a number, not a string"},
		{"truthy number", func(g *Graph) {
			*g.Edges[1].When = Predicate{Channel: "intent", Op: OpTruthy, Value: Literal{Kind: LitNumber, Num: "1"}}
		},
			SeverityError, "edges[1].when.truthy", "truthy literal must be a boolean, not a number"},
		{"bad number", func(g *Graph) { g.Edges[1].When.Value = Literal{Kind: LitNumber, Num: "1,5"} }, SeverityError, "edges[1].when.eq", `eq literal has invalid number text "1,5"`},
		{"bad in element", func(g *Graph) {
			*g.Edges[1].When = Predicate{Channel: "intent", Op: OpIn, Values: []Literal{{Kind: 9}}}
		},
			SeverityError, "edges[1].when.in[0]", "in element literal has unknown kind 9"},
		{"values without in", func(g *Graph) { g.Edges[1].When.Values = []Literal{} }, SeverityError, "edges[1].when.eq", "eq takes one literal, but Values is set"},
		{"invalid UTF-8", func(g *Graph) { g.Nodes[0].Type = "ll\xffm" }, SeverityError, "nodes[0].type", "nodes[0].type is not valid UTF-8"},
		{"unreachable", func(g *Graph) { g.Edges[1].From = "checkout"; g.Edges[2].From = "agent" }, SeverityWarning, "nodes[1]", `node "checkout" is unreachable from __start__`},
		{"repeated edge", func(g *Graph) { g.Edges = append(g.Edges, g.Edges[0]) }, SeverityWarning, "edges[4]", `edge "__start__" -> "agent" repeats edges[0]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := goGraph()
			c.change(g)
			ds := g.Validate()
			found := false
			for _, d := range ds {
				if d.Path == c.path && strings.Contains(d.Message, c.msg) {
					found = true
					if d.Severity != c.sev {
						t.Errorf("severity %v, want %v", d.Severity, c.sev)
					}
					if d.Pos != (Pos{}) {
						t.Errorf("a Go-built graph gets position %+v", d.Pos)
					}
					if d.Hint == "" {
						t.Errorf("no hint")
					}
				}
			}
			if !found {
				t.Fatalf("no diagnostic at %s containing %q:\n%s", c.path, c.msg, dump(ds))
			}
			if c.sev == SeverityWarning && ds.HasErrors() {
				t.Errorf("errors besides the warning:\n%s", dump(ds))
			}
			// Whatever Validate says, Encode writes well-formed JSON.
			if _, err := JSONEqual(g.Encode(), g.Encode()); err != nil {
				t.Errorf("Encode wrote malformed JSON: %v\n%s", err, g.Encode())
			}
		})
	}
}

// A decoded graph keeps its positions for Validate.
func TestValidateDecodedKeepsPositions(t *testing.T) {
	g, ds := Decode("d.json", []byte("{\"nodes\": [{\"id\": \"a\", \"type\": \"t\"}],\n\"edges\": [{\"from\": \"__start__\", \"to\": \"a\"}]}"))
	if g == nil {
		t.Fatal(dump(ds))
	}
	g.Edges[0].To = "ghost"
	ds = g.Validate()
	if len(ds) != 2 || ds[0].Path != "nodes[0]" || ds[1].Path != "edges[0].to" || ds[1].Pos.String() != "d.json:2:39" {
		t.Errorf("got:\n%s", dump(ds))
	}
}

// Encode never writes malformed JSON, whatever a Go program put in a Graph.
func TestEncodeHostileGoGraph(t *testing.T) {
	g := &Graph{
		Name:     "bad\xff",
		NameKind: Null,
		Channels: []Channel{{Name: "b", Extra: Extra{"reducer": []byte(`"append"`)}}, {Name: "a"}},
		Nodes:    []Node{{ID: "n", Type: "t", Config: []byte(`{"a": 1, "a": 2}`), Extra: Extra{"x": []byte(`{]`), "y": nil}}},
		Edges: []Edge{{From: Start, To: "n", When: &Predicate{Channel: "a", Op: OpGt, Value: Literal{Kind: LitNumber, Num: "NaN"}}},
			{From: "n", To: End, When: &Predicate{Channel: "a", Op: OpIn, Values: []Literal{{Kind: 7}}}}},
	}
	enc := g.Encode()
	want := `{
  "name": "bad\ufffd",
  "channels": {
    "a": {},
    "b": {}
  },
  "nodes": [
    {
      "id": "n",
      "type": "t",
      "config": null,
      "x": null,
      "y": null
    }
  ],
  "edges": [
    {
      "from": "__start__",
      "to": "n",
      "when": {
        "channel": "a",
        "gt": null
      }
    },
    {
      "from": "n",
      "to": "__end__",
      "when": {
        "channel": "a",
        "in": [
          null
        ]
      }
    }
  ]
}
`
	if string(enc) != want {
		t.Errorf("Encode =\n%s\nwant\n%s", enc, want)
	}
	if ds := g.Validate(); len(ds.Errors()) < 6 {
		t.Errorf("Validate found too little:\n%s", dump(ds))
	}
}

// TestCoverageWarning: a node whose outgoing edges are all guarded, and do
// not together hold for every value, draws a placed warning naming the node
// and its guards; a static edge, truthy true with truthy false, or eq v with
// neq v (numbers by value) on one channel covers every value.
func TestCoverageWarning(t *testing.T) {
	const warn = "every outgoing edge is guarded"
	pay := func(edges ...Edge) *Graph {
		return &Graph{
			Channels: []Channel{{Name: "amount"}, {Name: "ok"}},
			Nodes:    []Node{{ID: "review", Type: "t"}, {ID: "pay", Type: "t"}},
			Edges:    append([]Edge{{From: Start, To: "review"}, {From: "pay", To: End}}, edges...),
		}
	}
	to := func(to string, p Predicate) Edge { return Edge{From: "review", To: to, When: &p} }
	tests := []struct {
		name string
		g    *Graph
		want string // "" for no warning, else a part of the message
	}{
		{"gt and lt leave the boundary", pay(to("pay", Gt("amount", 1000)), to(End, Lt("amount", 1000))),
			`node "review": every outgoing edge is guarded ("amount" gt 1000; "amount" lt 1000) and none may hold`},
		{"one guard", pay(to("pay", Truthy("ok", true))), `("ok" truthy true)`},
		{"in", pay(to("pay", In("amount", 1, 2))), `("amount" in [1, 2])`},
		{"eq and neq of different literals", pay(to("pay", Eq("amount", 1)), to(End, Neq("amount", 2))), warn},
		{"eq and neq on different channels", pay(to("pay", Eq("amount", 1)), to(End, Neq("ok", 1))), warn},
		{"truthy twice the same", pay(to("pay", Truthy("ok", true)), to(End, Truthy("ok", true))), warn},
		{"a static edge", pay(to("pay", Gt("amount", 1000)), Edge{From: "review", To: End}), ""},
		{"truthy true and false", pay(to("pay", Truthy("ok", true)), to(End, Truthy("ok", false))), ""},
		{"eq and neq", pay(to("pay", Neq("amount", 1000)), to(End, Eq("amount", 1000))), ""},
		{"eq and neq by value", pay(to("pay", Eq("amount", 1000)), to(End, Neq("amount", 1e3))), ""},
		{"eq and neq of null", pay(to("pay", Eq("ok", NullLit())), to(End, Neq("ok", NullLit()))), ""},
		// A guard in error is reported as such, not described here.
		{"an unknown operator", pay(to("pay", Predicate{Channel: "amount", Op: "gtx", Value: Gt("amount", 3).Value})), ""},
		{"a literal of the wrong kind", pay(to("pay", Predicate{Channel: "amount", Op: OpGt, Value: Literal{Kind: LitString, Str: "three"}})), ""},
		{"a bad guard beside a good one", pay(to("pay", Gt("amount", 3)), to(End, Predicate{Channel: "amount", Op: OpLt})), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []Diagnostic
			for _, d := range tc.g.Validate() {
				if strings.Contains(d.Message, warn) {
					got = append(got, d)
				}
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("warned: %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Severity != SeverityWarning || got[0].Path != "nodes[0]" || !strings.Contains(got[0].Message, tc.want) || !strings.Contains(got[0].Hint, `"to": "__end__"`) {
				t.Fatalf("got %v, want one warning at nodes[0] containing %q", got, tc.want)
			}
		})
	}
	// Placed in a decoded document, at the node.
	doc := `{"channels": {"amount": {}}, "nodes": [{"id": "review", "type": "t"}],
"edges": [{"from": "__start__", "to": "review"}, {"from": "review", "to": "__end__", "when": {"channel": "amount", "gt": 1000}}]}`
	g, ds := Decode("pay.json", []byte(doc))
	if g == nil || len(ds) != 1 || ds[0].Pos.Line != 1 || ds[0].Pos.Col != 40 {
		t.Errorf("decoded: %v", ds)
	}
}

// TestCoverageWarningDecoded: in a decoded document, a guard whose
// operator or literal the decoder refuses (an unknown operator, a literal
// of the wrong kind) draws its error and no coverage warning describing it
// (which printed a blank operator, or null for the literal); a valid guard
// is described as written, and so is one naming an undeclared channel.
func TestCoverageWarningDecoded(t *testing.T) {
	tests := []struct {
		name, when string
		want       []string
	}{
		{"unknown operator", `{"channel": "x", "gtx": 3}`, []string{
			`g.json:3:103: edges[1].when.gtx: predicate has unknown operator "gtx"; did you mean "gt"? a predicate holds "channel" and exactly one of eq, neq, in, gt, lt, truthy`}},
		{"wrong literal kind", `{"channel": "x", "gt": "three"}`, []string{
			`g.json:3:109: edges[1].when.gt: gt literal must be a number, not a string; write a JSON number without quotes, e.g. "gt": 3`}},
		{"eq of an object", `{"channel": "x", "eq": {}}`, []string{
			`g.json:3:109: edges[1].when.eq: eq literal must be a JSON scalar (string, number, boolean or null), not an object; predicates compare scalars only: compare a scalar channel, or use truthy`}},
		{"in of a number", `{"channel": "x", "in": 3}`, []string{
			`g.json:3:109: edges[1].when.in: in must be an array of scalars, not a number; write "in": ["a", "b"]`}},
		{"in with an array element", `{"channel": "x", "in": [1, []]}`, []string{
			`g.json:3:113: edges[1].when.in[1]: in element literal must be a JSON scalar (string, number, boolean or null), not an array; predicates compare scalars only: list strings, numbers, booleans or null`}},
		{"gt", `{"channel": "x", "gt": 3}`, []string{
			`g.json:2:13: nodes[0]: warning: node "a": every outgoing edge is guarded ("x" gt 3) and none may hold, so a run can end there; add an unguarded edge after them, e.g. {"from": "a", "to": "__end__"}, or cover every value (eq v with neq v)`}},
		{"eq", `{"channel": "x", "eq": "three"}`, []string{
			`g.json:2:13: nodes[0]: warning: node "a": every outgoing edge is guarded ("x" eq "three") and none may hold, so a run can end there; add an unguarded edge after them, e.g. {"from": "a", "to": "__end__"}, or cover every value (eq v with neq v)`}},
		{"in", `{"channel": "x", "in": [1, "b", null, true]}`, []string{
			`g.json:2:13: nodes[0]: warning: node "a": every outgoing edge is guarded ("x" in [1, "b", null, true]) and none may hold, so a run can end there; add an unguarded edge after them, e.g. {"from": "a", "to": "__end__"}, or cover every value (eq v with neq v)`}},
		{"an undeclared channel", `{"channel": "y", "eq": 1}`, []string{
			`g.json:2:13: nodes[0]: warning: node "a": every outgoing edge is guarded ("y" eq 1) and none may hold, so a run can end there; add an unguarded edge after them, e.g. {"from": "a", "to": "__end__"}, or cover every value (eq v with neq v)`,
			`g.json:3:98: edges[1].when.channel: predicate references channel "y", which this spec does not declare; declare it under "channels", e.g. "y": {}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"name": "g", "channels": {"x": {}},
  "nodes": [{"id": "a", "type": "t"}],
  "edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "__end__", "when": ` + tc.when + `}]}`
			_, ds := Decode("g.json", []byte(doc))
			var got []string
			for _, d := range ds {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
