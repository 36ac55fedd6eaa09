package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

var _ checkpoint.EventStore = (*Store)(nil)

// The events statements. A row of ilmek_events holds the consecutive
// events of a run that one write stored (migration 8,
// store.PackEvents), keyed by its last Seq. Rows never nest, so that rows
// in key order hold their events in Seq order: a new row deletes the
// stored rows it holds all of (qCoveredEvents) and is inserted unless a
// stored row holds all of it; a row whose key is stored already is
// replaced only by one that holds at least its events. (A write stored
// again, retried after a cut connection hid that it committed, packs its
// events the same way or holds more.) A read takes the rows past the
// reader's Seq and the run's newest Seq, for its cap. qAppendEvent's row
// is one of VALUES whose data is NULL when a stored row holds all of it,
// which OR IGNORE skips (the ON CONFLICT clause still decides on a stored
// key): an INSERT ... SELECT that reads the table it writes would first
// write its row into a temporary table.
const (
	qCoveredEvents = "DELETE FROM ilmek_events WHERE run_id = ?1 AND seq < ?2 AND seq >= ?3 AND coalesce(first_seq, seq) >= ?3"
	qAppendEvent   = "INSERT OR IGNORE INTO ilmek_events (run_id, seq, first_seq, thread_id, time_ns, kind, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, " +
		"CASE WHEN EXISTS (SELECT 1 FROM ilmek_events WHERE run_id = ?1 AND seq > ?2 AND coalesce(first_seq, seq) <= ?3) THEN NULL ELSE ?7 END) " +
		"ON CONFLICT (run_id, seq) DO UPDATE SET first_seq = excluded.first_seq, thread_id = excluded.thread_id, time_ns = excluded.time_ns, " +
		"kind = excluded.kind, data = excluded.data WHERE excluded.first_seq <= coalesce(ilmek_events.first_seq, ilmek_events.seq)"
	qTrimEvents = "DELETE FROM ilmek_events WHERE run_id = ? AND seq <= ?"
	qReadEvents = "SELECT seq, coalesce(first_seq, seq), thread_id, time_ns, kind, data, (SELECT max(seq) FROM ilmek_events WHERE run_id = ?1) " +
		"FROM ilmek_events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
)

// rowBytes bounds the variable-length columns of a row of ilmek_events
// (store.PackEvents: run id, thread id, kind and framed data). The table
// is clustered by its key, a b-tree whose cells keep at most 1,002 bytes
// of a row on a 4 KiB page ((4096-12)*64/255-23); a longer row keeps its
// rest on an overflow page of its own, a whole page written for a few
// bytes, and read by a search that compares against it. 950 leaves room
// for the record's header and its three integers. (At 1,000 bytes of
// data alone, a superstep's five events of a chain overflowed: 8.3 pages
// a commit where 4.5 do.)
const rowBytes = 950

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
	rows := store.PackEvents(events, rowBytes, nil)
	for i := range rows.Len() {
		r := rows.Row(i)
		if r.First < r.Seq {
			if _, err := s.ws.in(ctx, tx, qCoveredEvents).ExecContext(ctx, r.Run, r.Seq, r.First); err != nil {
				return fmt.Errorf("events %d to %d of run %q: %w", r.First, r.Seq, r.Run, err)
			}
		}
		if _, err := s.ws.in(ctx, tx, qAppendEvent).ExecContext(ctx, r.Run, r.Seq, r.First, r.Thread, r.NS, r.Kind, r.Data); err != nil {
			return fmt.Errorf("events %d to %d of run %q: %w", r.First, r.Seq, r.Run, err)
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
	out, err := store.ReadEventPages(afterSeq, limit, func(er *store.EventReader) (int, error) { return s.readEventRows(ctx, runID, er, limit) })
	if err != nil {
		return nil, fmt.Errorf("sqlite: read events of run %q from %q: %w", runID, s.path, err)
	}
	return out, nil
}

// readEventRows adds to er the events of the run's next page of rows
// after er.Cursor, at most limit rows (all when limit <= 0), and returns
// how many rows it read.
func (s *Store) readEventRows(ctx context.Context, runID string, er *store.EventReader, limit int) (int, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.rs[qReadEvents].QueryContext(ctx, runID, er.Cursor, limit)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	return store.ScanEventRows(rows, runID, er)
}
