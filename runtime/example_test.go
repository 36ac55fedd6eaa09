package runtime_test

import (
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// Build a graph from a stored document and a registry of node types, run
// it, and store it back: the round trip gives the document again.
func ExampleLoad() {
	doc := []byte(`{
  "name": "support",
  "channels": { "messages": { "reducer": "append" } },
  "nodes": [{ "id": "agent", "type": "llm", "config": { "model": "m-1" } }],
  "edges": [
    { "from": "__start__", "to": "agent" },
    { "from": "agent", "to": "__end__" }
  ]
}`)
	reg := runtime.Registry{
		"llm": func(n spec.Node) (runtime.NodeFunc, error) {
			var cfg struct{ Model string }
			if err := runtime.DecodeConfig(n, &cfg); err != nil {
				return nil, err
			}
			return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				return runtime.Values{"messages": cfg.Model + " replies"}, nil
			}, nil
		},
	}
	g, err := runtime.Load("support.json", doc, reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := g.Invoke(context.Background(), runtime.Values{"messages": "hi"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.State["messages"])
	back, _ := runtime.ToSpec(g)
	same, _ := spec.JSONEqual(back.Encode(), doc)
	fmt.Println("round trip equal:", same)
	// Output:
	// done [hi m-1 replies]
	// round trip equal: true
}

// Define a graph in Go: a custom reducer and a Go guard are allowed here,
// and ToSpec says why such a graph cannot be stored.
func ExampleBuilder() {
	sum := func(cur, in any) (any, error) {
		a, _ := cur.(float64) // unset at first; a state holds numbers as float64
		b, _ := in.(int)      // what the node wrote
		return a + float64(b), nil
	}
	g, err := runtime.NewBuilder("counter").
		ChannelFunc("total", sum).
		Node("add", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"total": 2}, nil
		}).
		Edge(spec.Start, "add").
		EdgeIf("add", "add", func(s runtime.Values) bool { return s["total"].(float64) < 10 }).
		Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := g.Invoke(context.Background(), nil)
	fmt.Println(res.State["total"], "after", res.Supersteps, "supersteps")
	_, err = runtime.ToSpec(g)
	fmt.Println(err != nil)
	// Output:
	// 10 after 5 supersteps
	// true
}

// Stream a run's events live; every event carries a gap-free seq.
func ExampleGraph_Stream() {
	g, _ := runtime.NewBuilder("hello").Channel("greeting", "").
		Node("greet", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ctx.EmitToken("hel", nil)
			ctx.EmitToken("lo", nil)
			return runtime.Values{"greeting": "hello"}, nil
		}).
		Edge(spec.Start, "greet").
		Compile()
	for ev, err := range g.Stream(context.Background(), nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.Seq, ev.Type)
	}
	// Output:
	// 1 run_start
	// 2 step_start
	// 3 node_start
	// 4 custom
	// 5 custom
	// 6 node_end
	// 7 state
	// 8 run_end
}

// A step runs once across an interrupt and its resume: the order is created
// on the first pass only, the answer arrives on the second.
func ExampleInterrupt() {
	orders := 0
	g, _ := runtime.NewBuilder("checkout").Channel("receipt", "").
		Node("checkout", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			order, err := runtime.Step(ctx, "create_order", func() (int, error) {
				orders++
				return 1000 + orders, nil
			})
			if err != nil {
				return nil, err
			}
			ok, err := runtime.Interrupt[bool](ctx, map[string]any{"question": "charge order?", "order": order})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"receipt": fmt.Sprintf("order %d charged: %v", order, ok)}, nil
		}).
		Edge(spec.Start, "checkout").
		Compile()
	ctx := context.Background()
	th := g.Thread(checkpoint.NewMemory(), "t-1")
	res, _ := th.Invoke(ctx, nil)
	fmt.Println(res.Status, res.Pending[0].ID, string(res.Pending[0].Payload))
	res, _ = th.Resume(ctx, runtime.Answer(true))
	fmt.Println(res.Status, res.State["receipt"], "orders created:", orders)
	// Output:
	// interrupted checkout:interrupt#0 {"order":1001,"question":"charge order?"}
	// done order 1001 charged: true orders created: 1
}
