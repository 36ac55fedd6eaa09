package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
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
	now := time.Now().UnixNano()
	if w.Outcome != nil {
		ended := int64(0)
		if !w.Outcome.Ended.IsZero() {
			ended = w.Outcome.Ended.UnixNano()
			now = ended
		}
		var pending []byte
		if len(w.Pending) > 0 {
			var err error
			if pending, err = json.Marshal(w.Pending); err != nil {
				return fmt.Errorf("encode pending interrupts: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, qPutOutcome, threadID, string(w.Outcome.Status), w.Outcome.RunID, ended, w.Outcome.Error, pending, now); err != nil {
			return fmt.Errorf("write outcome: %w", err)
		}
	}
	if len(w.Meta) == 0 {
		return nil
	}
	var raw sql.NullString
	err := tx.QueryRowContext(ctx, qThreadMeta, threadID).Scan(&raw)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read metadata: %w", err)
	}
	old, err := decodeMeta(raw)
	if err != nil {
		return err
	}
	var meta sql.NullString
	if m := checkpoint.MergeMeta(old, w.Meta); m != nil {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode metadata: %w", err)
		}
		meta = sql.NullString{String: string(b), Valid: true}
	}
	if _, err := tx.ExecContext(ctx, qPutThreadMeta, threadID, meta, now); err != nil {
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
	limit, cursor, err := checkpoint.CheckThreadQuery(q)
	if err != nil {
		return checkpoint.ThreadPage{}, err
	}
	var b strings.Builder
	var args []any
	b.WriteString("SELECT " + threadColumns + " FROM ilmek_threads t WHERE true")
	if q.Status != "" {
		b.WriteString(" AND status = ?")
		args = append(args, string(q.Status))
	}
	if !q.UpdatedAfter.IsZero() {
		b.WriteString(" AND updated_ns > ?")
		args = append(args, q.UpdatedAfter.UnixNano())
	}
	if !q.UpdatedBefore.IsZero() {
		b.WriteString(" AND updated_ns < ?")
		args = append(args, q.UpdatedBefore.UnixNano())
	}
	if cursor != nil {
		b.WriteString(" AND (updated_ns < ? OR (updated_ns = ? AND thread_id < ?))")
		args = append(args, cursor.Updated, cursor.Updated, cursor.ID)
	}
	for _, k := range slices.Sorted(maps.Keys(q.Meta)) {
		b.WriteString(" AND EXISTS (SELECT 1 FROM json_each(t.meta) j WHERE j.key = ? AND j.type = 'text' AND j.value = ?)")
		args = append(args, k, q.Meta[k])
	}
	b.WriteString(" ORDER BY updated_ns DESC, thread_id DESC LIMIT ?")
	args = append(args, limit+1)
	rows, err := s.r.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("sqlite: list threads in %q: %w", s.path, err)
	}
	defer rows.Close()
	var page checkpoint.ThreadPage
	for rows.Next() {
		info, err := scanThread(rows)
		if err != nil {
			return checkpoint.ThreadPage{}, fmt.Errorf("sqlite: list threads in %q: %w", s.path, err)
		}
		page.Threads = append(page.Threads, info)
	}
	if err := rows.Err(); err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("sqlite: list threads in %q: %w", s.path, err)
	}
	if len(page.Threads) > limit {
		page.Threads = page.Threads[:limit]
		last := page.Threads[limit-1]
		page.Next = checkpoint.EncodeThreadCursor(checkpoint.ThreadCursor{Updated: last.Updated.UnixNano(), ID: last.ID})
	}
	return page, nil
}

// scanThread reads a row of threadColumns.
func scanThread(sc scanner) (checkpoint.ThreadInfo, error) {
	var (
		info           checkpoint.ThreadInfo
		meta           sql.NullString
		status         string
		ended, updated int64
		pending        []byte
	)
	if err := sc.Scan(&info.ID, &meta, &status, &info.Outcome.RunID, &ended, &info.Outcome.Error, &pending, &updated); err != nil {
		return info, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return info, fmt.Errorf("thread %q: %w", info.ID, err)
	}
	info.Meta = m
	info.Outcome.Status = runtime.Status(status)
	if ended != 0 {
		info.Outcome.Ended = time.Unix(0, ended).UTC()
	}
	info.Updated = time.Unix(0, updated).UTC()
	if len(pending) > 0 && (info.Outcome.Status == runtime.StatusInterrupted || info.Outcome.Status == runtime.StatusParked) {
		if err := json.Unmarshal(pending, &info.Pending); err != nil {
			return info, fmt.Errorf("thread %q: decode pending interrupts: %w", info.ID, err)
		}
	}
	return info, nil
}
