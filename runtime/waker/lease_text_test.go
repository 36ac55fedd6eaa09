package waker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// TestNodeErrorNamingALostLeaseStaysFailed: a node fails with an error
// that wraps another thread's lost lease (a run of another thread it
// made itself); its thread ends failed, its own lease never lost. A
// waker's poll leaves it failed: only a run that lost its own thread's
// lease is continued. Before, the waker read the outcome's text, found
// the lease's words in it, and ran the failed node again.
func TestNodeErrorNamingALostLeaseStaysFailed(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	var runs atomic.Int32
	g, err := runtime.NewBuilder("nested").Channel("out", "").
		Node("n", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			runs.Add(1)
			return nil, fmt.Errorf("the report's run failed: %w", &checkpoint.LeaseLostError{Thread: "report", Fence: "7", Reason: checkpoint.LeaseDeadlinePassed, Found: "deadline"})
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := g.Thread(store, "t").Invoke(ctx, nil); res.Status != runtime.StatusError {
		t.Fatalf("the run ended %q, want error", res.Status)
	}
	w, err := waker.New(store, []waker.Target{waker.Graph(g)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := w.WakeDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if o := threadOutcome(t, store, "t"); o.Status != runtime.StatusError || runs.Load() != 1 {
		t.Errorf("after two polls: outcome %q (%s), the node ran %d times; want error, once", o.Status, o.Error, runs.Load())
	}
}
