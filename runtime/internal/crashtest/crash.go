package crashtest

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Crash proves that a completed step survives a SIGKILL in the middle of
// its superstep, for one kind of graph:
//
//  1. a child runs a new thread; in the first superstep task A completes
//     its journaled step (one line in effects.log) and blocks, task B
//     blocks;
//  2. once A's step has returned, the parent kills the child with SIGKILL:
//     the superstep has not committed, the lease of the dead process is
//     still on the thread, A's journal holds the step;
//  3. a restarted child runs the thread again (a plain run, no input); it
//     waits for the dead process's lease to expire, replays the superstep
//     (A's step function is called zero more times) and completes.
//
// open must give the child and the parent the same store, with a short
// lease TTL so that step 3 does not wait long.
func Crash(t *testing.T, open OpenFunc, kind Kind) {
	dir := t.TempDir()
	env := Env{DB: filepath.Join(dir, "crash.db"), Thread: "order-1", Kind: kind.Name, Dir: dir}

	first := Start(t, ModeCrash, env)
	first.WaitLine(ReadyLine, 30*time.Second)
	if got := EffectLines(t, dir); len(got) != 1 {
		t.Fatalf("before the kill, effects.log has %d lines, want 1: %q", len(got), got)
	}
	first.Kill()

	cp, closeCP, err := open(env.DB)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := cp.Get(t.Context(), env.Thread, "")
	if err != nil {
		t.Fatalf("after the kill: latest checkpoint: %v", err)
	}
	if latest.Step != 0 || len(latest.Next) != 2 {
		t.Fatalf("after the kill the latest checkpoint is step %d planning %+v; want step 0 planning a and b (the superstep must not have committed)", latest.Step, latest.Next)
	}
	journal, err := cp.GetJournal(t.Context(), env.Thread, latest.PlanID+":a")
	if err != nil || len(journal) != 1 || journal[0].Key != "charge#0" {
		t.Fatalf("after the kill, task a's journal = %+v, %v; want the step charge#0", journal, err)
	}
	if release, err := leaseFunc(cp.Lease(t.Context(), env.Thread, checkpoint.LeaseOptions{})); !errors.Is(err, runtime.ErrThreadBusy) {
		if release != nil {
			release()
		}
		t.Errorf("right after the kill, Lease = %v; want ErrThreadBusy (the dead process's lease lasts until it expires)", err)
	}
	if err := closeCP(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	rep := Start(t, ModeRecover, env).Report(time.Minute)
	t.Logf("%s: restarted child finished %s after %v, refused %d times while the dead lease lasted", kind.Name, rep.Status, time.Since(start).Round(time.Millisecond), rep.Busy)
	if rep.Status != runtime.StatusDone || rep.Err != "" {
		t.Fatalf("restarted run ended %s: %s", rep.Status, rep.Err)
	}
	if got := EffectLines(t, dir); len(got) != 1 {
		t.Fatalf("after the restart effects.log has %d lines, want 1 (the completed step must replay, not run again): %q", len(got), got)
	}

	cp, closeCP, err = open(env.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCP()
	final, err := cp.Get(t.Context(), env.Thread, "")
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Receipt string `json:"receipt"`
		Shipped bool   `json:"shipped"`
	}
	if err := json.Unmarshal(final.Channels, &state); err != nil {
		t.Fatal(err)
	}
	if want := journalReceipt(t, journal); state.Receipt != want || !state.Shipped || len(final.Next) != 0 {
		t.Errorf("final checkpoint: receipt %q shipped %v next %v; want the journaled receipt %q, shipped, nothing next", state.Receipt, state.Shipped, final.Next, want)
	}
	if j, err := cp.GetJournal(t.Context(), env.Thread, latest.PlanID+":a"); err != nil || len(j) != 0 {
		t.Errorf("task a's journal after its superstep committed = %+v, %v; want dropped", j, err)
	}
}

func journalReceipt(t *testing.T, j []checkpoint.JournalEntry) string {
	t.Helper()
	var r string
	if err := json.Unmarshal(j[0].Value, &r); err != nil {
		t.Fatal(err)
	}
	return r
}
