package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/leaktest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// The runtime under faults: nodes that panic, hang or fail among siblings
// that succeed, a checkpointer whose writes fail, leases that cannot be
// taken. Every test asserts that no goroutine outlives it and that every
// lease taken was given back.

// siblingsGraph is "bad" among three succeeding siblings, all planned from
// __start__. Each sibling journals a step (counted in effects), records its
// task id, and writes its name to "log"; "bad" runs body.
func siblingsGraph(t *testing.T, effects *atomic.Int32, taskIDs *sync.Map, body runtime.NodeFunc) *runtime.Graph[runtime.Values, runtime.Values] {
	b := runtime.NewBuilder("siblings").Channel("log", spec.Append).Channel("bad", "")
	for _, id := range []string{"s1", "s2", "s3"} {
		b.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			taskIDs.Store(id, ctx.TaskID())
			if _, err := runtime.Step(ctx, "effect", func() (int, error) { return int(effects.Add(1)), nil }); err != nil {
				return nil, err
			}
			return runtime.Values{"log": id}, nil
		}).Edge(spec.Start, id)
	}
	return mustCompile(t, b.Node("bad", body).Edge(spec.Start, "bad"))
}

// TestNodeFaultAmongSiblings runs a node that panics, returns an error, or
// hangs until the run is cancelled, among siblings that succeed. The run
// ends in error (or aborted), the superstep is void (no sibling update is
// reduced and the last checkpoint stands), the siblings' journals are kept,
// and a later run on the thread finishes the superstep without re-running
// the siblings' completed steps.
func TestNodeFaultAmongSiblings(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name       string
		fault      func(ctx *runtime.Ctx, returned chan<- struct{}) (runtime.Values, error)
		cancel     bool           // cancel the run once the siblings are done
		wantStatus runtime.Status // StatusError: a NodeError of node bad; StatusAborted: ErrAborted
		check      func(t *testing.T, err error)
	}{
		{
			name: "panic",
			fault: func(*runtime.Ctx, chan<- struct{}) (runtime.Values, error) {
				var m map[string]int
				//lint:ignore SA5000 the nil-map write is the fault under test: a runtime panic, not a panic(string)
				m["x"] = 1
				return nil, nil
			},
			wantStatus: runtime.StatusError,
			check: func(t *testing.T, err error) {
				var ne *runtime.NodeError
				if !errors.As(err, &ne) || ne.Node != "bad" || ne.TaskKey != "bad" {
					t.Fatalf("err %#v, want a NodeError of node bad", err)
				}
				if !strings.Contains(err.Error(), `node "bad" (task "bad") panicked: panic: assignment to entry in nil map`) {
					t.Errorf("message %q does not name the node and the panic", err)
				}
				if !strings.Contains(ne.Stack, "goroutine ") || !strings.Contains(ne.Stack, "faults_test.go") {
					t.Errorf("the stack does not reach the panicking node:\n%s", ne.Stack)
				}
			},
		},
		{
			name: "error",
			fault: func(*runtime.Ctx, chan<- struct{}) (runtime.Values, error) {
				return nil, fmt.Errorf("charge card: %w", errBoom)
			},
			wantStatus: runtime.StatusError,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), `node "bad" (task "bad"): charge card: boom`) {
					t.Errorf("err %v does not wrap the node's error with the node's name", err)
				}
			},
		},
		{
			name: "hang until cancelled",
			fault: func(ctx *runtime.Ctx, returned chan<- struct{}) (runtime.Values, error) {
				defer close(returned)
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(10 * time.Second):
					return nil, errors.New("the run's context was never cancelled")
				}
			},
			cancel:     true,
			wantStatus: runtime.StatusAborted,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "run aborted") {
					t.Errorf("err %v, want run aborted: context canceled", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			var effects atomic.Int32
			var taskIDs sync.Map
			healed := atomic.Bool{}
			returned := make(chan struct{})
			g := siblingsGraph(t, &effects, &taskIDs, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				if healed.Load() {
					return runtime.Values{"bad": "recovered"}, nil
				}
				return tc.fault(ctx, returned)
			})
			store := newFaultyStore()
			defer store.checkReleased(t)
			th := g.Thread(store, "t")

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() {
					for effects.Load() < 3 && ctx.Err() == nil {
						time.Sleep(time.Millisecond)
					}
					cancel()
				}()
			}
			res, err := th.Invoke(ctx, nil)
			var ne *runtime.NodeError
			isNode := errors.As(err, &ne) && ne.Node == "bad"
			if res.Status != tc.wantStatus || res.Err != err || isNode != (tc.wantStatus == runtime.StatusError) || errors.Is(err, runtime.ErrAborted) != (tc.wantStatus == runtime.StatusAborted) {
				t.Fatalf("run ended %s with %v, want %s (a NodeError of node bad when StatusError, ErrAborted when StatusAborted)", res.Status, err, tc.wantStatus)
			}
			tc.check(t, err)
			if tc.cancel {
				select {
				case <-returned:
				default:
					t.Error("Invoke returned before the hanging node did")
				}
			}
			if _, ok := res.State["log"].([]any); ok && len(res.State["log"].([]any)) > 0 {
				t.Errorf("a sibling's update was reduced in the void superstep: log = %v", res.State["log"])
			}
			cp := latest(t, store, "t")
			if cp.Step != 0 || res.CheckpointID != cp.ID || len(cp.Next) != 4 {
				t.Errorf("latest checkpoint %s is at step %d with %d tasks planned; want the run's first checkpoint %s, at step 0 planning the 4 tasks again", cp.ID, cp.Step, len(cp.Next), res.CheckpointID)
			}
			taskIDs.Range(func(k, v any) bool {
				j, err := store.GetJournal(context.Background(), "t", v.(string))
				if err != nil || len(j) != 1 || j[0].Key != "effect#0" {
					t.Errorf("journal of sibling %s: %+v %v; want its completed step kept for the retry", k, j, err)
				}
				return true
			})

			healed.Store(true)
			res, err = th.Invoke(context.Background(), nil)
			if err != nil || res.Status != runtime.StatusDone || res.State["bad"] != "recovered" || fmt.Sprint(res.State["log"]) != "[s1 s2 s3]" {
				t.Fatalf("the later run ended %s (%v) with state %v; want done with every update reduced", res.Status, err, res.State)
			}
			if n := effects.Load(); n != 3 {
				t.Errorf("the siblings' steps ran %d times in all, want 3: the retry must replay them from their journals", n)
			}
		})
	}
}

