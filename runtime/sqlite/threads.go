package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

var (
	_ checkpoint.ThreadLister   = (*Store)(nil)
	_ checkpoint.ThreadRecorder = (*Store)(nil)
)

const (
	qThreadMeta    = "SELECT meta FROM ilmek_threads WHERE thread_id = ?"
	qPutThreadMeta = `INSERT INTO ilmek_threads (thread_id, meta, updated_ns) VALUES (?, ?, ?)
		ON CONFLICT (thread_id) DO UPDATE SET meta = excluded.meta, updated_ns = max(updated_ns, excluded.updated_ns)`
	qPutOutcome = `INSERT INTO ilmek_threads (thread_id, status, run_id, ended_ns, error, pending, updated_ns) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id) DO UPDATE SET status = excluded.status, run_id = excluded.run_id, ended_ns = excluded.ended_ns,
		error = excluded.error, pending = excluded.pending, updated_ns = max(updated_ns, excluded.updated_ns)`
	threadColumns = "thread_id, meta, status, run_id, ended_ns, error, pending, updated_ns"
)

// RecordThread merges w's metadata into the thread's and records its
// outcome, in one transaction, fenced by the run's lease like Put.
func (s *Store) RecordThread(ctx context.Context, threadID string, w checkpoint.ThreadWrite) error {
	err := s.tx(ctx, nil, func(tx *sql.Tx) error { return s.recordTx(ctx, tx, threadID, &w) })
	if err != nil {
		return fmt.Errorf("sqlite: record thread %q in %q: %w", threadID, s.path, err)
	}
	return nil
}

// recordTx writes w of the thread in tx.
func (s *Store) recordTx(ctx context.Context, tx *sql.Tx, threadID string, w *checkpoint.ThreadWrite) error {
	return store.Record(w, func(o *store.Outcome) error {
		_, err := s.ws.in(ctx, tx, qPutOutcome).ExecContext(ctx, threadID, o.Status, o.RunID, o.Ended, o.Error, o.Pending, o.Now)
		return err
	}, func(now int64) error { return s.mergeMetaTx(ctx, tx, threadID, w.Meta, now) })
}

// mergeMetaTx merges set into the thread's metadata in tx (an empty
// value deletes its key).
func (s *Store) mergeMetaTx(ctx context.Context, tx *sql.Tx, threadID string, set map[string]string, now int64) error {
	var raw sql.NullString
	err := s.ws.in(ctx, tx, qThreadMeta).QueryRowContext(ctx, threadID).Scan(&raw)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read metadata: %w", err)
	}
	old, err := decodeMeta(raw)
	if err != nil {
		return err
	}
	var meta sql.NullString
	if m := checkpoint.MergeMeta(old, set); m != nil {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode metadata: %w", err)
		}
		meta = sql.NullString{String: string(b), Valid: true}
	}
	if _, err := s.ws.in(ctx, tx, qPutThreadMeta).ExecContext(ctx, threadID, meta, now); err != nil {
		return fmt.Errorf("write metadata: %w", err)
	}
	return nil
}

func decodeMeta(raw sql.NullString) (map[string]string, error) {
	if !raw.Valid || raw.String == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw.String), &m); err != nil {
		return nil, fmt.Errorf("the thread's stored metadata is corrupt: %w", err)
	}
	return m, nil
}

// ListThreads returns the page of threads q selects, in one read.
func (s *Store) ListThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	b, err := store.ListThreadsSQL(q, "SELECT "+threadColumns+" FROM ilmek_threads t WHERE true", "?",
		func(updated, id string) string {
			return "(updated_ns < " + updated + " OR (updated_ns = " + updated + " AND thread_id < " + id + "))"
		})
	if err != nil {
		return checkpoint.ThreadPage{}, err
	}
	if o, ok := q.Meta[store.OwnerKey]; ok && o != "" {
		// The owner index (migration 4) holds exactly this expression.
		b.WriteString(" AND json_extract(meta, '$." + store.OwnerKey + "') = " + b.Arg(o))
	}
	for _, k := range slices.Sorted(maps.Keys(q.Meta)) {
		b.WriteString(" AND EXISTS (SELECT 1 FROM json_each(t.meta) j WHERE j.key = " + b.Arg(k) + " AND j.type = 'text' AND j.value = " + b.Arg(q.Meta[k]) + ")")
	}
	rows, err := s.r.QueryContext(ctx, b.End(), b.Args...)
	if err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("sqlite: list threads in %q: %w", s.path, err)
	}
	defer rows.Close()
	var threads []checkpoint.ThreadInfo
	for rows.Next() {
		info, err := scanThread(rows)
		if err != nil {
			return checkpoint.ThreadPage{}, fmt.Errorf("sqlite: list threads in %q: %w", s.path, err)
		}
		threads = append(threads, info)
	}
	if err := rows.Err(); err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("sqlite: list threads in %q: %w", s.path, err)
	}
	return store.Page(threads, b.Limit), nil
}

// scanThread reads a row of threadColumns.
func scanThread(sc scanner) (checkpoint.ThreadInfo, error) {
	var (
		info checkpoint.ThreadInfo
		meta sql.NullString
		r    store.ThreadRow
	)
	if err := sc.Scan(&info.ID, &meta, &r.Status, &info.Outcome.RunID, &r.Ended, &info.Outcome.Error, &r.Pending, &r.Updated); err != nil {
		return info, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return info, fmt.Errorf("thread %q: %w", info.ID, err)
	}
	info.Meta = m
	return info, r.Decode(&info)
}
