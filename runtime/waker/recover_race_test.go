package waker_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
)

// TestWakersRecoverOneFiringOnce: two wakers that start at the same
// instant on one store both find a firing a killed waker recorded and
// never started; its thread runs once.
func TestWakersRecoverOneFiringOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts wakers for about a second per round; run without -short")
	}
	for round := range 5 {
		store, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		g, runs := counter(t)
		sc, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "count", Every: time.Hour, Input: []byte(`{"n":7}`)})
		if err != nil {
			t.Fatal(err)
		}
		orphan := sc.Last.Truncate(time.Second)
		thread := sc.ThreadOf(orphan)
		if err := store.RecordFirings(ctx, "beat", sc.Last, orphan.Add(500*time.Millisecond), []checkpoint.Firing{{Tick: orphan, Thread: thread}}); err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		var wg, ready sync.WaitGroup
		gate := make(chan struct{})
		for range 2 {
			w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"count": waker.Graph(g)}), waker.WithPollInterval(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			ready.Add(1)
			wg.Go(func() { ready.Done(); <-gate; _ = w.Run(runCtx) })
		}
		ready.Wait()
		close(gate)
		time.Sleep(800 * time.Millisecond)
		cancel()
		wg.Wait()
		if n := runs(thread); n != 1 {
			t.Errorf("round %d: the orphaned firing's thread ran %d times, want once", round, n)
		}
		store.Close()
	}
}
