package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestIfLatest: a run started with WithExpectedLatest runs only on the thread as the
// caller saw it, and otherwise writes nothing.
func TestIfLatest(t *testing.T) {
	g, err := runtime.NewBuilder("once").Channel("log", spec.Append).
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "a"}, nil }).
		Edge(spec.Start, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	cp := checkpoint.NewMemory()
	ctx := context.Background()
	run := func(latest string) (runtime.Result[runtime.Values], error) {
		return g.Thread(cp, "t").Invoke(ctx, nil, runtime.WithExpectedLatest(latest))
	}
	// A new thread: "" is its latest.
	if _, err := run(""); err != nil {
		t.Fatal(err)
	}
	first, err := cp.Get(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	// The thread moved: a second start against "" is refused, writing nothing.
	before, _ := cp.List(ctx, "t", 0)
	if _, err := run(""); !errors.Is(err, runtime.ErrThreadMoved) {
		t.Fatalf("a start against a thread that moved: err %v, want ErrThreadMoved", err)
	}
	after, _ := cp.List(ctx, "t", 0)
	if len(after) != len(before) {
		t.Errorf("the refused run wrote %d checkpoints", len(after)-len(before))
	}
	// Against the thread's latest it runs.
	res, err := run(first.ID)
	if err != nil || len(res.State["log"].([]any)) != 2 {
		t.Fatalf("a start against the latest checkpoint: %v %v", res.State, err)
	}
}
