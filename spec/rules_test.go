package spec

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// ruleCase is one decoding rule: a document that breaks it (a file of
// testdata/invalid, or inline) and the diagnostic it must give.
type ruleCase struct {
	file  string   // testdata/invalid/<file>.json
	doc   string   // the document, when file is ""
	opts  []Option // decode options
	sev   Severity
	path  string
	at    string // the diagnostic points at the first occurrence of at ...
	after string // ... after the first occurrence of after ("" = from the start)
	delta int    // ... plus delta bytes; at "$" means the end of the document
	pos   string // and, when set, at this line:col
	msg   string // a substring of the message
	hint  string // a substring of the hint
}

// The rules that testdata/invalid exercises, one row per file. Each of those
// documents must break exactly its named rule.
var invalidCases = []ruleCase{
	{file: "malformed-json", path: "nodes[0]", at: `"type"`, pos: "7:17", msg: `malformed JSON: invalid character '"', expecting ',' or '}'`},
	{file: "unexpected-end", path: "", at: "$", msg: "malformed JSON: unexpected end of document", hint: "cut short"},
	{file: "trailing-data", path: "", at: "{}", after: "]\n}", pos: "14:1", msg: "trailing data after the document"},
	{file: "duplicate-key", path: "name", at: `"name"`, after: `"base"`, pos: "3:3", msg: `duplicate key "name" (first at 2:3)`, hint: "remove one"},
	{file: "duplicate-key-in-config", path: "nodes[0].config.opts.k", at: `"k"`, after: `"k": 1`, msg: `duplicate key "k"`},
	{file: "not-an-object", path: "", at: "[", pos: "1:1", msg: "the document must be a JSON object, not an array"},
	{file: "name-not-string", path: "name", at: "42", pos: "2:11", msg: `"name" must be a string or null, not a number`},
	{file: "channels-not-object", path: "channels", at: "[", msg: `"channels" must be an object of channel name to channel, not an array`},
	{file: "channel-not-object", path: "channels.intent", at: `"last_write"`, msg: `channel "intent" must be an object, not a string`},
	{file: "reducer-not-string", path: "channels.intent.reducer", at: "1 }", msg: `channel "intent": reducer must be a string, not a number`, hint: "last_write, append, merge"},
	{file: "unknown-reducer", path: "channels.x.reducer", at: `"sum"`, pos: "4:23", msg: `channel "x": unknown reducer "sum"`, hint: "use one of last_write, append, merge"},
	{file: "unknown-reducer-empty", path: "channels.x.reducer", at: `""`, msg: `channel "x": unknown reducer ""`},
	{file: "empty-channel-name", path: `channels[""]`, at: "{}", after: `""`, msg: "channel name is empty"},
	{file: "nodes-not-array", path: "nodes", at: "{", after: `"nodes"`, msg: `"nodes" must be an array of nodes, not an object`},
	{file: "edges-not-array", path: "edges", at: "{", after: `"edges"`, msg: `"edges" must be an array of edges, not an object`},
	{file: "node-not-object", path: "nodes[1]", at: `"b"`, msg: "a node must be an object, not a string"},
	{file: "node-id-not-string", path: "nodes[1].id", at: "7", msg: "node id must be a string, not a number"},
	{file: "node-type-not-string", path: "nodes[0].type", at: `["t"]`, msg: "node type must be a string, not an array"},
	{file: "config-not-object", path: "nodes[0].config", at: "[1, 2]", msg: "node config must be an object or null, not an array"},
	{file: "node-id-missing", path: "nodes[1].id", at: `{ "type"`, msg: "node id is missing or empty"},
	{file: "node-id-empty", path: "nodes[1].id", at: `""`, msg: "node id is missing or empty"},
	{file: "node-type-missing", path: "nodes[0].type", at: `{ "id": "a" }`, msg: `node "a" has no type`},
	{file: "node-type-empty", path: "nodes[0].type", at: `""`, msg: `node "a" has no type`},
	{file: "duplicate-node-id", path: "nodes[1].id", at: `"a"`, after: `"t" },`, pos: "8:13", msg: `duplicate node "a" (first declared at nodes[0].id (7:13))`, hint: "unique"},
	{file: "reserved-node-id-start", path: "nodes[1].id", at: `"__start__", "type"`, msg: `node id "__start__" is reserved`},
	{file: "reserved-node-id-end", path: "nodes[1].id", at: `"__end__", "type"`, msg: `node id "__end__" is reserved`},
	{file: "edge-not-object", path: "edges[2]", at: `"a -> __end__"`, msg: "an edge must be an object, not a string"},
	{file: "edge-from-not-string", path: "edges[2].from", at: `["a"]`, msg: `edge "from" must be a string, not an array`},
	{file: "edge-to-not-string", path: "edges[2].to", at: "null", msg: `edge "to" must be a string, not null`},
	{file: "edge-from-missing", path: "edges[2].from", at: `{ "to": "a" }`, msg: `edge has no "from"`},
	{file: "edge-from-unknown", path: "edges[2].from", at: `"ghost"`, msg: `edge from unknown node "ghost" -> "a"`, hint: "declare a node"},
	{file: "edge-from-end", path: "edges[2].from", at: `"__end__", "to": "a"`, msg: `edge "__end__" -> "a": an edge cannot leave __end__`},
	{file: "edge-to-missing", path: "edges[2].to", at: `{ "from": "a" }`, msg: `edge has no "to"`},
	{file: "edge-to-unknown", path: "edges[2].to", at: `"ghost"`, pos: "12:26", msg: `edge "a" -> unknown node "ghost"`},
	{file: "edge-to-start", path: "edges[2].to", at: `"__start__" }`, msg: `edge "a" -> "__start__": an edge cannot reach __start__`},
	{file: "goto-not-array", path: "nodes[0].goto", at: `"b" }`, msg: "node goto must be an array of node ids, not a string", hint: `"goto": ["measure"]`},
	{file: "goto-target-not-string", path: "nodes[0].goto[1]", at: "7", msg: "goto target must be a string, not a number"},
	{file: "goto-empty", path: "nodes[0].goto", at: "[]", msg: `node "a": an empty goto list declares nothing`, hint: "leave the member out"},
	{file: "goto-unknown", path: "nodes[0].goto[0]", at: `"mesure"`, msg: `node "a": goto names unknown node "mesure"`, hint: `did you mean "measure"?`},
	{file: "goto-start", path: "nodes[0].goto[1]", at: `"__start__"`, msg: `node "a": goto cannot name __start__`},
	{file: "goto-duplicate", path: "nodes[0].goto[2]", at: `"b"`, after: `"__end__", `, msg: `node "a": goto lists "b" twice (first at nodes[0].goto[0] (4:40))`, hint: "once"},
	{file: "no-entry-edge", path: "edges", at: "[", after: `"edges"`, pos: "9:12", msg: "graph has no entry edge", hint: `"from": "__start__"`},
	{file: "no-entry-edge-no-edges", path: "edges", at: "{", pos: "1:1", msg: "graph has no entry edge"},
	{file: "when-not-object", path: "edges[1].when", at: `"intent == buy"`, msg: `edge "when" must be an object, not a string`},
	{file: "unknown-member-misspelt-when", path: "edges[1].whne", at: `"whne"`, pos: "9:39", msg: `unknown member "whne" in edge "approve" -> "pay"`, hint: `did you mean "when"?`},
	{file: "unknown-member-top", path: "retries", at: `"retries"`, msg: `unknown member "retries" in the document`, hint: "newer version of the format"},
	{file: "schema-not-string", path: "$schema", at: `"$schema"`, msg: `"$schema" must be a string`, hint: "ilmekgen schema prints it"},
	{file: "when-null", path: "edges[1].when", at: "null", msg: `edge "when" must be an object, not null`},
	{file: "predicate-channel-missing", path: "edges[1].when.channel", at: `{ "eq"`, msg: "predicate channel is missing or empty"},
	{file: "predicate-channel-empty", path: "edges[1].when.channel", at: `""`, msg: "predicate channel is missing or empty"},
	{file: "predicate-channel-not-string", path: "edges[1].when.channel", at: `["intent"]`, msg: "predicate channel must be a string, not an array"},
	{file: "predicate-undeclared-channel", path: "edges[1].when.channel", at: `"missing"`, pos: "11:58",
		msg: `predicate references channel "missing", which this spec does not declare`, hint: `declare it under "channels"`},
	{file: "predicate-no-operator", path: "edges[1].when", at: `{ "channel"`, msg: "predicate has no operator", hint: "eq, neq, in, gt, lt, truthy"},
	{file: "predicate-two-operators", path: "edges[1].when.neq", at: `"neq"`, msg: `predicate has more than one operator ("eq" and "neq")`, hint: "exactly one"},
	{file: "predicate-unknown-operator", path: "edges[1].when.equals", at: `"equals"`, msg: `predicate has unknown operator "equals"`, hint: `did you mean "eq"?`},
	{file: "eq-object-literal", path: "edges[1].when.eq", at: `{ "plan"`, msg: "eq literal must be a JSON scalar"},
	{file: "eq-array-literal", path: "edges[1].when.eq", at: "[1, 2]", msg: "eq literal must be a JSON scalar"},
	{file: "neq-object-literal", path: "edges[1].when.neq", at: "{} }", msg: "neq literal must be a JSON scalar"},
	{file: "in-not-array", path: "edges[1].when.in", at: `"buy"`, msg: "in must be an array of scalars, not a string"},
	{file: "in-element-object", path: "edges[1].when.in[1]", at: `{ "a": 1 }`, msg: "in element literal must be a JSON scalar"},
	{file: "in-element-array", path: "edges[1].when.in[0]", at: "[1, 2]", msg: "in element literal must be a JSON scalar"},
	{file: "gt-not-number", path: "edges[1].when.gt", at: `"4"`, msg: "gt literal must be a number, not a string"},
	{file: "lt-not-number", path: "edges[1].when.lt", at: "null", msg: "lt literal must be a number, not null"},
	{file: "truthy-not-boolean", path: "edges[1].when.truthy", at: "1 }", msg: "truthy literal must be a boolean, not a number"},
	{file: "lone-surrogate", path: "name", at: `\ud800`, msg: `malformed JSON: lone surrogate \ud800 in a string`},
	{file: "invalid-utf8", path: "name", at: "\xff", msg: "invalid UTF-8 byte 0xff"},
	{file: "control-character", path: "name", at: "\t", msg: "control character U+0009 in a string"},
	{file: "invalid-escape", path: "name", at: `\x41`, msg: `invalid escape "\\x" in a string`},
	{file: "leading-zero", path: "nodes[0].config.n", at: "007", msg: "leading zero"},
	{file: "depth-limit", path: "nodes[0].config.deep" + strings.Repeat("[0]", 60), at: "[[[", delta: 60,
		msg: "nesting deeper than 64 levels", hint: "Limits.MaxDepth"},
}

