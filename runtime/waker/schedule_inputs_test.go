package waker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// TestScheduleRefusedInputs: New refuses, with an error matching
// ErrSchedule, a Go-value schedule that would never tick (before, New took
// it and Run looped for good on the zero time robfig/cron gives), a time
// zone given with Every (which ignored it), an interval finer than a
// microsecond and a negative MaxCatchUp; and it returns at once.
func TestScheduleRefusedInputs(t *testing.T) {
	g, err := runtime.NewBuilder("g").Node("n", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	tg := waker.Graph(g)
	for _, s := range []waker.Schedule{
		{Name: "30 February", Cron: "0 0 30 2 *", Graph: tg},
		{Name: "31 November in a zone", Cron: "0 9 31 11 *", TimeZone: "Europe/Istanbul", Graph: tg},
		{Name: "zone with every", Every: 24 * time.Hour, TimeZone: "Europe/Istanbul", Graph: tg},
		{Name: "nanoseconds", Every: time.Second + time.Nanosecond, Graph: tg},
		// A negative MaxCatchUp silently became the default.
		{Name: "negative catch-up", Every: time.Minute, CatchUp: waker.CatchUpAll, MaxCatchUp: -1, Graph: tg},
	} {
		t0 := time.Now()
		w, err := waker.New(checkpoint.NewMemory(), nil, waker.WithSchedules(s))
		if !errors.Is(err, waker.ErrSchedule) {
			t.Errorf("schedule %q: %v, want ErrSchedule", s.Name, err)
		}
		if took := time.Since(t0); took > time.Second {
			t.Errorf("schedule %q: New took %v", s.Name, took)
		}
		if w != nil {
			// What a user would do next: the Run must end with its context.
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			done := make(chan struct{})
			go func() { _ = w.Run(ctx); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("schedule %q: Run did not return after its context ended", s.Name)
			}
			cancel()
		}
	}
	if _, err := waker.New(checkpoint.NewMemory(), nil, waker.WithSchedules(waker.Schedule{Name: "leap", Cron: "0 0 29 2 *", Graph: tg})); err != nil {
		t.Errorf("a date of leap years only: %v", err)
	}
}

// freezingStore is a memory store whose ListThreads blocks for freeze
// once armed: the waker's loop stands still, as in a process stopped
// (SIGSTOP) or a clock that jumped.
type freezingStore struct {
	*checkpoint.Memory
	armed          atomic.Bool
	freeze         time.Duration
	mu             sync.Mutex
	frozen, thawed time.Time
}

func (s *freezingStore) ListThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	if s.armed.CompareAndSwap(true, false) {
		s.mu.Lock()
		s.frozen = time.Now()
		s.mu.Unlock()
		time.Sleep(s.freeze)
		s.mu.Lock()
		s.thawed = time.Now()
		s.mu.Unlock()
	}
	return s.Memory.ListThreads(ctx, q)
}

// TestScheduleFrozenWakerCatchUp: the ticks of a Go-value schedule that
// came while its waker stood still (its process stopped, its clock
// jumped) for longer than the schedule grace were missed, and follow the
// catch-up policy as those of a waker that was down do: CatchUpNone fires
// none of them (it fired every one, up to MaxCatchUp, at once). The ticks
// before and after fire.
func TestScheduleFrozenWakerCatchUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1 s schedule for about 7 s; run without -short")
	}
	store := &freezingStore{Memory: checkpoint.NewMemory(), freeze: 3200 * time.Millisecond}
	g, err := runtime.NewBuilder("tick").Channel("n", "").
		Node("n", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 1}, nil }).
		Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	const grace = 300 * time.Millisecond
	w, err := waker.New(store, nil, waker.WithSchedules(waker.Schedule{Name: "s", Every: time.Second, Graph: waker.Graph(g), CatchUp: waker.CatchUpNone}),
		waker.WithPollInterval(50*time.Millisecond), waker.WithScheduleGrace(grace))
	if err != nil {
		t.Fatal(err)
	}
	halfSecond()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	time.Sleep(1200 * time.Millisecond)
	store.armed.Store(true)
	time.Sleep(store.freeze + 2500*time.Millisecond)
	cancel()
	<-done
	store.mu.Lock()
	frozen, thawed := store.frozen, store.thawed
	store.mu.Unlock()
	if frozen.IsZero() || thawed.IsZero() {
		t.Fatal("the waker never listed threads while armed")
	}
	page, err := store.Memory.ListThreads(context.Background(), checkpoint.ThreadQuery{Meta: map[string]string{waker.MetaSchedule: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	var during, after []string
	for _, th := range page.Threads {
		tick, err := time.Parse("20060102T150405Z", th.Meta[waker.MetaTick])
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tick.After(frozen) && tick.Before(thawed.Add(-grace)):
			during = append(during, th.ID)
		case tick.After(thawed):
			after = append(after, th.ID)
		}
	}
	if len(during) > 0 {
		t.Errorf("ticks that came while the waker stood still (%v to %v, more than the %v grace) fired under CatchUpNone: %v", frozen.Format("15:04:05.000"), thawed.Format("15:04:05.000"), grace, during)
	}
	if len(after) == 0 {
		t.Errorf("no tick fired after the waker went on")
	}
}
