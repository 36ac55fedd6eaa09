package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/internal/leaktest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// This file holds the fixture of the fault tests (a Checkpointer that
// fails on demand) and the tests about leaks under
// load: many threads at once and consumers that stop streaming early.

// errInjected is the failure faultyStore injects.
var errInjected = errors.New("injected fault")

// faultyStore wraps a Checkpointer and fails the calls its hooks choose. It
// also counts the leases taken and released, so tests can assert that every
// run gives its thread back, however it ended.
type faultyStore struct {
	runtime.Checkpointer

	// failPut, when set, is asked before each Put (n counts Puts from 1);
	// a non-nil error fails the Put before anything is stored.
	failPut func(n int, cp *runtime.Checkpoint) error
	// failPutJournal, likewise, before each PutJournal.
	failPutJournal func(n int, taskID string, entries []checkpoint.JournalEntry) error
	// failLease is returned by Lease instead of taking the lease.
	failLease error

	mu       sync.Mutex
	puts     int
	journals int
	leased   atomic.Int64 // leases taken and not yet released
}

func newFaultyStore() *faultyStore { return &faultyStore{Checkpointer: checkpoint.NewMemory()} }

func (f *faultyStore) Put(ctx context.Context, cp *runtime.Checkpoint, done []string) error {
	f.mu.Lock()
	f.puts++
	n, hook := f.puts, f.failPut
	f.mu.Unlock()
	if hook != nil {
		if err := hook(n, cp); err != nil {
			return err
		}
	}
	return f.Checkpointer.Put(ctx, cp, done)
}

func (f *faultyStore) PutJournal(ctx context.Context, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	f.mu.Lock()
	f.journals++
	n, hook := f.journals, f.failPutJournal
	f.mu.Unlock()
	if hook != nil {
		if err := hook(n, taskID, entries); err != nil {
			return err
		}
	}
	return f.Checkpointer.PutJournal(ctx, threadID, taskID, entries)
}

func (f *faultyStore) Lease(ctx context.Context, threadID string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	if f.failLease != nil {
		return nil, f.failLease
	}
	l, err := f.Checkpointer.Lease(ctx, threadID, opts)
	if err != nil {
		return nil, err
	}
	f.leased.Add(1)
	return &countedLease{Lease: l, leased: &f.leased, f: f}, nil
}

// countedLease counts its release in faultyStore.leased, and fails the
// writes faultyStore's hooks choose.
type countedLease struct {
	checkpoint.Lease
	leased *atomic.Int64
	once   sync.Once
	f      *faultyStore
}

func (l *countedLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	if c.Checkpoint != nil {
		f := l.f
		f.mu.Lock()
		f.puts++
		n, hook := f.puts, f.failPut
		f.mu.Unlock()
		if hook != nil {
			if err := hook(n, c.Checkpoint); err != nil {
				return err
			}
		}
	}
	return l.Lease.Commit(ctx, c)
}

func (l *countedLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	f := l.f
	f.mu.Lock()
	f.journals++
	n, hook := f.journals, f.failPutJournal
	f.mu.Unlock()
	if hook != nil {
		if err := hook(n, taskID, entries); err != nil {
			return err
		}
	}
	return l.Lease.PutJournal(ctx, taskID, entries)
}

func (l *countedLease) Release() {
	l.once.Do(func() { l.leased.Add(-1) })
	l.Lease.Release()
}

// heal stops injecting faults.
func (f *faultyStore) heal() {
	f.mu.Lock()
	f.failPut, f.failPutJournal, f.failLease = nil, nil, nil
	f.mu.Unlock()
}

// checkReleased fails the test when a run kept a thread's lease.
func (f *faultyStore) checkReleased(t *testing.T) {
	t.Helper()
	if n := f.leased.Load(); n != 0 {
		t.Errorf("%d lease(s) still held after the runs ended; a run must release its thread however it ends", n)
	}
}

// latest returns the thread's latest checkpoint, failing the test when there
// is none.
func latest(t *testing.T, cp runtime.Checkpointer, thread string) *runtime.Checkpoint {
	t.Helper()
	c, err := cp.Get(context.Background(), thread, "")
	if err != nil {
		t.Fatalf("Get(%q) latest: %v", thread, err)
	}
	return c
}

