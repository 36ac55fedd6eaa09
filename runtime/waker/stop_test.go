package waker_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// TestStoppedWakerLosesNoFiring: a waker stopped (Run's context
// cancelled) while a firing of a 1 s enqueue schedule runs, two ticks
// waiting behind it, loses none of them: the next waker continues the
// firing it stopped (its first step is not run again) and the waiting
// ticks run (stored: recorded, so started; Go value: not fired, so caught
// up). A firing a person cancelled is left aborted. Before, the stopped
// firing ended aborted and was never continued, and the Go-value
// schedule's waiting ticks became aborted threads counted as fired.
func TestStoppedWakerLosesNoFiring(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1 s schedule for about 5 s; run without -short")
	}
	for _, stored := range []bool{false, true} {
		name := map[bool]string{false: "go value", true: "stored"}[stored]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			ctx := context.Background()
			var mu sync.Mutex
			block := true
			steps, ends := map[string]int{}, map[string]int{}
			started := make(chan string, 10)
			g, err := runtime.NewBuilder("slow").Channel("n", "").
				Node("a", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					if _, err := runtime.Step(c, "effect", func() (int, error) {
						mu.Lock()
						steps[c.ThreadID()]++
						mu.Unlock()
						return 1, nil
					}); err != nil {
						return nil, err
					}
					mu.Lock()
					b := block
					mu.Unlock()
					select {
					case started <- c.ThreadID():
					default:
					}
					if b {
						<-c.Done() // work the waker's stop cuts short
						return nil, c.Err()
					}
					return nil, nil
				}).
				Node("b", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					mu.Lock()
					ends[c.ThreadID()]++
					mu.Unlock()
					return runtime.Values{"n": 1}, nil
				}).
				Edge(spec.Start, "a").Edge("a", "b").Compile()
			if err != nil {
				t.Fatal(err)
			}
			opts := []waker.Option{waker.WithPollInterval(50 * time.Millisecond)}
			if stored {
				if _, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "slow", Graph: "slow", Every: time.Second, Overlap: "enqueue"}); err != nil {
					t.Fatal(err)
				}
				opts = append(opts, waker.WithStoredSchedules(map[string]waker.Target{"slow": waker.Graph(g)}))
			} else {
				opts = append(opts, waker.WithSchedules(waker.Schedule{Name: "slow", Every: time.Second, Graph: waker.Graph(g),
					Overlap: runtime.DoubleTextEnqueue, CatchUp: waker.CatchUpAll}))
			}
			run := func(until func() bool) {
				t.Helper()
				runUntil(t, store, nil, opts, until)
			}
			threads := func() []checkpoint.ThreadInfo {
				t.Helper()
				page, err := store.ListThreads(ctx, runtime.ThreadQuery{Meta: map[string]string{waker.MetaSchedule: "slow"}})
				if err != nil {
					t.Fatal(err)
				}
				return page.Threads
			}

			halfSecond()
			var first string
			run(func() bool {
				select {
				case first = <-started:
					time.Sleep(2200 * time.Millisecond) // two ticks queue behind it
					return true
				default:
					return false
				}
			})
			for _, th := range threads() {
				if th.ID == first && (th.Outcome.Status != runtime.StatusAborted || !strings.Contains(th.Outcome.Error, waker.ErrStopped.Error())) {
					t.Fatalf("the stopped firing %s: outcome %+v, want aborted by the waker's stop", first, th.Outcome)
				}
			}
			firstTick, err := time.Parse("20060102T150405Z", strings.TrimPrefix(first, "slow@"))
			if err != nil {
				t.Fatal(err)
			}
			// A firing a person cancelled, at the tick before the first:
			// aborted, not by a waker.
			personal := "slow@" + firstTick.Add(-time.Second).Format("20060102T150405Z")
			if !stored {
				pctx, pcancel := context.WithCancel(ctx)
				go func() { <-started; pcancel() }()
				meta := map[string]string{waker.MetaSchedule: "slow", waker.MetaTick: strings.TrimPrefix(personal, "slow@")}
				if res, _ := g.Thread(store, personal).Invoke(pctx, runtime.Values{}, runtime.WithThreadMeta(meta)); res.Status != runtime.StatusAborted {
					t.Fatalf("the cancelled firing ended %s, want aborted", res.Status)
				}
			}

			mu.Lock()
			block = false
			mu.Unlock()
			want := []string{first}
			for i := 1; i <= 2; i++ {
				want = append(want, "slow@"+firstTick.Add(time.Duration(i)*time.Second).Format("20060102T150405Z"))
			}
			run(func() bool {
				mu.Lock()
				defer mu.Unlock()
				for _, id := range want {
					if ends[id] == 0 {
						return false
					}
				}
				return true
			})

			mu.Lock()
			defer mu.Unlock()
			for _, id := range want {
				if ends[id] != 1 || steps[id] != 1 {
					t.Errorf("firing %s: node b ran %d times and the step %d, want once each", id, ends[id], steps[id])
				}
			}
			for _, th := range threads() {
				switch {
				case th.ID == personal:
					if th.Outcome.Status != runtime.StatusAborted || ends[th.ID] != 0 {
						t.Errorf("the firing a person cancelled: outcome %s, node b ran %d times; want left aborted", th.Outcome.Status, ends[th.ID])
					}
				case slices.Contains(want, th.ID) && th.Outcome.Status != runtime.StatusDone:
					t.Errorf("firing %s: outcome %+v, want done", th.ID, th.Outcome)
				case th.Outcome.Status == runtime.StatusAborted && !strings.Contains(th.Outcome.Error, waker.ErrStopped.Error()):
					t.Errorf("firing %s ended aborted, not by the waker's stop: %s", th.ID, th.Outcome.Error)
				}
			}
			if stored {
				fs, err := store.ListFirings(ctx, "slow", 0)
				if err != nil {
					t.Fatal(err)
				}
				recorded := 0
				for _, f := range fs {
					if slices.Contains(want, f.Thread) {
						recorded++
						if f.Skipped != "" {
							t.Errorf("firing at %v recorded skipped (%s), want fired", f.Tick, f.Skipped)
						}
					}
				}
				if recorded != len(want) {
					t.Errorf("%d of the firings %v recorded, want each once", recorded, want)
				}
			}
		})
	}
}

