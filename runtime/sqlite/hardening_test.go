package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/internal/leaktest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// TestConcurrentThreadsOnOneFile runs 200 threads at once through one graph
// and ONE SQLite store, each with a journaled step, an interrupt and a
// resume (so every run takes and releases a lease with its heartbeat):
// every thread ends with its own data, every step ran exactly once, and
// once the store is closed no goroutine is left.
func TestConcurrentThreadsOnOneFile(t *testing.T) {
	leaktest.Check(t)
	n := 200
	if testing.Short() {
		n = 40
	}
	// NORMAL keeps every commit atomic and skips only the fsync a power
	// loss needs, which this test is not about; it makes the test faster.
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "threads.db"), sqlite.Synchronous("NORMAL"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	var effects atomic.Int64
	g, err := runtime.NewBuilder("threads").Channel("who", "").Channel("out", spec.Append).Channel("done", "").
		Node("work", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			who, _ := s["who"].(string)
			did, err := runtime.Step(ctx, "effect", func() (string, error) {
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
			return runtime.Values{"out": []any{did, ans}}, nil
		}).
		Node("finish", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			return runtime.Values{"done": ctx.ThreadID()}, nil
		}).
		Edge(spec.Start, "work").Edge("work", "finish").Compile()
	if err != nil {
		t.Fatal(err)
	}

	run := func(i int) error {
		ctx := context.Background()
		thread, who := fmt.Sprintf("thread-%04d", i), fmt.Sprintf("user-%d", i)
		th := g.Thread(store, thread)
		res, err := th.Invoke(ctx, runtime.Values{"who": who})
		if err != nil {
			return fmt.Errorf("%s: invoke: %w", thread, err)
		}
		if res.Status != runtime.StatusInterrupted || len(res.Pending) != 1 || string(res.Pending[0].Payload) != strconv.Quote("approve "+who+"?") {
			return fmt.Errorf("%s: invoke ended %s with pending %+v, want one interrupt about %s", thread, res.Status, res.Pending, who)
		}
		res, err = th.Resume(ctx, runtime.Answer("ok-"+who))
		if err != nil {
			return fmt.Errorf("%s: resume: %w", thread, err)
		}
		want := fmt.Sprint([]any{"did:" + who, "ok-" + who})
		if res.Status != runtime.StatusDone || fmt.Sprint(res.State["out"]) != want || res.State["done"] != thread {
			return fmt.Errorf("%s: ended %s with out=%v done=%v, want out=%s done=%s", thread, res.Status, res.State["out"], res.State["done"], want, thread)
		}
		cps, err := store.List(ctx, thread, 0)
		if err != nil || len(cps) != 4 {
			return fmt.Errorf("%s: %d checkpoints (%v), want 4", thread, len(cps), err)
		}
		return nil
	}
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- run(i) })
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
}
