package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// PutJournal replaces the journal of a task, unleased (a run writes its
// journals through its lease).
func (s *Store) PutJournal(ctx context.Context, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	return s.putJournal(ctx, nil, threadID, taskID, entries)
}

// PutJournal replaces the journal of a task, fenced by the lease's epoch:
// it fails with ErrLeaseLost when another run took the thread.
func (l *heldLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	return l.s.putJournal(ctx, l, l.Thread, taskID, entries)
}

// putJournal replaces the journal of a task in one statement, fenced by
// l's epoch unless l is nil.
func (s *Store) putJournal(ctx context.Context, l *heldLease, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	raw, err := json.Marshal(entries)
	switch {
	case err != nil:
	case l == nil:
		_, err = s.pool.Exec(ctx, s.q.putJournal, threadID, taskID, raw)
	default:
		// The write is an upsert: redone after a cut, it writes the same.
		err = s.retry.Do(ctx, "journal", threadID, nil, func(ctx context.Context) error {
			if err := l.Refused(); err != nil {
				return err
			}
			tag, err := s.pool.Exec(ctx, s.q.putJournalFenced, threadID, taskID, raw, l.epoch)
			if err == nil && tag.RowsAffected() == 0 {
				err = l.lost()
			}
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("postgres: put journal of task %q of thread %q in %s: %w", taskID, threadID, s.where(), err)
	}
	return nil
}

// Commit writes c fenced by the lease's epoch, in one statement (so one
// round trip and one transaction; commit.go): the checkpoint, the journals
// its superstep finished, the thread record and the events, each written
// only when the lease row still carries the epoch, which the statement
// holds FOR SHARE until it commits. A delta whose chain reached the
// compaction limits is written, with the rest, in a transaction that
// holds the lease row FOR SHARE until it commits.
func (l *heldLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	s := l.s
	if c.Checkpoint != nil && c.Checkpoint.ThreadID != l.Thread {
		return fmt.Errorf("postgres: commit of checkpoint %s of thread %q under the lease of thread %q refused", c.Checkpoint.ID, c.Checkpoint.ThreadID, l.Thread)
	}
	// A commit cut off on its way back may have committed: before a retry,
	// the checkpoint's row says whether it did (the thread record and the
	// events commit with it). Without a checkpoint the write is upserts,
	// written again, unless it gave the lease back.
	var settled func(ctx context.Context) (bool, error)
	release := releases(c)
	switch {
	case c.Checkpoint != nil:
		settled = func(ctx context.Context) (bool, error) {
			var ok bool
			err := s.pool.QueryRow(ctx, s.q.stored, l.Thread, c.Checkpoint.ID).Scan(&ok)
			return ok, err
		}
	case release:
		// A write that gave the lease back cannot be written again (its
		// fence is gone): its last event says whether it committed.
		last := c.Events[len(c.Events)-1]
		settled = func(ctx context.Context) (bool, error) {
			var ok bool
			err := s.pool.QueryRow(ctx, s.q.eventStored, last.RunID, last.Seq).Scan(&ok)
			return ok, err
		}
	}
	if c.Checkpoint == nil && c.Thread == nil && len(c.Events) == 0 {
		return nil
	}
	if release {
		// A renewal would find the row gone and report the lease lost.
		l.StopHeartbeat()
	}
	err := s.retry.Do(ctx, "commit", l.Thread, settled, func(ctx context.Context) error {
		// One statement in the common case; a delta whose chain must be
		// compacted, in a transaction.
		if err := s.commitOne(ctx, l, c, nil); !errors.Is(err, errCompact) {
			return err
		}
		if c.Thread == nil && len(c.Events) == 0 {
			return l.writeCheckpoint(ctx, s.pool, c)
		}
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := s.fenceTx(ctx, tx, l.Thread, l); err != nil {
				return err
			}
			return l.commitTx(ctx, tx, c)
		})
	})
	if err != nil {
		return fmt.Errorf("postgres: commit of thread %q in %s: %w", l.Thread, s.where(), err)
	}
	if release {
		l.Released()
	}
	return nil
}

// writeCheckpoint writes c's checkpoint, if any, on db: a delta compacted
// when its chain reached the limits.
func (l *heldLease) writeCheckpoint(ctx context.Context, db txer, c checkpoint.Commit) error {
	switch {
	case c.Checkpoint == nil:
		return nil
	case c.Delta != nil:
		return l.s.putDeltaOn(ctx, db, c.Checkpoint, *c.Delta, c.Done, l)
	default:
		return l.s.put(ctx, db, c.Checkpoint, c.Done, l)
	}
}

// commitTx writes all of c in tx, whose lease row the caller holds FOR
// SHARE (fenceTx): the checkpoint, the thread record, the events and the
// lease given back.
func (l *heldLease) commitTx(ctx context.Context, tx pgx.Tx, c checkpoint.Commit) error {
	s := l.s
	err := store.Commit(c, func() error { return l.writeCheckpoint(ctx, tx, c) },
		func(w *checkpoint.ThreadWrite) error { return s.recordTx(ctx, tx, l.Thread, w) },
		func(ev []checkpoint.StoredEvent) error { return s.appendEventsTx(ctx, tx, ev) })
	if err == nil && releases(c) {
		_, err = tx.Exec(ctx, s.q.dropLease, l.Thread, l.epoch)
	}
	return err
}

// GetJournal returns the journal of a task, nil when it has none.
func (s *Store) GetJournal(ctx context.Context, threadID, taskID string) ([]checkpoint.JournalEntry, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, s.q.getJournal, threadID, taskID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	entries, err := store.DecodeJournal(raw, err)
	if err != nil {
		return nil, fmt.Errorf("postgres: get journal of task %q of thread %q from %s: %w", taskID, threadID, s.where(), err)
	}
	return entries, nil
}