// The rules no file of testdata/invalid can show: limits set by options,
// warnings (which do not refuse a document) and the empty document.
var inlineCases = []ruleCase{
	{doc: `{"nodes": [], "edges": [{"from": "__start__", "to": "__end__"}]}`, opts: []Option{WithLimits(Limits{MaxBytes: 50})},
		path: "", pos: "1:1", msg: "the document is over the limit of 50 bytes", hint: "Limits.MaxBytes"},
	{doc: `{"nodes": [{"id": "a", "type": "t"}, {"id": "b", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}, {"from": "__start__", "to": "b"}]}`,
		opts: []Option{WithLimits(Limits{MaxNodes: 1})}, path: "nodes", at: "[", msg: "graph has 2 nodes, over the limit of 1", hint: "Limits.MaxNodes"},
	{doc: `{"nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "__end__"}]}`,
		opts: []Option{WithLimits(Limits{MaxEdges: 1})}, path: "edges", at: "[", after: `"edges"`, msg: "graph has 2 edges, over the limit of 1", hint: "Limits.MaxEdges"},
	{doc: `{"nodes": [{"id": "a", "type": "t", "config": {"a": {"b": 1}}}], "edges": [{"from": "__start__", "to": "a"}]}`,
		opts: []Option{WithLimits(Limits{MaxDepth: 4})}, path: "nodes[0].config.a", at: `{"b"`, msg: "nesting deeper than 4 levels"},
	{doc: "", path: "", pos: "1:1", msg: "malformed JSON: the document is empty"},
	{doc: " \n ", path: "", pos: "2:2", msg: "malformed JSON: the document is empty"},
	{doc: "\uFEFF{}", path: "", pos: "1:1", msg: "byte order mark"},
	{doc: `{"nodes": [1,]}`, path: "nodes[1]", at: "]", msg: "malformed JSON: invalid character ']', expecting a value"},
	{doc: `{"nodes": tru}`, path: "nodes", at: "tru", msg: "malformed JSON: invalid literal"},
	{doc: `{"a": "é" "b"}`, path: "", at: `"b"`, msg: `expecting ',' or '}' after an object member`},
	{doc: `{"a": 1.}`, path: "a", at: "1.", msg: "malformed JSON: invalid number"},
	{doc: `{"a": "x\ud800\u0041"}`, path: "a", at: `\ud800`, msg: `lone surrogate \ud800`},
	{doc: `{"a": "x\udc00"}`, path: "a", at: `\udc00`, msg: `lone surrogate \udc00`},
	{doc: `{"a": "x\u12"}`, path: "a", at: `\u12`, msg: `invalid \u escape`},
	{doc: `{"a": "unterminated}`, path: "a", at: `"unterminated`, msg: "the string is not closed"},
	{doc: "{\"a\": 1, \xff: 2}", path: "", at: "\xff", msg: "invalid UTF-8 byte 0xff, expecting a member name"},

	// Unknown members at every level are errors, with did-you-mean hints.
	{doc: "{\n\"chanels\": {},\n\"edges\": [{\"from\": \"__start__\", \"to\": \"__end__\"}]}", path: "chanels", at: `"chanels"`, pos: "2:1",
		msg: `unknown member "chanels" in the document`, hint: `did you mean "channels"? the known members here are`},
	{doc: `{"channels": {"x": {"redcer": "append"}}, "edges": [{"from": "__start__", "to": "__end__"}]}`,
		path: "channels.x.redcer", at: `"redcer"`, msg: `unknown member "redcer" in channel "x"`, hint: `did you mean "reducer"?`},
	{doc: `{"nodes": [{"id": "a", "type": "t", "tpye": "u"}], "edges": [{"from": "__start__", "to": "a"}]}`,
		path: "nodes[0].tpye", at: `"tpye"`, msg: `unknown member "tpye" in node "a"`, hint: `did you mean "type"?`},
	{doc: `{"nodes": [{"id": "a", "type": "t", "ID": "b"}], "edges": [{"from": "__start__", "to": "a"}]}`,
		path: "nodes[0].ID", at: `"ID"`, msg: `unknown member "ID" in node "a"`, hint: `did you mean "id"?`},
	{doc: `{"channels": {"c": {}}, "edges": [{"from": "__start__", "to": "__end__", "wen": {"channel": "c", "eq": 1}}]}`,
		path: "edges[0].wen", at: `"wen"`, msg: `unknown member "wen" in edge "__start__" -> "__end__"`, hint: `did you mean "when"?`},
	{doc: `{"edges": [{"from": "__start__", "to": "__end__", "when": {"channel": "c", "eq": 1, "x-ui": 1, "note": 2}}], "channels": {"c": {}}}`,
		path: "edges[0].when.note", at: `"note"`, msg: `predicate has unknown operator "note"`},
	{doc: `{"nodes": [{"id": "a", "type": "t"}, {"id": "lost", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}, {"from": "lost", "to": "a"}]}`,
		sev: SeverityWarning, path: "nodes[1]", at: `{"id": "lost"`, msg: `node "lost" is unreachable from __start__`},
	{doc: "{\"channels\": {\"n\": {}},\n\"edges\": [\n{\"from\": \"__start__\", \"to\": \"__end__\", \"when\": {\"channel\": \"n\", \"in\": [1, \"a\"]}},\n{\"from\": \"__start__\", \"to\": \"__end__\", \"when\": {\"channel\": \"n\", \"in\": [1.0, \"a\"]}}]}",
		sev: SeverityWarning, path: "edges[1]", at: "{", after: "\"a\"]}},\n", msg: `edge "__start__" -> "__end__" repeats edges[0] (3:1)`},
}

