package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestStrictModeRaisesOnVanishedKey is scenario 7: a step journaled before a
// pause that the replay no longer asks for is a nondeterminism error.
func TestStrictModeRaisesOnVanishedKey(t *testing.T) {
	for _, strict := range []bool{true, false} {
		var pass atomic.Int32
		g := mustCompile(t, runtime.NewBuilder("strict").
			Node("n", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				if pass.Add(1) == 1 { // the replay skips this step
					if _, err := runtime.Step(ctx, "only-first-pass", func() (int, error) { return 1, nil }); err != nil {
						return nil, err
					}
				}
				_, err := runtime.Interrupt[string](ctx, "ok?")
				return nil, err
			}).Edge(spec.Start, "n"))
		cp := checkpoint.NewMemory()
		opts, th := []runtime.RunOption{runtime.WithStrictReplay(strict)}, g.Thread(cp, "t")
		if res, err := th.Invoke(context.Background(), nil, opts...); err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("first pass: %+v %v", res, err)
		}
		_, err := th.Resume(context.Background(), runtime.Answer("yes"), opts...)
		var nd *runtime.NondeterminismError
		if got := errors.As(err, &nd); got != strict {
			t.Fatalf("strict=%v: err %v", strict, err)
		}
		if strict && nd.Key != "only-first-pass#0" {
			t.Errorf("error names key %q", nd.Key)
		}
	}
}

func TestNodeThatSwallowsInterruptStillHalts(t *testing.T) {
	var after atomic.Int32
	g := mustCompile(t, runtime.NewBuilder("swallow").Channel("x", "").
		Node("n", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			_, _ = runtime.Interrupt[string](ctx, "q") // swallowed
			if _, err := runtime.Step(ctx, "effect", func() (int, error) { after.Add(1); return 1, nil }); !runtime.IsInterrupt(err) {
				t.Errorf("a step after a swallowed interrupt returned %v", err)
			}
			return runtime.Values{"x": 1}, nil
		}).Edge(spec.Start, "n"))
	res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusInterrupted || after.Load() != 0 {
		t.Fatalf("%+v %v effects=%d", res, err, after.Load())
	}
	if _, ok := res.State["x"]; ok {
		t.Error("the halted superstep reduced an update")
	}
}

