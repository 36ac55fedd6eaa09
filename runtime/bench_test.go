package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// benchRegistry has one node type: "push" appends the node's index to items.
func benchRegistry() runtime.Registry {
	return runtime.Registry{"push": func(n spec.Node) (runtime.NodeFunc, error) {
		u := runtime.Values{"items": n.ID}
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return u, nil }, nil
	}}
}

func chainSpec(n int) *spec.Graph {
	g := &spec.Graph{Name: "chain", NameKind: spec.Set, Channels: []spec.Channel{{Name: "counter"}, {Name: "items", Reducer: spec.Append}}}
	prev := spec.Start
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		g.Nodes = append(g.Nodes, spec.Node{ID: id, Type: "push"})
		g.Edges = append(g.Edges, spec.Edge{From: prev, To: id})
		prev = id
	}
	return g
}

func fanoutSpec(n int) *spec.Graph {
	g := &spec.Graph{Name: "fanout", NameKind: spec.Set, Channels: []spec.Channel{{Name: "counter"}, {Name: "items", Reducer: spec.Append}}}
	g.Nodes = append(g.Nodes, spec.Node{ID: "fan", Type: "push"})
	g.Edges = append(g.Edges, spec.Edge{From: spec.Start, To: "fan"})
	for i := range n {
		id := fmt.Sprintf("w%d", i)
		g.Nodes = append(g.Nodes, spec.Node{ID: id, Type: "push"})
		g.Edges = append(g.Edges, spec.Edge{From: "fan", To: id}, spec.Edge{From: id, To: "join"})
	}
	g.Nodes = append(g.Nodes, spec.Node{ID: "join", Type: "push"})
	return g
}

// BenchmarkSpecBuilt runs the spec-built program; ns/superstep and ns/task
// are reported per run.
func BenchmarkSpecBuilt(b *testing.B) {
	for _, bc := range []struct {
		name       string
		doc        *spec.Graph
		supersteps int
		tasks      int
	}{
		{"chain-100", chainSpec(100), 100, 100},
		{"fanout-100", fanoutSpec(100), 3, 102},
	} {
		g, err := runtime.FromSpec(bc.doc, benchRegistry())
		if err != nil {
			b.Fatal(err)
		}
		for _, ck := range []string{"none", "memory"} {
			b.Run(bc.name+"/"+ck, func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					var res runtime.Result[runtime.Values]
					var err error
					if ck == "memory" {
						res, err = g.Thread(checkpoint.NewMemory(), fmt.Sprint(i)).Invoke(ctx, nil, runtime.WithRecursionLimit(1000))
					} else {
						res, err = g.Invoke(ctx, nil, runtime.WithRecursionLimit(1000))
					}
					if err != nil || res.Supersteps != bc.supersteps {
						b.Fatalf("%v %d", err, res.Supersteps)
					}
				}
				per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(per/float64(bc.supersteps), "ns/superstep")
				b.ReportMetric(per/float64(bc.tasks), "ns/task")
			})
		}
	}
}
