package runtime_test

import (
	"context"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// BenchmarkSubgraphChain runs, side by side, a chain of 200 nodes and a
// chain of 100 whose middle node is a subgraph running a chain of 100,
// both spec-built and without a checkpointer: the cost of the boundary.
// The child's 100 supersteps need a limit of its own ("limit"), since a
// child does not take its parent's.
func BenchmarkSubgraphChain(b *testing.B) {
	child, err := runtime.FromSpec(chainSpec(100), benchRegistry())
	if err != nil {
		b.Fatal(err)
	}
	parentDoc := chainSpec(100)
	parentDoc.Name = "parent"
	parentDoc.Nodes[50] = spec.Node{ID: "n50", Type: spec.SubgraphType, Config: []byte(`{"graph": "chain", "limit": 1000, "out": {"items": "items"}}`)}
	parent, err := runtime.FromSpec(parentDoc, benchRegistry(), runtime.WithSubgraphs(child))
	if err != nil {
		b.Fatal(err)
	}
	flat, err := runtime.FromSpec(chainSpec(200), benchRegistry())
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		g    *runtime.Graph[runtime.Values, runtime.Values]
		want int // items pushed: the subgraph node pushes none itself
	}{{"chain-200", flat, 200}, {"chain-100-with-child-100", parent, 199}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := bc.g.Invoke(ctx, nil, runtime.WithRecursionLimit(1000))
				if err != nil || len(res.State["items"].([]any)) != bc.want {
					b.Fatalf("%v %d", err, len(res.State["items"].([]any)))
				}
			}
		})
	}
}