// TestOneThreadScheduleWaitingIsSkipped: a stored schedule with one
// thread for every firing whose firing paused on an interrupt records the
// later ticks skipped (checkpoint.SkippedWaiting), and runs none of them,
// until the interrupt is answered. Before, each was recorded as a firing
// that ran (Skipped "") while its start was refused.
func TestOneThreadScheduleWaitingIsSkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1 s schedule for about 3 s; run without -short")
	}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	var mu sync.Mutex
	asked := 0
	g, err := runtime.NewBuilder("ask").Channel("ok", "").
		Node("ask", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			mu.Lock()
			asked++
			mu.Unlock()
			ok, err := runtime.Interrupt[bool](c, "approve?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"ok": ok}, nil
		}).Edge(spec.Start, "ask").Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "ask", Graph: "ask", Every: time.Second, Thread: "{schedule}", Overlap: "reject"}); err != nil {
		t.Fatal(err)
	}
	var told []checkpoint.Firing
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"ask": waker.Graph(g)}), waker.WithPollInterval(50*time.Millisecond),
		waker.WithOnFiring(func(_ context.Context, f checkpoint.Firing) { mu.Lock(); told = append(told, f); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	halfSecond()
	runCtx, cancel := context.WithTimeout(ctx, 3*time.Second) // ticks at +0.5, +1.5, +2.5
	defer cancel()
	_ = w.Run(runCtx)
	fs, err := store.ListFirings(ctx, "ask", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) < 3 {
		t.Fatalf("%d firings in 3 s, want 3", len(fs))
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("the node ran %d times, want once (the first tick; the thread then waits)", asked)
	}
	for i, f := range slices.Backward(fs) {
		want := checkpoint.SkippedWaiting
		if i == len(fs)-1 {
			want = "" // the oldest: it ran, and paused
		}
		if f.Skipped != want {
			t.Errorf("firing at %v: skipped %q, want %q", f.Tick, f.Skipped, want)
		}
	}
	oldestFirst := slices.Clone(fs)
	slices.Reverse(oldestFirst)
	if !slices.EqualFunc(told, oldestFirst, func(a, b checkpoint.Firing) bool { return a.Tick.Equal(b.Tick) && a.Skipped == b.Skipped }) {
		t.Errorf("OnFiring heard %v, the store recorded %v", told, fs)
	}
	st, err := g.Thread(store, "ask").State(ctx)
	if err != nil || len(st.Open) != 1 {
		t.Errorf("thread ask: %d open interrupts (%v), want the first firing's one", len(st.Open), err)
	}
}

// TestStoppedWakerLosesNoWake: a waker stopped (Run's context cancelled)
// while the run of a wake it started still runs (a timer's, or an
// interrupt deadline's timeout path) loses nothing: the run ends aborted
// by ErrStopped and the next waker on the store continues the thread to
// its end, its journaled step not run again; whether the stop came in the
// superstep the wake replays (same node) or in a later one (next node).
// Before, the waker listed only parked and interrupted threads, and the
// stopped thread was never continued, while a kill's was.
func TestStoppedWakerLosesNoWake(t *testing.T) {
	for _, tc := range []struct {
		name               string
		sameNode, deadline bool
	}{
		{"timer, next node", false, false},
		{"timer, same node", true, false},
		{"deadline, same node", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			ctx := context.Background()
			var mu sync.Mutex
			block, steps, ends := true, 0, 0
			started := make(chan struct{}, 1)
			wait := func(c *runtime.Ctx) error {
				if tc.deadline {
					_, err := runtime.Interrupt[string](c, "approve?", runtime.WithTimeout(200*time.Millisecond), runtime.WithDefaultAnswer("late"))
					return err
				}
				return runtime.Sleep(c, "wait", 200*time.Millisecond)
			}
			work := func(c *runtime.Ctx) error {
				if _, err := runtime.Step(c, "effect", func() (int, error) {
					mu.Lock()
					steps++
					mu.Unlock()
					return 1, nil
				}); err != nil {
					return err
				}
				mu.Lock()
				b := block
				mu.Unlock()
				select {
				case started <- struct{}{}:
				default:
				}
				if b {
					<-c.Done() // work the waker's stop cuts short
					return c.Err()
				}
				return nil
			}
			end := func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
				mu.Lock()
				ends++
				mu.Unlock()
				return runtime.Values{"n": 1}, nil
			}
			b := runtime.NewBuilder("woken").Channel("n", "")
			if tc.sameNode {
				b = b.Node("a", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					if err := wait(c); err != nil {
						return nil, err
					}
					return nil, work(c)
				}).Node("end", end).Edge(spec.Start, "a").Edge("a", "end")
			} else {
				b = b.Node("a", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) { return nil, wait(c) }).
					Node("b", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) { return nil, work(c) }).
					Node("end", end).Edge(spec.Start, "a").Edge("a", "b").Edge("b", "end")
			}
			g, err := b.Compile()
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Thread(store, "t").Invoke(ctx, nil, runtime.WithParkAfter(0))
			if err != nil || (res.Status != runtime.StatusParked && res.Status != runtime.StatusInterrupted) {
				t.Fatalf("first run: %s %v, want parked or interrupted", res.Status, err)
			}
			run := func(until func() bool) {
				t.Helper()
				runUntil(t, store, []waker.Target{waker.Graph(g)}, []waker.Option{waker.WithPollInterval(50 * time.Millisecond)}, until)
			}
			outcome := func() checkpoint.ThreadOutcome {
				t.Helper()
				page, err := store.ListThreads(ctx, runtime.ThreadQuery{})
				if err != nil || len(page.Threads) != 1 {
					t.Fatalf("list threads: %d threads (%v), want thread t", len(page.Threads), err)
				}
				return page.Threads[0].Outcome
			}

			run(func() bool {
				select {
				case <-started:
					return true
				default:
					return false
				}
			})
			if o := outcome(); o.Status != runtime.StatusAborted || !strings.Contains(o.Error, waker.ErrStopped.Error()) {
				t.Fatalf("the stopped wake: outcome %+v, want aborted by the waker's stop", o)
			}
			mu.Lock()
			block = false
			mu.Unlock()
			run(func() bool {
				mu.Lock()
				defer mu.Unlock()
				return ends > 0
			})
			mu.Lock()
			defer mu.Unlock()
			if o := outcome(); o.Status != runtime.StatusDone || steps != 1 || ends != 1 {
				t.Errorf("after a new waker: outcome %+v, the step ran %d times and the end node %d; want done, once each", o, steps, ends)
			}
		})
	}
}

// runUntil runs a waker of targets and opts on store until until holds
// (or 10 s pass), then stops it the documented way, cancelling Run's
// context, and waits for Run to return.
func runUntil(t *testing.T, store waker.Store, targets []waker.Target, opts []waker.Option, until func() bool) {
	t.Helper()
	w, err := waker.New(store, targets, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); !until() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
}
