package mermaid_test

import (
	"fmt"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

// A stored document drawn as a Mermaid flowchart, with where a thread
// stands: the node waiting on a person is marked.
func ExampleSpec() {
	doc, diags := spec.Decode("refund.json", []byte(`{
  "name": "refund",
  "channels": {"amount": {}, "approved": {}},
  "nodes": [{"id": "quote", "type": "quote"}, {"id": "review", "type": "review"}, {"id": "pay", "type": "pay"}],
  "edges": [
    {"from": "__start__", "to": "quote"},
    {"from": "quote", "to": "review"},
    {"from": "review", "to": "pay", "when": {"channel": "approved", "eq": true}},
    {"from": "review", "to": "__end__", "when": {"channel": "approved", "eq": false}},
    {"from": "pay", "to": "__end__"}
  ]
}`))
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	out, err := mermaid.Spec(doc, mermaid.Options{Direction: "LR", Highlight: &mermaid.Highlight{Pending: []string{"review"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out)
	// Output:
	// flowchart LR
	//   __start__([START])
	//   quote["quote"]
	//   review["⏸ review"]
	//   pay["pay"]
	//   __end__([END])
	//   __start__ --> quote
	//   quote --> review
	//   review -->|"approved == true"| pay
	//   review -->|"approved == false"| __end__
	//   pay --> __end__
	//   classDef pending stroke-width:3px,stroke-dasharray:5 3
	//   class review pending
}
