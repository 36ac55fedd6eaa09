package sqlite_test

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/crashtest"
	"github.com/ilmek-go/ilmek/spec"
)

// leaseGraph counts the runs of its one node.
func leaseGraph(t *testing.T, runs *atomic.Int32) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("lease").Channel("n", "").
		Node("count", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"n": runs.Add(1)}, nil
		}).Edge(spec.Start, "count").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLeaseAcrossProcesses: while another process holds a thread's lease,
// a run of that thread here fails fast with ErrThreadBusy and executes
// nothing; once that process has released it and exited, the run succeeds.
func TestLeaseAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := crashtest.Env{DB: filepath.Join(dir, "lease.db"), Thread: "shared"}
	holder := crashtest.Start(t, crashtest.ModeHold, env)
	holder.WaitLine(crashtest.LeasedLine, 30*time.Second)

	cp, closeCP, err := openForProcesses(env.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCP()
	var runs atomic.Int32
	g := leaseGraph(t, &runs)
	th := g.Thread(cp, env.Thread)
	start := time.Now()
	_, err = th.Invoke(t.Context(), nil)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("the refused run took %v; it must fail fast, not wait for the lease", el)
	}
	if !errors.Is(err, runtime.ErrThreadBusy) {
		t.Fatalf("run while another process holds the lease: %v, want ErrThreadBusy", err)
	}
	t.Logf("refused with: %v", err)
	if _, err := g.Thread(cp, "other").Invoke(t.Context(), nil); err != nil {
		t.Errorf("a run of another thread was refused: %v", err)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the node ran %d times, want 1 (only the other thread's run)", n)
	}
	if _, err := cp.Get(t.Context(), env.Thread, ""); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("the refused run wrote a checkpoint (%v)", err)
	}

	holder.Finish(30 * time.Second)
	res, err := th.Invoke(t.Context(), nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("run after the other process released the lease: %s %v", res.Status, err)
	}
}

// TestLeaseTakeoverAfterHolderKilled: the lease of a process killed with
// SIGKILL stays until it expires (its TTL after the last renewal), then
// another process takes the thread over.
func TestLeaseTakeoverAfterHolderKilled(t *testing.T) {
	t.Parallel()
	env := crashtest.Env{DB: filepath.Join(t.TempDir(), "lease.db"), Thread: "shared"}
	holder := crashtest.Start(t, crashtest.ModeHold, env)
	holder.WaitLine(crashtest.LeasedLine, 30*time.Second)
	time.Sleep(testTTL / 2) // let the heartbeat renew at least once
	holder.Kill()
	killed := time.Now()

	cp, closeCP, err := openForProcesses(env.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCP()
	busy := 0
	for {
		l, err := cp.Lease(t.Context(), env.Thread, checkpoint.LeaseOptions{})
		if err == nil {
			l.Release()
			break
		}
		if !errors.Is(err, runtime.ErrThreadBusy) {
			t.Fatal(err)
		}
		if time.Since(killed) > 5*testTTL {
			t.Fatalf("the dead holder's lease did not expire within %v", 5*testTTL)
		}
		busy++
		time.Sleep(10 * time.Millisecond)
	}
	el := time.Since(killed)
	t.Logf("took the thread over %v after the kill, refused %d times before", el.Round(time.Millisecond), busy)
	if busy == 0 {
		t.Error("the lease of the killed holder was free at once; it must last until it expires")
	}
	if el > testTTL+testTTL/2 {
		t.Errorf("takeover after %v; the lease TTL is %v", el, testTTL)
	}
}
