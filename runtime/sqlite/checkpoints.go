package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// Put stores cp and drops the journals of the task ids in done, in one
// transaction. A checkpoint id must be unique within its thread.
func (s *Store) Put(ctx context.Context, cp *runtime.Checkpoint, done []string) error {
	if cp == nil || cp.ID == "" {
		return fmt.Errorf("sqlite: Put on %q: the checkpoint is nil or has no ID", s.path)
	}
	next, err := json.Marshal(cp.Next)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q: encode next tasks: %w", cp.ID, cp.ThreadID, err)
	}
	pending, err := json.Marshal(cp.Pending)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q: encode pending interrupts: %w", cp.ID, cp.ThreadID, err)
	}
	var created int64
	if !cp.Created.IsZero() {
		created = cp.Created.UnixNano()
	}
	args := []any{cp.ID, cp.ThreadID, cp.ParentID, cp.PlanID, cp.Step, created, []byte(cp.Channels), next, pending, cp.Fingerprint, cp.Format, cp.MigratedFrom}
	if len(done) == 0 && !s.fenced(ctx, cp.ThreadID) {
		// One statement commits atomically on its own.
		_, err = s.ws[qInsertCheckpoint].ExecContext(ctx, args...)
	} else {
		err = s.tx(ctx, cp.ThreadID, func(tx *sql.Tx) error {
			return s.putTx(ctx, tx, args, cp.ThreadID, done)
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q in %q: %w", cp.ID, cp.ThreadID, s.path, err)
	}
	return nil
}

// putTx inserts a checkpoint and drops the journals of done in tx.
func (s *Store) putTx(ctx context.Context, tx *sql.Tx, args []any, threadID string, done []string) error {
	if _, err := s.ws.in(ctx, tx, qInsertCheckpoint).ExecContext(ctx, args...); err != nil {
		return err
	}
	if len(done) == 0 {
		return nil
	}
	del := s.ws.in(ctx, tx, qDropJournal)
	for _, id := range done {
		if _, err := del.ExecContext(ctx, threadID, id); err != nil {
			return fmt.Errorf("drop journal of task %q: %w", id, err)
		}
	}
	return nil
}

// Get returns the checkpoint id of the thread, or the one Put most recently
// when id is "", or runtime.ErrNotFound.
func (s *Store) Get(ctx context.Context, threadID, id string) (*runtime.Checkpoint, error) {
	var row *sql.Row
	if id == "" {
		row = s.rs[qLatest].QueryRowContext(ctx, threadID)
	} else {
		row = s.rs[qByID].QueryRowContext(ctx, threadID, id)
	}
	cp, err := scanCheckpoint(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, runtime.ErrNotFound
	case err != nil:
		what := "latest checkpoint"
		if id != "" {
			what = "checkpoint " + id
		}
		return nil, fmt.Errorf("sqlite: get %s of thread %q from %q: %w", what, threadID, s.path, err)
	}
	return cp, nil
}

// List returns the thread's checkpoints, the most recently Put first, at
// most limit of them (all when limit <= 0).
func (s *Store) List(ctx context.Context, threadID string, limit int) ([]*runtime.Checkpoint, error) {
	if limit <= 0 {
		limit = -1 // no limit in SQLite
	}
	rows, err := s.rs[qList].QueryContext(ctx, threadID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
	}
	defer rows.Close()
	var out []*runtime.Checkpoint
	for rows.Next() {
		cp, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
		}
		out = append(out, cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
	}
	return out, nil
}

// DeleteThread removes the thread's checkpoints, journals and lease in one
// transaction, matched by exact thread id. A run of the thread that holds
// its lease in another process then fails its next write with
// ErrLeaseLost. A run that holds it through this Store is told at once
// (LeaseOptions.Lost, with an error matching runtime.ErrThreadDeleted) and
// every later write of it is refused; DeleteThread does not wait for it.
func (s *Store) DeleteThread(ctx context.Context, threadID string) error {
	s.mu.Lock()
	l := s.held[threadID]
	delete(s.held, threadID)
	s.mu.Unlock()
	if l != nil {
		// Mark the lease before the rows go, so no write of the run slips
		// in between; its writes stay refused, and its release does nothing.
		l.mu.Lock()
		already := l.deleted
		l.deleted = true
		l.mu.Unlock()
		l.stopHeartbeatAsync()
		if !already && l.opts.Lost != nil {
			defer l.opts.Lost(&threadDeleted{thread: threadID, path: s.path})
		}
	}
	err := s.tx(ctx, "", func(tx *sql.Tx) error {
		for _, table := range []string{"ilmek_checkpoints", "ilmek_journals", "ilmek_leases"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE thread_id = ?", threadID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete thread %q from %q: %w", threadID, s.path, err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanCheckpoint(sc scanner) (*runtime.Checkpoint, error) {
	var (
		cp                      runtime.Checkpoint
		created                 int64
		channels, next, pending []byte
	)
	if err := sc.Scan(&cp.ID, &cp.ThreadID, &cp.ParentID, &cp.PlanID, &cp.Step, &created, &channels, &next, &pending, &cp.Fingerprint, &cp.Format, &cp.MigratedFrom); err != nil {
		return nil, err
	}
	if created != 0 {
		cp.Created = time.Unix(0, created).UTC()
	}
	if channels != nil {
		cp.Channels = json.RawMessage(channels)
	}
	if err := json.Unmarshal(next, &cp.Next); err != nil {
		return nil, fmt.Errorf("checkpoint %s: decode next tasks: %w", cp.ID, err)
	}
	if err := json.Unmarshal(pending, &cp.Pending); err != nil {
		return nil, fmt.Errorf("checkpoint %s: decode pending interrupts: %w", cp.ID, err)
	}
	return &cp, nil
}
