package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// PutJournal replaces the journal of a task, unleased (a run writes its
// journals through its lease).
func (s *Store) PutJournal(ctx context.Context, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	return s.putJournal(ctx, nil, threadID, taskID, entries)
}

// PutJournal replaces the journal of a task, fenced by the lease.
func (l *heldLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	return l.s.putJournal(ctx, l, l.Thread, taskID, entries)
}

// putJournal replaces the journal of a task in one transaction, fenced
// by l unless it is nil.
func (s *Store) putJournal(ctx context.Context, l *heldLease, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	raw, err := json.Marshal(entries)
	if err == nil {
		err = s.groupTx(ctx, l, false, func(ctx context.Context, tx *sql.Tx) error {
			_, err := s.ws.in(ctx, tx, qPutJournal).ExecContext(ctx, threadID, taskID, raw)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: put journal of task %q of thread %q in %q: %w", taskID, threadID, s.path, err)
	}
	return nil
}

// GetJournal returns the journal of a task, nil when it has none.
func (s *Store) GetJournal(ctx context.Context, threadID, taskID string) ([]checkpoint.JournalEntry, error) {
	var raw []byte
	err := s.rs[qGetJournal].QueryRowContext(ctx, threadID, taskID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	entries, err := store.DecodeJournal(raw, err)
	if err != nil {
		return nil, fmt.Errorf("sqlite: get journal of task %q of thread %q from %q: %w", taskID, threadID, s.path, err)
	}
	return entries, nil
}
