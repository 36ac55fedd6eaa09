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
	{"FailedCommitLeavesNothing", testFailedCommitLeavesNothing},
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
	first := mk("gone", "", 0)
	if err := l.Commit(ctx, checkpoint.Commit{Checkpoint: first}); err != nil {
		t.Fatalf("Put under the lease: %v", err)
	}
	entries := []checkpoint.JournalEntry{{Key: "s#0", Value: json.RawMessage(`1`)}}
	if err := l.PutJournal(ctx, "task", entries); err != nil {
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
	if err := l.Commit(ctx, checkpoint.Commit{Checkpoint: mk("gone", first.ID, 1)}); err == nil {
		t.Error("a Put under the deleted thread's lease was accepted")
	}
	if err := l.PutJournal(ctx, "task", entries); err == nil {
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
	if err := again.Commit(ctx, checkpoint.Commit{Checkpoint: mk("gone", "", 0)}); err != nil {
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
	res, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
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

// testFailedCommitLeavesNothing: a Lease.Commit is one atomic write. One
// that fails (a delta whose base the thread lacks; a lease whose thread
// was deleted, so its fence is lost) leaves none of its parts: no
// checkpoint, no dropped journal, no thread record, no events.
func testFailedCommitLeavesNothing(t *testing.T, cp runtime.Checkpointer) {
	ctx := t.Context()
	l, err := cp.Lease(ctx, "c", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	lst, _ := cp.(checkpoint.ThreadLister)
	_, isRec := cp.(checkpoint.ThreadRecorder)
	es, isES := cp.(checkpoint.EventStore)
	commit := func(c checkpoint.Commit) error {
		if !isRec {
			c.Thread = nil
		}
		if !isES {
			c.Events = nil
		}
		return l.Commit(ctx, c)
	}
	meta := func() map[string]string {
		if lst == nil || !isRec {
			return nil
		}
		page, err := lst.ListThreads(ctx, checkpoint.ThreadQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range page.Threads {
			if th.ID == "c" {
				return th.Meta
			}
		}
		return nil
	}
	first := mk("c", "", 0)
	if err := commit(checkpoint.Commit{Checkpoint: first, Thread: &checkpoint.ThreadWrite{Meta: map[string]string{"k": "1"}}, Events: mkEvents("r", "c", 1, 2, 1_800_000_000)}); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	entries := []checkpoint.JournalEntry{{Key: "s#0", Value: json.RawMessage(`1`)}}
	if err := l.PutJournal(ctx, "task", entries); err != nil {
		t.Fatal(err)
	}
	if _, ok := cp.(checkpoint.DeltaCheckpointer); ok {
		bad := mk("c", first.ID, 1)
		err := commit(checkpoint.Commit{Checkpoint: bad, Delta: &checkpoint.Delta{Base: "missing"}, Done: []string{"task"},
			Thread: &checkpoint.ThreadWrite{Meta: map[string]string{"k": "2"}, Outcome: &checkpoint.ThreadOutcome{Status: runtime.StatusDone, RunID: "r", Ended: time.Now()}},
			Events: mkEvents("r", "c", 3, 4, 1_800_000_000)})
		if !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("Commit of a delta of a missing base: %v, want an error matching ErrNotFound", err)
		}
		if got := list(t, cp, "c", 0); len(got) != 1 || got[0] != first.ID {
			t.Errorf("after the failed commit the thread holds %v, want only %s", got, first.ID)
		}
		if j, err := cp.GetJournal(ctx, "c", "task"); err != nil || len(j) != 1 {
			t.Errorf("after the failed commit the journal is %v (%v), want it kept", j, err)
		}
		if m := meta(); isRec && m["k"] != "1" {
			t.Errorf("after the failed commit the thread's metadata is %v, want k=1", m)
		}
		if isES {
			if got := readSeqs(t, es, "r", 0, 0); len(got) != 2 {
				t.Errorf("after the failed commit the run has events %v, want [1 2]", got)
			}
		}
	}
	if err := cp.DeleteThread(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	err = commit(checkpoint.Commit{Checkpoint: mk("c", first.ID, 1), Thread: &checkpoint.ThreadWrite{Meta: map[string]string{"k": "3"}}, Events: mkEvents("r", "c", 3, 4, 1_800_000_000)})
	if err == nil {
		t.Fatal("a Commit under the deleted thread's lease was accepted")
	}
	if got := list(t, cp, "c", 0); len(got) != 0 {
		t.Errorf("after the refused commit the thread holds %v", got)
	}
	if m := meta(); m != nil {
		t.Errorf("after the refused commit the thread has metadata %v", m)
	}
	if isES {
		if got := readSeqs(t, es, "r", 0, 0); len(got) != 0 {
			t.Errorf("after the refused commit the run has events %v", got)
		}
	}
}
