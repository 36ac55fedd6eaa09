package waker_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// TestOneThreadScheduleHeldElsewhere: a stored schedule with one thread
// for every firing whose thread a run of another process holds (the
// test holds its lease, as another waker's firing of an earlier tick or
// a person's run through the server does) when a tick comes: under
// reject the tick is recorded skipped (checkpoint.SkippedOverlap) and
// does not run; under enqueue and cancel-and-replace it is recorded
// fired and runs once the holder gives the thread back, before the next
// tick. Before, the tick was recorded fired, its start was refused
// (runtime.ErrThreadBusy) and taken for the tick fired elsewhere: it
// never ran.
func TestOneThreadScheduleHeldElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1 s schedule for about 2 s per policy; run without -short")
	}
	for _, overlap := range []runtime.DoubleTexting{runtime.DoubleTextReject, runtime.DoubleTextEnqueue, runtime.DoubleTextCancelReplace} {
		t.Run(string(overlap), func(t *testing.T) {
			store, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			ctx := context.Background()
			g, runs := counter(t)
			var mu sync.Mutex
			var told []checkpoint.Firing
			w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"count": waker.Graph(g)}), waker.WithPollInterval(50*time.Millisecond),
				waker.WithOnFiring(func(_ context.Context, f checkpoint.Firing) { mu.Lock(); told = append(told, f); mu.Unlock() }))
			if err != nil {
				t.Fatal(err)
			}
			// The other process's run.
			held, err := store.Lease(ctx, "beat", checkpoint.LeaseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			release := sync.OnceFunc(held.Release)
			defer release()
			halfSecond() // the first tick comes in half a second
			if _, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "count", Every: time.Second, Thread: "{schedule}", Overlap: overlap}); err != nil {
				t.Fatal(err)
			}
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = w.Run(runCtx) }()
			defer func() { cancel(); <-done }()

			firings := func() []checkpoint.Firing {
				t.Helper()
				fs, err := store.ListFirings(ctx, "beat", 0)
				if err != nil {
					t.Fatal(err)
				}
				return fs
			}
			var fs []checkpoint.Firing
			for deadline := time.Now().Add(3 * time.Second); len(fs) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				fs = firings()
			}
			if len(fs) == 0 {
				t.Fatal("no tick recorded in 3 s")
			}
			first := fs[len(fs)-1]
			time.Sleep(200 * time.Millisecond) // the waker tries the thread meanwhile
			if n := runs("beat"); n != 0 {
				t.Fatalf("thread beat ran %d times while another run held it", n)
			}
			release()
			if overlap == runtime.DoubleTextReject {
				if first.Skipped != checkpoint.SkippedOverlap {
					t.Errorf("tick %v, held by another run under reject: recorded skipped %q, want %q", first.Tick, first.Skipped, checkpoint.SkippedOverlap)
				}
				// The next tick finds the thread free and runs.
				for deadline := time.Now().Add(3 * time.Second); runs("beat") == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				}
			} else {
				if first.Skipped != "" {
					t.Errorf("tick %v, held by another run under %s: recorded skipped %q, want fired", first.Tick, overlap, first.Skipped)
				}
				// It runs once the thread is free, not at the next tick.
				deadline := first.Tick.Add(900 * time.Millisecond)
				for runs("beat") == 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if n := runs("beat"); n != 1 {
					t.Errorf("tick %v under %s: thread beat ran %d times by 900 ms after it (the holder gave it back at about 200 ms), want once", first.Tick, overlap, n)
				}
			}
			cancel()
			<-done
			fs = firings()
			fired := 0
			for _, f := range fs {
				if f.Skipped == "" {
					fired++
				}
			}
			if n := runs("beat"); n != fired || n == 0 {
				t.Errorf("thread beat ran %d times, the store records %d firings that ran (%v)", n, fired, fs)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(told) == 0 || told[0].Skipped != first.Skipped {
				t.Errorf("OnFiring heard %v, the store recorded %v first", told, first)
			}
		})
	}
}

// TestOneThreadScheduleTwoWakers: two wakers on one store fire a 1 s
// stored schedule with one thread for every firing, under reject, whose
// runs take 1.3 s: a tick that comes while either waker's run holds the
// thread is recorded skipped (checkpoint.SkippedOverlap), and every tick
// recorded fired runs. Before, a waker that recorded a tick while the
// other waker's run held the thread recorded it fired and dropped it (its
// start refused, taken for the tick fired elsewhere); which waker records
// a tick is a race, so three stores run at once.
func TestOneThreadScheduleTwoWakers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1 s schedule for about 4 s; run without -short")
	}
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			twoWakersOneThread(t)
		})
	}
}

// twoWakersOneThread is one round of TestOneThreadScheduleTwoWakers, on a
// store of its own.
func twoWakersOneThread(t *testing.T) {
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	var mu sync.Mutex
	runs := 0
	g, err := runtime.NewBuilder("slow").Channel("n", "").
		Node("n", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			mu.Lock()
			runs++
			mu.Unlock()
			time.Sleep(1300 * time.Millisecond)
			return runtime.Values{"n": v["n"]}, nil
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	halfSecond()
	if _, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "slow", Every: time.Second, Thread: "{schedule}"}); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, 4*time.Second) // ticks at +0.5, +1.5, +2.5, +3.5
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"slow": waker.Graph(g)}), waker.WithPollInterval(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = w.Run(runCtx) })
	}
	wg.Wait()
	fs, err := store.ListFirings(ctx, "beat", 0)
	if err != nil {
		t.Fatal(err)
	}
	fired, skipped := 0, 0
	for _, f := range fs {
		switch f.Skipped {
		case "":
			fired++
		case checkpoint.SkippedOverlap:
			skipped++
		default:
			t.Errorf("firing at %v skipped %q, want fired or %q", f.Tick, f.Skipped, checkpoint.SkippedOverlap)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fs) != 4 || fired != runs || skipped == 0 {
		t.Errorf("%d ticks recorded (want 4), %d fired and %d skipped (overlap); the thread ran %d times, want once per firing recorded fired: %v", len(fs), fired, skipped, runs, fs)
	}
}
