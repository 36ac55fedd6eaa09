package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// This file holds a lease's commit in one statement: the checkpoint (in
// full, or as a delta under the compaction limits), the journals its
// superstep finished, the thread record and the run's events, fenced by
// the lease, as data-modifying CTEs of one statement (one round trip, one
// implicit transaction). Every write but the fence is conditional on the
// checkpoint's insert (or, without a checkpoint, on the fence), so the
// statement writes everything or nothing. A delta whose chain reached the
// compaction limits writes nothing here and goes through the transaction
// of Commit's slow path.

// The parts a one-statement commit carries (commitParts bits), which
// select its SQL text.
const (
	partFull    = 1 << iota // a checkpoint in full
	partDelta               // a checkpoint as a delta
	partOutcome             // the thread's outcome
	partMeta                // the thread's metadata
	partEvents              // events
	partTrim                // old events of the runs to drop
	partRelease             // the lease given back (checkpoint.Commit.Release)
	partJournal             // a task's journal written with the checkpoint (a batch of one commit, batch.go)
	partOneRow              // with partEvents: the events fill one row, inserted from scalars
)

// commitSQL returns the text of the one-statement commit of parts, made
// once per Store.
func (s *Store) commitSQL(parts uint16) string {
	if v, ok := s.commitSQLs.Load(parts); ok {
		return v.(string)
	}
	var b strings.Builder
	var n int // the parameters so far
	thread, epoch := "$2", ""
	switch {
	case parts&partFull != 0:
		b.WriteString(insertFencedCTEs)
		n, epoch = 14, "$13"
	case parts&partDelta != 0:
		b.WriteString(deltaFastCTEs(deltaFence))
		n, epoch = 19, "$19"
	default:
		b.WriteString("WITH f AS (SELECT 1 FROM S.ilmek_leases WHERE thread_id = $1 AND epoch = $2 FOR SHARE), ins AS (SELECT 1 FROM f)")
		n, thread, epoch = 2, "$1", "$2"
	}
	p := func(typ string) string { n++; return "$" + strconv.Itoa(n) + "::" + typ }
	const ok = "EXISTS (SELECT 1 FROM ins)"
	switch parts & (partOutcome | partMeta) {
	case partOutcome:
		b.WriteString(", o AS (INSERT INTO S.ilmek_threads (thread_id, status, run_id, ended_ns, error, pending, updated_ns) SELECT " + thread + "::text, " +
			p("text") + ", " + p("text") + ", " + p("bigint") + ", " + p("text") + ", " + p("bytea") + ", " + p("bigint") + " WHERE " + ok +
			" ON CONFLICT (thread_id) DO UPDATE SET status = excluded.status, run_id = excluded.run_id, ended_ns = excluded.ended_ns, " +
			"error = excluded.error, pending = excluded.pending, updated_ns = greatest(S.ilmek_threads.updated_ns, excluded.updated_ns))")
	case partMeta:
		set, del, now := p("jsonb"), p("text[]"), p("bigint")
		b.WriteString(", o AS (INSERT INTO S.ilmek_threads (thread_id, meta, updated_ns) SELECT " + thread + "::text, " + set + " - " + del + ", " + now +
			" WHERE " + ok + " ON CONFLICT (thread_id) DO UPDATE SET meta = (S.ilmek_threads.meta || " + set + ") - " + del + ", " +
			"updated_ns = greatest(S.ilmek_threads.updated_ns, excluded.updated_ns))")
	case partOutcome | partMeta:
		status, run, ended, errText, pending, now := p("text"), p("text"), p("bigint"), p("text"), p("bytea"), p("bigint")
		set, del := p("jsonb"), p("text[]")
		b.WriteString(", o AS (INSERT INTO S.ilmek_threads (thread_id, status, run_id, ended_ns, error, pending, meta, updated_ns) SELECT " + thread + "::text, " +
			status + ", " + run + ", " + ended + ", " + errText + ", " + pending + ", " + set + " - " + del + ", " + now + " WHERE " + ok +
			" ON CONFLICT (thread_id) DO UPDATE SET status = excluded.status, run_id = excluded.run_id, ended_ns = excluded.ended_ns, " +
			"error = excluded.error, pending = excluded.pending, meta = (S.ilmek_threads.meta || " + set + ") - " + del + ", " +
			"updated_ns = greatest(S.ilmek_threads.updated_ns, excluded.updated_ns))")
	}
	switch {
	case parts&partOneRow != 0:
		// A superstep's events mostly fill one row: its values as
		// scalars cost the server less than seven arrays to unnest.
		row := p("text") + ", " + p("bigint") + ", " + p("bigint") + ", " + p("text") + ", " + p("bigint") + ", " + p("text") + ", " + p("bytea")
		b.WriteString(", ev AS (" + insertEventRow(row, ok) + ")")
	case parts&partEvents != 0:
		arrays := p("text[]") + ", " + p("bigint[]") + ", " + p("bigint[]") + ", " + p("text[]") + ", " + p("bigint[]") + ", " + p("text[]") + ", " + p("bytea[]")
		b.WriteString(", ev AS (" + insertEvents(arrays, ok) + ")")
	}
	if parts&partTrim != 0 {
		b.WriteString(", tr AS (DELETE FROM S.ilmek_events e USING unnest(" + p("text[]") + ", " + p("bigint[]") + ") AS t(run_id, through) " +
			"WHERE e.run_id = t.run_id AND e.seq <= t.through AND " + ok + ")")
	}
	if parts&partRelease != 0 {
		b.WriteString(", rl AS (DELETE FROM S.ilmek_leases WHERE thread_id = " + thread + " AND epoch = " + epoch + " AND " + ok + ")")
	}
	if parts&partJournal != 0 {
		// Another task's journal than those the checkpoint drops (del):
		// one statement never writes a row twice.
		b.WriteString(", jr AS (INSERT INTO S.ilmek_journals (thread_id, task_id, entries) SELECT " + thread + "::text, " + p("text") + ", " + p("bytea") +
			" WHERE " + ok + " ON CONFLICT (thread_id, task_id) DO UPDATE SET entries = excluded.entries)")
	}
	if parts&partDelta != 0 {
		b.WriteString(" SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM b), (SELECT count(*) FROM ins)")
	} else {
		b.WriteString(" SELECT (SELECT count(*) FROM f), 1::bigint, (SELECT count(*) FROM ins)")
	}
	sql := s.q.fill(b.String())
	s.commitSQLs.Store(parts, sql)
	return sql
}