func TestForkFromOlderCheckpoint(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("chat").Channel("log", spec.Append).
		Node("echo", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) { return nil, nil }).
		Edge(spec.Start, "echo"))
	cp := checkpoint.NewMemory()
	ctx := context.Background()
	th := g.Thread(cp, "t")
	first, err := th.Invoke(ctx, runtime.Values{"log": "one"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.Invoke(ctx, runtime.Values{"log": "two"}); err != nil {
		t.Fatal(err)
	}
	fork, err := th.Fork(first.CheckpointID).Invoke(ctx, runtime.Values{"log": "other"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fork.State["log"]; len(got.([]any)) != 2 || got.([]any)[1] != "other" {
		t.Fatalf("forked state %v, want [one other]", got)
	}
	latest, _ := cp.Get(ctx, "t", "")
	var parents []string
	for c := latest; c != nil && c.ParentID != ""; c, _ = cp.Get(ctx, "t", c.ParentID) {
		parents = append(parents, c.ParentID)
	}
	if !strings.Contains(strings.Join(parents, " "), first.CheckpointID) {
		t.Errorf("the fork's ancestry %v does not include %s", parents, first.CheckpointID)
	}
}

// TestThreadHandleRefusals pins what a thread handle refuses before the
// store is touched: a missing checkpointer, a bad thread id, a thread-only
// option on a run without a thread, and a resume of a thread that waits on
// nothing.
func TestThreadHandleRefusals(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("x").Node("a", write(nil)).Edge(spec.Start, "a"))
	ctx := context.Background()
	var oe *runtime.OptionError
	if _, err := g.Thread(nil, "t").Invoke(ctx, nil); !errors.As(err, &oe) || !strings.Contains(err.Error(), "has no checkpointer") {
		t.Errorf("thread without checkpointer: %v, want an OptionError", err)
	}
	if _, err := g.Thread(checkpoint.NewMemory(), "a/b").State(ctx); !errors.Is(err, runtime.ErrThreadID) {
		t.Errorf("thread id with a slash: %v, want ErrThreadID", err)
	}
	for _, o := range []runtime.RunOption{runtime.WithEventLog(), runtime.WithThreadMeta(map[string]string{"k": "v"}), runtime.WithExpectedLatest("")} {
		if _, err := g.Invoke(ctx, nil, o); !errors.As(err, &oe) {
			t.Errorf("thread option on a run without a thread: %v, want an OptionError", err)
		}
	}
	_, err := g.Thread(checkpoint.NewMemory(), "t").Resume(ctx, runtime.Answer(1))
	var re *runtime.ResumeError
	if !errors.As(err, &re) || !errors.Is(err, runtime.ErrNotInterrupted) {
		t.Fatalf("resume of a new thread: %v, want a ResumeError matching ErrNotInterrupted", err)
	}
}

// TestInterruptIDCollisionIsRefused: an interrupt id is "<task key>:<key>",
// so node "a:b" asking with the default key and node "a" asking with key
// "b:interrupt" both spell "a:b:interrupt#0". Answers are addressed by id,
// so the pause is refused with an error that says how to fix it, and
// nothing is checkpointed as interrupted.
func TestInterruptIDCollisionIsRefused(t *testing.T) {
	ask := func(opts ...runtime.InterruptOption) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			_, err := runtime.Interrupt[string](ctx, "ok?", opts...)
			return nil, err
		}
	}
	g := mustCompile(t, runtime.NewBuilder("collide").
		Node("a:b", ask()).
		Node("a", ask(runtime.WithKey("b:interrupt"))).
		Edge(spec.Start, "a:b").Edge(spec.Start, "a"))
	cp := checkpoint.NewMemory()
	res, err := g.Thread(cp, "t").Invoke(context.Background(), nil)
	var ne *runtime.NodeError
	if !errors.As(err, &ne) || res.Status != runtime.StatusError {
		t.Fatalf("want a NodeError and status error, got %+v %v", res.Status, err)
	}
	if !strings.Contains(err.Error(), `"a:b:interrupt#0"`) || !strings.Contains(err.Error(), "runtime.WithKey") {
		t.Errorf("error does not name the id and the fix: %v", err)
	}
	if pend, err := g.Thread(cp, "t").Pending(context.Background()); err != nil || len(pend) != 0 {
		t.Errorf("pending after a refused pause: %v %v", pend, err)
	}
}

// TestStepOnCancelledRunDoesNotRun: a node still running when its run is
// cancelled may ask for a step; the step's function is not called (a later
// run of the thread takes it up) and the run ends aborted.
func TestStepOnCancelledRunDoesNotRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	g := mustCompile(t, runtime.NewBuilder("late").Channel("x", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			cancel()
			_, err := runtime.Step(c, "effect", func() (int, error) { ran.Add(1); return 1, nil })
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Step on a cancelled run returned %v, want context.Canceled", err)
			}
			return nil, err
		}).Edge(spec.Start, "n"))
	res, _ := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, nil)
	if res.Status != runtime.StatusAborted || ran.Load() != 0 {
		t.Fatalf("status %q, step ran %d times; want aborted and 0", res.Status, ran.Load())
	}
}

// watchingStore is a Memory whose lease the test can declare lost.
type watchingStore struct {
	*checkpoint.Memory
	lost chan func(error)
}

func (w *watchingStore) Lease(ctx context.Context, threadID string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := w.Memory.Lease(ctx, threadID, checkpoint.LeaseOptions{})
	if err == nil {
		w.lost <- opts.Lost
	}
	return l, err
}

