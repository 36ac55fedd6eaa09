package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// PutJournal replaces the journal of a task, unleased (a run writes its
// journals through its lease).
func (s *Store) PutJournal(ctx context.Context, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	raw, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("postgres: put journal of task %q of thread %q: encode entries: %w", taskID, threadID, err)
	}
	if _, err = s.pool.Exec(ctx, s.q.putJournal, threadID, taskID, raw); err != nil {
		return fmt.Errorf("postgres: put journal of task %q of thread %q in %s: %w", taskID, threadID, s.where(), err)
	}
	return nil
}

// PutJournal replaces the journal of a task, fenced by the lease's epoch:
// it fails with ErrLeaseLost when another run took the thread.
func (l *heldLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	s := l.s
	raw, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("postgres: put journal of task %q of thread %q: encode entries: %w", taskID, l.Thread, err)
	}
	if err = l.Refused(); err == nil {
		tag, e := s.pool.Exec(ctx, s.q.putJournalFenced, l.Thread, taskID, raw, l.epoch)
		err = e
		if err == nil && tag.RowsAffected() == 0 {
			err = l.lost()
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: put journal of task %q of thread %q in %s: %w", taskID, l.Thread, s.where(), err)
	}
	return nil
}

// Commit writes c fenced by the lease's epoch: a checkpoint alone in one
// statement, with a thread record or events in one transaction that holds
// the lease row FOR SHARE until it commits.
func (l *heldLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	s := l.s
	if c.Checkpoint != nil && c.Checkpoint.ThreadID != l.Thread {
		return fmt.Errorf("postgres: commit of checkpoint %s of thread %q under the lease of thread %q refused", c.Checkpoint.ID, c.Checkpoint.ThreadID, l.Thread)
	}
	write := func(db txer) error {
		switch {
		case c.Checkpoint == nil:
			return nil
		case c.Delta != nil:
			return s.putDeltaOn(ctx, db, c.Checkpoint, *c.Delta, c.Done, l)
		default:
			return s.put(ctx, db, c.Checkpoint, c.Done, l)
		}
	}
	if c.Thread == nil && len(c.Events) == 0 {
		return write(s.pool)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.fenceTx(ctx, tx, l.Thread, l); err != nil {
			return err
		}
		if err := write(tx); err != nil {
			return err
		}
		if c.Thread != nil {
			if err := s.recordTx(ctx, tx, l.Thread, c.Thread); err != nil {
				return fmt.Errorf("record the thread: %w", err)
			}
		}
		return s.appendEventsTx(ctx, tx, c.Events)
	})
	if err != nil {
		return fmt.Errorf("postgres: commit of thread %q in %s: %w", l.Thread, s.where(), err)
	}
	return nil
}

// GetJournal returns the journal of a task, nil when it has none.
func (s *Store) GetJournal(ctx context.Context, threadID, taskID string) ([]checkpoint.JournalEntry, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, s.q.getJournal, threadID, taskID).Scan(&raw)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("postgres: get journal of task %q of thread %q from %s: %w", taskID, threadID, s.where(), err)
	}
	var entries []checkpoint.JournalEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("postgres: journal of task %q of thread %q in %s is corrupt: %w", taskID, threadID, s.where(), err)
	}
	return entries, nil
}
