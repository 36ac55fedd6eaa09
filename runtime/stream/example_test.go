package stream_test

import (
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/stream"
	"github.com/ilmek-go/ilmek/spec"
)

// A run's events projected into three views: each node's update, the
// custom payloads the nodes emit (a token is one too) and the tokens.
func ExampleProjected() {
	g, err := runtime.NewBuilder("reply").Channel("draft", "").Channel("reply", "").
		Node("draft", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			c.Emit(map[string]any{"progress": "drafting"})
			return runtime.Values{"draft": "hi"}, nil
		}).
		Node("polish", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			for _, tok := range []string{"Hi", " there"} {
				c.EmitToken(tok, nil)
			}
			return runtime.Values{"reply": "Hi there"}, nil
		}).
		Edge(spec.Start, "draft").Edge("draft", "polish").Edge("polish", spec.End).Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	for p, err := range stream.Projected(g.Stream(context.Background(), nil), stream.ModeUpdates, stream.ModeCustom, stream.ModeMessages) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8s %v\n", p.Mode, p.Data)
	}
	// Output:
	// custom   map[progress:drafting]
	// updates  map[draft:map[draft:hi]]
	// custom   {token Hi map[]}
	// messages {token Hi map[]}
	// custom   {token  there map[]}
	// messages {token  there map[]}
	// updates  map[polish:map[reply:Hi there]]
}
