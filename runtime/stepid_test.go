package runtime_test

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// journalLossMemory is checkpoint.Memory whose failAt-th write that
// carries a journal (the first when 0) fails before it writes anything
// (errBatch): a step whose effect was made and whose result never reached
// the store, as when the process dies between the two.
type journalLossMemory struct {
	*checkpoint.Memory
	failAt int
	mu     sync.Mutex
	writes int
}

func (m *journalLossMemory) lose() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	return m.writes == max(m.failAt, 1)
}

func (m *journalLossMemory) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := m.Memory.Lease(ctx, thread, opts)
	if err != nil {
		return nil, err
	}
	return &journalLossLease{Lease: l, m: m}, nil
}

type journalLossLease struct {
	checkpoint.Lease
	m *journalLossMemory
}

func (l *journalLossLease) PutJournal(ctx context.Context, task string, entries []checkpoint.JournalEntry) error {
	if l.m.lose() {
		return errBatch
	}
	return l.Lease.PutJournal(ctx, task, entries)
}

func (l *journalLossLease) CommitBatch(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	if j != nil && l.m.lose() {
		return errBatch
	}
	return commitEach(ctx, l.Lease, cs, j)
}

var uuidV8 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestStepIDOutlivesALostJournal: a step whose result was not journaled
// runs again in the thread's next run under the same StepID, at either
// durability. Under DurableWithNextWrite the checkpoint the task was
// planned at (b's: the input's and a's were written together, b's is
// held) waits for the run's next write, which is the journal's that
// fails; StepID writes it first, or the next run would plan the task
// again at a new checkpoint, under a new id.
func TestStepIDOutlivesALostJournal(t *testing.T) {
	for _, d := range []struct {
		name string
		opts []runtime.RunOption
	}{
		{"each superstep", nil},
		{"next write", []runtime.RunOption{runtime.WithDurability(runtime.DurableWithNextWrite)}},
	} {
		t.Run(d.name, func(t *testing.T) {
			var ids []string
			b := runtime.NewBuilder("charge").Channel("log", spec.Append).
				Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "a"}, nil }).
				Node("pay", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					if _, err := runtime.Step(ctx, "charge", func() (string, error) {
						id, err := ctx.StepID()
						ids = append(ids, id)
						return "receipt", err
					}); err != nil {
						return nil, err
					}
					return runtime.Values{"log": "pay"}, nil
				}).
				Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "b"}, nil }).
				Edge(spec.Start, "a").Edge("a", "b").Edge("b", "pay")
			g := mustCompile(t, b)
			m := &journalLossMemory{Memory: checkpoint.NewMemory()}
			th := g.Thread(m, "t")
			if res, err := th.Invoke(t.Context(), nil, d.opts...); res.Status != runtime.StatusError || !errors.Is(err, errBatch) {
				t.Fatalf("first run: %v %v; want it to fail on the lost journal", res.Status, err)
			}
			res, err := th.Invoke(t.Context(), nil, d.opts...)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("second run: %v %v", res.Status, err)
			}
			if len(ids) != 2 {
				t.Fatalf("the step ran %d times, want 2 (its journal was lost once)", len(ids))
			}
			if ids[0] != ids[1] {
				t.Errorf("StepID %s, then %s after the lost journal; want one id", ids[0], ids[1])
			}
			if !uuidV8.MatchString(ids[0]) {
				t.Errorf("StepID %q is not a version 8 UUID", ids[0])
			}
		})
	}
}

