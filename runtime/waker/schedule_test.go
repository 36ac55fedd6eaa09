package waker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// halfSecond sleeps until the clock is half-way between two seconds, so
// that a 1 s schedule's ticks are far from the test's own steps.
func halfSecond() {
	now := time.Now()
	at := now.Truncate(time.Second).Add(500 * time.Millisecond)
	if !at.After(now) {
		at = at.Add(time.Second)
	}
	time.Sleep(time.Until(at))
}

// TestScheduleFiresEachTickOnce: a 1 s schedule run by two wakers on one
// store fires each tick once (one thread, one run of its node); after
// the wakers stop for two seconds and new ones start, the missed ticks
// fire as the catch-up policy says: all of them, the latest, or none.
func TestScheduleFiresEachTickOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1 s schedules for about 8 s; run without -short")
	}
	for _, tc := range []struct {
		policy waker.CatchUp
		missed int // ticks of the downtime left unfired
	}{
		{waker.CatchUpAll, 0},
		{waker.CatchUpOne, 1},
		{waker.CatchUpNone, 2},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			store := checkpoint.NewMemory()
			var mu sync.Mutex
			runs := map[string]int{}
			g, err := runtime.NewBuilder("tick").Channel("n", "").
				Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					mu.Lock()
					runs[c.ThreadID()]++
					mu.Unlock()
					return runtime.Values{"n": 1}, nil
				}).Edge(spec.Start, "n").Compile()
			if err != nil {
				t.Fatal(err)
			}
			sched := waker.Schedule{Name: "every-second", Every: time.Second, Graph: waker.Graph(g), CatchUp: tc.policy}
			phase := func(d time.Duration) {
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for range 2 {
					w, err := waker.New(store, nil, waker.WithSchedules(sched), waker.WithPollInterval(100*time.Millisecond))
					if err != nil {
						t.Fatal(err)
					}
					wg.Go(func() { _ = w.Run(ctx) })
				}
				time.Sleep(d)
				cancel()
				wg.Wait()
			}
			halfSecond()
			phase(3 * time.Second) // fires 3 ticks
			time.Sleep(2 * time.Second)
			phase(2 * time.Second) // 2 missed ticks, then 2 more
			page, err := store.ListThreads(context.Background(), runtime.ThreadQuery{Meta: map[string]string{waker.MetaSchedule: "every-second"}})
			if err != nil {
				t.Fatal(err)
			}
			var ticks []time.Time
			for _, th := range page.Threads {
				tick, err := time.Parse("20060102T150405Z", th.Meta[waker.MetaTick])
				if err != nil || th.ID != "every-second@"+th.Meta[waker.MetaTick] || th.Outcome.Status != runtime.StatusDone {
					t.Fatalf("thread %+v: %v", th, err)
				}
				ticks = append(ticks, tick)
			}
			mu.Lock()
			defer mu.Unlock()
			for id, n := range runs {
				if n != 1 || !strings.HasPrefix(id, "every-second@") {
					t.Errorf("thread %s ran %d times, want once", id, n)
				}
			}
			if len(runs) != len(ticks) {
				t.Errorf("%d runs for %d firing threads", len(runs), len(ticks))
			}
			if len(ticks) == 0 {
				t.Fatal("no tick fired")
			}
			first, last := ticks[0], ticks[0]
			for _, tk := range ticks {
				if tk.Before(first) {
					first = tk
				}
				if tk.After(last) {
					last = tk
				}
			}
			span := int(last.Sub(first)/time.Second) + 1
			if want := 7 - tc.missed; len(ticks) != want || span != 7 {
				t.Errorf("fired %d ticks over %d seconds, want %d of 7 (%s): %v", len(ticks), span, want, tc.policy, ticks)
			}
		})
	}
}

