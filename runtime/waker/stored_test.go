package waker_test

import (
	"context"
	"errors"
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

// counter is a graph whose one node counts its runs by thread.
func counter(t *testing.T) (*runtime.Graph[runtime.Values, runtime.Values], func(string) int) {
	t.Helper()
	var mu sync.Mutex
	runs := map[string]int{}
	g, err := runtime.NewBuilder("count").Channel("n", "").
		Node("n", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			mu.Lock()
			runs[c.ThreadID()]++
			mu.Unlock()
			return runtime.Values{"n": v["n"]}, nil
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g, func(th string) int { mu.Lock(); defer mu.Unlock(); return runs[th] }
}

// TestStoredSchedulesFireOnce: two wakers on one SQLite file fire a
// stored 1 s schedule: each tick is recorded once and its thread runs
// once, with the schedule's input, or is recorded skipped (overlap: the
// previous firing still ran) and runs not at all; a paused schedule records nothing; a
// firing recorded by a waker killed before it started its run, or by one
// that stopped before it did, is started by the next waker; OnFiring
// hears each firing once.
func TestStoredSchedulesFireOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1 s schedule for about 4 s; run without -short")
	}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	g, runs := counter(t)
	sc, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "count", Every: time.Second, Input: []byte(`{"n":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "off", Graph: "count", Every: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := store.PauseSchedule(ctx, "off", true); err != nil {
		t.Fatal(err)
	}
	// A waker that recorded a tick and was killed before its run.
	orphan := sc.Last.Truncate(time.Second)
	if err := store.RecordFirings(ctx, "beat", sc.Last, orphan.Add(500*time.Millisecond), []checkpoint.Firing{{Tick: orphan, Thread: sc.ThreadOf(orphan)}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	told := 0
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"count": waker.Graph(g)}),
			waker.WithPollInterval(100*time.Millisecond), waker.WithOnFiring(func(context.Context, checkpoint.Firing) { mu.Lock(); told++; mu.Unlock() }))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = w.Run(runCtx) })
	}
	time.Sleep(3500 * time.Millisecond)
	cancel()
	wg.Wait()
	fs, err := store.ListFirings(ctx, "beat", 0)
	if err != nil {
		t.Fatal(err)
	}
	// A tick recorded as the wakers stopped may not have started: a later
	// waker starts it (stored firings are not lost). One more waker runs
	// until every firing above has run, and its own ticks are not
	// checked.
	last, cancelLast := context.WithCancel(ctx)
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"count": waker.Graph(g)}), waker.WithPollInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	lastDone := make(chan struct{})
	go func() { defer close(lastDone); _ = w.Run(last) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		started := 0
		for _, f := range fs {
			if f.Skipped != "" || runs(f.Thread) > 0 {
				started++
			}
		}
		if started == len(fs) {
			break
		}
	}
	cancelLast()
	<-lastDone
	if len(fs) < 4 {
		t.Fatalf("%d firings of beat in 3.5 s (one recorded before), want at least 4", len(fs))
	}
	for i, f := range fs {
		if i > 0 && !fs[i-1].Tick.Equal(f.Tick.Add(time.Second)) {
			t.Errorf("firings at %v then %v: want consecutive ticks", f.Tick, fs[i-1].Tick)
		}
		if f.Skipped != "" {
			// The overlap policy (reject): the previous firing still ran.
			if n := runs(f.Thread); f.Skipped != "overlap" || n != 0 {
				t.Errorf("firing at %v skipped (%s), yet thread %s ran %d times", f.Tick, f.Skipped, f.Thread, n)
			}
			continue
		}
		if n := runs(f.Thread); n != 1 {
			t.Errorf("firing at %v: thread %s ran %d times, want once", f.Tick, f.Thread, n)
		}
		st, err := g.Thread(store, f.Thread).State(ctx)
		if err != nil || st.State["n"] != float64(7) {
			t.Errorf("thread %s: state %v %v, want the schedule's input n=7", f.Thread, st.State, err)
		}
	}
	if told != len(fs)-1 {
		t.Errorf("OnFiring heard %d firings, the wakers recorded %d", told, len(fs)-1)
	}
	if off, err := store.ListFirings(ctx, "off", 0); err != nil || len(off) != 0 {
		t.Errorf("the paused schedule fired %d times (%v), want none", len(off), err)
	}
}

// TestStoredSchedulesNeedAScheduleStore: WithStoredSchedules on a store
// that keeps no schedules is refused with ErrNoScheduleStore.
func TestStoredSchedulesNeedAScheduleStore(t *testing.T) {
	g, _ := counter(t)
	_, err := waker.New(listerOnly{checkpoint.NewMemory()}, nil, waker.WithStoredSchedules(map[string]waker.Target{"count": waker.Graph(g)}))
	if !errors.Is(err, waker.ErrNoScheduleStore) {
		t.Errorf("New: %v, want ErrNoScheduleStore", err)
	}
}

// listerOnly hides Memory's schedule methods.
type listerOnly struct{ *checkpoint.Memory }

func (listerOnly) CreateSchedule() {}
