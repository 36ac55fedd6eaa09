package dot_test

import (
	"fmt"

	"github.com/ilmek-go/ilmek/dot"
	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

// A document as DOT, for Graphviz (package graphviz renders it as SVG),
// with the node a thread runs next marked.
func ExampleDiagram() {
	doc, diags := spec.Decode("greet.json", []byte(`{
  "name": "greet",
  "channels": {"greeting": {}},
  "nodes": [{"id": "greet", "type": "greeter"}],
  "edges": [{"from": "__start__", "to": "greet"}, {"from": "greet", "to": "__end__"}]
}`))
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	fmt.Print(dot.Diagram(mermaid.FromSpec(doc), &mermaid.Highlight{Next: []string{"greet"}}))
	// Output:
	// digraph G {
	//   rankdir=TB;
	//   bgcolor="transparent";
	//   node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#444444", fontname="Helvetica", fontsize=12];
	//   edge [color="#444444", fontname="Helvetica", fontsize=10];
	//   "__start__" [label="START", shape=oval, id="node___start__", class="terminal"];
	//   "greet" [label="greet", id="node_greet", class="next", fillcolor="#bfdbfe", penwidth=2.5];
	//   "__end__" [label="END", shape=oval, id="node___end__", class="terminal"];
	//   "__start__" -> "greet";
	//   "greet" -> "__end__";
	// }
}

// Quote makes any name a DOT identifier: quotes, backslashes and line
// breaks cannot end it early.
func ExampleQuote() {
	fmt.Println(dot.Quote(`say "hi"`))
	fmt.Println(dot.Quote("two\nlines"))
	// Output:
	// "say \"hi\""
	// "two lines"
}
