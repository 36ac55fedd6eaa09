package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestStopAtBoundary: a stop requested while a superstep's task runs lets
// that task finish and its superstep commit; the next superstep does not
// start, the run ends aborted, and a later run continues after the commit.
func TestStopAtBoundary(t *testing.T) {
	stop := make(chan struct{})
	var once sync.Once
	ran := map[string]int{}
	var mu sync.Mutex
	node := func(name string) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			mu.Lock()
			ran[name]++
			mu.Unlock()
			if name == "a" {
				once.Do(func() { close(stop) })
				// The stop must not cancel the task in flight.
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"log": name}, nil
		}
	}
	g := mustCompile(t, runtime.NewBuilder("three").Channel("log", spec.Append).
		Node("a", node("a")).Node("b", node("b")).Node("c", node("c")).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", "c").Edge("c", spec.End))
	cp := checkpoint.NewMemory()
	res, err := g.Thread(cp, "t").Invoke(context.Background(), nil, runtime.WithStopSignal(stop))
	if res.Status != runtime.StatusAborted || !errors.Is(err, runtime.ErrAborted) || !errors.Is(err, runtime.ErrStopRequested) {
		t.Fatalf("status %s, err %v; want aborted, matching ErrAborted and ErrStopRequested", res.Status, err)
	}
	if res.Supersteps != 1 || ran["b"] != 0 {
		t.Fatalf("%d supersteps, b ran %d times; want the stop after a's superstep", res.Supersteps, ran["b"])
	}
	ts, err := g.Thread(cp, "t").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if log, _ := ts.State["log"].([]any); len(log) != 1 || log[0] != "a" {
		t.Fatalf("the thread holds %v after the stop; want a's superstep committed", ts.State["log"])
	}
	res, err = g.Thread(cp, "t").Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("the run after the stop: %s %v", res.Status, err)
	}
	if got := res.State["log"].([]any); len(got) != 3 || ran["a"] != 1 || ran["b"] != 1 || ran["c"] != 1 {
		t.Fatalf("log %v, runs %v; want a, b and c once each", got, ran)
	}
}

// TestStopAtBoundaryBeforeStart: a stop already requested runs nothing.
func TestStopAtBoundaryBeforeStart(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	g := mustCompile(t, runtime.NewBuilder("one").Channel("x", "").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			t.Error("a ran after the stop")
			return nil, nil
		}).Edge(spec.Start, "a").Edge("a", spec.End))
	res, err := g.Invoke(context.Background(), nil, runtime.WithStopSignal(stop))
	if res.Status != runtime.StatusAborted || !errors.Is(err, runtime.ErrStopRequested) || res.Supersteps != 0 {
		t.Fatalf("status %s after %d supersteps, err %v", res.Status, res.Supersteps, err)
	}
}
