package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// BenchmarkStep runs a chain of 20 nodes, each making one runtime.Step,
// without a checkpointer and on the memory checkpointer: what a Step
// costs the engine apart from a store's write (ns/op is one run).
func BenchmarkStep(b *testing.B) {
	const n = 20
	bld := runtime.NewBuilder("steps").Channel("n", spec.LastWrite)
	prev := spec.Start
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		bld.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			v, err := runtime.Step(ctx, "k", func() (int, error) { return i, nil })
			return runtime.Values{"n": v}, err
		}).Edge(prev, id)
		prev = id
	}
	g, err := bld.Compile()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("none", func(b *testing.B) {
		for b.Loop() {
			if _, err := g.Invoke(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memory", func(b *testing.B) {
		for b.Loop() {
			if _, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
