package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// Put stores cp and drops the journals of the task ids in done, in one
// statement (so one transaction), unleased (a run commits through its
// lease). A checkpoint id must be unique within its thread.
func (s *Store) Put(ctx context.Context, cp *runtime.Checkpoint, done []string) error {
	return s.put(ctx, s.pool, cp, done, nil)
}

// put is Put on db (the pool or a commit's transaction), fenced by l's
// epoch when l is not nil: it then fails with ErrLeaseLost when another
// run took the thread.
func (s *Store) put(ctx context.Context, db txer, cp *runtime.Checkpoint, done []string, l *heldLease) error {
	if cp == nil || cp.ID == "" {
		return fmt.Errorf("postgres: Put in %s: the checkpoint is nil or has no ID", s.where())
	}
	c, err := store.EncodeCheckpoint(cp)
	if err != nil {
		return fmt.Errorf("postgres: put checkpoint %s of thread %q: %w", cp.ID, cp.ThreadID, err)
	}
	args := []any{cp.ID, cp.ThreadID, cp.ParentID, cp.PlanID, cp.Step, c.Created, c.Channels, c.Next, c.Pending, cp.Fingerprint, cp.Format, cp.MigratedFrom}
	if done == nil {
		done = []string{}
	}
	err = func() error {
		switch {
		case l != nil:
			if err := l.Refused(); err != nil {
				return err
			}
			var n int
			err := db.QueryRow(ctx, s.q.insertFenced, append(args, l.epoch, done)...).Scan(&n)
			if err == nil && n == 0 {
				err = l.lost()
			}
			return err
		case len(done) == 0:
			_, err := db.Exec(ctx, s.q.insert, args...)
			return err
		default:
			var n int
			return db.QueryRow(ctx, s.q.insertDone, append(args, done)...).Scan(&n)
		}
	}()
	if err != nil {
		return fmt.Errorf("postgres: put checkpoint %s of thread %q in %s: %w", cp.ID, cp.ThreadID, s.where(), err)
	}
	return nil
}

// Get returns the checkpoint id of the thread, or the one Put most recently
// when id is "", or runtime.ErrNotFound. A checkpoint stored as a delta is
// read with its chain in one statement and rebuilt.
func (s *Store) Get(ctx context.Context, threadID, id string) (*runtime.Checkpoint, error) {
	cp, err := s.get(ctx, threadID, id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, runtime.ErrNotFound
	case err != nil:
		what := "latest checkpoint"
		if id != "" {
			what = "checkpoint " + id
		}
		return nil, fmt.Errorf("postgres: get %s of thread %q from %s: %w", what, threadID, s.where(), err)
	}
	return cp, nil
}

var _ checkpoint.LatestReader = (*Store)(nil)

// GetLatest returns the thread's latest checkpoint, as Get does, without
// its channels when its ID is known (checkpoint.LatestReader): one row is
// read, not its chain. When another checkpoint is the latest and it is a
// delta, its chain is read with a second statement.
func (s *Store) GetLatest(ctx context.Context, threadID, known string) (*runtime.Checkpoint, error) {
	cp, err := s.getLatest(ctx, threadID, known)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, runtime.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("postgres: get latest checkpoint of thread %q from %s: %w", threadID, s.where(), err)
	}
	return cp, nil
}

func (s *Store) getLatest(ctx context.Context, threadID, known string) (*runtime.Checkpoint, error) {
	if known == "" {
		return s.get(ctx, threadID, "")
	}
	r, err := s.getRow(ctx, s.pool, threadID, "")
	switch {
	case err != nil:
		return nil, err
	case r.cp.ID == known:
		r.cp.Channels = nil
		return r.cp, nil
	case r.base == "":
		return r.cp, nil
	}
	return s.get(ctx, threadID, r.cp.ID)
}

// get reads the checkpoint and, when it is a delta, its chain, in one
// statement, and rebuilds its channels.
func (s *Store) get(ctx context.Context, threadID, id string) (*runtime.Checkpoint, error) {
	var (
		rows pgx.Rows
		err  error
	)
	if id == "" {
		rows, err = s.pool.Query(ctx, s.q.latestChain, threadID)
	} else {
		rows, err = s.pool.Query(ctx, s.q.byIDChain, threadID, id)
	}
	if err != nil {
		return nil, err
	}
	return s.readChain(ctx, rows)
}

