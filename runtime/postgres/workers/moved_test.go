package workers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// TestRequestRunsOnTheThreadAsItIsWhenItsRunStarts puts a queued start
// request on a thread that another writer moves on while the request is
// being claimed, and checks that the request's input is folded into the
// thread as that writer left it: the request ends done, its node ran on
// its input, and its run's first checkpoint follows the other writer's.
//
//   - "takeover": the other writer holds an expired lease and its fenced
//     write is in flight (a transaction holding the lease row FOR SHARE,
//     its checkpoint inserted) while the claim is sent. The claim's
//     snapshot predates that write; its lease takeover waits for it. The
//     read the run starts from, in the claim's transaction after the
//     takeover (claimread.go), sees it, so the run is refused as moved and
//     the next claim runs the request on the thread as it is.
//   - "busy": the other writer holds a live lease while the request is
//     claimed, so the run is refused as busy; it then writes a checkpoint
//     and gives the lease back.
//
// In both, the refused claim had noted the thread's latest checkpoint as
// the request's base. Kept, that base told the next claim that the
// request's run had got past its first commit, and the request ended done
// without running (its input lost); a refused run now gives the base back,
// and its run id: the request lists the one run that ran.
func TestRequestRunsOnTheThreadAsItIsWhenItsRunStarts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		expires string // the other writer's lease expires this long from now
		// inFlight: the other writer's write is held open while the claim
		// is sent (else it is written once the run was refused).
		inFlight bool
	}{
		{"takeover", "-1 second", true},
		{"busy", "30 seconds", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			q := openQueue(t)
			s := q.Store()
			pool := s.Pool()
			sch := `"` + s.SchemaName() + `".`
			g := steps(t, nil)
			if _, err := g.Thread(s, "t").Invoke(ctx, runtime.Values{"in": 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, "INSERT INTO "+sch+"ilmek_leases (thread_id, epoch, owner, expires) VALUES ('t', 1000000, 'the other writer', clock_timestamp() + $1::interval)", tc.expires); err != nil {
				t.Fatal(err)
			}
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			// The other writer's fenced write, in tx: its checkpoint is a copy
			// of the latest (the same state and plan) that follows it.
			other := func() {
				t.Helper()
				if _, err := tx.Exec(ctx, "SELECT 1 FROM "+sch+"ilmek_leases WHERE thread_id = 't' AND epoch = 1000000 FOR SHARE"); err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(ctx, "INSERT INTO "+sch+"ilmek_checkpoints (id, thread_id, parent_id, plan_id, step, created_ns, channels, next, pending, fingerprint, format, migrated_from, base_id, snap_id, depth, chain_bytes) "+
					"SELECT 'other', thread_id, id, plan_id, step, created_ns + 1, channels, next, pending, fingerprint, format, migrated_from, base_id, snap_id, depth, chain_bytes "+
					"FROM "+sch+"ilmek_checkpoints WHERE thread_id = 't' ORDER BY seq DESC LIMIT 1"); err != nil {
					t.Fatal(err)
				}
			}
			if tc.inFlight {
				other()
			}
			startWorkers(t, q, map[string]workers.Runnable{"steps": workers.Graph(g)}, 1)
			id, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: "t", Input: json.RawMessage(`{"in": 2}`)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.inFlight {
				// Until the claim waits on the lease row the write holds.
				waitFor(t, func() bool {
					var n int
					err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH pick AS%' AND query LIKE '%"+s.SchemaName()+"%'").Scan(&n)
					return err == nil && n > 0
				})
			} else {
				// Until the run was refused and the request given back.
				waitFor(t, func() bool {
					var n int
					err := pool.QueryRow(ctx, "SELECT count(*) FROM "+sch+"ilmek_requests WHERE id = $1 AND claims_log::text LIKE '%released%'", id).Scan(&n)
					return err == nil && n > 0
				})
				other()
				if _, err := tx.Exec(ctx, "DELETE FROM "+sch+"ilmek_leases WHERE thread_id = 't' AND epoch = 1000000"); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			o := wait(t, q, id)
			if o.State != "done" || logOf(t, o) != "[a:1 b a:2 b]" {
				t.Fatalf("the request: %s, log %s; want done, [a:1 b a:2 b] (its input folded into the thread as the other writer left it)", o.State, logOf(t, o))
			}
			if o.Claims != 2 || len(o.Runs) != 1 {
				t.Errorf("the request: %d claims, runs %v; want 2 claims, one run (the refused one's id given back)", o.Claims, o.Runs)
			}
			var parent string
			if err := pool.QueryRow(ctx, "SELECT parent_id FROM "+sch+"ilmek_checkpoints WHERE thread_id = 't' AND seq > (SELECT seq FROM "+sch+"ilmek_checkpoints WHERE thread_id = 't' AND id = 'other') ORDER BY seq LIMIT 1").Scan(&parent); err != nil {
				t.Fatal(err)
			}
			if parent != "other" {
				t.Errorf("the run's first checkpoint follows %q, want the other writer's (a fork of the thread)", parent)
			}
		})
	}
}

// waitFor polls cond every 10 ms, for at most 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("timed out")
		}
	}
}