// threadGraph is the graph every concurrent thread runs: "work" journals a
// step derived from the thread's input and asks a person; the answer and
// the step's result end up in the channels.
func threadGraph(t *testing.T, effects *atomic.Int64) *runtime.Graph[runtime.Values, runtime.Values] {
	return mustCompile(t, runtime.NewBuilder("threads").Channel("who", "").Channel("out", spec.Append).Channel("done", "").
		Node("work", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			who, _ := s["who"].(string)
			sq, err := runtime.Step(ctx, "effect", func() (string, error) {
				effects.Add(1)
				return "did:" + who, nil
			})
			if err != nil {
				return nil, err
			}
			ans, err := runtime.Interrupt[string](ctx, "approve "+who+"?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"out": []any{sq, ans}}, nil
		}).
		Node("finish", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"done": ctx.ThreadID()}, nil
		}).
		Edge(spec.Start, "work").Edge("work", "finish"))
}

// runThread drives one thread through run, interrupt and resume and checks
// that it saw only its own data.
func runThread(g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, i int) error {
	ctx := context.Background()
	thread := fmt.Sprintf("thread-%04d", i)
	who := fmt.Sprintf("user-%d", i)
	th := g.Thread(cp, thread)
	res, err := th.Invoke(ctx, runtime.Values{"who": who})
	if err != nil {
		return fmt.Errorf("%s: invoke: %w", thread, err)
	}
	if res.Status != runtime.StatusInterrupted || len(res.Pending) != 1 || string(res.Pending[0].Payload) != strconv.Quote("approve "+who+"?") {
		return fmt.Errorf("%s: invoke ended %s with pending %+v, want one interrupt asking about %s", thread, res.Status, res.Pending, who)
	}
	res, err = th.Resume(ctx, runtime.Answer("ok-"+who))
	if err != nil {
		return fmt.Errorf("%s: resume: %w", thread, err)
	}
	want := fmt.Sprint([]any{"did:" + who, "ok-" + who})
	if res.Status != runtime.StatusDone || fmt.Sprint(res.State["out"]) != want || res.State["done"] != thread {
		return fmt.Errorf("%s: resume ended %s with out=%v done=%v, want out=%s done=%s", thread, res.Status, res.State["out"], res.State["done"], want, thread)
	}
	return nil
}

// TestThousandsOfConcurrentThreads runs 2,000 threads at once through one
// graph and ONE shared in-memory checkpointer, each with a journaled step,
// an interrupt and a resume: every thread ends with its own data, every
// step ran exactly once, and no goroutine outlives the runs.
func TestThousandsOfConcurrentThreads(t *testing.T) {
	leaktest.Check(t)
	n := 2000
	if testing.Short() {
		n = 200
	}
	var effects atomic.Int64
	g := threadGraph(t, &effects)
	cp := checkpoint.NewMemory()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- runThread(g, cp, i) })
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			if failed++; failed <= 5 {
				t.Error(err)
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d threads failed", failed, n)
	}
	if got := effects.Load(); got != int64(n) {
		t.Errorf("the journaled step ran %d times for %d threads, want exactly once each", got, n)
	}
	// Every thread's history is its own: run start, the pause, the resumed
	// superstep and the last one.
	for _, i := range []int{0, n / 2, n - 1} {
		thread := fmt.Sprintf("thread-%04d", i)
		cps, err := cp.List(context.Background(), thread, 0)
		if err != nil || len(cps) != 4 {
			t.Errorf("%s has %d checkpoints (%v), want 4", thread, len(cps), err)
		}
		for _, c := range cps {
			if c.ThreadID != thread {
				t.Errorf("%s lists checkpoint %s of thread %s", thread, c.ID, c.ThreadID)
			}
		}
	}
}

