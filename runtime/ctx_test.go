package runtime_test

import (
	"context"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestCtxIntrospection pins what a node sees through Ctx.State, StepIndex,
// RemainingSteps and Graph on a loop that runs three supersteps under a
// recursion limit of five.
func TestCtxIntrospection(t *testing.T) {
	type seen struct {
		step, remaining int
		total           any
		graph           string
		nodes           int
	}
	var got []seen
	sum := func(cur, in any) (any, error) {
		a, _ := runtime.AsFloat(cur)
		b, _ := runtime.AsFloat(in)
		return a + b, nil
	}
	g, err := runtime.NewBuilder("loop").
		ChannelFunc("total", sum).
		Node("add", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			st, ok := ctx.State().(*runtime.Values)
			if !ok {
				t.Fatalf("State() is %T, want *runtime.Values", ctx.State())
			}
			got = append(got, seen{ctx.StepIndex(), ctx.RemainingSteps(), (*st)["total"], ctx.Graph().Name, len(ctx.Graph().Nodes)})
			return runtime.Values{"total": 1}, nil
		}).
		Edge(spec.Start, "add").
		EdgeIf("add", "add", func(s runtime.Values) bool { f, _ := runtime.AsFloat(s["total"]); return f < 3 }).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(context.Background(), nil, runtime.RecursionLimit(5)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("node ran %d times, want 3: %+v", len(got), got)
	}
	for i, s := range got {
		if s.graph != "loop" || s.nodes != 1 {
			t.Errorf("run %d: Graph() = %q with %d nodes, want \"loop\" with 1", i, s.graph, s.nodes)
		}
		// The first superstep is step 1 (the input is step 0); the running
		// superstep counts as used, so 5-1 remain during step 1.
		if s.step != i+1 || s.remaining != 5-(i+1) {
			t.Errorf("run %d: StepIndex %d, RemainingSteps %d; want %d, %d", i, s.step, s.remaining, i+1, 5-(i+1))
		}
		if i > 0 {
			if f, _ := runtime.AsFloat(s.total); f != float64(i) {
				t.Errorf("run %d: State total = %v, want %d", i, s.total, i)
			}
		}
	}
}