// TestLeaseWatcherCancelsTheRun: a Checkpointer whose lease is reported
// lost (LeaseOptions.Lost) cancels the run at once; it ends
// with StatusError and a lease CheckpointError wrapping the report, and
// nothing more is committed, even by a node that ignores its context and
// finishes its superstep (watchingStore does not fence its writes, so the
// executor must not write).
func TestLeaseWatcherCancelsTheRun(t *testing.T) {
	for _, honours := range []bool{true, false} {
		errGone := errors.New("lease gone")
		w := &watchingStore{Memory: checkpoint.NewMemory(), lost: make(chan func(error), 1)}
		var ran atomic.Int32
		g := mustCompile(t, runtime.NewBuilder("watch").Channel("x", "").
			Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				(<-w.lost)(errGone)
				if !honours {
					return runtime.Values{"x": 1}, nil
				}
				<-c.Done()
				_, err := runtime.Step(c, "effect", func() (int, error) { ran.Add(1); return 1, nil })
				return nil, err
			}).Edge(spec.Start, "n"))
		res, err := g.Thread(w, "t").Invoke(context.Background(), nil)
		var ce *runtime.CheckpointError
		if res.Status != runtime.StatusError || !errors.As(err, &ce) || ce.Op != "lease" || !errors.Is(err, errGone) {
			t.Fatalf("honours=%v: status %q, err %v; want status error and a lease CheckpointError wrapping the loss", honours, res.Status, err)
		}
		if ran.Load() != 0 {
			t.Errorf("honours=%v: the step ran after the lease was lost", honours)
		}
		cps, err := w.List(context.Background(), "t", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range cps {
			if strings.Contains(string(cp.Channels), `"x"`) {
				t.Errorf("honours=%v: checkpoint %s (step %d) was committed after the lease was lost: %s", honours, cp.ID, cp.Step, cp.Channels)
			}
		}
	}
}

// expiringStore is a Memory whose leases report the deadline the test sets.
type expiringStore struct {
	*checkpoint.Memory
	deadline atomic.Pointer[time.Time]
}

type expiringLease struct {
	checkpoint.Lease
	s *expiringStore
}

func (l expiringLease) Deadline() time.Time { return *l.s.deadline.Load() }

func (s *expiringStore) Lease(ctx context.Context, threadID string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := s.Memory.Lease(ctx, threadID, opts)
	if err != nil {
		return nil, err
	}
	return expiringLease{Lease: l, s: s}, nil
}

// TestStepPastLeaseDeadlineDoesNotRun: once the run's lease is past its
// local deadline (the process stalled longer than the lease lasts), Step
// starts no effect, the run stops with a lost lease whose deadline passed,
// and the superstep is not committed; a later run takes the step up.
func TestStepPastLeaseDeadlineDoesNotRun(t *testing.T) {
	s := &expiringStore{Memory: checkpoint.NewMemory()}
	future := time.Now().Add(time.Hour)
	s.deadline.Store(&future)
	var ran atomic.Int32
	g := mustCompile(t, runtime.NewBuilder("stall").Channel("x", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			past := time.Now().Add(-time.Millisecond)
			s.deadline.CompareAndSwap(&future, &past) // the process "stalled" here
			v, err := runtime.Step(c, "effect", func() (int, error) { ran.Add(1); return 1, nil })
			return runtime.Values{"x": v}, err
		}).Edge(spec.Start, "n"))
	res, err := g.Thread(s, "t").Invoke(context.Background(), nil)
	var ce *runtime.CheckpointError
	if res.Status != runtime.StatusError || !isDeadlinePassed(err) || !errors.As(err, &ce) || ce.Op != "lease" {
		t.Fatalf("status %q, err %v; want a lost lease (deadline passed) in a lease CheckpointError", res.Status, err)
	}
	if ran.Load() != 0 {
		t.Fatalf("the step ran %d times past the lease's deadline", ran.Load())
	}
	// A later run, whose lease is fresh, runs the step once.
	later := time.Now().Add(time.Hour)
	s.deadline.Store(&later)
	res, err = g.Thread(s, "t").Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusDone || ran.Load() != 1 {
		t.Fatalf("rerun: status %q, err %v, step ran %d times; want done and 1", res.Status, err, ran.Load())
	}
}

// isDeadlinePassed reports whether err is a lease lost by its deadline.
func isDeadlinePassed(err error) bool {
	var le *checkpoint.LeaseLostError
	return errors.As(err, &le) && le.Reason == checkpoint.LeaseDeadlinePassed
}
