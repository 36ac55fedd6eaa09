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

var (
	_ checkpoint.ThreadLister   = (*Store)(nil)
	_ checkpoint.ThreadRecorder = (*Store)(nil)
	_ checkpoint.EventStore     = (*Store)(nil)
)

// txer is a pool or a transaction: what a write that may run inside a
// caller's transaction needs.
type txer interface {
	querier
	Begin(ctx context.Context) (pgx.Tx, error)
}

// fenceTx checks, in tx, that a write made under l (nil: unfenced) still
// holds the thread's lease, and holds the lease row FOR SHARE until the
// commit, so a takeover waits for the write and later ones fail.
func (s *Store) fenceTx(ctx context.Context, tx pgx.Tx, threadID string, l *heldLease) error {
	if l == nil {
		return nil
	}
	if err := l.Refused(); err != nil {
		return err
	}
	var one int
	err := tx.QueryRow(ctx, s.q.fenceShare, threadID, l.epoch).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return l.lost()
	}
	return err
}

// RecordThread merges w's metadata into the thread's and records its
// outcome, in one transaction, unleased (a run records through its lease).
func (s *Store) RecordThread(ctx context.Context, threadID string, w checkpoint.ThreadWrite) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return s.recordTx(ctx, tx, threadID, &w)
	})
	if err != nil {
		return fmt.Errorf("postgres: record thread %q in %s: %w", threadID, s.where(), err)
	}
	return nil
}

// metaChange splits a metadata write into the JSON object of the keys it
// sets and the keys it removes (those written as ""), as the statements
// that merge it take them.
func metaChange(meta map[string]string) (set string, del []string, err error) {
	m, del := map[string]string{}, []string{}
	for k, v := range meta {
		if v == "" {
			del = append(del, k)
		} else {
			m[k] = v
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", nil, fmt.Errorf("encode metadata: %w", err)
	}
	return string(raw), del, nil
}

// recordTx writes w of the thread with q.
func (s *Store) recordTx(ctx context.Context, q querier, threadID string, w *checkpoint.ThreadWrite) error {
	return store.Record(w, func(o *store.Outcome) error {
		_, err := q.Exec(ctx, s.q.putOutcome, threadID, o.Status, o.RunID, o.Ended, o.Error, o.Pending, o.Now)
		return err
	}, func(now int64) error {
		raw, del, err := metaChange(w.Meta)
		if err != nil {
			return err
		}
		if _, err := q.Exec(ctx, s.q.putThreadMeta, threadID, raw, del, now); err != nil {
			return fmt.Errorf("write metadata: %w", err)
		}
		return nil
	})
}

// ListThreads returns the page of threads q selects, in one statement.
func (s *Store) ListThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	b, err := store.ListThreadsSQL(q, s.q.listThreads, "$", func(updated, id string) string {
		return "(updated_ns, thread_id) < (" + updated + "::bigint, " + id + "::text COLLATE \"C\")"
	})
	if err != nil {
		return checkpoint.ThreadPage{}, err
	}
	if len(q.Meta) > 0 {
		raw, err := json.Marshal(q.Meta)
		if err != nil {
			return checkpoint.ThreadPage{}, fmt.Errorf("postgres: list threads: encode the metadata condition: %w", err)
		}
		b.WriteString(" AND meta @> " + b.Arg(string(raw)) + "::jsonb")
		if o, ok := q.Meta[store.OwnerKey]; ok && o != "" {
			// The owner index (migration 6) holds exactly this expression.
			b.WriteString(" AND (meta ->> '" + store.OwnerKey + "') = " + b.Arg(o))
		}
	}
	rows, err := s.pool.Query(ctx, b.End(), b.Args...)
	if err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("postgres: list threads in %s: %w", s.where(), err)
	}
	defer rows.Close()
	var threads []checkpoint.ThreadInfo
	for rows.Next() {
		var (
			info checkpoint.ThreadInfo
			meta map[string]string
			r    store.ThreadRow
		)
		err := rows.Scan(&info.ID, &meta, &r.Status, &info.Outcome.RunID, &r.Ended, &info.Outcome.Error, &r.Pending, &r.Updated)
		if err == nil {
			err = r.Decode(&info)
		}
		if err != nil {
			return checkpoint.ThreadPage{}, fmt.Errorf("postgres: list threads in %s: %w", s.where(), err)
		}
		if len(meta) > 0 {
			info.Meta = meta
		}
		threads = append(threads, info)
	}
	if err := rows.Err(); err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("postgres: list threads in %s: %w", s.where(), err)
	}
	return store.Page(threads, b.Limit), nil
}

// AppendEvents stores events of one run in one transaction, unleased (a
// run stores its events through its lease's Commit), and drops the run's
// events older than its last checkpoint.MaxStoredEvents sequence numbers.
func (s *Store) AppendEvents(ctx context.Context, events []checkpoint.StoredEvent) error {
	if len(events) == 0 {
		return nil
	}
	first := events[0]
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.appendEventsTx(ctx, tx, events) })
	if err != nil {
		return fmt.Errorf("postgres: append %d events of run %q of thread %q in %s: %w", len(events), first.RunID, first.ThreadID, s.where(), err)
	}
	return nil
}

// appendEventsTx stores events in tx (see AppendEvents).
func (s *Store) appendEventsTx(ctx context.Context, tx pgx.Tx, events []checkpoint.StoredEvent) error {
	if len(events) == 0 {
		return nil
	}
	rows := store.PackEvents(events, rowBytes, nil)
	var b pgx.Batch
	for i := range rows.Len() {
		r := rows.Row(i)
		if r.First < r.Seq {
			b.Queue(s.q.coveredEvents, r.Run, r.Seq, r.First)
		}
		b.Queue(s.q.appendEvent, r.Run, r.Seq, r.First, r.Thread, r.NS, r.Kind, r.Data)
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return err
	}
	return store.TrimEvents(events, func(run string, through int64) error {
		_, err := tx.Exec(ctx, s.q.trimEvents, run, through)
		return err
	})
}

// ReadEvents returns the run's stored events after afterSeq, in Seq order,
// at most limit of them (all when limit <= 0).
func (s *Store) ReadEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]checkpoint.StoredEvent, error) {
	out, err := store.ReadEventPages(afterSeq, limit, func(er *store.EventReader) (int, error) { return s.readEventRows(ctx, runID, er, limit) })
	if err != nil {
		return nil, fmt.Errorf("postgres: read events of run %q from %s: %w", runID, s.where(), err)
	}
	return out, nil
}

// readEventRows adds to er the events of the run's next page of rows
// after er.Cursor, at most limit rows (all when limit <= 0), and returns
// how many rows it read.
func (s *Store) readEventRows(ctx context.Context, runID string, er *store.EventReader, limit int) (int, error) {
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.pool.Query(ctx, s.q.readEvents, runID, er.Cursor, lim)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	return store.ScanEventRows(rows, runID, er)
}

// rowBytes bounds the event data of a row of ilmek_events
// (store.PackEvents): well under what the server moves out of line.
const rowBytes = 16 << 10

// eventArgs returns rows as the arguments of the events insert
// (insertEvents), in column order.
func eventArgs(r store.EventRows) []any {
	return []any{r.Runs, r.Seqs, r.Firsts, r.Threads, r.Times, r.Kinds, r.Datas}
}
