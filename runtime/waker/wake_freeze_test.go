package waker_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// childFreezeDB names the SQLite file of TestWakeFrozenPastItsLease's
// child process.
const childFreezeDB = "ILMEK_WAKER_FREEZE_DB"

// freezeChild parks thread "t" on a 200 ms sleep in db (300 ms leases),
// then runs a waker until the thread is done. The woken node says
// "waking" and, the first time, pauses 300 ms before its step, which
// appends a line to effects, so that the parent can stop the process
// inside the wake.
func freezeChild(db, effects string) int {
	ctx := context.Background()
	var wakes atomic.Int32
	store, err := sqlite.Open(db, sqlite.LeaseTTL(300*time.Millisecond))
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	g, err := runtime.NewBuilder("freeze").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "wait", 200*time.Millisecond); err != nil {
				return nil, err
			}
			fmt.Println("waking")
			if wakes.Add(1) == 1 {
				// The parent stops the process in this pause; once it is
				// continued, the step below finds the lease's deadline
				// passed (no renewal got through) and starts nothing.
				time.Sleep(300 * time.Millisecond)
			}
			if _, err := runtime.Step(c, "effect", func() (int, error) {
				f, err := os.OpenFile(effects, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return 0, err
				}
				defer f.Close()
				_, err = fmt.Fprintln(f, "effect")
				return 1, err
			}); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "woke"}, nil
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	if res, err := g.Thread(store, "t").Invoke(ctx, nil, runtime.WithParkAfter(10*time.Millisecond)); err != nil || res.Status != runtime.StatusParked {
		fmt.Println("error", res.Status, err)
		return 2
	}
	w, err := waker.New(store, []waker.Target{waker.Graph(g)}, waker.WithPollInterval(50*time.Millisecond))
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = w.Run(wctx) }()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		page, err := store.ListThreads(ctx, runtime.ThreadQuery{Status: runtime.StatusDone})
		if err == nil && len(page.Threads) == 1 {
			fmt.Println("done")
			return 0
		}
	}
	page, _ := store.ListThreads(ctx, runtime.ThreadQuery{})
	for _, th := range page.Threads {
		fmt.Println("stuck", th.ID, th.Outcome.Status, th.Outcome.Error)
	}
	return 1
}

// TestWakeFrozenPastItsLease: a process's waker wakes a parked thread of
// a SQLite file, and the process is stopped (SIGSTOP) inside the wake,
// before its step, for four times the lease's 300 ms time to live, then
// continued (SIGCONT), while another connection holds the file's write
// lock from the stop until three times the time to live after it: the
// lease can be neither renewed in time nor taken over (a process frozen,
// then cut off from its store). The wake's run finds its lease lost and stops
// before its next effect, its thread failed on the lost lease; the same
// waker continues the thread at a later poll, and it ends done with its
// step run once. Before, the thread stayed failed: the child never said
// "waking" again.
func TestWakeFrozenPastItsLease(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a child process for 1.2 s; run without -short")
	}
	dir := t.TempDir()
	db, effects := filepath.Join(dir, "freeze.db"), filepath.Join(dir, "effects")
	cmd, lines := startChild(t, childFreezeDB+"="+db, childEffects+"="+effects)
	awaitLine(t, lines, "waking")
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// While the process is stopped, and for a while after, the file is
	// locked for writing (as by a long write of another process): its
	// lease cannot be renewed in time, nor taken over.
	lock, err := sql.Open("sqlite", db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	conn, err := lock.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(900 * time.Millisecond)
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	awaitLine(t, lines, "waking") // the continuation wakes the thread again
	awaitLine(t, lines, "done")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	raw, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(raw)); len(got) != 1 {
		t.Fatalf("the step ran %d times, want 1", len(got))
	}
	store, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	page, err := store.ListThreads(context.Background(), runtime.ThreadQuery{})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].Outcome.Status != runtime.StatusDone {
		t.Fatalf("threads %+v (%v); want t done", page.Threads, err)
	}
}