// TestCheckpointPutFails makes the checkpointer fail the Put of one
// checkpoint. The run ends with a *CheckpointError that wraps the
// backend's error, the thread's previous checkpoint stands (Get returns
// it), the result reports the state of that checkpoint, and once the
// backend heals a plain run continues from it, replaying completed steps.
func TestCheckpointPutFails(t *testing.T) {
	type env struct {
		g       *runtime.Graph[runtime.Values, runtime.Values]
		effects *atomic.Int32
	}
	// chain is a -> b; a journals a step and writes n=1, b writes n=2.
	chain := func(t *testing.T) env {
		var effects atomic.Int32
		g := mustCompile(t, runtime.NewBuilder("chain").Channel("n", "").Channel("in", spec.Append).
			Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				if _, err := runtime.Step(ctx, "effect", func() (int, error) { return int(effects.Add(1)), nil }); err != nil {
					return nil, err
				}
				return runtime.Values{"n": 1}, nil
			}).
			Node("b", write(runtime.Values{"n": 2})).
			Edge(spec.Start, "a").Edge("a", "b"))
		return env{g, &effects}
	}
	// ask is one node that journals a step, then asks a person.
	ask := func(t *testing.T) env {
		var effects atomic.Int32
		g := mustCompile(t, runtime.NewBuilder("ask").Channel("n", "").Channel("in", spec.Append).
			Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				if _, err := runtime.Step(ctx, "effect", func() (int, error) { return int(effects.Add(1)), nil }); err != nil {
					return nil, err
				}
				ans, err := runtime.Interrupt[int](ctx, "n?")
				if err != nil {
					return nil, err
				}
				return runtime.Values{"n": ans}, nil
			}).
			Edge(spec.Start, "a"))
		return env{g, &effects}
	}
	tests := []struct {
		name  string
		build func(t *testing.T) env
		// setup runs on the healthy store before the fault is armed.
		setup func(t *testing.T, e env, th *runtime.Thread[runtime.Values, runtime.Values])
		// fails chooses the Put to fail.
		fails func(cp *runtime.Checkpoint) bool
		// wantPrev is the step of the checkpoint that must stand; -1 when
		// the thread must have none.
		wantPrev int
		// finish drives the thread to its end after the backend healed.
		finish func(t *testing.T, e env, th *runtime.Thread[runtime.Values, runtime.Values]) runtime.Result[runtime.Values]
	}{
		{
			name:     "first checkpoint of a new thread",
			build:    chain,
			fails:    func(cp *runtime.Checkpoint) bool { return cp.Step == 0 },
			wantPrev: -1,
		},
		{
			name:     "checkpoint after a superstep",
			build:    chain,
			fails:    func(cp *runtime.Checkpoint) bool { return cp.Step == 1 },
			wantPrev: 0,
		},
		{
			name:  "checkpoint of new input on an existing thread",
			build: chain,
			setup: func(t *testing.T, e env, th *runtime.Thread[runtime.Values, runtime.Values]) {
				if _, err := th.Invoke(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
			},
			fails:    func(cp *runtime.Checkpoint) bool { return strings.Contains(string(cp.Channels), "second") },
			wantPrev: 2,
		},
		{
			name:     "checkpoint of an interrupt",
			build:    ask,
			fails:    func(cp *runtime.Checkpoint) bool { return len(cp.Pending) > 0 },
			wantPrev: 0,
			finish: func(t *testing.T, e env, th *runtime.Thread[runtime.Values, runtime.Values]) runtime.Result[runtime.Values] {
				res, err := th.Invoke(context.Background(), nil)
				if err != nil || res.Status != runtime.StatusInterrupted {
					t.Fatalf("plain run after the failed pause: %s %v, want interrupted again", res.Status, err)
				}
				res, err = th.Resume(context.Background(), runtime.Answer(2))
				if err != nil {
					t.Fatal(err)
				}
				return res
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			e := tc.build(t)
			store := newFaultyStore()
			defer store.checkReleased(t)
			th := e.g.Thread(store, "t")
			if tc.setup != nil {
				tc.setup(t, e, th)
			}
			var before *runtime.Checkpoint
			if tc.setup != nil {
				before = latest(t, store, "t")
			}
			store.failPut = func(_ int, cp *runtime.Checkpoint) error {
				if tc.fails(cp) {
					return fmt.Errorf("disk full: %w", errInjected)
				}
				return nil
			}
			res, err := th.Invoke(context.Background(), runtime.Values{"in": "second"})
			var ce *runtime.CheckpointError
			if !errors.As(err, &ce) || ce.Op != "put" || !errors.Is(err, errInjected) || !strings.Contains(fmt.Sprint(err), "checkpointer put: disk full") {
				t.Errorf("run ended %q with %v, want a CheckpointError of put wrapping the backend's", res.Status, err)
			}
			if res.Status == runtime.StatusInterrupted || res.Status == runtime.StatusDone {
				t.Errorf("status %s: a run whose checkpoint was not stored must not report %s", res.Status, res.Status)
			}
			got, gerr := store.Get(context.Background(), "t", "")
			switch {
			case tc.wantPrev < 0:
				if !errors.Is(gerr, runtime.ErrNotFound) {
					t.Errorf("Get after the failed first Put: %+v %v, want ErrNotFound", got, gerr)
				}
			case gerr != nil || got.Step != tc.wantPrev || before != nil && got.ID != before.ID:
				t.Errorf("latest checkpoint %+v (%v), want the one that stood before the failed Put, at step %d", got, gerr, tc.wantPrev)
			case res.Status != "": // the run started (a refused run's Result is empty)
				if res.CheckpointID != got.ID {
					t.Errorf("Result.CheckpointID = %q, want the standing checkpoint %q", res.CheckpointID, got.ID)
				}
				if !sameChannels(t, res.State, got.Channels) {
					t.Errorf("Result.State = %v is not the state of the standing checkpoint %s", res.State, got.Channels)
				}
			}

			store.heal()
			if tc.finish == nil {
				tc.finish = func(t *testing.T, e env, th *runtime.Thread[runtime.Values, runtime.Values]) runtime.Result[runtime.Values] {
					res, err := th.Invoke(context.Background(), nil)
					if err != nil {
						t.Fatalf("the later run: %v", err)
					}
					return res
				}
			}
			res = tc.finish(t, e, th)
			if res.Status != runtime.StatusDone || res.State["n"] != 2.0 {
				t.Errorf("the later run ended %s with n=%v, want done with n=2", res.Status, res.State["n"])
			}
			if n := e.effects.Load(); n != 1 && tc.name != "checkpoint of new input on an existing thread" {
				t.Errorf("the journaled step ran %d times, want once", n)
			}
		})
	}
}