func TestRules(t *testing.T) {
	files := readDir(t, "invalid")
	run := func(t *testing.T, c ruleCase) {
		doc := []byte(c.doc)
		name := "inline.json"
		if c.file != "" {
			var ok bool
			if doc, ok = files[c.file]; !ok {
				t.Fatalf("testdata/invalid/%s.json does not exist", c.file)
			}
			name = c.file + ".json"
		}
		g, ds := Decode(name, doc, c.opts...)
		if c.sev == SeverityError && g != nil {
			t.Errorf("Decode returned a graph for a refused document")
		}
		if c.sev == SeverityWarning && g == nil {
			t.Errorf("Decode refused a document with only a warning: %v", ds)
		}
		var got *Diagnostic
		for i := range ds {
			if ds[i].Path == c.path && strings.Contains(ds[i].Message, c.msg) {
				got = &ds[i]
				break
			}
		}
		if got == nil {
			t.Fatalf("no diagnostic at %q containing %q; got:\n%s", c.path, c.msg, dump(ds))
		}
		if got.Severity != c.sev {
			t.Errorf("severity %v, want %v", got.Severity, c.sev)
		}
		if !strings.Contains(got.Hint, c.hint) {
			t.Errorf("hint %q does not contain %q", got.Hint, c.hint)
		}
		if got.Hint == "" {
			t.Errorf("diagnostic has no hint: %v", got)
		}
		if got.Pos.File != name {
			t.Errorf("file %q, want %q", got.Pos.File, name)
		}
		if c.at != "" {
			off := len(doc)
			if c.at != "$" {
				from := 0
				if c.after != "" {
					from = bytes.Index(doc, []byte(c.after))
					if from < 0 {
						t.Fatalf("%q is not in the document", c.after)
					}
					from += len(c.after)
				}
				i := bytes.Index(doc[from:], []byte(c.at))
				if i < 0 {
					t.Fatalf("%q is not in the document after %q", c.at, c.after)
				}
				off = from + i + c.delta
			}
			line, col := lineCol(doc, off)
			if got.Pos.Offset != off || got.Pos.Line != line || got.Pos.Col != col {
				t.Errorf("at offset %d (%d:%d), want offset %d (%d:%d), the start of %q", got.Pos.Offset, got.Pos.Line, got.Pos.Col, off, line, col, c.at)
			}
		}
		if c.pos != "" {
			if lc := fmt.Sprintf("%d:%d", got.Pos.Line, got.Pos.Col); lc != c.pos {
				t.Errorf("at %s, want %s", lc, c.pos)
			}
		}
	}
	for _, c := range invalidCases {
		t.Run(c.file, func(t *testing.T) { run(t, c) })
	}
	for i, c := range inlineCases {
		t.Run(fmt.Sprintf("inline%d", i), func(t *testing.T) { run(t, c) })
	}
}

