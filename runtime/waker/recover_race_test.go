package waker_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
)

// orphanedFiring creates the hourly schedule "beat" of graph "count" on
// store and records a firing of it that no process started, as a waker
// killed between the record and the run leaves it; it returns the
// firing's thread.
func orphanedFiring(t *testing.T, store *sqlite.Store) string {
	t.Helper()
	ctx := context.Background()
	sc, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "count", Every: time.Hour, Input: []byte(`{"n":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	orphan := sc.Last.Truncate(time.Second)
	thread := sc.ThreadOf(orphan)
	if err := store.RecordFirings(ctx, "beat", sc.Last, orphan.Add(500*time.Millisecond), []checkpoint.Firing{{Tick: orphan, Thread: thread}}); err != nil {
		t.Fatal(err)
	}
	return thread
}

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
		thread := orphanedFiring(t, store)
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

// TestRecoveryWaitsOutADeadHoldersLease: a firing whose thread is still
// leased by the process that was killed running it (its lease lapses after
// its time to live) is started once the lease lapses, by a waker that
// found it at its start. Before, the waker took the busy thread for
// another waker running the firing and left it: nobody ran it until a
// process started again.
func TestRecoveryWaitsOutADeadHoldersLease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	store, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	g, runs := counter(t)
	thread := orphanedFiring(t, store)
	// The killed process's lease: nobody renews it, and it lapses in
	// 600 ms.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "INSERT INTO ilmek_leases (thread_id, owner, holder, expires_ns) VALUES (?, 'dead', 'pid 1 (killed)', ?)",
		thread, time.Now().Add(600*time.Millisecond).UnixNano()); err != nil {
		t.Fatal(err)
	}
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"count": waker.Graph(g)}), waker.WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(runCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for runs(thread) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	if n := runs(thread); n != 1 {
		t.Fatalf("the firing whose thread a dead process held ran %d times, want once after its lease lapsed", n)
	}
}
