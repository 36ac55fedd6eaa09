package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/internal/pgside"
)

// TestFinalWriteWithThen: a run's last write (its last events and the
// lease's release) prepared and sent later with a statement of the
// queue's in the same transaction (pgside, the worker's outcome) writes
// both or neither: both land under the fence, and the lease is free
// after; a lost fence writes neither; a statement that finds no row
// still lets the write land; a statement that fails writes nothing. What
// Write sends is what PrepareFinal was handed, though the caller changed
// its events since. The last write may carry the checkpoints that end the
// run (the one kept for the next write, then the last, a delta, with the
// events): they land with the rest, and a delta whose chain must be
// compacted first is written as Commit writes it, the statement after
// it. A write that is not a run's last write is refused.
func TestFinalWriteWithThen(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, "final")
	compacting := openStore(t, "final_compact", postgres.Compact(checkpoint.Compaction{Every: 1}))
	probe := `"` + s.SchemaName() + `".final_probe`
	if _, err := s.Pool().Exec(ctx, "CREATE TABLE "+probe+" (id bigint PRIMARY KEY, v text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	insert := func(id int64, got *string) *pgside.Then {
		return &pgside.Then{SQL: "INSERT INTO " + probe + " (id, v) VALUES ($1, 'outcome') RETURNING v", Args: []any{id},
			Scan: func(r pgx.Row) error { return r.Scan(got) }}
	}
	last := func(run, thread string) checkpoint.Commit {
		now := time.Now()
		return checkpoint.Commit{Release: true, Events: []checkpoint.StoredEvent{
			{RunID: run, Seq: 7, ThreadID: thread, Time: now, Kind: "state", Data: []byte(`{"n":1}`)},
			{RunID: run, Seq: 8, ThreadID: thread, Time: now, Kind: "run_end", Data: []byte(`{"status":"done"}`)},
		}}
	}
	prepare := func(t *testing.T, thread string, c checkpoint.Commit) pgside.Final {
		t.Helper()
		l, err := s.Lease(ctx, thread, checkpoint.LeaseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Release)
		p, ok := l.(pgside.Preparer)
		if !ok {
			t.Fatalf("the store's lease %T is not a pgside.Preparer", l)
		}
		f, err := p.PrepareFinal(c)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	stored := func(t *testing.T, run string) int {
		t.Helper()
		evs, err := s.ReadEvents(ctx, run, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	probed := func(t *testing.T, id int64) bool {
		t.Helper()
		var ok bool
		if err := s.Pool().QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+probe+" WHERE id = $1)", id).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}

	t.Run("both land", func(t *testing.T) {
		c := last("r1", "t1")
		f := prepare(t, "t1", c)
		c.Events[1].Data[2] = 'X' // the caller reuses its buffers: Write sends what it was handed
		var got string
		if err := f.Write(ctx, insert(1, &got)); err != nil {
			t.Fatal(err)
		}
		if got != "outcome" || !probed(t, 1) {
			t.Errorf("the statement after the write: row %q, stored %v", got, probed(t, 1))
		}
		evs, err := s.ReadEvents(ctx, "r1", 0, 0)
		if err != nil || len(evs) != 2 || string(evs[1].Data) != `{"status":"done"}` {
			t.Errorf("events after the write: %+v %v, want both, as prepared", evs, err)
		}
		l, err := s.Lease(ctx, "t1", checkpoint.LeaseOptions{})
		if err != nil {
			t.Fatalf("the thread's lease after its last write: %v, want it free", err)
		}
		l.Release()
	})
	t.Run("a lost fence writes neither", func(t *testing.T) {
		f := prepare(t, "t2", last("r2", "t2"))
		if _, err := s.Pool().Exec(ctx, `UPDATE "`+s.SchemaName()+`".ilmek_leases SET epoch = epoch + 1000000 WHERE thread_id = 't2'`); err != nil {
			t.Fatal(err)
		}
		var got string
		err := f.Write(ctx, insert(2, &got))
		if !errors.Is(err, postgres.ErrLeaseLost) {
			t.Errorf("Write under a lease taken over: %v, want ErrLeaseLost", err)
		}
		if n := stored(t, "r2"); n != 0 || probed(t, 2) {
			t.Errorf("after a lost fence: %d events stored, the statement's row %v; want neither", n, probed(t, 2))
		}
	})
	t.Run("a statement that finds no row", func(t *testing.T) {
		f := prepare(t, "t3", last("r3", "t3"))
		var scanErr error
		then := &pgside.Then{SQL: "UPDATE " + probe + " SET v = 'x' WHERE id = $1 RETURNING v", Args: []any{int64(-1)},
			Scan: func(r pgx.Row) error { var v string; scanErr = r.Scan(&v); return scanErr }}
		if err := f.Write(ctx, then); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(scanErr, pgx.ErrNoRows) || stored(t, "r3") != 2 {
			t.Errorf("scan %v, %d events stored; want no row and both events", scanErr, stored(t, "r3"))
		}
	})
	t.Run("a statement that fails writes nothing", func(t *testing.T) {
		f := prepare(t, "t4", last("r4", "t4"))
		then := &pgside.Then{SQL: "INSERT INTO " + probe + " (id, v) VALUES ($1, NULL) RETURNING v", Args: []any{int64(4)},
			Scan: func(r pgx.Row) error { var v string; return r.Scan(&v) }}
		if err := f.Write(ctx, then); err == nil {
			t.Fatal("Write with a statement that violates a constraint: nil error")
		}
		if n := stored(t, "r4"); n != 0 || probed(t, 4) {
			t.Errorf("after a failed statement: %d events stored, its row %v; want neither", n, probed(t, 4))
		}
	})
	t.Run("only a run's last write", func(t *testing.T) {
		l, err := s.Lease(ctx, "t5", checkpoint.LeaseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		p := l.(pgside.Preparer)
		other := last("r5", "t5")
		other.Checkpoint = &checkpoint.Checkpoint{ID: "c", ThreadID: "another"}
		for _, cs := range [][]checkpoint.Commit{
			{{Events: last("r5", "t5").Events}},  // not the last write
			{{Release: true}},                    // no events
			{other},                              // another thread's checkpoint
			{last("r5", "t5"), last("r5", "t5")}, // a batch of commits without checkpoints
			nil,
		} {
			if _, err := p.PrepareFinal(cs...); err == nil {
				t.Errorf("PrepareFinal(%+v): nil error, want a refusal", cs)
			}
		}
	})
	// The run's last two checkpoints (the one kept for the next write, a
	// snapshot, and the last, a delta of it, with the events) after a
	// checkpoint written before.
	ending := func(thread, run string) []checkpoint.Commit {
		now := time.Now().UTC()
		kept := checkpoint.Commit{Checkpoint: &checkpoint.Checkpoint{ID: thread + "-2", ParentID: thread + "-1", PlanID: thread + "-2", ThreadID: thread,
			Step: 2, Created: now, Channels: json.RawMessage(`{"n":2}`), Next: []checkpoint.TaskRef{{Node: "a", Key: "k"}}}}
		end := last(run, thread)
		end.Checkpoint = &checkpoint.Checkpoint{ID: thread + "-3", ParentID: thread + "-2", PlanID: thread + "-3", ThreadID: thread, Step: 3, Created: now}
		end.Delta = &checkpoint.Delta{Base: thread + "-2", Writes: []checkpoint.ChannelWrite{{Channel: "n", Value: json.RawMessage(`3`)}}}
		return []checkpoint.Commit{kept, end}
	}
	for _, tc := range []struct {
		name  string
		s     *postgres.Store
		probe int64
	}{{"with the checkpoints that end the run", s, 6}, {"with a chain to compact first", compacting, 7}} {
		t.Run(tc.name, func(t *testing.T) {
			thread, run := fmt.Sprintf("t%d", tc.probe), fmt.Sprintf("r%d", tc.probe)
			l, err := tc.s.Lease(ctx, thread, checkpoint.LeaseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(l.Release)
			first := &checkpoint.Checkpoint{ID: thread + "-1", PlanID: thread + "-1", ThreadID: thread, Step: 1, Created: time.Now().UTC(),
				Channels: json.RawMessage(`{"n":1}`), Next: []checkpoint.TaskRef{{Node: "a", Key: "k"}}}
			if err := l.Commit(ctx, checkpoint.Commit{Checkpoint: first}); err != nil {
				t.Fatal(err)
			}
			cs := ending(thread, run)
			f, err := l.(pgside.Preparer).PrepareFinal(cs...)
			if err != nil {
				t.Fatal(err)
			}
			cs[1].Delta.Writes[0].Value[0] = '9' // the caller reuses its buffers
			var got string
			if err := f.Write(ctx, insert(tc.probe, &got)); err != nil {
				t.Fatal(err)
			}
			evs, err := tc.s.ReadEvents(ctx, run, 0, 0)
			if err != nil || got != "outcome" || !probed(t, tc.probe) || len(evs) != 2 {
				t.Errorf("after the write: the statement's row %q (stored %v), events %d %v; want the row and both events", got, probed(t, tc.probe), len(evs), err)
			}
			cp, err := tc.s.GetLatest(ctx, thread, "")
			if err != nil || cp.ID != thread+"-3" || string(cp.Channels) != `{"n":3}` {
				t.Errorf("the thread's latest checkpoint: %+v %v, want %s-3 with {\"n\":3}", cp, err, thread)
			}
			if l2, err := tc.s.Lease(ctx, thread, checkpoint.LeaseOptions{}); err != nil {
				t.Errorf("the thread's lease after its last write: %v, want it free", err)
			} else {
				l2.Release()
			}
		})
	}
}
