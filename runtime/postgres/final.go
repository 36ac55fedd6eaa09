package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/internal/pgside"
)

// This file holds a run's last write prepared to be sent later, with a
// statement of the queue's after it in the same transaction
// (internal/pgside): a worker records its request's outcome with the
// run's last events and the lease's release, one round trip and one
// commit where they took two.

// PrepareFinal encodes c, the run's last write (checkpoint.Commit.Release,
// its last events, no checkpoint), to be written by the returned Final.
// Until then the lease stays held and renewed.
func (l *heldLease) PrepareFinal(c checkpoint.Commit) (pgside.Final, error) {
	if !releases(c) || c.Checkpoint != nil {
		return nil, fmt.Errorf("postgres: prepare the last write of thread %q in %s: it is not a run's last write of events alone", l.Thread, l.s.where())
	}
	// The statement's arguments may hold the events' data: keep copies.
	evs := slices.Clone(c.Events)
	for i := range evs {
		evs[i].Data = bytes.Clone(evs[i].Data)
	}
	c.Events = evs
	sql, args, err := l.s.commitStmt(l, c, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: prepare the last write of thread %q in %s: %w", l.Thread, l.s.where(), err)
	}
	last := evs[len(evs)-1]
	return &finalWrite{l: l, sql: sql, args: args, run: last.RunID, seq: last.Seq}, nil
}

// finalWrite is a prepared last write (PrepareFinal): its statement, and
// its last event, by which a retry tells whether a cut-off attempt
// committed.
type finalWrite struct {
	l       *heldLease
	sql     string
	args    []any
	run     string
	seq     int64
	written bool
}

// Write sends the last write and then's statement in one batch, one
// implicit transaction: the write, a check that fails unless its last
// event is stored (so then's statement runs only under the fence), then
// then's statement. It is retried like Commit: a failed attempt whose
// commit went through (its last event is stored) is not sent again, and
// Write then returns pgside.ErrUnread when then's row was not read.
func (f *finalWrite) Write(ctx context.Context, then *pgside.Then) error {
	l, s := f.l, f.l.s
	if f.written {
		return fmt.Errorf("postgres: the last write of thread %q in %s was written already", l.Thread, s.where())
	}
	settled := func(ctx context.Context) (bool, error) {
		var ok bool
		err := s.pool.QueryRow(ctx, s.q.eventStored, f.run, f.seq).Scan(&ok)
		return ok, err
	}
	// A renewal would find the row gone and report the lease lost.
	l.StopHeartbeat()
	read := false
	err := s.retry.Do(ctx, "commit", l.Thread, settled, func(ctx context.Context) error {
		if err := l.Refused(); err != nil {
			return err
		}
		var b pgx.Batch
		b.Queue(f.sql, f.args...)
		b.Queue(s.q.eventWritten, f.run, f.seq)
		if then != nil {
			b.Queue(then.SQL, then.Args...)
		}
		br := s.pool.SendBatch(ctx, &b)
		var fenced, found, inserted int64
		err := br.QueryRow().Scan(&fenced, &found, &inserted)
		if err == nil {
			_, err = br.Exec()
		}
		if err == nil && then != nil {
			if err = then.Scan(br.QueryRow()); errors.Is(err, pgx.ErrNoRows) {
				err = nil
			}
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "22012" {
			return l.lost() // the fence did not hold: nothing was written
		}
		read = err == nil
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: commit of thread %q in %s: %w", l.Thread, s.where(), err)
	}
	f.written = true
	l.Released()
	if then != nil && !read {
		return pgside.ErrUnread
	}
	return nil
}

var _ pgside.Preparer = (*heldLease)(nil)
