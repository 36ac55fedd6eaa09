package workers_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// sleeper is a graph of n supersteps that each sleep d (stopping early
// with its context), counting its runs by thread.
func sleeper(t *testing.T, n int, d time.Duration, ran func(thread string)) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	b := runtime.NewBuilder("sleeper").Channel("log", spec.Append)
	prev := spec.Start
	for i := range n {
		name := string(rune('a' + i))
		b.Node(name, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if i == 0 {
				ran(ctx.ThreadID())
			}
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return runtime.Values{"log": name}, nil
		})
		b.Edge(prev, name)
		prev = name
	}
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSchedulesFireOnceWithOverlapPolicies: three in-process workers fire
// three 1 s schedules for about four seconds. "each" (a thread per tick,
// overlap enqueue) fires every tick once: consecutive ticks, one done
// request and one run per tick. "slow" (one thread, runs of 2.5 s, overlap reject) skips the
// ticks that come while its firing runs, and records them skipped.
// "replace" (runs of 3 s in supersteps, cancel-and-replace) stops each
// firing when the next comes: they end aborted. Each firing and skip is
// told to OnFiring once.
func TestSchedulesFireOnceWithOverlapPolicies(t *testing.T) {
	q := openQueue(t)
	s := q.Store()
	ctx := context.Background()
	var mu sync.Mutex
	runs := map[string]int{}
	ran := func(th string) { mu.Lock(); runs[th]++; mu.Unlock() }
	var told atomic.Int32
	startWorkers(t, q, map[string]workers.Runnable{
		"quick": workers.Graph(sleeper(t, 1, 0, ran)),
		"slow":  workers.Graph(sleeper(t, 1, 2500*time.Millisecond, ran)),
		"steps": workers.Graph(sleeper(t, 10, 300*time.Millisecond, ran)),
	}, 3, workers.Poll(50*time.Millisecond), workers.OnFiring(func(context.Context, checkpoint.Firing) { told.Add(1) }))
	for _, sc := range []checkpoint.Schedule{
		{Name: "each", Graph: "quick", Every: time.Second, Overlap: runtime.DoubleTextEnqueue},
		{Name: "slow", Graph: "slow", Every: time.Second, Thread: "slow", Overlap: runtime.DoubleTextReject},
		{Name: "replace", Graph: "steps", Every: time.Second, Overlap: runtime.DoubleTextCancelReplace},
	} {
		if _, err := s.CreateSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(4200 * time.Millisecond)
	for _, name := range []string{"each", "slow", "replace"} {
		if err := s.PauseSchedule(ctx, name, true); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // a firing in flight commits
	firings := map[string][]checkpoint.Firing{}
	total := 0
	for _, name := range []string{"each", "slow", "replace"} {
		fs, err := s.ListFirings(ctx, name, 0)
		if err != nil {
			t.Fatal(err)
		}
		firings[name] = fs
		total += len(fs)
	}
	each := firings["each"]
	if len(each) < 3 {
		t.Fatalf("schedule each fired %d times in 4 s, want at least 3", len(each))
	}
	for i, f := range each {
		if f.Skipped != "" || f.Request == 0 || f.Thread != "each@"+f.Tick.UTC().Format(checkpoint.TickFormat) {
			t.Errorf("firing %+v of each: want a request on the tick's thread", f)
		}
		if i > 0 && !each[i-1].Tick.Equal(f.Tick.Add(time.Second)) {
			t.Errorf("firings of each at %v then %v: want consecutive ticks", f.Tick, each[i-1].Tick)
		}
		if o := wait(t, q, f.Request); o.State != string(runtime.StatusDone) {
			t.Errorf("request %d of tick %v: %s %q, want done", f.Request, f.Tick, o.State, o.Error)
		}
		mu.Lock()
		n := runs[f.Thread]
		mu.Unlock()
		if n != 1 {
			t.Errorf("thread %s ran %d times, want once", f.Thread, n)
		}
	}
	page, err := s.ListThreads(ctx, checkpoint.ThreadQuery{Meta: map[string]string{checkpoint.MetaSchedule: "each"}, Limit: 100})
	if err != nil || len(page.Threads) != len(each) {
		t.Errorf("threads with the metadata of schedule each: %d %v, want %d", len(page.Threads), err, len(each))
	}
	skipped := 0
	for _, f := range firings["slow"] {
		if f.Skipped == "overlap" {
			skipped++
		}
	}
	if skipped == 0 || skipped == len(firings["slow"]) {
		t.Errorf("schedule slow: %d of %d ticks skipped; want some skipped while a 2.5 s firing ran, and some fired", skipped, len(firings["slow"]))
	}
	replaced := firings["replace"]
	if len(replaced) < 3 {
		t.Fatalf("schedule replace fired %d times, want at least 3", len(replaced))
	}
	for _, f := range replaced[1:] { // all but the newest were replaced
		if o := wait(t, q, f.Request); o.State != string(runtime.StatusAborted) && o.State != "cancelled" {
			t.Errorf("replaced firing at %v: request %d %s, want aborted or cancelled", f.Tick, f.Request, o.State)
		}
	}
	if int(told.Load()) != total {
		t.Errorf("OnFiring was told of %d firings, the store recorded %d", told.Load(), total)
	}
}