// readChain makes the checkpoint of the rows of a withChain statement
// (pgx.ErrNoRows when they hold none), rebuilding a delta's channels, and
// closes them.
func (s *Store) readChain(ctx context.Context, rows pgx.Rows) (*runtime.Checkpoint, error) {
	defer rows.Close()
	var self storedRow
	chain := map[string]checkpoint.ChainLink{}
	for rows.Next() {
		var isSelf bool
		r, err := scanCheckpoint(rows, &isSelf)
		if err != nil {
			return nil, err
		}
		if isSelf {
			self = r
			continue
		}
		chain[r.cp.ID] = checkpoint.ChainLink{Base: r.base, Channels: r.cp.Channels}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if self.cp == nil {
		return nil, pgx.ErrNoRows
	}
	if self.base != "" {
		if err := s.rebuild(ctx, nil, self.cp, self.base, self.snap, store.Chains{self.snap: chain}); err != nil {
			return nil, err
		}
	}
	return self.cp, nil
}

// getRow reads one checkpoint row as stored (a delta's channels are its
// writes).
func (s *Store) getRow(ctx context.Context, q querier, threadID, id string) (storedRow, error) {
	if id == "" {
		return scanCheckpoint(q.QueryRow(ctx, s.q.latest, threadID))
	}
	return scanCheckpoint(q.QueryRow(ctx, s.q.byID, threadID, id))
}

// List returns the thread's checkpoints, the most recently Put first, at
// most limit of them (all when limit <= 0), in one read-only transaction.
func (s *Store) List(ctx context.Context, threadID string, limit int) ([]*runtime.Checkpoint, error) {
	var lim any // NULL: no limit
	if limit > 0 {
		lim = int64(limit)
	}
	var out []*runtime.Checkpoint
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.q.list, threadID, lim)
		if err != nil {
			return err
		}
		stored, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storedRow, error) { return scanCheckpoint(r) })
		if err != nil {
			return err
		}
		chains := store.Chains{}
		out = make([]*runtime.Checkpoint, 0, len(stored))
		for _, r := range stored {
			if r.base != "" {
				if err := s.rebuild(ctx, tx, r.cp, r.base, r.snap, chains); err != nil {
					return err
				}
			}
			out = append(out, r.cp)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list checkpoints of thread %q in %s: %w", threadID, s.where(), err)
	}
	return out, nil
}

// DeleteThread removes the thread's checkpoints, journals and lease in one
// statement. A run of the thread holding its lease in another process then
// fails its next write with ErrLeaseLost and learns of the loss from its
// heartbeat; the holder of a lease of this Store on it is told through its
// LeaseOptions.Lost (an error matching checkpoint.ErrThreadDeleted), every
// later write under that lease is refused, and its release does nothing.
func (s *Store) DeleteThread(ctx context.Context, threadID string) error {
	defer s.leases.Deleting(threadID)()
	if _, err := s.pool.Exec(ctx, s.q.deleteThread, threadID); err != nil {
		return fmt.Errorf("postgres: delete thread %q from %s: %w", threadID, s.where(), err)
	}
	return nil
}

// storedRow is a checkpoint row as stored: for a delta (base != ""),
// cp.Channels holds its writes and snap names its chain's snapshot.
type storedRow struct {
	cp         *runtime.Checkpoint
	base, snap string
}

// scanCheckpoint scans readColumns, then extra.
func scanCheckpoint(row pgx.Row, extra ...any) (storedRow, error) {
	var (
		cp           runtime.Checkpoint
		r            = storedRow{cp: &cp}
		step, format int64
		c            store.CheckpointColumns
	)
	if err := row.Scan(append([]any{&cp.ID, &cp.ThreadID, &cp.ParentID, &cp.PlanID, &step, &c.Created, &c.Channels, &c.Next, &c.Pending,
		&cp.Fingerprint, &format, &cp.MigratedFrom, &r.base, &r.snap}, extra...)...); err != nil {
		return r, err
	}
	cp.Step, cp.Format = int(step), int(format)
	return r, c.Decode(&cp)
}
