package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

var _ checkpoint.DeltaCheckpointer = (*Store)(nil)

// querier is what reads need of a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// readTx runs fn in a read-only transaction that sees one snapshot of the
// database (REPEATABLE READ).
func (s *Store) readTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// rebuild sets cp.Channels, which holds cp's writes on entry, to the full
// channels (store.Rebuild), reading the chain with q.
func (s *Store) rebuild(ctx context.Context, q querier, cp *runtime.Checkpoint, base, snap string, chains store.Chains) error {
	return store.Rebuild(cp, base, snap, chains, func() (store.Rows, func(), error) {
		rs, err := q.Query(ctx, s.q.chain, cp.ThreadID, snap)
		if err != nil {
			return nil, nil, err
		}
		return rs, rs.Close, nil
	})
}

// PutDelta stores cp as the delta d of checkpoint d.Base (a row whose
// channels hold d's writes), or, when the chain since the last full
// snapshot reaches the Compact limits, as a full snapshot rebuilt from the
// chain; and drops the journals of done, in one transaction, unleased (a
// run commits through its lease). Snapshots are new rows: no stored row is
// rewritten, so a concurrent reader never sees a chain half compacted.
func (s *Store) PutDelta(ctx context.Context, cp *runtime.Checkpoint, d checkpoint.Delta, done []string) error {
	return s.putDeltaOn(ctx, s.pool, cp, d, done, nil)
}

// putDeltaOn is PutDelta on db (the pool or a commit's transaction),
// fenced by l's epoch when l is not nil.
func (s *Store) putDeltaOn(ctx context.Context, db txer, cp *runtime.Checkpoint, d checkpoint.Delta, done []string, l *heldLease) error {
	if cp == nil || cp.ID == "" {
		return fmt.Errorf("postgres: PutDelta in %s: the checkpoint is nil or has no ID", s.where())
	}
	fail := func(err error) error {
		return fmt.Errorf("postgres: put checkpoint %s of thread %q as a delta of %s in %s: %w", cp.ID, cp.ThreadID, d.Base, s.where(), err)
	}
	writes, err := json.Marshal(d.Writes)
	if err != nil {
		return fail(fmt.Errorf("encode its delta: %w", err))
	}
	c, err := store.EncodeCheckpoint(cp)
	if err != nil {
		return fail(err)
	}
	next, pending, created := c.Next, c.Pending, c.Created
	if l != nil {
		if err := l.Refused(); err != nil {
			return fail(err)
		}
	}
	if done == nil {
		done = []string{}
	}
	// The common case, one statement: a delta row under the limits.
	cmp := s.opts.compact.WithDefaults()
	args := []any{cp.ID, cp.ThreadID, cp.ParentID, cp.PlanID, cp.Step, created, writes, next, pending, cp.Fingerprint, cp.Format, cp.MigratedFrom,
		d.Base, cmp.Every, d.Size(), cmp.Bytes, checkpoint.MinCompactionBytes, done}
	q := s.q.deltaFast
	if l != nil {
		q, args = s.q.deltaFastFenced, append(args, l.epoch)
	}
	err = s.putDelta(ctx, db, cp, d, l, q, args, writes, next, pending, created, done)
	if err != nil {
		return fail(err)
	}
	return nil
}

// putDelta is PutDelta's write on db (the pool, or the transaction that
// also records the thread).
func (s *Store) putDelta(ctx context.Context, db txer, cp *runtime.Checkpoint, d checkpoint.Delta, l *heldLease, q string, args []any,
	writes, next, pending []byte, created int64, done []string) error {
	var fenced, found, inserted int
	if err := db.QueryRow(ctx, q, args...).Scan(&fenced, &found, &inserted); err != nil {
		return err
	}
	switch {
	case fenced == 0:
		return l.lost()
	case found == 0:
		return fmt.Errorf("its base checkpoint %s: %w", d.Base, runtime.ErrNotFound)
	case inserted == 1:
		return nil
	}
	// The chain reached the limits: store a full snapshot instead.
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if l != nil {
			// Holding the lease row FOR SHARE until commit makes a
			// takeover wait for this write, and this write fail after one.
			var one int
			if err := tx.QueryRow(ctx, s.q.fenceShare, cp.ThreadID, l.epoch).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
				return l.lost()
			} else if err != nil {
				return err
			}
		}
		var (
			baseBase, baseSnap string
			depth              int32
			chainBytes         int64
		)
		err := tx.QueryRow(ctx, s.q.deltaBase, cp.ThreadID, d.Base).Scan(&baseBase, &baseSnap, &depth, &chainBytes)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("its base checkpoint %s: %w", d.Base, runtime.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read its base checkpoint %s: %w", d.Base, err)
		}
		if baseBase == "" {
			baseSnap = d.Base // the base is a snapshot: the chain starts there
		}
		size := d.Size()
		var snapBytes int64
		if baseBase != "" && s.opts.compact.Bytes == 0 {
			// The adaptive rule weighs the chain against its snapshot.
			if err := tx.QueryRow(ctx, s.q.snapBytes, cp.ThreadID, baseSnap).Scan(&snapBytes); err != nil {
				return fmt.Errorf("read the snapshot %s of its chain: %w", baseSnap, err)
			}
		}
		args := []any{cp.ID, cp.ThreadID, cp.ParentID, cp.PlanID, cp.Step, created, writes, next, pending, cp.Fingerprint, cp.Format, cp.MigratedFrom,
			d.Base, baseSnap, depth + 1, chainBytes + int64(size)}
		if s.opts.compact.Snapshot(int(depth), int(chainBytes), size, int(snapBytes)) {
			full := &runtime.Checkpoint{ID: cp.ID, ThreadID: cp.ThreadID, Channels: writes}
			if err := s.rebuild(ctx, tx, full, d.Base, baseSnap, nil); err != nil {
				return fmt.Errorf("compact: %w", err)
			}
			args[6], args[12], args[13], args[14], args[15] = []byte(full.Channels), "", "", int32(0), int64(0)
		}
		if _, err := tx.Exec(ctx, s.q.insertDelta, args...); err != nil {
			return err
		}
		if len(done) > 0 {
			if _, err := tx.Exec(ctx, s.q.dropJournals, cp.ThreadID, done); err != nil {
				return err
			}
		}
		return nil
	})
}