// TestStreamConsumerStopsMidSuperstep stops iterating a Stream at a custom
// event emitted while sibling tasks are still running. The run is cancelled
// under the running tasks, the range statement returns once they have, the
// superstep is void (the last checkpoint stands), no goroutine is left
// behind, and the thread later runs to its end.
func TestStreamConsumerStopsMidSuperstep(t *testing.T) {
	leaktest.Check(t)
	const siblings = 8
	var cancelled atomic.Int32
	var block atomic.Bool
	block.Store(true)
	b := runtime.NewBuilder("stop").Channel("n", "").Channel("log", spec.Append).
		Node("talker", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			for i := range 100 { // more than the event buffer holds
				ctx.EmitToken(strconv.Itoa(i), nil)
			}
			return runtime.Values{"log": "talker"}, nil
		})
	for i := range siblings {
		id := fmt.Sprintf("sib%d", i)
		b.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if block.Load() {
				<-ctx.Done()
				cancelled.Add(1)
				return nil, ctx.Err()
			}
			return runtime.Values{"log": id}, nil
		})
		b.Edge(spec.Start, id)
	}
	g := mustCompile(t, b.Edge(spec.Start, "talker"))
	cp := checkpoint.NewMemory()
	th := g.Thread(cp, "t")
	before := ""
	customs := 0
	for ev, err := range th.Stream(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == runtime.EventStepStart {
			before = latest(t, cp, "t").ID
		}
		if ev.Type == runtime.EventCustom {
			if customs++; customs == 3 {
				break
			}
		}
	}
	if got := cancelled.Load(); got != siblings {
		t.Errorf("%d of %d blocked siblings saw their context cancelled when the consumer stopped", got, siblings)
	}
	if after := latest(t, cp, "t"); after.ID != before || after.Step != 0 {
		t.Errorf("latest checkpoint is %s (step %d), want the one before the void superstep, %s (step 0)", after.ID, after.Step, before)
	}
	// The thread is not left busy and runs the void superstep again.
	block.Store(false)
	res, err := th.Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("rerun after the consumer stopped: %s %v", res.Status, err)
	}
	if got := len(res.State["log"].([]any)); got != siblings+1 {
		t.Errorf("log has %d entries, want %d", got, siblings+1)
	}
}

// TestStreamPullStoppedEarly stops an iter.Pull consumer between events and
// at every point of a run with parallel tasks: whichever event it stops
// after, the coroutine and every task goroutine end.
func TestStreamPullStoppedEarly(t *testing.T) {
	leaktest.Check(t)
	b := runtime.NewBuilder("pull").Channel("log", spec.Append)
	for i := range 4 {
		id := fmt.Sprintf("n%d", i)
		b.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ctx.Emit(id)
			return runtime.Values{"log": id}, nil
		}).Edge(spec.Start, id).Edge(id, "tail")
	}
	g := mustCompile(t, b.Node("tail", write(runtime.Values{"log": "tail"})))
	total := 0
	for range g.Stream(context.Background(), nil) {
		total++
	}
	for stopAfter := range total {
		next, stop := iterPull(g.Thread(checkpoint.NewMemory(), "t").Stream(context.Background(), nil))
		for range stopAfter {
			if _, ok := next(); !ok {
				break
			}
		}
		stop()
	}
}

// TestStreamStoppedAtEveryEvent stops a streamed run after each of its
// events in turn, on a graph with a journaled step and an interrupt. Wherever
// the consumer stops, no goroutine is left, the thread's lease is released,
// and the thread still finishes with its step run exactly once.
func TestStreamStoppedAtEveryEvent(t *testing.T) {
	leaktest.Check(t)
	var effects atomic.Int64
	g := threadGraph(t, &effects)
	in := runtime.Values{"who": "u"}
	total := 0
	for range g.Thread(checkpoint.NewMemory(), "count").Stream(context.Background(), in) {
		total++
	}
	for stopAfter := 1; stopAfter < total; stopAfter++ {
		effects.Store(0)
		store := newFaultyStore()
		th := g.Thread(store, "t")
		seen := 0
		for range th.Stream(context.Background(), in) {
			if seen++; seen == stopAfter {
				break
			}
		}
		store.checkReleased(t)
		// Finish the thread: resume it if it waits, else run it again first.
		res, err := th.Resume(context.Background(), runtime.Answer("ok"))
		if errors.Is(err, runtime.ErrNotInterrupted) {
			if res, err = th.Invoke(context.Background(), nil); err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("stopped after event %d: the rerun ended %s (%v), want interrupted", stopAfter, res.Status, err)
			}
			res, err = th.Resume(context.Background(), runtime.Answer("ok"))
		}
		if err != nil || res.Status != runtime.StatusDone || fmt.Sprint(res.State["out"]) != "[did:u ok]" {
			t.Fatalf("stopped after event %d: the thread ended %s with %v (%v)", stopAfter, res.Status, res.State, err)
		}
		if n := effects.Load(); n != 1 {
			t.Errorf("stopped after event %d: the step ran %d times, want once", stopAfter, n)
		}
		store.checkReleased(t)
	}
}
