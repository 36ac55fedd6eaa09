// Package einobench runs the benchmark workloads in the compose graph API
// of github.com/cloudwego/eino, the Go engine the suite compares against,
// with the same trivial node bodies as ilmek's programs.
//
// Eino passes values along edges instead of folding updates into named
// channels, so each workload keeps its items as the value that flows: a
// chain node appends its index to the list it receives; a fan-out worker
// returns its one-element list and the join receives the workers' lists
// concatenated (the []int merge function this package registers); the loop
// carries the counter, with a branch back to inc while it is below N.
// Eino has no dynamic fan-out (send), so fanoutsend is not expressible.
package einobench

import (
	"context"
	"fmt"
	"slices"

	"github.com/cloudwego/eino/compose"

	"github.com/ilmek-go/ilmek/bench/workload"
	"github.com/ilmek-go/ilmek/runtime"
)

func init() {
	// The join of a fan-out receives one list per worker.
	compose.RegisterValuesMergeFunc(func(vs [][]int) ([]int, error) { return slices.Concat(vs...), nil })
}

// Program builds and compiles w's Eino graph and returns a program that
// invokes it once per call (its run options are ignored: Eino runs without
// ilmek's checkpointers). It wraps workload.ErrNotExpressible for
// fanoutsend.
func Program(ctx context.Context, w workload.Workload) (workload.Program, error) {
	if err := w.Valid(); err != nil {
		return nil, err
	}
	switch w.Kind {
	case "chain":
		return chain(ctx, w)
	case "fanout":
		return fanout(ctx, w)
	case "loop":
		return loop(ctx, w)
	}
	return nil, fmt.Errorf("%s: eino has no dynamic fan-out (send): %w", w, workload.ErrNotExpressible)
}

// Ordered reports whether Eino folds w's items in a fixed order (the
// fan-in merge follows completion order).
func Ordered(w workload.Workload) bool { return w.Kind != "fanout" }

func chain(ctx context.Context, w workload.Workload) (workload.Program, error) {
	g := compose.NewGraph[[]int, []int]()
	prev := compose.START
	for i := range w.N {
		id := fmt.Sprintf("n%d", i)
		if err := g.AddLambdaNode(id, compose.InvokableLambda(func(_ context.Context, in []int) ([]int, error) {
			return append(in, i), nil
		})); err != nil {
			return nil, err
		}
		if err := g.AddEdge(prev, id); err != nil {
			return nil, err
		}
		prev = id
	}
	if err := g.AddEdge(prev, compose.END); err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx, compose.WithMaxRunSteps(w.Supersteps()+2))
	if err != nil {
		return nil, err
	}
	return items(r), nil
}

func fanout(ctx context.Context, w workload.Workload) (workload.Program, error) {
	g := compose.NewGraph[[]int, []int]()
	pass := compose.InvokableLambda(func(_ context.Context, in []int) ([]int, error) { return in, nil })
	if err := g.AddLambdaNode("fan", pass); err != nil {
		return nil, err
	}
	if err := g.AddLambdaNode("join", pass); err != nil {
		return nil, err
	}
	for i := range w.N {
		id := fmt.Sprintf("w%d", i)
		out := []int{i}
		if err := g.AddLambdaNode(id, compose.InvokableLambda(func(context.Context, []int) ([]int, error) { return out, nil })); err != nil {
			return nil, err
		}
		if err := g.AddEdge("fan", id); err != nil {
			return nil, err
		}
		if err := g.AddEdge(id, "join"); err != nil {
			return nil, err
		}
	}
	for _, e := range [][2]string{{compose.START, "fan"}, {"join", compose.END}} {
		if err := g.AddEdge(e[0], e[1]); err != nil {
			return nil, err
		}
	}
	r, err := g.Compile(ctx, compose.WithMaxRunSteps(w.Supersteps()+2))
	if err != nil {
		return nil, err
	}
	return items(r), nil
}

// items invokes a graph over the items list.
func items(r compose.Runnable[[]int, []int]) workload.Program {
	return func(ctx context.Context, _ *workload.Thread, _ ...runtime.RunOption) (workload.Outcome, error) {
		out, err := r.Invoke(ctx, nil)
		return workload.Outcome{Supersteps: -1, Items: out}, err
	}
}

func loop(ctx context.Context, w workload.Workload) (workload.Program, error) {
	g := compose.NewGraph[int, int]()
	if err := g.AddLambdaNode("inc", compose.InvokableLambda(func(_ context.Context, c int) (int, error) { return c + 1, nil })); err != nil {
		return nil, err
	}
	if err := g.AddEdge(compose.START, "inc"); err != nil {
		return nil, err
	}
	n := w.N
	branch := compose.NewGraphBranch(func(_ context.Context, c int) (string, error) {
		if c < n {
			return "inc", nil
		}
		return compose.END, nil
	}, map[string]bool{"inc": true, compose.END: true})
	if err := g.AddBranch("inc", branch); err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx, compose.WithMaxRunSteps(w.Supersteps()+2))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, _ *workload.Thread, _ ...runtime.RunOption) (workload.Outcome, error) {
		c, err := r.Invoke(ctx, 0)
		return workload.Outcome{Supersteps: -1, Counter: c}, err
	}, nil
}
