package checkpointtest

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

var fencingContracts = []contract{
	{"LeaseFencesTokensDiffer", testFenceTokensDiffer},
	{"DeleteThreadFencesItsRun", testDeleteFencesRun},
	{"GraphDeleteThreadDuringRun", testGraphDeleteDuringRun},
}

// testFenceTokensDiffer: every take of a thread's lease has its own fencing
// token, and a deadline that is zero (no expiry) or in the future.
func testFenceTokensDiffer(t *testing.T, cp runtime.Checkpointer) {
	seen := map[string]bool{}
	for range 3 {
		l, err := cp.Lease(t.Context(), "t", checkpoint.LeaseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if f := l.Fence(); f == "" || seen[f] {
			t.Errorf("fencing token %q is empty or was given out before", f)
		} else {
			seen[f] = true
		}
		if d := l.Deadline(); !d.IsZero() && !d.After(time.Now()) {
			t.Errorf("a lease just taken has a deadline in the past: %v", d)
		}
		l.Release()
	}
}

// testDeleteFencesRun: DeleteThread while a run holds the thread's lease
// tells the holder (LeaseOptions.Lost, matching checkpoint.ErrThreadDeleted),
// refuses every later write made under that lease, leaves nothing of the
// thread, and frees the thread for a new lease at once.
func testDeleteFencesRun(t *testing.T, cp runtime.Checkpointer) {
	ctx := t.Context()
	lost := make(chan error, 1)
	l, err := cp.Lease(ctx, "gone", checkpoint.LeaseOptions{Lost: func(err error) { lost <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	run := checkpoint.ContextWithLease(ctx, l)
	first := mk("gone", "", 0)
	if err := cp.Put(run, first, nil); err != nil {
		t.Fatalf("Put under the lease: %v", err)
	}
	entries := []checkpoint.JournalEntry{{Key: "s#0", Value: json.RawMessage(`1`)}}
	if err := cp.PutJournal(run, "gone", "task", entries); err != nil {
		t.Fatalf("PutJournal under the lease: %v", err)
	}
	if err := cp.DeleteThread(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-lost:
		if !errors.Is(err, checkpoint.ErrThreadDeleted) {
			t.Errorf("Lost received %v, want an error matching checkpoint.ErrThreadDeleted", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the holder was not told that its thread was deleted")
	}
	if err := cp.Put(run, mk("gone", first.ID, 1), nil); err == nil {
		t.Error("a Put under the deleted thread's lease was accepted")
	}
	if err := cp.PutJournal(run, "gone", "task", entries); err == nil {
		t.Error("a PutJournal under the deleted thread's lease was accepted")
	}
	if got := list(t, cp, "gone", 0); len(got) != 0 {
		t.Errorf("checkpoints after DeleteThread and the late writes: %v", got)
	}
	if j, err := cp.GetJournal(ctx, "gone", "task"); err != nil || len(j) != 0 {
		t.Errorf("journal after DeleteThread and the late writes: %v, %v", j, err)
	}
	again, err := cp.Lease(ctx, "gone", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatalf("Lease right after DeleteThread: %v", err)
	}
	l.Release() // the deleted lease's release must not free the new one
	if _, err := cp.Lease(ctx, "gone", checkpoint.LeaseOptions{}); !errors.Is(err, runtime.ErrThreadBusy) {
		t.Errorf("Lease while the new lease is held: %v, want ErrThreadBusy", err)
	}
	if err := cp.Put(checkpoint.ContextWithLease(ctx, again), mk("gone", "", 0), nil); err != nil {
		t.Errorf("Put under the new lease: %v", err)
	}
	again.Release()
}

// testGraphDeleteDuringRun: a thread deleted while its run is in a node
// (DeleteThread returns without waiting) ends the run with an error
// matching checkpoint.ErrThreadDeleted; the step asked for after the delete is
// not run, the node's finished superstep is not committed, and nothing of
// the thread comes back.
func testGraphDeleteDuringRun(t *testing.T, cp runtime.Checkpointer) {
	var ran atomic.Int32
	g := compile(t, runtime.NewBuilder("deleted").Channel("x", "").
		Node("first", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			_, err := runtime.Step(ctx, "before", func() (int, error) { return 1, nil })
			return runtime.Values{"x": 1}, err
		}).
		Node("second", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := cp.DeleteThread(context.Background(), "t"); err != nil {
				return nil, err
			}
			_, err := runtime.Step(ctx, "after", func() (int, error) { ran.Add(1); return 2, nil })
			if err == nil {
				return runtime.Values{"x": 2}, nil
			}
			return nil, err
		}).
		Node("third", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			return runtime.Values{"x": 3}, nil
		}).
		Edge(spec.Start, "first").Edge("first", "second").Edge("second", "third"))
	res, err := g.Invoke(t.Context(), nil, on(cp, "t")...)
	if res.Status != runtime.StatusError || !errors.Is(err, checkpoint.ErrThreadDeleted) {
		t.Fatalf("status %q, err %v; want error matching ErrThreadDeleted", res.Status, err)
	}
	if ran.Load() != 0 {
		t.Errorf("the step after the delete ran %d times", ran.Load())
	}
	if got := list(t, cp, "t", 0); len(got) != 0 {
		t.Errorf("the deleted thread came back with checkpoints %v", got)
	}
}
