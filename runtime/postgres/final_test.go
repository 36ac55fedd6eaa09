package postgres_test

import (
	"context"
	"errors"
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
// its events since; a commit that is not a run's last write of events
// alone is refused.
func TestFinalWriteWithThen(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, "final")
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
	t.Run("only a run's last write of events", func(t *testing.T) {
		l, err := s.Lease(ctx, "t5", checkpoint.LeaseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		p := l.(pgside.Preparer)
		for _, c := range []checkpoint.Commit{
			{Events: last("r5", "t5").Events}, // not the last write
			{Release: true},                   // no events
			{Release: true, Checkpoint: &checkpoint.Checkpoint{ID: "c", ThreadID: "t5"}, Events: last("r5", "t5").Events},
		} {
			if _, err := p.PrepareFinal(c); err == nil {
				t.Errorf("PrepareFinal(%+v): nil error, want a refusal", c)
			}
		}
	})
}
