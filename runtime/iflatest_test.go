package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/internal/testgraphs"
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

// TestIfLatestResume: a resume retried after its reply was lost does not
// answer the thread's next question, though that question has the same id
// (a loop asks again), when it names the checkpoint it answers; a resume
// against the latest checkpoint is taken. A fork refuses the option.
func TestIfLatestResume(t *testing.T) {
	g, err := testgraphs.Asking(3)
	if err != nil {
		t.Fatal(err)
	}
	cp := checkpoint.NewMemory()
	ctx := context.Background()
	th := g.Thread(cp, "t")
	if res, err := th.Invoke(ctx, nil); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("start: %v %v", res.Status, err)
	}
	asked, err := cp.Get(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := th.Resume(ctx, runtime.Answer("one"), runtime.WithExpectedLatest(asked.ID)); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("the first resume: %v %v", res.Status, err)
	}
	again, err := cp.Get(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if again.Pending[0].ID != asked.Pending[0].ID {
		t.Fatalf("the loop asked %q, then %q: the test needs one id twice", asked.Pending[0].ID, again.Pending[0].ID)
	}
	before, _ := cp.List(ctx, "t", 0)
	// The same request again, as a client retries it.
	_, err = th.Resume(ctx, runtime.Answer("one"), runtime.WithExpectedLatest(asked.ID))
	if !errors.Is(err, runtime.ErrThreadMoved) {
		t.Fatalf("a retried resume: err %v, want ErrThreadMoved", err)
	}
	if after, _ := cp.List(ctx, "t", 0); len(after) != len(before) {
		t.Errorf("the refused resume wrote %d checkpoints", len(after)-len(before))
	}
	res, err := th.Resume(ctx, runtime.Answer("two"), runtime.WithExpectedLatest(again.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.State["log"].([]any); len(got) != 2 || got[0] != "one" || got[1] != "two" {
		t.Errorf("log %v, want [one two]", got)
	}
	_, err = g.Thread(cp, "t").Fork(asked.ID).Invoke(ctx, nil, runtime.WithExpectedLatest(asked.ID))
	var oe *runtime.OptionError
	if !errors.As(err, &oe) {
		t.Errorf("a fork with WithExpectedLatest: err %v, want an OptionError", err)
	}
}
