package stream_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/stream"
	"github.com/ilmek-go/ilmek/spec"
)

func TestRootLeavesOutSubgraphEvents(t *testing.T) {
	child, err := runtime.NewBuilder("child").Channel("x", "").
		Node("inner", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"x": 1}, nil }).
		Edge(spec.Start, "inner").Edge("inner", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := runtime.NewBuilder("parent").Channel("y", "").
		Subgraph("sub", child, nil, map[string]string{"y": "x"}).
		Edge(spec.Start, "sub").Edge("sub", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	var all, root []string
	for ev, err := range g.Stream(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == runtime.EventNodeStart {
			all = append(all, ev.Node)
		}
	}
	for ev, err := range stream.Root(g.Stream(context.Background(), nil)) {
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.NS) > 0 {
			t.Fatalf("Root passed an event of a subgraph: %+v", ev)
		}
		if ev.Type == runtime.EventNodeStart {
			root = append(root, ev.Node)
		}
	}
	if !slices.Equal(all, []string{"sub", "inner"}) || !slices.Equal(root, []string{"sub"}) {
		t.Fatalf("node starts: all %v, root %v", all, root)
	}
}
