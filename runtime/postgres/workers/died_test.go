package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// envDieIn names the node of the steps graph in which a dying worker
// (mode "steps") SIGKILLs itself when the input is 2.
const envDieIn = "ILMEK_PGTEST_DIE_IN"

// dyingStepsWorker is a worker process running the steps graph, which
// SIGKILLs it at the start of node $ILMEK_PGTEST_DIE_IN on input 2.
func dyingStepsWorker() error {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Getenv(pgtest.EnvDSN), postgres.Schema(os.Getenv(envSchema)), postgres.LeaseTTL(crashTTL))
	if err != nil {
		return err
	}
	dieIn := os.Getenv(envDieIn)
	g, err := stepsGraph(nil, func(node string, in any) {
		if node == dieIn && fmt.Sprint(in) == "2" {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	})
	if err != nil {
		return err
	}
	return workers.NewWorker(workers.NewQueue(s), map[string]workers.Runnable{"steps": workers.Graph(g)},
		workers.ClaimTTL(crashTTL), workers.Poll(10*time.Millisecond)).Run(ctx)
}

// TestRequestWhoseWorkerDiedIsClaimedAgainOnTheThreadAsItIs: a worker
// process claims a start request (input 2) on a thread and is SIGKILLed in
// its run; another writer moves the thread on before the request is claimed
// again. The next claim finds the thread moved past the base the first
// claim noted, and tells from the event log whether the dead run had
// committed:
//
//   - "before its first commit": the worker died in node a, so nothing
//     of the request is in the thread. Another run (input 3) moves the
//     thread once the dead worker's lease expired. The request's input is
//     folded into the thread as that run left it. Before the event log
//     was asked, the claim took the moved thread for the dead run's work
//     and ended the request done without running it (its input lost).
//   - "after it, history pruned": the worker died in node b, after the
//     commit of a. Another run continues the thread (runs b) and the
//     thread is pruned to its last checkpoint, which drops the events
//     before it, save those of the runs of requests still active. The
//     claim finds the thread ended and records that, without folding the
//     request's input in again.
//   - "before its first commit, the read failing once": as the first, but
//     the claim's read of the event log fails (its table renamed away);
//     the claim gives the request back having run nothing, and the next
//     one runs it.
//
// The request lists the runs that ran: the dead one's and the last one's,
// or only the dead one's when the last claim found the thread ended.
func TestRequestWhoseWorkerDiedIsClaimedAgainOnTheThreadAsItIs(t *testing.T) {
	for _, tc := range []struct {
		name, dieIn string
		moveOn      func(t *testing.T, s *postgres.Store)
		readFails   bool // the claim's read of the event log fails once
		want        string
		claims      int64
		runs        int
	}{
		{"before its first commit", "a", func(t *testing.T, s *postgres.Store) {
			invokeWhenFree(t, s, runtime.Values{"in": 3})
		}, false, "[a:1 b a:3 b a:2 b]", 2, 2},
		{"after it, history pruned", "b", func(t *testing.T, s *postgres.Store) {
			invokeWhenFree(t, s, nil)
			if _, err := s.Prune(context.Background(), "t", checkpoint.PruneOptions{KeepLast: 1}); err != nil {
				t.Fatal(err)
			}
		}, false, "[a:1 b a:2 b]", 2, 1},
		{"before its first commit, the read failing once", "a", func(t *testing.T, s *postgres.Store) {
			invokeWhenFree(t, s, runtime.Values{"in": 3})
		}, true, "[a:1 b a:3 b a:2 b]", 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			q := openQueue(t, postgres.LeaseTTL(crashTTL))
			s := q.Store()
			if _, err := steps(t, nil).Thread(s, "t").Invoke(ctx, runtime.Values{"in": 1}); err != nil {
				t.Fatal(err)
			}
			id, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: "t", Input: json.RawMessage(`{"in": 2}`)})
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envChild+"=steps", envSchema+"="+s.SchemaName(), envDieIn+"="+tc.dieIn)
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("the worker process ended with %v, want killed in node %s", err, tc.dieIn)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the worker process did not die in 30 s")
			}
			tc.moveOn(t, s)
			sch := `"` + s.SchemaName() + `".`
			if tc.readFails {
				if _, err := s.Pool().Exec(ctx, "ALTER TABLE "+sch+"ilmek_events RENAME TO ilmek_events_away"); err != nil {
					t.Fatal(err)
				}
			}
			startWorkers(t, q, map[string]workers.Runnable{"steps": workers.Graph(steps(t, nil))}, 1, workers.ClaimTTL(crashTTL))
			if tc.readFails {
				waitFor(t, func() bool {
					var n int
					err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM "+sch+"ilmek_requests WHERE id = $1 AND claims_log::text LIKE '%released%'", id).Scan(&n)
					return err == nil && n > 0
				})
				if _, err := s.Pool().Exec(ctx, "ALTER TABLE "+sch+"ilmek_events_away RENAME TO ilmek_events"); err != nil {
					t.Fatal(err)
				}
			}
			o := wait(t, q, id)
			if o.State != "done" || logOf(t, o) != tc.want || o.Claims != tc.claims || len(o.Runs) != tc.runs {
				t.Errorf("the request: %s, log %s, claims %d, runs %v, err %q; want done, %s, %d claims, %d runs", o.State, logOf(t, o), o.Claims, o.Runs, o.Error, tc.want, tc.claims, tc.runs)
			}
		})
	}
}

// invokeWhenFree runs the steps graph on thread "t" of s with in, once the
// dead worker's lease on it expired.
func invokeWhenFree(t *testing.T, s *postgres.Store, in runtime.Values) {
	t.Helper()
	g := steps(t, nil)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := g.Thread(s, "t").Invoke(context.Background(), in)
		if err == nil {
			return
		}
		if !errors.Is(err, runtime.ErrThreadBusy) || time.Now().After(end) {
			t.Fatal(err)
		}
	}
}