// sameChannels reports whether the state encodes to the JSON value of a
// checkpoint's channels.
func sameChannels(t *testing.T, s runtime.Values, channels []byte) bool {
	t.Helper()
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	eq, err := spec.JSONEqual(got, channels)
	if err != nil {
		t.Fatal(err)
	}
	return eq
}

// TestJournalWriteFails makes PutJournal fail while a task records a step, a
// pause, or a resume's answer. The call that needed the write returns the
// backend's error and nothing is journaled as done; the run (or resume)
// ends in error; a later run re-runs the step exactly once and replays
// the steps that were journaled before the failure.
func TestJournalWriteFails(t *testing.T) {
	var reserve, charge atomic.Int32
	g := mustCompile(t, runtime.NewBuilder("pay").Channel("paid", "").
		Node("pay", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "reserve", func() (int, error) { return int(reserve.Add(1)), nil }); err != nil {
				return nil, err
			}
			if _, err := runtime.Step(ctx, "charge", func() (int, error) { return int(charge.Add(1)), nil }); err != nil {
				return nil, err
			}
			ok, err := runtime.Interrupt[bool](ctx, "ship?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"paid": ok}, nil
		}).Edge(spec.Start, "pay"))
	tests := []struct {
		name      string
		failKey   string // fail the journal write whose last entry has this key
		wantCalls [2]int32
		wantMsg   string
	}{
		{"step", "charge#0", [2]int32{1, 2}, `step "charge#0": persist journal: `},
		{"interrupt", "interrupt#0", [2]int32{1, 1}, `interrupt "pay:interrupt#0": persist journal: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			reserve.Store(0)
			charge.Store(0)
			store := newFaultyStore()
			defer store.checkReleased(t)
			th := g.Thread(store, "t")
			var taskID string
			store.failPutJournal = func(_ int, id string, entries []checkpoint.JournalEntry) error {
				if entries[len(entries)-1].Key == tc.failKey {
					taskID = id
					return errInjected
				}
				return nil
			}
			res, err := th.Invoke(context.Background(), nil)
			if res.Status != runtime.StatusError || !errors.Is(err, errInjected) || !strings.Contains(fmt.Sprint(err), tc.wantMsg) {
				t.Fatalf("run ended %s with %v, want an error wrapping the backend's, containing %q", res.Status, err, tc.wantMsg)
			}
			j, err := store.GetJournal(context.Background(), "t", taskID)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range j {
				if e.Key == tc.failKey {
					t.Errorf("%s is journaled although its write failed: %+v", tc.failKey, j)
				}
			}
			if cp := latest(t, store, "t"); cp.Step != 0 || len(cp.Pending) != 0 {
				t.Errorf("latest checkpoint at step %d with pending %v, want the run's first", cp.Step, cp.Pending)
			}

			store.heal()
			res, err = th.Invoke(context.Background(), nil)
			if err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("the later run: %s %v, want interrupted", res.Status, err)
			}
			if got := [2]int32{reserve.Load(), charge.Load()}; got != tc.wantCalls {
				t.Errorf("reserve and charge ran %v times, want %v: a journaled step replays, an unjournaled one re-runs once", got, tc.wantCalls)
			}
			res, err = th.Resume(context.Background(), runtime.Answer(true))
			if err != nil || res.State["paid"] != true {
				t.Fatalf("resume: %v %v", res.State, err)
			}
		})
	}

	t.Run("answer of a resume", func(t *testing.T) {
		leaktest.Check(t)
		store := newFaultyStore()
		defer store.checkReleased(t)
		th := g.Thread(store, "t")
		if res, err := th.Invoke(context.Background(), nil); err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("%s %v", res.Status, err)
		}
		store.failPutJournal = func(int, string, []checkpoint.JournalEntry) error { return errInjected }
		_, err := th.Resume(context.Background(), runtime.Answer(true))
		var ce *runtime.CheckpointError
		if !errors.As(err, &ce) || !errors.Is(err, errInjected) {
			t.Fatalf("resume with a failing journal: %v, want a CheckpointError", err)
		}
		store.heal()
		// The answer was not recorded: the thread still waits, and answers
		// differently without conflict.
		if _, err := th.Invoke(context.Background(), nil); !errors.Is(err, runtime.ErrWaitingOnPerson) {
			t.Errorf("plain run on the waiting thread: %v, want it refused as waiting", err)
		}
		res, err := th.Resume(context.Background(), runtime.Answer(false))
		if err != nil || res.State["paid"] != false {
			t.Fatalf("resume after the failed one: %v %v", res.State, err)
		}
	})
}

// TestLeaseFails makes the checkpointer's Lease fail. The run is refused
// before anything runs or is written: a *CheckpointError (op
// "lease") for a broken backend, ErrThreadBusy for a held thread, one
// error and no event from Stream.
func TestLeaseFails(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		checkpoint bool // a CheckpointError; else the backend's error as it is
		wantMsg    string
	}{
		{"backend error", fmt.Errorf("connection reset: %w", errInjected), true, "checkpointer lease: connection reset: injected fault"},
		{"busy", fmt.Errorf("held by worker-7: %w", runtime.ErrThreadBusy), false, "held by worker-7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			var ran atomic.Int32
			g := mustCompile(t, runtime.NewBuilder("lease").Channel("x", "").
				Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { ran.Add(1); return nil, nil }).
				Edge(spec.Start, "a"))
			store := newFaultyStore()
			store.failLease = tc.err
			th := g.Thread(store, "t")
			for _, run := range []struct {
				name string
				do   func() error
			}{
				{"Invoke", func() error { _, err := th.Invoke(context.Background(), runtime.Values{"x": 1}); return err }},
				{"Resume", func() error { _, err := th.Resume(context.Background(), runtime.Answer(1)); return err }},
				{"Stream", func() error {
					var errs []error
					for ev, err := range th.Stream(context.Background(), nil) {
						if err == nil {
							t.Errorf("Stream yielded event %s from a refused run", ev.Type)
						}
						errs = append(errs, err)
					}
					if len(errs) != 1 {
						t.Errorf("Stream yielded %d errors, want 1", len(errs))
						return nil
					}
					return errs[0]
				}},
			} {
				err := run.do()
				var ce *runtime.CheckpointError
				if errors.As(err, &ce) != tc.checkpoint || !strings.Contains(fmt.Sprint(err), tc.wantMsg) || !errors.Is(err, errors.Unwrap(tc.err)) {
					t.Errorf("%s: %v, want it containing %q (a CheckpointError: %v)", run.name, err, tc.wantMsg, tc.checkpoint)
				}
			}
			if ran.Load() != 0 {
				t.Error("a node ran without the thread's lease")
			}
			if cp, err := store.Get(context.Background(), "t", ""); !errors.Is(err, runtime.ErrNotFound) {
				t.Errorf("a refused run wrote checkpoint %+v", cp)
			}
		})
	}
}

// TestCheckpointerReadFails makes the reads of a run fail (Get of the
// latest checkpoint, GetJournal of a replayed task): the run is refused or
// ends with a *CheckpointError and writes nothing.
func TestCheckpointerReadFails(t *testing.T) {
	leaktest.Check(t)
	var ran atomic.Int32
	g := mustCompile(t, runtime.NewBuilder("read").Channel("x", "").
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ran.Add(1)
			_, err := runtime.Interrupt[int](ctx, "x?")
			return nil, err
		}).Edge(spec.Start, "a"))
	inner := newFaultyStore()
	if _, err := g.Thread(inner, "t").Invoke(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	before := latest(t, inner, "t").ID
	for _, tc := range []struct {
		name string
		cp   runtime.Checkpointer
	}{
		{"get", failingReads{Checkpointer: inner, get: true}},
		{"get journal", failingReads{Checkpointer: inner, journal: true}},
	} {
		for _, resume := range []bool{false, true} {
			var err error
			if resume {
				_, err = g.Thread(tc.cp, "t").Resume(context.Background(), runtime.Answer(1))
			} else {
				_, err = g.Thread(tc.cp, "t").Invoke(context.Background(), nil)
			}
			var ce *runtime.CheckpointError
			if !errors.As(err, &ce) || !errors.Is(err, errInjected) {
				t.Errorf("%s (resume %v): %v, want a CheckpointError", tc.name, resume, err)
			}
		}
	}
	if ran.Load() != 1 || latest(t, inner, "t").ID != before {
		t.Errorf("failed reads ran nodes (%d runs) or wrote checkpoints", ran.Load())
	}
	inner.checkReleased(t)
	if res, err := g.Thread(inner, "t").Resume(context.Background(), runtime.Answer(1)); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume on the healthy store: %s %v", res.Status, err)
	}
}

// failingReads fails Get or GetJournal.
type failingReads struct {
	runtime.Checkpointer
	get, journal bool
}

func (f failingReads) Get(ctx context.Context, thread, id string) (*runtime.Checkpoint, error) {
	if f.get {
		return nil, errInjected
	}
	return f.Checkpointer.Get(ctx, thread, id)
}

func (f failingReads) GetJournal(ctx context.Context, thread, task string) ([]checkpoint.JournalEntry, error) {
	if f.journal {
		return nil, errInjected
	}
	return f.Checkpointer.GetJournal(ctx, thread, task)
}

// TestNodeIDLikeSendKeyIsKeptApart runs a spec whose node ids are "w" and
// "w#0" (any string is a valid id) with a registry node that sends one task
// to "w" and routes to "w#0" in the same superstep. The send's task key is
// "w#0" too. Either the graph is refused when it is built, naming the
// clash, or the two tasks keep separate journals and interrupt ids: each
// pauses on its own question and, resumed, replays its own step.
func TestNodeIDLikeSendKeyIsKeptApart(t *testing.T) {
	leaktest.Check(t)
	doc, ds := spec.Decode("clash.json", []byte(`{
  "channels": {"out": {"reducer": "append"}},
  "nodes": [
    {"id": "fan", "type": "fan"},
    {"id": "w", "type": "worker"},
    {"id": "w#0", "type": "worker"}
  ],
  "edges": [{"from": "__start__", "to": "fan"}]
}`))
	if doc == nil {
		t.Fatal(ds.Err())
	}
	reg := runtime.Registry{
		"fan": func(spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				ctx.Command(runtime.SendTo("w", runtime.Values{}), runtime.To("w#0"))
				return nil, nil
			}, nil
		},
		"worker": func(n spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				mine, err := runtime.Step(ctx, "who", func() (string, error) { return "step of node " + n.ID, nil })
				if err != nil {
					return nil, err
				}
				ans, err := runtime.Interrupt[string](ctx, "question of node "+n.ID)
				if err != nil {
					return nil, err
				}
				return runtime.Values{"out": n.ID + " | " + mine + " | " + ans}, nil
			}, nil
		},
	}
	g, err := runtime.FromSpec(doc, reg)
	if err != nil {
		if !strings.Contains(err.Error(), `"w#0"`) {
			t.Fatalf("refused without naming the clashing id: %v", err)
		}
		return // refusing the graph is a correct outcome
	}
	store := checkpoint.NewMemory()
	th := g.Thread(store, "t")
	res, err := th.Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("%s %v", res.Status, err)
	}
	ids := map[string]string{} // interrupt id -> node
	for _, p := range res.Pending {
		ids[p.ID] = p.Node
	}
	if len(res.Pending) != 2 || len(ids) != 2 {
		t.Errorf("pending interrupts %+v: the two tasks' interrupts must have distinct ids and task ids", res.Pending)
	}
	answers := map[string]any{}
	for id, node := range ids {
		answers[id] = "answer for " + node
	}
	res, err = th.Resume(context.Background(), runtime.AnswersByID(answers))
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	want := "[w | step of node w | answer for w w#0 | step of node w#0 | answer for w#0]"
	if got := fmt.Sprint(res.State["out"]); got != want {
		t.Errorf("out = %s\nwant  %s\n(tasks sharing a key share a journal)", got, want)
	}
}

// TestCallbackPanicIsAnError makes the Go callbacks of a code-built graph
// panic: a router, an EdgeIf guard and a custom reducer. Like a node's
// panic, each must end the run with an error (naming the node or channel,
// with the panic's value) instead of unwinding into the caller's
// goroutine, and the thread must stay usable.
func TestCallbackPanicIsAnError(t *testing.T) {
	boom := func() { panic("callback exploded") }
	tests := []struct {
		name string
		b    func(armed *atomic.Bool) *runtime.Builder
		node bool // a NodeError; else a ReduceError
	}{
		{"router", func(armed *atomic.Bool) *runtime.Builder {
			return runtime.NewBuilder("r").Channel("x", "").Node("a", write(runtime.Values{"x": 1})).Node("b", write(nil)).
				Edge(spec.Start, "a").
				Router("a", func(runtime.Values) ([]runtime.Goto, error) {
					if armed.Load() {
						boom()
					}
					return []runtime.Goto{runtime.To("b")}, nil
				})
		}, true},
		{"guard", func(armed *atomic.Bool) *runtime.Builder {
			return runtime.NewBuilder("g").Channel("x", "").Node("a", write(runtime.Values{"x": 1})).Node("b", write(nil)).
				Edge(spec.Start, "a").
				EdgeIf("a", "b", func(runtime.Values) bool {
					if armed.Load() {
						boom()
					}
					return true
				})
		}, true},
		{"custom reducer", func(armed *atomic.Bool) *runtime.Builder {
			return runtime.NewBuilder("c").ChannelFunc("x", func(_, in any) (any, error) {
				if armed.Load() {
					boom()
				}
				return in, nil
			}).Node("a", write(runtime.Values{"x": 1})).Edge(spec.Start, "a")
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			var armed atomic.Bool
			g := mustCompile(t, tc.b(&armed))
			store := newFaultyStore()
			defer store.checkReleased(t)
			th := g.Thread(store, "t")
			armed.Store(true)
			var res runtime.Result[runtime.Values]
			var err error
			escaped := func() (v any) {
				defer func() { v = recover() }()
				res, err = th.Invoke(context.Background(), nil)
				return nil
			}()
			if escaped != nil {
				t.Fatalf("the %s's panic escaped Invoke into the caller: %v", tc.name, escaped)
			}
			var ne *runtime.NodeError
			var re *runtime.ReduceError
			if res.Status != runtime.StatusError || errors.As(err, &ne) != tc.node || errors.As(err, &re) == tc.node || !strings.Contains(fmt.Sprint(err), "callback exploded") {
				t.Errorf("run ended %s with %v, want an error carrying the panic (a NodeError: %v, else a ReduceError)", res.Status, err, tc.node)
			}
			armed.Store(false)
			if res, err := th.Invoke(context.Background(), nil); err != nil || res.Status != runtime.StatusDone {
				t.Errorf("the thread after the panic: %s %v", res.Status, err)
			}
		})
	}
}

// TestHostileCorpusRuns builds every document of testdata/hostile that the
// spec package accepts into a graph and runs it on a thread: every node
// journals a step keyed by its own id and asks a question, so hostile ids
// (keywords, NUL, newlines, U+2028, quotes, 64 KiB names) become task
// keys, journal keys and interrupt ids. Every run finishes, each interrupt
// is answered by its id, and ToSpec gives the document back.
func TestHostileCorpusRuns(t *testing.T) {
	leaktest.Check(t)
	paths, err := filepath.Glob("../testdata/hostile/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	ran := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := spec.Decode(filepath.Base(path), data)
		if doc == nil {
			continue // refused by the spec package; its test checks why
		}
		ran++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			reg := runtime.Registry{}
			for _, n := range doc.Nodes {
				reg[n.Type] = func(n spec.Node) (runtime.NodeFunc, error) {
					return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
						got, err := runtime.Step(ctx, n.ID, func() (string, error) { return n.ID, nil })
						if err != nil {
							return nil, err
						}
						if got != n.ID {
							return nil, fmt.Errorf("step %q replayed %q", n.ID, got)
						}
						ans, err := runtime.Interrupt[string](ctx, n.ID, runtime.WithKey(n.ID))
						if err != nil {
							return nil, err
						}
						if ans != "answer:"+n.ID {
							return nil, fmt.Errorf("node %q got the answer %q", n.ID, ans)
						}
						return nil, nil
					}, nil
				}
			}
			g, err := runtime.FromSpec(doc, reg)
			if err != nil {
				t.Fatal(err)
			}
			back, err := runtime.ToSpec(g)
			if err != nil || !spec.Equal(back, doc) {
				t.Errorf("ToSpec: %v, or not equal to the document", err)
			}
			th := g.Thread(checkpoint.NewMemory(), "t")
			res, err := th.Invoke(context.Background(), nil)
			for i := 0; err == nil && res.Status == runtime.StatusInterrupted; i++ {
				if i > 2*len(doc.Nodes) {
					t.Fatalf("still interrupted after %d resumes", i)
				}
				answers := map[string]any{}
				for _, p := range res.Pending {
					var node string
					if err := json.Unmarshal(p.Payload, &node); err != nil || node != p.Node {
						t.Fatalf("interrupt %q carries %s, want the node id %q", p.ID, p.Payload, p.Node)
					}
					answers[p.ID] = "answer:" + p.Node
				}
				res, err = th.Resume(context.Background(), runtime.AnswersByID(answers))
			}
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("ended %s: %v", res.Status, err)
			}
		})
	}
	if ran < 20 {
		t.Errorf("only %d accepted documents in the corpus", ran)
	}
}
