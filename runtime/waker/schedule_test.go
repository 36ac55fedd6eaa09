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
