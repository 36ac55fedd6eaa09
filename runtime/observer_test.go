package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// recorder is an Observer that writes one line per call: the run-level
// calls in order, and each task's calls in order under its key.
type recorder struct {
	mu    sync.Mutex
	run   []string
	tasks map[string][]string
}

func (o *recorder) add(task, line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if task == "" {
		o.run = append(o.run, line)
		return
	}
	if o.tasks == nil {
		o.tasks = map[string][]string{}
	}
	o.tasks[task] = append(o.tasks[task], line)
}

func (o *recorder) RunStart(ctx context.Context, r runtime.RunRecord) context.Context {
	o.add("", fmt.Sprintf("run start resume=%v", r.Resume))
	return ctx
}
func (o *recorder) RunEnd(_ context.Context, _ runtime.RunRecord, e runtime.RunEnd) {
	o.add("", fmt.Sprintf("run end %s supersteps=%d", e.Status, e.Supersteps))
}
func (o *recorder) SuperstepStart(ctx context.Context, _ runtime.RunRecord, s runtime.SuperstepRecord) context.Context {
	o.add("", fmt.Sprintf("superstep %d start tasks=%d", s.Step, s.Tasks))
	return ctx
}
func (o *recorder) SuperstepEnd(_ context.Context, _ runtime.RunRecord, s runtime.SuperstepRecord, e runtime.SuperstepEnd) {
	o.add("", fmt.Sprintf("superstep %d end %q", s.Step, e.Status))
}
func (o *recorder) TaskStart(ctx context.Context, t runtime.TaskRecord) context.Context {
	o.add(t.TaskKey, fmt.Sprintf("start step=%d", t.Step))
	return ctx
}
func (o *recorder) TaskRetry(_ context.Context, t runtime.TaskRecord, r runtime.TaskRetry) {
	o.add(t.TaskKey, fmt.Sprintf("retry attempt=%d backoff=%s", r.Attempt, r.Backoff))
}
func (o *recorder) TaskEnd(_ context.Context, t runtime.TaskRecord, e runtime.TaskEnd) {
	o.add(t.TaskKey, fmt.Sprintf("end attempts=%d halted=%v err=%v", e.Attempts, e.Halted, e.Err != nil))
}
func (o *recorder) Step(_ context.Context, t runtime.TaskRecord, s runtime.StepRecord) {
	o.add(t.TaskKey, fmt.Sprintf("step %s replayed=%v", s.Key, s.Replayed))
}
func (o *recorder) InterruptOpened(_ context.Context, _ runtime.RunRecord, p runtime.PendingInterrupt) {
	o.add("", "interrupt opened "+p.ID)
}
func (o *recorder) InterruptAnswered(_ context.Context, _ runtime.RunRecord, p runtime.PendingInterrupt) {
	o.add("", "interrupt answered "+p.ID)
}
func (o *recorder) Resume(_ context.Context, _ runtime.RunRecord, r runtime.ResumeRecord) {
	if !r.Accepted {
		o.add("", "resume refused: "+r.Reason)
		return
	}
	o.add("", fmt.Sprintf("resume accepted paused=%d meta=%v", len(r.Paused), r.Paused[0].Meta))
}
func (o *recorder) CheckpointCommit(_ context.Context, _ runtime.RunRecord, c runtime.CheckpointRecord) {
	o.add("", fmt.Sprintf("checkpoint step=%d pause=%v bytes>0=%v", c.Step, c.Pause, c.Bytes > 0))
}
func (o *recorder) Lease(_ context.Context, _ runtime.RunRecord, l runtime.LeaseRecord) {
	o.add("", "lease "+string(l.Event))
}
func (o *recorder) AnnotatePause(context.Context, runtime.RunRecord) map[string]string {
	return map[string]string{"k": "v"}
}

// observedGraph fans out from fan to a and b; a fails its first attempt
// ever and retries; b journals a step and asks a person.
func observedGraph(t *testing.T, opts ...runtime.Option) *runtime.Graph[runtime.Values, runtime.Values] {
	var calls atomic.Int32
	opts = append(opts, runtime.WithNodeRetry("a", runtime.RetryPolicy{MaxAttempts: 3, Backoff: time.Millisecond}))
	return mustCompile(t, runtime.NewBuilder("observed").Channel("out", spec.Append).
		Node("fan", write(runtime.Values{"out": "fan"})).
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "fetch", func() (int, error) { return 1, nil }); err != nil {
				return nil, err
			}
			if calls.Add(1) == 1 {
				return nil, errors.New("flaky")
			}
			return runtime.Values{"out": "a"}, nil
		}).
		Node("b", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "charge", func() (int, error) { return 2, nil }); err != nil {
				return nil, err
			}
			ok, err := runtime.Interrupt[bool](ctx, "ship?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"out": fmt.Sprint("b", ok)}, nil
		}).
		Edge(spec.Start, "fan").Edge("fan", "a").Edge("fan", "b"), opts...)
}

