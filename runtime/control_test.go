package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

func TestSendFanOutThousandTasks(t *testing.T) {
	const n = 1000
	g := mustCompile(t, runtime.NewBuilder("fan").Channel("out", spec.Append).Channel("i", "").Channel("joined", "").
		Node("fan", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			gotos := make([]runtime.Goto, n)
			for i := range gotos {
				gotos[i] = runtime.SendTo("w", runtime.Values{"i": i})
			}
			ctx.Command(gotos...)
			return nil, nil
		}).
		Node("w", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			// A send task's state is its input folded into an empty state:
			// nothing of the graph's state, the append channel empty.
			if _, ok := s["joined"]; ok || len(s["out"].([]any)) != 0 || len(s) != 2 {
				return nil, fmt.Errorf("a send task must see only its input, saw %v", s)
			}
			return runtime.Values{"out": s["i"]}, nil
		}).
		Node("join", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"joined": len(s["out"].([]any))}, nil
		}).
		Edge(spec.Start, "fan").Edge("w", "join"))
	st, end := steps(t, g.Thread(checkpoint.NewMemory(), "t").Stream(context.Background(), nil))
	if end.Status != runtime.StatusDone {
		t.Fatalf("run ended %s: %v", end.Status, end.Err)
	}
	if len(st) != 3 || len(st[1]) != n || st[1][0] != "w#0" || st[1][n-1] != fmt.Sprintf("w#%d", n-1) || len(st[2]) != 1 {
		t.Fatalf("supersteps: %d, middle has %d tasks", len(st), len(st[1]))
	}
	res, err := g.Invoke(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := res.State["out"].([]any)
	for i, v := range out {
		if v != float64(i) {
			t.Fatalf("out[%d] = %v: send results must fold in send order", i, v)
		}
	}
	if res.State["joined"] != float64(n) {
		t.Errorf("join saw %v items, want %d (fan-in runs once after all sends)", res.State["joined"], n)
	}
}

func TestCommandGotoReplacesStaticEdgesAndFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command bool
		want    string
	}{{"goto", true, "[[a] [c]]"}, {"no goto", false, "[[a] [b]]"}} {
		t.Run(tc.name, func(t *testing.T) {
			g := mustCompile(t, runtime.NewBuilder("cmd").Channel("x", "").
				Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					if tc.command {
						ctx.Command(runtime.To("c"))
					}
					return runtime.Values{"x": 1}, nil
				}).
				Node("b", write(nil)).Node("c", write(nil)).
				Edge(spec.Start, "a").Edge("a", "b"))
			st, end := steps(t, g.Stream(context.Background(), nil))
			if end.Status != runtime.StatusDone || fmt.Sprint(st) != tc.want {
				t.Fatalf("steps %v status %s, want %s", st, end.Status, tc.want)
			}
		})
	}
}

func TestGotoUnknownNodeIsNodeError(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("bad").
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ctx.Command(runtime.To("ghost"))
			return nil, nil
		}).Edge(spec.Start, "a"))
	_, err := g.Invoke(context.Background(), nil)
	var ne *runtime.NodeError
	var ut *runtime.UnknownTargetError
	if !errors.As(err, &ne) || ne.Node != "a" || !errors.As(err, &ut) || ut.Target != "ghost" {
		t.Fatalf("err %v, want a NodeError of node a wrapping an UnknownTargetError for ghost", err)
	}
}

func TestRouterReturnsTargetsAndSends(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("router").Channel("items", "").Channel("item", "").Channel("seen", spec.Append).
		Node("load", write(runtime.Values{"items": []any{"x", "y"}})).
		Node("work", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"seen": s["item"]}, nil
		}).
		Edge(spec.Start, "load").
		Router("load", func(s runtime.Values) ([]runtime.Goto, error) {
			var out []runtime.Goto
			for _, it := range s["items"].([]any) {
				out = append(out, runtime.SendTo("work", runtime.Values{"item": it}))
			}
			return out, nil
		}))
	res, err := g.Invoke(context.Background(), nil)
	if err != nil || fmt.Sprint(res.State["seen"]) != "[x y]" {
		t.Fatalf("%v %v", res.State, err)
	}
}

// TestStepAndInterruptNeedATask: routers and guards receive no Ctx, so the
// only way to reach Step or Interrupt outside a task is without one; both
// refuse, and the step function is not called.
func TestStepAndInterruptNeedATask(t *testing.T) {
	called := false
	if _, err := runtime.Step(nil, "k", func() (int, error) { called = true; return 1, nil }); err != runtime.ErrNotInTask {
		t.Errorf("Step without a task: %v, want ErrNotInTask", err)
	}
	if called {
		t.Error("Step without a task called its function")
	}
	if _, err := runtime.Interrupt[string](nil, "q"); err != runtime.ErrNotInTask {
		t.Errorf("Interrupt without a task: %v, want ErrNotInTask", err)
	}
}
