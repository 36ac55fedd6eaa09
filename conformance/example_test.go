package conformance_test

import (
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/conformance"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// One case file run on a graph built from its spec at run time, and
// compared with what it expects: the supersteps, the final state.
func ExampleRunSpecKind() {
	c, err := conformance.ParseCase("greet.json", []byte(`{
  "name": "greet",
  "about": "two nodes in a row write a channel; the last write wins",
  "spec": {
    "name": "greet",
    "channels": {"greeting": {}},
    "nodes": [
      {"id": "hello", "type": "write", "config": {"update": {"greeting": "hello"}}},
      {"id": "bye", "type": "write", "config": {"update": {"greeting": "bye"}}}
    ],
    "edges": [{"from": "__start__", "to": "hello"}, {"from": "hello", "to": "bye"}, {"from": "bye", "to": "__end__"}]
  },
  "expect": {"status": "done", "steps": [["hello"], ["bye"]], "state": {"greeting": "bye"}}
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	got := conformance.RunSpecKind(context.Background(), c, func() runtime.Checkpointer { return checkpoint.NewMemory() })
	fmt.Println(got[0].Status, got[0].Steps, string(got[0].State))
	fmt.Println("mismatches:", conformance.Compare(c, got))
	// Output:
	// done [[hello] [bye]] {"greeting":"bye"}
	// mismatches: []
}
