package waker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// readHookStore is a Memory store whose first read of a thread's latest
// checkpoint calls before first: what another waker does between a
// waker's listing of a thread and its read of it.
type readHookStore struct {
	*checkpoint.Memory
	before func()
	once   sync.Once
}

func (s *readHookStore) Get(ctx context.Context, thread, id string) (*runtime.Checkpoint, error) {
	if id == "" {
		s.once.Do(s.before)
	}
	return s.Memory.Get(ctx, thread, id)
}

// TestStoppedThreadContinuedElsewhereAndFailed: a waker lists a thread a
// waker's stop cut short; before it reads the thread, another waker
// continues it, and that continuation fails in its first superstep (its
// start checkpoint written, nothing after). The thread's latest checkpoint
// still plans the failed task, but the thread ended (error): the waker
// must not run it again. Before, it continued from that checkpoint as
// expected latest, running the failed step a second time and replacing
// the recorded error with done.
func TestStoppedThreadContinuedElsewhereAndFailed(t *testing.T) {
	ctx := context.Background()
	mem := checkpoint.NewMemory()
	var bRuns atomic.Int32
	g, err := runtime.NewBuilder("steps").Channel("n", "").
		Node("a", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) { return nil, nil }).
		Node("b", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			switch bRuns.Add(1) {
			case 1: // the run the waker's stop cuts short
				<-c.Done()
				return nil, c.Err()
			case 2: // the other waker's continuation
				return nil, errors.New("b failed")
			}
			return nil, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Compile()
	if err != nil {
		t.Fatal(err)
	}
	const thread = "job"
	stopCtx, stop := context.WithCancelCause(ctx)
	go func() {
		for bRuns.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		stop(waker.ErrStopped)
	}()
	if _, err := g.Thread(mem, thread).Invoke(stopCtx, runtime.Values{}); err == nil {
		t.Fatal("the stopped run did not fail")
	}
	page, err := mem.ListThreads(ctx, checkpoint.ThreadQuery{Status: runtime.StatusAborted})
	if err != nil || len(page.Threads) != 1 || !strings.Contains(page.Threads[0].Outcome.Error, waker.ErrStopped.Error()) {
		t.Fatalf("the stopped thread: %+v, %v; want aborted by the waker's stop", page.Threads, err)
	}
	store := &readHookStore{Memory: mem, before: func() {
		// Another waker continues the thread, and its run fails.
		cp, err := mem.Get(ctx, thread, "")
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := g.Thread(mem, thread).Invoke(ctx, runtime.Values{}, runtime.WithExpectedLatest(cp.ID)); err == nil {
			t.Error("the other waker's continuation did not fail")
		}
	}}
	w, err := waker.New(store, []waker.Target{waker.Graph(g)})
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.WakeDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := bRuns.Load(); n != 0 || got != 2 {
		t.Errorf("the waker ran %d continuations and b ran %d times; want none and twice: the failed thread was run again", n, got)
	}
	page, err = mem.ListThreads(ctx, checkpoint.ThreadQuery{})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].Outcome.Status != runtime.StatusError {
		t.Errorf("the thread: %+v, %v; want its outcome error", page.Threads, err)
	}
}
