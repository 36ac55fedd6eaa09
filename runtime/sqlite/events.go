package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

var _ checkpoint.EventStore = (*Store)(nil)

const (
	qAppendEvent = "INSERT OR REPLACE INTO ilmek_events (run_id, seq, thread_id, time_ns, kind, data) VALUES (?, ?, ?, ?, ?, ?)"
	qTrimEvents  = "DELETE FROM ilmek_events WHERE run_id = ? AND seq <= ?"
	qReadEvents  = "SELECT run_id, seq, thread_id, time_ns, kind, data FROM ilmek_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?"
)

// AppendEvents stores events of one run in one transaction, unleased (a
// run stores its events through its lease's Commit), and drops the run's
// events older than its last checkpoint.MaxStoredEvents sequence numbers.
func (s *Store) AppendEvents(ctx context.Context, events []checkpoint.StoredEvent) error {
	if len(events) == 0 {
		return nil
	}
	first := events[0]
	err := s.tx(ctx, nil, func(tx *sql.Tx) error { return s.appendEventsTx(ctx, tx, events) })
	if err != nil {
		return fmt.Errorf("sqlite: append %d events of run %q of thread %q in %q: %w", len(events), first.RunID, first.ThreadID, s.path, err)
	}
	return nil
}

// appendEventsTx stores events in tx (see AppendEvents).
func (s *Store) appendEventsTx(ctx context.Context, tx *sql.Tx, events []checkpoint.StoredEvent) error {
	if len(events) == 0 {
		return nil
	}
	ins, err := tx.PrepareContext(ctx, qAppendEvent)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, e := range events {
		if _, err := ins.ExecContext(ctx, e.RunID, e.Seq, e.ThreadID, e.Time.UnixNano(), e.Kind, []byte(e.Data)); err != nil {
			return fmt.Errorf("event %d of run %q: %w", e.Seq, e.RunID, err)
		}
	}
	return store.TrimEvents(events, func(run string, through int64) error {
		_, err := tx.ExecContext(ctx, qTrimEvents, run, through)
		return err
	})
}

// ReadEvents returns the run's stored events after afterSeq, in Seq order,
// at most limit of them (all when limit <= 0).
func (s *Store) ReadEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]checkpoint.StoredEvent, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, qReadEvents, runID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read events of run %q from %q: %w", runID, s.path, err)
	}
	defer rows.Close()
	var out []checkpoint.StoredEvent
	for rows.Next() {
		var e checkpoint.StoredEvent
		var ns int64
		if err := rows.Scan(&e.RunID, &e.Seq, &e.ThreadID, &ns, &e.Kind, &e.Data); err != nil {
			return nil, fmt.Errorf("sqlite: read events of run %q from %q: %w", runID, s.path, err)
		}
		e.Time = time.Unix(0, ns).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read events of run %q from %q: %w", runID, s.path, err)
	}
	return out, nil
}
