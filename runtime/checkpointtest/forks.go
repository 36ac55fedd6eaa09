package checkpointtest

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

var forkContracts = []contract{
	{"ForkFromPauseReplaysStep", testForkFromPauseReplaysStep},
	{"ForkBeforeStepRunsIt", testForkBeforeStepRunsIt},
	{"ForkFromFailedStepReplaysStep", testForkFromFailedStepReplaysStep},
}

// chargeGraph is a node that charges (a journaled Step, counted) and then
// asks a person which answer to record.
func chargeGraph(t *testing.T, charged *atomic.Int32) *graph {
	return compile(t, runtime.NewBuilder("charge").Channel("answer", "").
		Node("pay", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(c, "charge", func() (int, error) { return int(charged.Add(1)), nil }); err != nil {
				return nil, err
			}
			a, err := runtime.Interrupt[string](c, "which answer?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"answer": a}, nil
		}).
		Edge(spec.Start, "pay").Edge("pay", spec.End))
}

// pauseOf returns the newest checkpoint of the thread with a pending
// interrupt, and its parent (the checkpoint the task was planned at).
func pauseOf(t *testing.T, cp runtime.Checkpointer, thread string) (pause, plan *runtime.Checkpoint) {
	t.Helper()
	cps, err := cp.List(t.Context(), thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cps {
		if len(c.Pending) > 0 {
			pause = c
			for _, p := range cps[i+1:] {
				if p.ID == c.ParentID {
					plan = p
				}
			}
			return pause, plan
		}
	}
	t.Fatalf("thread %q has no paused checkpoint", thread)
	return nil, nil
}

// testForkFromPauseReplaysStep: run, pause after the charge, resume with
// A (the charge replays), then resume the pause checkpoint again with B
// (the "change the answer by time travel" flow): the fork sees the
// journal that existed when the pause was current, so the charge is not
// run a second time, and the new branch ends with B.
func testForkFromPauseReplaysStep(t *testing.T, cp runtime.Checkpointer) {
	var charged atomic.Int32
	g := chargeGraph(t, &charged)
	ctx := t.Context()
	if res, err := g.Thread(cp, "f").Invoke(ctx, nil); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("run: %v %v", res.Status, err)
	}
	pause, _ := pauseOf(t, cp, "f")
	res, err := g.Thread(cp, "f").Resume(ctx, runtime.Answer("A"))
	if err != nil || res.Status != runtime.StatusDone || res.State["answer"] != "A" {
		t.Fatalf("resume with A: %v %v %v", res.Status, res.State, err)
	}
	res, err = g.Thread(cp, "f").Fork(pause.ID).Resume(ctx, runtime.Answer("B"))
	if err != nil || res.Status != runtime.StatusDone || res.State["answer"] != "B" {
		t.Fatalf("resume of the pause with B: %v %v %v", res.Status, res.State, err)
	}
	if n := charged.Load(); n != 1 {
		t.Errorf("the charge ran %d times, want once: a fork from the pause replays it", n)
	}
}

// testForkBeforeStepRunsIt: a fork from the checkpoint at which the task
// was planned, before its step ran, runs the step in the new branch.
func testForkBeforeStepRunsIt(t *testing.T, cp runtime.Checkpointer) {
	var charged atomic.Int32
	g := chargeGraph(t, &charged)
	ctx := t.Context()
	if res, err := g.Thread(cp, "b").Invoke(ctx, nil); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("run: %v %v", res.Status, err)
	}
	_, plan := pauseOf(t, cp, "b")
	if plan == nil {
		t.Fatal("the pause's parent, where the task was planned, is not listed")
	}
	if res, err := g.Thread(cp, "b").Resume(ctx, runtime.Answer("A")); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume with A: %v %v", res.Status, err)
	}
	res, err := g.Thread(cp, "b").Fork(plan.ID).Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("run from the plan checkpoint: %v %v", res.Status, err)
	}
	if n := charged.Load(); n != 2 {
		t.Errorf("the charge ran %d times, want twice: a fork from before the step runs it in the new branch", n)
	}
	res, err = g.Thread(cp, "b").Resume(ctx, runtime.Answer("B"))
	if err != nil || res.Status != runtime.StatusDone || res.State["answer"] != "B" {
		t.Fatalf("resume of the new branch with B: %v %v %v", res.Status, res.State, err)
	}
	if n := charged.Load(); n != 2 {
		t.Errorf("the charge ran %d times after the new branch's resume, want twice", n)
	}
}

// failingChargeGraph charges (a journaled Step, counted) and then fails
// while fail is set; when it does not fail it asks a person, as
// chargeGraph does.
func failingChargeGraph(t *testing.T, charged *atomic.Int32, fail *atomic.Bool) *graph {
	return compile(t, runtime.NewBuilder("charge").Channel("answer", "").
		Node("pay", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(c, "charge", func() (int, error) { return int(charged.Add(1)), nil }); err != nil {
				return nil, err
			}
			if fail.Load() {
				return nil, errors.New("the card network is down")
			}
			a, err := runtime.Interrupt[string](c, "which answer?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"answer": a}, nil
		}).
		Edge(spec.Start, "pay").Edge("pay", spec.End))
}

// testForkFromFailedStepReplaysStep: a superstep fails after its task's
// charge ran; the thread's latest checkpoint is then the one the failed
// superstep left, with the charge's journal kept for a retry. The retry
// replays the charge and pauses; the person answers A. A fork from the
// failed superstep's checkpoint, and one from the retry's pause answered
// with B, replay the charge too: it ran in the world while each was
// current, so the charge runs once in all.
func testForkFromFailedStepReplaysStep(t *testing.T, cp runtime.Checkpointer) {
	var charged atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	g := failingChargeGraph(t, &charged, &fail)
	ctx := t.Context()
	if res, err := g.Thread(cp, "x").Invoke(ctx, nil); err == nil || res.Status != runtime.StatusError {
		t.Fatalf("run: %v %v, want an error", res.Status, err)
	}
	failed, err := cp.Get(ctx, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	fail.Store(false)
	if res, err := g.Thread(cp, "x").Invoke(ctx, nil); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("retry: %v %v", res.Status, err)
	}
	if n := charged.Load(); n != 1 {
		t.Fatalf("the charge ran %d times by the retry, want once: the retry replays it", n)
	}
	pause, _ := pauseOf(t, cp, "x")
	if res, err := g.Thread(cp, "x").Resume(ctx, runtime.Answer("A")); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume with A: %v %v", res.Status, err)
	}
	if res, err := g.Thread(cp, "x").Fork(failed.ID).Invoke(ctx, nil); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("run from the failed superstep's checkpoint: %v %v", res.Status, err)
	}
	if n := charged.Load(); n != 1 {
		t.Errorf("the charge ran %d times after a fork from the failed superstep's checkpoint, want once: it replays the charge", n)
	}
	before := charged.Load()
	res, err := g.Thread(cp, "x").Fork(pause.ID).Resume(ctx, runtime.Answer("B"))
	if err != nil || res.Status != runtime.StatusDone || res.State["answer"] != "B" {
		t.Fatalf("resume of the retry's pause with B: %v %v %v", res.Status, res.State, err)
	}
	if n := charged.Load() - before; n != 0 {
		t.Errorf("a fork from the retry's pause ran the charge %d more times, want none: it replays the charge", n)
	}
}
