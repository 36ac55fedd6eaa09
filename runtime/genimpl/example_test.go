package genimpl_test

import (
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/genimpl"
)

// A generated package decodes its embedded document once, on first use,
// naming its source in any diagnostic.
func ExampleSpecDoc() {
	doc := genimpl.SpecDoc("greet.json", `{
  "name": "greet",
  "channels": {"greeting": {}},
  "nodes": [{"id": "greet", "type": "greeter"}],
  "edges": [{"from": "__start__", "to": "greet"}, {"from": "greet", "to": "__end__"}]
}`)
	g, err := doc()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Name, len(g.Nodes), len(g.Edges))
	// Output:
	// greet 1 2
}

// Keys orders a write's channels, so the first channel that fails to
// convert is the same on every run.
func ExampleKeys() {
	fmt.Println(genimpl.Keys(runtime.Values{"status": "paid", "amount": 12, "log": "charged"}))
	// Output:
	// [amount log status]
}