// TestStepIDsDiffer: every step has its own id (another key, another
// occurrence of a key in the task, another task, another thread); a
// retry of the node replays its journaled step rather than running it
// under the id again; StepID outside a step's function is ErrNotInStep.
func TestStepIDsDiffer(t *testing.T) {
	ids := map[string][]string{} // "thread/node/step" -> the ids seen
	var mu sync.Mutex
	var outside []error
	tries := 0
	// step runs a Step under key, recording its id under label.
	step := func(ctx *runtime.Ctx, key, label string) error {
		_, err := runtime.Step(ctx, key, func() (int, error) {
			id, err := ctx.StepID()
			mu.Lock()
			k := ctx.ThreadID() + "/" + ctx.Node() + "/" + label
			ids[k] = append(ids[k], id)
			mu.Unlock()
			return 0, err
		})
		return err
	}
	b := runtime.NewBuilder("steps").Channel("log", spec.Append).
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			_, err := ctx.StepID()
			mu.Lock()
			outside = append(outside, err)
			mu.Unlock()
			for _, key := range []string{"x#0", "x#1", "y"} {
				if err := step(ctx, key[:1], key); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"log": "a"}, nil
		}).
		Node("b", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := step(ctx, "x", "x"); err != nil {
				return nil, err
			}
			mu.Lock()
			tries++
			again := tries == 1
			mu.Unlock()
			if again { // fails after its step: the retry replays the journaled step
				return nil, errors.New("try again")
			}
			return runtime.Values{"log": "b"}, nil
		}).
		Edge(spec.Start, "a").Edge(spec.Start, "b")
	g := mustCompile(t, b, runtime.WithNodeRetry("b", runtime.RetryPolicy{MaxAttempts: 2}))
	m := checkpoint.NewMemory()
	for _, th := range []string{"t1", "t2"} {
		if res, err := g.Thread(m, th).Invoke(t.Context(), nil); err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("thread %s: %v %v", th, res.Status, err)
		}
	}
	seen := map[string]string{}
	for k, v := range ids {
		if len(v) != 1 {
			t.Errorf("step %s ran %d times, want once (its node's retry replays it)", k, len(v))
		}
		if other, ok := seen[v[0]]; ok {
			t.Errorf("steps %s and %s share the id %s", k, other, v[0])
		}
		seen[v[0]] = k
	}
	if len(ids) != 8 {
		t.Errorf("%d steps, want 8 (x twice and y in a, x in b, on two threads)", len(ids))
	}
	for _, err := range outside {
		if !errors.Is(err, runtime.ErrNotInStep) {
			t.Errorf("StepID outside a step: %v, want ErrNotInStep", err)
		}
	}
	// A Step inside another's function: each has its own id, and the
	// outer one's stays its own after the inner one returned.
	var inner, before, after string
	nested := mustCompile(t, runtime.NewBuilder("nested").Channel("log", spec.Append).
		Node("n", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			_, err := runtime.Step(ctx, "outer", func() (int, error) {
				before, _ = ctx.StepID()
				if _, err := runtime.Step(ctx, "inner", func() (int, error) { inner, _ = ctx.StepID(); return 1, nil }); err != nil {
					return 0, err
				}
				var err error
				after, err = ctx.StepID()
				return 2, err
			})
			return runtime.Values{"log": "n"}, err
		}).Edge(spec.Start, "n"))
	if _, err := nested.Thread(m, "nested").Invoke(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if before == "" || after != before || inner == before || inner == "" {
		t.Errorf("nested steps: outer %q, then %q after the inner %q; want the outer's id twice and the inner's its own", before, after, inner)
	}
	var nilCtx *runtime.Ctx
	if _, err := nilCtx.StepID(); !errors.Is(err, runtime.ErrNotInStep) {
		t.Errorf("StepID of a nil Ctx: %v, want ErrNotInStep", err)
	}
}

// TestStepIDsInSubgraphs: a child run's tasks are planned at checkpoints
// of their own (the first at its seed), so a step's id takes the path of
// tasks from the thread's run to the step: the same child graph run by
// two nodes, and again in a later turn, gives four ids, and a step whose
// journal was lost in a child runs again under its id.
func TestStepIDsInSubgraphs(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	child := mustCompile(t, runtime.NewBuilder("pay").Channel("order", "").Channel("paid", "").
		Node("pay", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			r, err := runtime.Step(ctx, "charge", func() (string, error) {
				id, err := ctx.StepID()
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
				return "paid", err
			})
			return runtime.Values{"paid": r}, err
		}).
		Edge(spec.Start, "pay"))
	parent := mustCompile(t, runtime.NewBuilder("shop").
		Channel("order", "").Channel("a", "").Channel("b", "").
		Subgraph("first", child, map[string]string{"order": "order"}, map[string]string{"a": "paid"}).
		Subgraph("second", child, map[string]string{"order": "order"}, map[string]string{"b": "paid"}).
		Edge(spec.Start, "first").Edge(spec.Start, "second"))
	th := parent.Thread(checkpoint.NewMemory(), "t")
	for turn := range 2 {
		if res, err := th.Invoke(t.Context(), runtime.Values{"order": turn}); err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("turn %d: %v %v", turn, res.Status, err)
		}
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("the id %s came twice in %v: two steps share it", id, ids)
		}
		seen[id] = true
	}
	if len(ids) != 4 {
		t.Errorf("%d steps ran, want 4 (two children, two turns)", len(ids))
	}

	// A child whose step's journal is lost (the second journal write: the
	// first holds the child's input checkpoint) runs it again, under its id.
	ids = nil
	one := mustCompile(t, runtime.NewBuilder("shop").Channel("order", "").Channel("a", "").
		Subgraph("first", child, map[string]string{"order": "order"}, map[string]string{"a": "paid"}).
		Edge(spec.Start, "first"))
	lossy := one.Thread(&journalLossMemory{Memory: checkpoint.NewMemory(), failAt: 2}, "t")
	next := runtime.WithDurability(runtime.DurableWithNextWrite)
	if res, err := lossy.Invoke(t.Context(), runtime.Values{"order": 1}, next); res.Status != runtime.StatusError || !errors.Is(err, errBatch) {
		t.Fatalf("first run: %v %v; want it to fail on the lost journal", res.Status, err)
	}
	if res, err := lossy.Invoke(t.Context(), nil, next); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("second run: %v %v", res.Status, err)
	}
	if len(ids) != 2 || ids[0] != ids[1] {
		t.Errorf("ids %v; want the child's step twice (its journal lost once) under one id", ids)
	}
}