// Every file of testdata/invalid is refused for exactly one reason, the one
// its row names, so other checkers (a JSON Schema) can reuse the files.
func TestInvalidFilesBreakOneRule(t *testing.T) {
	files := readDir(t, "invalid")
	covered := make(map[string]bool)
	for _, c := range invalidCases {
		covered[c.file] = true
	}
	for _, name := range sortedKeys(files) {
		if !covered[name] {
			t.Errorf("testdata/invalid/%s.json has no row in invalidCases", name)
			continue
		}
		g, ds := Decode(name+".json", files[name])
		if g != nil {
			t.Errorf("%s: accepted", name)
		}
		if errs := ds.Errors(); len(errs) != 1 {
			t.Errorf("%s: want exactly one error, got %d:\n%s", name, len(errs), dump(errs))
		}
	}
}

func dump(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\t%s [%s]\n", d, d.Path)
	}
	return b.String()
}

// One document with many problems reports them all, in document order.
func TestDecodeReportsEveryProblem(t *testing.T) {
	doc := `{
  "name": 1,
  "channels": { "x": { "reducer": "sum" }, "y": [] },
  "nodes": [
    { "id": "a", "type": "t", "config": { "k": 1, "k": 2 } },
    { "id": "a", "type": "" },
    { "id": "__end__", "type": "t", "colour": "red" }
  ],
  "edges": [
    { "from": "a", "to": "ghost" },
    { "from": "a", "to": "__end__", "when": { "channel": "missing", "gt": "4" } },
    { "from": "a", "to": "__end__", "when": { "channel": "x", "eq": 1, "lt": 2 } },
    { "from": "__end__", "to": "a", "when": null }
  ]
}`
	want := []struct{ path, msg string }{
		{"name", `"name" must be a string or null`},
		{"channels.x.reducer", `channel "x": unknown reducer "sum"`},
		{"channels.y", `channel "y" must be an object`},
		{"nodes[0]", `node "a" is unreachable from __start__`},
		{"nodes[0].config.k", `duplicate key "k"`},
		{"nodes[1].id", `duplicate node "a"`},
		{"nodes[1].type", `node "a" has no type`},
		{"nodes[2].id", `node id "__end__" is reserved`},
		{"nodes[2].colour", `unknown member "colour"`},
		{"edges", "graph has no entry edge"},
		{"edges[0].to", `edge "a" -> unknown node "ghost"`},
		{"edges[1].when.channel", `predicate references channel "missing"`},
		{"edges[1].when.gt", "gt literal must be a number"},
		{"edges[2].when.lt", "more than one operator"},
		{"edges[3].from", "cannot leave __end__"},
		{"edges[3].when", `edge "when" must be an object, not null`},
	}
	g, ds := Decode("many.json", []byte(doc))
	if g != nil {
		t.Fatal("accepted")
	}
	if len(ds) != len(want) {
		t.Errorf("got %d diagnostics, want %d:\n%s", len(ds), len(want), dump(ds))
	}
	for i, w := range want {
		if i >= len(ds) {
			break
		}
		if ds[i].Path != w.path || !strings.Contains(ds[i].Message, w.msg) {
			t.Errorf("diagnostic %d = %s [%s], want %q at %s", i, ds[i], ds[i].Path, w.msg, w.path)
		}
	}
	for i := 1; i < len(ds); i++ {
		if ds[i].Pos.Offset < ds[i-1].Pos.Offset {
			t.Errorf("diagnostics not sorted by offset: %v before %v", ds[i-1], ds[i])
		}
	}
}