// errCompact says a delta commit found its chain at the compaction limits
// and wrote nothing: Commit's transaction writes it.
var errCompact = fmt.Errorf("the delta's chain reached the compaction limits")

// commitOne writes c under l in one statement (commitSQL), and with it
// the journal j when j is not nil (a batch of one commit, batch.go). It
// returns errCompact when c's delta must be compacted (nothing written).
func (s *Store) commitOne(ctx context.Context, l *heldLease, c checkpoint.Commit, j *journalWrite) error {
	if err := l.Refused(); err != nil {
		return err
	}
	sql, args, err := s.commitStmt(l, c, j)
	if err != nil {
		return err
	}
	var fenced, found, inserted int64
	if err := s.pool.QueryRow(ctx, sql, args...).Scan(&fenced, &found, &inserted); err != nil {
		return err
	}
	return l.commitResult(c, fenced, found, inserted)
}

// commitResult is the error of c's one-statement commit from what the
// statement returned: nil when it wrote c.
func (l *heldLease) commitResult(c checkpoint.Commit, fenced, found, inserted int64) error {
	switch {
	case fenced == 0:
		return l.lost()
	case found == 0:
		return fmt.Errorf("put checkpoint %s as a delta of %s: its base checkpoint: %w", c.Checkpoint.ID, c.Delta.Base, runtime.ErrNotFound)
	case inserted == 0:
		return errCompact
	}
	return nil
}