func TestObserverCalls(t *testing.T) {
	g := observedGraph(t)
	o := &recorder{}
	cp := checkpoint.NewMemory()
	opts, th := []runtime.RunOption{runtime.WithObserver(o)}, g.Thread(cp, "t")
	ctx := context.Background()
	res, err := th.Invoke(ctx, runtime.Values{}, opts...)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %v %v", res.Status, err)
	}
	if got := res.Pending[0].Meta; !cmp.Equal(got, map[string]string{"k": "v"}) {
		t.Errorf("pause meta = %v, want the annotation", got)
	}
	if _, err := th.Resume(ctx, runtime.AnswersByID(map[string]any{"nope": 1}), opts...); err == nil {
		t.Fatal("resume with an unknown id was accepted")
	}
	if res, err := th.Resume(ctx, runtime.Answer(true), opts...); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: %v %v", res.Status, err)
	}
	wantRun := []string{
		"run start resume=false",
		"lease taken",
		"checkpoint step=0 pause=false bytes>0=true",
		"superstep 1 start tasks=1",
		"checkpoint step=1 pause=false bytes>0=true",
		"superstep 1 end \"\"",
		"superstep 2 start tasks=2",
		"checkpoint step=1 pause=true bytes>0=true",
		"interrupt opened b:interrupt#0",
		"superstep 2 end \"interrupted\"",
		"run end interrupted supersteps=2",
		"run start resume=true",
		"lease taken",
		"resume refused: no pending interrupt \"nope\" on thread \"t\"; the pending ids are [\"b:interrupt#0\"]",
		"run end  supersteps=0",
		"run start resume=true",
		"lease taken",
		"interrupt answered b:interrupt#0",
		"resume accepted paused=1 meta=map[k:v]",
		"superstep 2 start tasks=2",
		"checkpoint step=2 pause=false bytes>0=true",
		"superstep 2 end \"\"",
		"run end done supersteps=1",
	}
	if d := cmp.Diff(wantRun, o.run); d != "" {
		t.Errorf("run-level calls (-want +got):\n%s", d)
	}
	wantTasks := map[string][]string{
		"fan": {"start step=1", "end attempts=1 halted=false err=false"},
		"a": {
			"start step=2", "step fetch#0 replayed=false", "retry attempt=1 backoff=1ms", "step fetch#0 replayed=true", "end attempts=2 halted=false err=false",
			"start step=2", "step fetch#0 replayed=true", "end attempts=1 halted=false err=false",
		},
		"b": {
			"start step=2", "step charge#0 replayed=false", "end attempts=1 halted=true err=false",
			"start step=2", "step charge#0 replayed=true", "end attempts=1 halted=false err=false",
		},
	}
	if d := cmp.Diff(wantTasks, o.tasks); d != "" {
		t.Errorf("task calls (-want +got):\n%s", d)
	}
}