// TestSchemaMemberIsQuiet: a string "$schema" (how editors find the JSON
// Schema) draws no warning and survives the canonical encoding; elsewhere
// than the top level it is an unknown member like any other.
func TestSchemaMemberIsQuiet(t *testing.T) {
	doc := `{"$schema": "./ilmek.schema.json", "edges": [{"from": "__start__", "to": "__end__"}]}`
	g, diags := Decode("g.json", []byte(doc))
	if g == nil || len(diags) != 0 {
		t.Fatalf("Decode: %v", diags)
	}
	if out := g.Encode(); !bytes.Contains(out, []byte(`"$schema": "./ilmek.schema.json"`)) {
		t.Errorf("canonical encoding lost $schema:\n%s", out)
	}
	_, diags = Decode("g.json", []byte(`{"edges": [{"from": "__start__", "to": "__end__", "$schema": "x"}]}`))
	if len(diags) != 1 || !strings.Contains(diags[0].Message, `unknown member "$schema" in edge`) {
		t.Errorf("a nested $schema: %v", diags)
	}
}

func TestDidYouMean(t *testing.T) {
	cases := []struct {
		in   string
		cand []string
		want string
	}{
		{"wen", edgeFields, "when"},
		{"redcer", channelFields, "reducer"},
		{"chanels", topFields, "channels"},
		{"node", topFields, "nodes"},
		{"Type", nodeFields, "type"},
		{"cofnig", nodeFields, "config"},
		{"equals", predicateFields, "eq"},
		{"truthy_", predicateFields, "truthy"},
		{"lastwrite", reducerNames(), "last_write"},
		{"appned", reducerNames(), "append"},
		{"colour", nodeFields, ""},
		{"b", []string{"a"}, ""},
		{"x", nodeFields, ""},
		{"", nodeFields, ""},
		{strings.Repeat("a", 100), []string{strings.Repeat("a", 99)}, ""},
	}
	for _, c := range cases {
		if got := suggest(c.in, c.cand); got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Hints for unknown references carry the suggestion too.
	doc := `{"channels": {"intent": {}, "plan": {}}, "nodes": [{"id": "agent", "type": "t"}],
"edges": [{"from": "__start__", "to": "agnet"}, {"from": "__start__", "to": "agent", "when": {"channel": "intnet", "eq": 1}},
{"from": "agent", "to": "__end__", "when": {"channel": "intent", "nq": 1}}]}`
	_, ds := Decode("hints.json", []byte(doc))
	hints := map[string]string{
		"edges[0].to":           `did you mean "agent"?`,
		"edges[1].when.channel": `did you mean "intent"?`,
		"edges[2].when.nq":      `did you mean "eq"?`,
	}
	for _, d := range ds {
		if want, ok := hints[d.Path]; ok {
			if !strings.HasPrefix(d.Hint, want) {
				t.Errorf("%s: hint %q, want it to start with %q", d.Path, d.Hint, want)
			}
			delete(hints, d.Path)
		}
	}
	for p := range hints {
		t.Errorf("no diagnostic at %s:\n%s", p, dump(ds))
	}
}