// TestNoEffectAfterItsPlanWasLost: under DurableWithNextWrite, when the
// write that carries the held checkpoint fails (here with a sibling's
// journal), the tasks planned at it will be planned again by the next
// run. A step that has not started by then does not start: its effect
// would be made for a plan the store never got, and made again.
func TestNoEffectAfterItsPlanWasLost(t *testing.T) {
	var xFailed = make(chan struct{})
	var mu sync.Mutex
	runs := map[string]int{}
	effect := func(ctx *runtime.Ctx, name string) error {
		_, err := runtime.Step(ctx, name, func() (int, error) {
			mu.Lock()
			runs[name]++
			mu.Unlock()
			return 1, nil
		})
		return err
	}
	first := true
	b := runtime.NewBuilder("pair").Channel("log", spec.Append).
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "a"}, nil }).
		Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "b"}, nil }).
		Node("x", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			err := effect(ctx, "x")
			if first {
				close(xFailed)
			}
			return runtime.Values{"log": "x"}, err
		}).
		Node("y", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if first {
				<-xFailed
			}
			return runtime.Values{"log": "y"}, effect(ctx, "y")
		}).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", "x").Edge("b", "y")
	g := mustCompile(t, b)
	th := g.Thread(&journalLossMemory{Memory: checkpoint.NewMemory()}, "t")
	next := runtime.WithDurability(runtime.DurableWithNextWrite)
	if res, err := th.Invoke(t.Context(), nil, next); res.Status != runtime.StatusError || !errors.Is(err, errBatch) {
		t.Fatalf("first run: %v %v; want it to fail on the lost write", res.Status, err)
	}
	first = false
	if res, err := th.Invoke(t.Context(), nil, next); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("second run: %v %v", res.Status, err)
	}
	if runs["y"] != 1 {
		t.Errorf("y's effect ran %d times, want once: after the write of its plan failed it must not start", runs["y"])
	}
	if runs["x"] != 2 {
		t.Errorf("x's effect ran %d times, want 2 (its journal was lost)", runs["x"])
	}
}

// TestNoEffectAfterAFailedWriteWentUnheeded: a node that goes on past its
// step's failed write (the write that also carried the held checkpoint)
// lets its superstep end, but every later checkpoint of the run descends
// from the lost one: the next superstep's step does not start, and the
// thread's next run makes each effect the store has no journal of once.
func TestNoEffectAfterAFailedWriteWentUnheeded(t *testing.T) {
	runs := map[string]int{}
	step := func(ctx *runtime.Ctx, name string) error {
		_, err := runtime.Step(ctx, name, func() (int, error) { runs[name]++; return 1, nil })
		return err
	}
	b := runtime.NewBuilder("onward").Channel("log", spec.Append).
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "a"}, nil }).
		Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "b"}, nil }).
		Node("x", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			_ = step(ctx, "x") // its journal is lost; the node goes on
			return runtime.Values{"log": "x"}, nil
		}).
		Node("y", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": "y"}, step(ctx, "y")
		}).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", "x").Edge("x", "y")
	g := mustCompile(t, b)
	th := g.Thread(&journalLossMemory{Memory: checkpoint.NewMemory()}, "t")
	next := runtime.WithDurability(runtime.DurableWithNextWrite)
	if res, err := th.Invoke(t.Context(), nil, next); res.Status != runtime.StatusError || !errors.Is(err, runtime.ErrPlanLost) {
		t.Fatalf("first run: %v %v; want y's step refused with ErrPlanLost", res.Status, err)
	}
	if runs["y"] != 0 {
		t.Fatalf("y's effect ran in the run that lost its plan")
	}
	if res, err := th.Invoke(t.Context(), nil, next); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("second run: %v %v", res.Status, err)
	}
	if runs["x"] != 2 || runs["y"] != 1 {
		t.Errorf("effects: x %d, y %d; want x twice (its journal lost) and y once", runs["x"], runs["y"])
	}
}
