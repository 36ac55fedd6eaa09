package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

func TestThreadStateAndPendingInterrupts(t *testing.T) {
	ask := func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		a, err := runtime.Interrupt[string](ctx, map[string]any{"q": ctx.Node()})
		if err != nil {
			return nil, err
		}
		return runtime.Values{"log": ctx.Node() + "=" + a}, nil
	}
	g := mustCompile(t, runtime.NewBuilder("hitl").Channel("log", spec.Append).
		Node("a", ask).Node("b", ask).Edge(spec.Start, "a").Edge(spec.Start, "b"))
	cp := checkpoint.NewMemory()
	ctx := context.Background()
	th := g.Thread(cp, "t")

	if _, err := g.Thread(cp, "t").State(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("new thread: %v, want ErrNotFound", err)
	}
	if _, err := th.Invoke(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ts, err := g.Thread(cp, "t").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !ts.Waiting() || len(ts.Open) != 2 || ts.Open[0].ID != "a:interrupt#0" || ts.Open[1].ID != "b:interrupt#0" || len(ts.Next) != 2 {
		t.Fatalf("waiting thread: %+v", ts)
	}
	if _, err := th.Resume(ctx, runtime.AnswersByID(map[string]any{"a:interrupt#0": "yes", "b:interrupt#0": "no"})); err != nil {
		t.Fatal(err)
	}
	ts, err = g.Thread(cp, "t").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Waiting() || len(ts.Next) != 0 || len(ts.State["log"].([]any)) != 2 {
		t.Fatalf("finished thread: %+v", ts)
	}
	open, err := g.Thread(cp, "nobody").Pending(ctx)
	if err != nil || open != nil {
		t.Fatalf("unknown thread: %v %v", open, err)
	}
}