// TestObserverTaskContext checks that a node's Ctx carries the context
// its task's observer start returned, and that cancellation still reaches
// it.
func TestObserverTaskContext(t *testing.T) {
	type key struct{}
	var got atomic.Value
	g := mustCompile(t, runtime.NewBuilder("ctx").Channel("x", "").
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			got.Store(ctx.Value(key{}))
			return nil, nil
		}).Edge(spec.Start, "a"))
	o := &ctxObserver{key: key{}}
	if _, err := g.Invoke(context.Background(), runtime.Values{}, runtime.WithObserver(o)); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "run/step/task" {
		t.Errorf("node's context value = %v, want run/step/task", got.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, _ := g.Invoke(ctx, runtime.Values{}, runtime.WithObserver(o)); res.Status != runtime.StatusAborted {
		t.Errorf("cancelled run with an observer: status %q, want aborted", res.Status)
	}
}

type ctxObserver struct {
	runtime.NopObserver
	key any
}

func (o *ctxObserver) RunStart(ctx context.Context, _ runtime.RunRecord) context.Context {
	return context.WithValue(ctx, o.key, "run")
}
func (o *ctxObserver) SuperstepStart(ctx context.Context, _ runtime.RunRecord, _ runtime.SuperstepRecord) context.Context {
	return context.WithValue(ctx, o.key, ctx.Value(o.key).(string)+"/step")
}
func (o *ctxObserver) TaskStart(ctx context.Context, _ runtime.TaskRecord) context.Context {
	return context.WithValue(ctx, o.key, ctx.Value(o.key).(string)+"/task")
}

// TestTimedEvents checks that every event has its time, in order, and that
// task, superstep, checkpoint and run ends carry durations.
func TestTimedEvents(t *testing.T) {
	g := observedGraph(t)
	before := time.Now()
	var last time.Time
	durations := map[runtime.EventType]int{}
	var bytes int
	for ev, err := range g.Thread(checkpoint.NewMemory(), "t").Stream(context.Background(), runtime.Values{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Time.Before(before) || ev.Time.Before(last) || ev.Time.After(time.Now()) {
			t.Errorf("event %d %s: time %v out of order (previous %v)", ev.Seq, ev.Type, ev.Time, last)
		}
		last = ev.Time
		if ev.Duration > 0 {
			durations[ev.Type]++
		}
		if ev.Type == runtime.EventCheckpoint {
			bytes += ev.Bytes
			if ev.Bytes == 0 {
				t.Errorf("checkpoint event %s has no bytes", ev.CheckpointID)
			}
		}
	}
	// Two tasks end (fan, a; b pauses), one superstep ends in a state and
	// one in an interrupt, two checkpoints are written in the run (the
	// first, before run_start, has no event), and the run ends.
	want := map[runtime.EventType]int{runtime.EventNodeEnd: 2, runtime.EventState: 1, runtime.EventInterrupt: 1, runtime.EventCheckpoint: 2, runtime.EventRunEnd: 1}
	if d := cmp.Diff(want, durations); d != "" {
		t.Errorf("events with a duration (-want +got):\n%s", d)
	}
}

// TestNoObserverNoMeta checks that a pause nobody observes keeps no Meta.
func TestNoObserverNoMeta(t *testing.T) {
	g := observedGraph(t)
	res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(context.Background(), runtime.Values{})
	if err != nil || len(res.Pending) != 1 || res.Pending[0].Meta != nil {
		t.Fatalf("res = %+v, %v; want one pending interrupt without meta", res, err)
	}
}

// annotator is an Observer that only annotates pauses with its pairs.
type annotator struct {
	runtime.NopObserver
	pairs map[string]string
}

func (a annotator) AnnotatePause(context.Context, runtime.RunRecord) map[string]string {
	return a.pairs
}

// TestObservers pins what Observers combines: nothing is nil, one is
// itself, and several (nested ones flattened, nil ones skipped) each get
// every call of a run, the contexts threaded from one Start call to the
// next and the pause annotations merged, a later observer's key winning.
func TestObservers(t *testing.T) {
	if o := runtime.Observers(); o != nil {
		t.Errorf("Observers() = %v, want nil", o)
	}
	if o := runtime.Observers(nil, nil); o != nil {
		t.Errorf("Observers(nil, nil) = %v, want nil", o)
	}
	one := &recorder{}
	if o := runtime.Observers(nil, one); o != one {
		t.Errorf("Observers(nil, o) = %v, want o itself", o)
	}

	// Every observer of the combination sees what one alone sees.
	alone := &recorder{}
	a, b, c := &recorder{}, &recorder{}, &recorder{}
	ctx := context.Background()
	run := func(o runtime.Observer) *runtime.Result[runtime.Values] {
		t.Helper()
		g := observedGraph(t)
		res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, runtime.Values{}, runtime.WithObserver(o))
		if err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("run: %s %v", res.Status, err)
		}
		return &res
	}
	run(alone)
	res := run(runtime.Observers(runtime.Observers(a, nil), b, annotator{pairs: map[string]string{"k": "later", "x": "y"}}, c))
	for name, o := range map[string]*recorder{"a": a, "b": b, "c": c} {
		if d := cmp.Diff(alone.run, o.run); d != "" {
			t.Errorf("%s: run-level calls (-alone +combined):\n%s", name, d)
		}
		if d := cmp.Diff(alone.tasks, o.tasks); d != "" {
			t.Errorf("%s: task calls (-alone +combined):\n%s", name, d)
		}
	}
	// a, b and c annotate {k: v}; the annotator between b and c sets k
	// and x, and c, later, sets k back.
	if got := res.Pending[0].Meta; !cmp.Equal(got, map[string]string{"k": "v", "x": "y"}) {
		t.Errorf("pause meta = %v, want the annotations merged in order", got)
	}

	// Each Start call receives the context the one before it returned.
	type key struct{}
	var seen atomic.Value
	g := mustCompile(t, runtime.NewBuilder("ctx").Channel("x", "").
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			seen.Store(ctx.Value(key{}))
			return nil, nil
		}).Edge(spec.Start, "a"))
	o := &ctxObserver{key: key{}}
	if _, err := g.Invoke(ctx, runtime.Values{}, runtime.WithObserver(runtime.Observers(o, o))); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != "run/step/step/task/task" {
		t.Errorf("node's context value = %v, want run/step/step/task/task", seen.Load())
	}
}
