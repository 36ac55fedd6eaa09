package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// PutJournal replaces the journal of a task. A run's write (its lease in
// ctx) is fenced by the lease's epoch and fails with ErrLeaseLost when
// another run took the thread.
func (s *Store) PutJournal(ctx context.Context, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	raw, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("postgres: put journal of task %q of thread %q: encode entries: %w", taskID, threadID, err)
	}
	if l := s.fence(ctx, threadID); l != nil {
		if err = l.refused(); err == nil {
			tag, e := s.pool.Exec(ctx, s.q.putJournalFenced, threadID, taskID, raw, l.epoch)
			err = e
			if err == nil && tag.RowsAffected() == 0 {
				err = s.lost(threadID, l.epoch)
			}
		}
	} else {
		_, err = s.pool.Exec(ctx, s.q.putJournal, threadID, taskID, raw)
	}
	if err != nil {
		return fmt.Errorf("postgres: put journal of task %q of thread %q in %s: %w", taskID, threadID, s.where(), err)
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
