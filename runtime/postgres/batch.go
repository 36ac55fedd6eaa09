package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// A batch (checkpoint.BatchLease) goes to the server in one round trip. A
// batch of one commit, with or without a journal, is that commit's one
// statement (commit.go) with the journal's upsert as one more of its
// CTEs, written only when the checkpoint is. A batch of more is each
// commit's statement (the journal's upsert in the last one's) and a last
// statement that fails, by a division by zero, unless every checkpoint of
// the batch is in the table. The server runs them in one
// implicit transaction, so that failure rolls back the whole batch: a
// fence that no longer holds, a delta's missing base or a chain at the
// compaction limits (whose statement writes nothing) leaves nothing
// written, and the batch is then written again in a transaction, statement
// by statement, which compacts the chain or says which of the three it
// was.

// CommitBatch writes the commits cs, in order, and then the journal j
// (when not nil) in one transaction fenced by the lease's epoch, in one
// round trip in the common case. A batch cut off on its way back is
// retried unless its first checkpoint is stored (the batch commits whole
// or not at all).
func (l *heldLease) CommitBatch(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	s := l.s
	var ids []string
	release := false
	for _, c := range cs {
		if c.Checkpoint == nil {
			return fmt.Errorf("postgres: commit a batch of thread %q in %s: every commit of a batch carries a checkpoint", l.Thread, s.where())
		}
		if c.Checkpoint.ThreadID != l.Thread {
			return fmt.Errorf("postgres: commit of checkpoint %s of thread %q under the lease of thread %q refused", c.Checkpoint.ID, c.Checkpoint.ThreadID, l.Thread)
		}
		ids = append(ids, c.Checkpoint.ID)
		release = release || releases(c)
	}
	if len(ids) == 0 {
		return fmt.Errorf("postgres: commit a batch of thread %q in %s: the batch has no commit", l.Thread, s.where())
	}
	var jw *journalWrite
	if j != nil {
		raw, err := json.Marshal(j.Entries)
		if err != nil {
			return fmt.Errorf("postgres: commit a batch of thread %q in %s: encode the journal of task %q: %w", l.Thread, s.where(), j.TaskID, err)
		}
		jw = &journalWrite{task: j.TaskID, raw: raw}
	}
	first := ids[0]
	settled := func(ctx context.Context) (bool, error) {
		var ok bool
		err := s.pool.QueryRow(ctx, s.q.stored, l.Thread, first).Scan(&ok)
		return ok, err
	}
	if release {
		l.StopHeartbeat()
	}
	err := s.retry.Do(ctx, "commit", l.Thread, settled, func(ctx context.Context) error {
		var err error
		if len(cs) == 1 {
			err = s.commitOne(ctx, l, cs[0], jw) // fenced, and checks l.Refused
		} else if err = l.Refused(); err == nil {
			err = l.sendBatch(ctx, cs, ids, jw)
		}
		if !errors.Is(err, errCompact) {
			return err
		}
		// Something of the batch did not write: nothing did. Write it
		// again statement by statement, to compact or to say why.
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := s.fenceTx(ctx, tx, l.Thread, l); err != nil {
				return err
			}
			for _, c := range cs {
				if err := l.commitTx(ctx, tx, c); err != nil {
					return err
				}
			}
			if jw != nil {
				if _, err := tx.Exec(ctx, s.q.putJournal, l.Thread, jw.task, jw.raw); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("postgres: commit %s of thread %q in %s: %w", store.BatchWhat(cs, j), l.Thread, s.where(), err)
	}
	if release {
		l.Released()
	}
	return nil
}

// sendBatch sends the batch's statements in one round trip (see the top
// of this file). It returns errCompact when the batch wrote nothing
// because one of its statements wrote nothing (the last statement's
// division by zero, SQLSTATE 22012): a chain to compact, a fence that no
// longer holds or a missing base, which the transaction then tells apart.
func (l *heldLease) sendBatch(ctx context.Context, cs []checkpoint.Commit, ids []string, j *journalWrite) error {
	s := l.s
	var b pgx.Batch
	for i, c := range cs {
		var with *journalWrite
		if i == len(cs)-1 {
			with = j // with the last checkpoint, in its statement
		}
		sql, args, err := s.commitStmt(l, c, with)
		if err != nil {
			return err
		}
		b.Queue(sql, args...)
	}
	b.Queue(s.q.batchWritten, l.Thread, ids, len(ids))
	br := s.pool.SendBatch(ctx, &b)
	var err error
	for range b.Len() {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "22012" {
		return errCompact
	}
	return err
}

var _ checkpoint.BatchLease = (*heldLease)(nil)
