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
// run's last events, the checkpoint that ended the run when it carries
// them, and the lease's release, one round trip and one commit where they
// took two.

// PrepareFinal encodes cs, the run's last write (checkpoint.Commit.Release
// on the last commit, with the run's last events; the checkpoint that
// ended the run when it was done, and before it one kept for the run's
// next write), to be written by the returned Final. Until then the lease
// stays held and renewed.
func (l *heldLease) PrepareFinal(cs ...checkpoint.Commit) (pgside.Final, error) {
	n := len(cs)
	if n == 0 || !releases(cs[n-1]) || len(cs[n-1].Events) == 0 {
		return nil, fmt.Errorf("postgres: prepare the last write of thread %q in %s: it is not a run's last write with its last events", l.Thread, l.s.where())
	}
	f := &finalWrite{l: l}
	for _, c := range cs {
		if n > 1 && c.Checkpoint == nil {
			return nil, fmt.Errorf("postgres: prepare the last write of thread %q in %s: every commit of a batch carries a checkpoint", l.Thread, l.s.where())
		}
		if c.Checkpoint != nil && c.Checkpoint.ThreadID != l.Thread {
			return nil, fmt.Errorf("postgres: commit of checkpoint %s of thread %q under the lease of thread %q refused", c.Checkpoint.ID, c.Checkpoint.ThreadID, l.Thread)
		}
		// The caller reuses what c holds once this returns: the statement
		// is made from copies (its arguments hold the copies' bytes or
		// fresh encodings), which a chain that must be compacted first
		// writes again.
		c = finalCopy(c)
		sql, args, err := l.s.commitStmt(l, c, nil)
		if err != nil {
			return nil, fmt.Errorf("postgres: prepare the last write of thread %q in %s: %w", l.Thread, l.s.where(), err)
		}
		f.cs, f.sqls, f.args = append(f.cs, c), append(f.sqls, sql), append(f.args, args)
		if c.Checkpoint != nil {
			f.ids = append(f.ids, c.Checkpoint.ID)
		}
	}
	last := f.cs[n-1].Events[len(f.cs[n-1].Events)-1]
	f.run, f.seq = last.RunID, last.Seq
	return f, nil
}

// finalCopy returns c with copies of its events, checkpoint and delta.
func finalCopy(c checkpoint.Commit) checkpoint.Commit {
	evs := slices.Clone(c.Events)
	for i := range evs {
		evs[i].Data = bytes.Clone(evs[i].Data)
	}
	c.Events = evs
	if cp := c.Checkpoint; cp != nil {
		cp := *cp
		cp.Channels = bytes.Clone(cp.Channels)
		cp.Next = slices.Clone(cp.Next)
		cp.Pending = slices.Clone(cp.Pending)
		c.Checkpoint = &cp
	}
	if d := c.Delta; d != nil {
		ws := slices.Clone(d.Writes)
		for i := range ws {
			if ws[i].Value != nil {
				ws[i].Value = bytes.Clone(ws[i].Value)
			}
		}
		c.Delta = &checkpoint.Delta{Base: d.Base, Writes: ws}
	}
	c.Done = slices.Clone(c.Done)
	return c
}

// finalWrite is a prepared last write (PrepareFinal): its commits, their
// statements, the ids of their checkpoints, and its last event, by which
// a retry tells whether a cut-off attempt committed.
type finalWrite struct {
	l       *heldLease
	cs      []checkpoint.Commit
	sqls    []string
	args    [][]any
	ids     []string
	run     string
	seq     int64
	written bool
}

// Write sends the last write and then's statement in one batch, one
// implicit transaction: the write's statements (with more than one, the
// check CommitBatch makes that every checkpoint is stored), a check that
// fails unless its last event is stored (so then's statement runs only
// under the fence), then then's statement. It is retried like Commit: a
// failed attempt whose commit went through (its last event is stored) is
// not sent again, and Write then returns pgside.ErrUnread when then's row
// was not read. A write with a delta whose chain must be compacted first
// is written as CommitBatch writes it (a transaction that compacts it),
// and then's statement after it (compactThen).
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
		for i, sql := range f.sqls {
			b.Queue(sql, f.args[i]...)
		}
		if len(f.cs) > 1 {
			b.Queue(s.q.batchWritten, l.Thread, f.ids, len(f.ids))
		}
		b.Queue(s.q.eventWritten, f.run, f.seq)
		if then != nil {
			b.Queue(then.SQL, then.Args...)
		}
		br := s.pool.SendBatch(ctx, &b)
		var err error
		for _, c := range f.cs {
			var fenced, found, inserted int64
			if err = br.QueryRow().Scan(&fenced, &found, &inserted); err != nil {
				break
			}
			// Nothing was written when the fence did not hold, a delta's
			// base is missing, or its chain must be compacted.
			if err = l.commitResult(c, fenced, found, inserted); err != nil {
				break
			}
		}
		if err == nil && len(f.cs) > 1 {
			_, err = br.Exec()
			if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "22012" {
				err = errCompact // a statement wrote nothing: the transaction tells why
			}
		}
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
	if errors.Is(err, errCompact) {
		return f.compactThen(ctx, then)
	}
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

// compactThen writes the last write whose delta's chain must be compacted
// as CommitBatch does (in a transaction that compacts it; every commit of
// the write then carries a checkpoint), and then then's statement on its
// own, retried (the queue's statements write the same values when applied
// twice), only once the write committed. When then's statement still
// fails, it returns pgside.ErrUnread: the write is stored, the caller
// reads back what it needs.
func (f *finalWrite) compactThen(ctx context.Context, then *pgside.Then) error {
	l, s := f.l, f.l.s
	if err := l.CommitBatch(ctx, f.cs, nil); err != nil {
		return err // CommitBatch names the thread and the store
	}
	f.written = true
	if then == nil {
		return nil
	}
	err := s.retry.Do(ctx, "commit", l.Thread, nil, func(ctx context.Context) error {
		if err := then.Scan(s.pool.QueryRow(ctx, then.SQL, then.Args...)); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", pgside.ErrUnread, err)
	}
	return nil
}

var _ pgside.Preparer = (*heldLease)(nil)