// commitStmt returns the one statement that writes c under l (commitSQL)
// and its arguments, and j's journal with c's checkpoint when j is not
// nil (its entries encoded in raw).
func (s *Store) commitStmt(l *heldLease, c checkpoint.Commit, j *journalWrite) (string, []any, error) {
	var (
		parts uint16
		args  []any
	)
	cp := c.Checkpoint
	done := c.Done
	if done == nil {
		done = []string{}
	}
	switch {
	case cp == nil:
		args = []any{l.Thread, l.epoch}
	case c.Delta != nil:
		parts |= partDelta
		writes, err := json.Marshal(c.Delta.Writes)
		if err != nil {
			return "", nil, fmt.Errorf("put checkpoint %s as a delta of %s: encode its delta: %w", cp.ID, c.Delta.Base, err)
		}
		e, err := store.EncodeCheckpoint(cp)
		if err != nil {
			return "", nil, fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
		}
		cmp := s.opts.compact.WithDefaults()
		args = []any{cp.ID, cp.ThreadID, cp.ParentID, cp.PlanID, cp.Step, e.Created, writes, e.Next, e.Pending, cp.Fingerprint, cp.Format, cp.MigratedFrom,
			c.Delta.Base, cmp.Every, c.Delta.Size(), cmp.Bytes, checkpoint.MinCompactionBytes, done, l.epoch}
	default:
		parts |= partFull
		e, err := store.EncodeCheckpoint(cp)
		if err != nil {
			return "", nil, fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
		}
		args = []any{cp.ID, cp.ThreadID, cp.ParentID, cp.PlanID, cp.Step, e.Created, e.Channels, e.Next, e.Pending, cp.Fingerprint, cp.Format, cp.MigratedFrom,
			l.epoch, done}
	}
	if w := c.Thread; w != nil {
		var (
			o       *store.Outcome
			metaNow int64
		)
		err := store.Record(w, func(out *store.Outcome) error { o = out; return nil }, func(now int64) error { metaNow = now; return nil })
		if err != nil {
			return "", nil, fmt.Errorf("record the thread: %w", err)
		}
		if o != nil {
			parts |= partOutcome
			args = append(args, o.Status, o.RunID, o.Ended, o.Error, o.Pending, o.Now)
		}
		if len(w.Meta) > 0 {
			parts |= partMeta
			raw, del, err := metaChange(w.Meta)
			if err != nil {
				return "", nil, fmt.Errorf("record the thread: %w", err)
			}
			if o == nil {
				args = append(args, raw, del, metaNow)
			} else {
				args = append(args, raw, del)
			}
		}
	}
	if len(c.Events) > 0 {
		// The events a trim drops are not inserted: the statement's
		// delete does not see its own inserts.
		rows, trimRuns, trimThrough := store.TrimmedEvents(c.Events, rowBytes)
		parts |= partEvents
		if len(rows.Runs) == 1 {
			parts |= partOneRow
			args = append(args, rows.Runs[0], rows.Seqs[0], rows.Firsts[0], rows.Threads[0], rows.Times[0], rows.Kinds[0], rows.Datas[0])
		} else {
			args = append(args, eventArgs(rows)...)
		}
		if len(trimRuns) > 0 {
			parts |= partTrim
			args = append(args, trimRuns, trimThrough)
		}
	}
	if releases(c) {
		parts |= partRelease
	}
	if j != nil && cp != nil {
		parts |= partJournal
		args = append(args, j.task, j.raw)
	}
	return s.commitSQL(parts), args, nil
}

// journalWrite is a task's journal, encoded, written with a commit.
type journalWrite struct {
	task string
	raw  []byte
}

// releases reports whether commit c gives its lease back
// (checkpoint.Commit.Release): when it asks to and a retry can tell that
// it committed, by its checkpoint or its last event (see Commit). A final
// write of the thread's outcome alone keeps the lease, which Release
// drops after it.
func releases(c checkpoint.Commit) bool {
	return c.Release && (c.Checkpoint != nil || len(c.Events) > 0)
}