// TestScheduleRefused: a schedule that cannot run is refused by New with
// an error matching ErrSchedule.
func TestScheduleRefused(t *testing.T) {
	g, err := runtime.NewBuilder("g").Node("n", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	tg := waker.Graph(g)
	for _, s := range []waker.Schedule{
		{Name: "", Every: time.Second, Graph: tg},
		{Name: "a/b", Every: time.Second, Graph: tg},
		{Name: "both", Every: time.Second, Cron: "* * * * *", Graph: tg},
		{Name: "neither", Graph: tg},
		{Name: "fast", Every: time.Millisecond, Graph: tg},
		{Name: "bad cron", Cron: "61 * * * *", Graph: tg},
		{Name: "bad zone", Cron: "0 9 * * *", TimeZone: "Mars/Olympus", Graph: tg},
		{Name: "no graph", Every: time.Second},
		{Name: "overlap", Every: time.Second, Graph: tg, Overlap: "replace"},
		{Name: "catch-up", Every: time.Second, Graph: tg, CatchUp: "some"},
	} {
		if _, err := waker.New(checkpoint.NewMemory(), nil, waker.WithSchedules(s)); !errors.Is(err, waker.ErrSchedule) {
			t.Errorf("schedule %q: %v, want ErrSchedule", s.Name, err)
		}
	}
	if _, err := waker.New(checkpoint.NewMemory(), nil, waker.WithSchedules(waker.Schedule{Name: "nine", Cron: "0 9 * * 1-5", TimeZone: "Europe/Istanbul", Graph: tg})); err != nil {
		t.Errorf("a valid cron schedule: %v", err)
	}
}

// TestScheduleOverlap: firings of a 1 s schedule whose run takes 1.5 s
// never run at once; reject skips the ticks that come while one runs,
// enqueue runs them after it (one still waiting when the waker stops is
// not started), cancel-and-replace stops it at its next superstep
// boundary (its thread ends aborted).
func TestScheduleOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1 s schedule for about 5 s; run without -short")
	}
	for _, policy := range []runtime.DoubleTexting{runtime.DoubleTextReject, runtime.DoubleTextEnqueue, runtime.DoubleTextCancelReplace} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			store := checkpoint.NewMemory()
			var mu sync.Mutex
			running, most, started := 0, 0, 0
			g, err := runtime.NewBuilder("slow").Channel("n", "").
				Node("a", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					mu.Lock()
					running++
					started++
					most = max(most, running)
					mu.Unlock()
					defer func() { mu.Lock(); running--; mu.Unlock() }()
					time.Sleep(1500 * time.Millisecond)
					return nil, nil
				}).
				Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 1}, nil }).
				Edge(spec.Start, "a").Edge("a", "b").Compile()
			if err != nil {
				t.Fatal(err)
			}
			w, err := waker.New(store, nil, waker.WithSchedules(waker.Schedule{Name: "slow", Every: time.Second, Graph: waker.Graph(g), Overlap: policy}),
				waker.WithPollInterval(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			halfSecond()
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second) // ticks at +0.5 … +3.5
			defer cancel()
			_ = w.Run(ctx)
			page, err := store.ListThreads(context.Background(), runtime.ThreadQuery{Meta: map[string]string{waker.MetaSchedule: "slow"}})
			if err != nil {
				t.Fatal(err)
			}
			aborted := 0
			for _, th := range page.Threads {
				if th.Outcome.Status == runtime.StatusAborted {
					aborted++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if most != 1 {
				t.Errorf("%d firings ran at once, want 1", most)
			}
			switch policy {
			case runtime.DoubleTextReject:
				if started != 2 || len(page.Threads) != 2 {
					t.Errorf("reject: %d firings started on %d threads; want 2 (ticks 1 and 3)", started, len(page.Threads))
				}
			case runtime.DoubleTextEnqueue:
				// Ticks 1-3 started, one after the other; tick 4 still
				// waited behind tick 3 when the waker stopped: not fired,
				// it has no thread.
				if len(page.Threads) != 3 {
					t.Errorf("enqueue: %d firing threads, want 3 (ticks 1 to 3)", len(page.Threads))
				}
			case runtime.DoubleTextCancelReplace:
				if aborted < 2 {
					t.Errorf("cancel-and-replace: %d firings aborted, want at least 2", aborted)
				}
			}
		})
	}
}
