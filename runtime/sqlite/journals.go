package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// PutJournal replaces the journal of a task, unleased (a run writes its
// journals through its lease).
func (s *Store) PutJournal(ctx context.Context, threadID, taskID string, entries []checkpoint.JournalEntry) error {
	raw, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("sqlite: put journal of task %q of thread %q: encode entries: %w", taskID, threadID, err)
	}
	_, err = s.ws[qPutJournal].ExecContext(ctx, threadID, taskID, raw)
	if err != nil {
		return fmt.Errorf("sqlite: put journal of task %q of thread %q in %q: %w", taskID, threadID, s.path, err)
	}
	return nil
}

// GetJournal returns the journal of a task, nil when it has none.
func (s *Store) GetJournal(ctx context.Context, threadID, taskID string) ([]checkpoint.JournalEntry, error) {
	var raw []byte
	err := s.rs[qGetJournal].QueryRowContext(ctx, threadID, taskID).Scan(&raw)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("sqlite: get journal of task %q of thread %q from %q: %w", taskID, threadID, s.path, err)
	}
	var entries []checkpoint.JournalEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("sqlite: journal of task %q of thread %q in %q is corrupt: %w", taskID, threadID, s.path, err)
	}
	return entries, nil
}
