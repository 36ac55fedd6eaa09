package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// PutDelta stores cp as the delta d of checkpoint d.Base (a row whose
// channels column holds d's writes), or, when the chain since the last
// full snapshot reaches the Compact limits, as a full snapshot rebuilt
// from the chain; and drops the journals of done, in one transaction,
// unleased (a run commits through its lease). Snapshots are new rows: no
// stored row is rewritten, so a concurrent reader never sees a chain half
// compacted.
func (s *Store) PutDelta(ctx context.Context, cp *runtime.Checkpoint, d checkpoint.Delta, done []string) error {
	return s.putUnleased(ctx, cp, &d, done)
}

// fastDeltaArgs returns the arguments of qInsertDelta for cp, the delta d
// whose encoded writes are writes, args its checkpointArgs; or nil when
// the delta is too large for its row (bigChannels), which deltaArgs and
// putTx store apart.
func (s *Store) fastDeltaArgs(cp *runtime.Checkpoint, d checkpoint.Delta, args []any, writes []byte) []any {
	if len(writes) > bigChannels {
		return nil
	}
	// The least a chain may hold before a snapshot is due: with no
	// snapshot bytes, the adaptive rule's floor.
	c := s.opts.compact.WithDefaults()
	limit := c.Bytes
	if limit == 0 {
		limit = checkpoint.MinCompactionBytes
	}
	fast := make([]any, 0, 17)
	fast = append(fast, args[:6]...)
	return append(fast, writes, args[7], args[8], args[9], args[10], args[11], baseArg(cp, d), d.Base, d.Size(), c.Every, limit)
}

// fastDelta inserts a delta in one statement (q: qInsertDelta, or
// qInsertDeltaFenced with the lease's owner last in args; args from
// fastDeltaArgs) and reports whether it did. It did not when the base is
// missing, when a snapshot may be due, when the graph's version has no
// row yet, or (fenced) when the lease is not the writer's: the fence and
// deltaArgs' way then find which, and write the checkpoint or say why
// not.
func (s *Store) fastDelta(ctx context.Context, tx *sql.Tx, q string, args []any) (bool, error) {
	res, err := s.ws.in(ctx, tx, q).ExecContext(ctx, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// baseArg is a delta row's base_id: nil when the delta is of cp's parent
// (implied), else the base's id.
func baseArg(cp *runtime.Checkpoint, d checkpoint.Delta) any {
	if d.Base == cp.ParentID {
		return nil
	}
	return d.Base
}

// deltaArgs completes args (checkpointArgs, with the delta's encoded
// writes as its channels) for a delta of d.Base, read in tx: the chain's
// snapshot, depth and bytes; or, when the chain reaches the Compact
// limits, a full snapshot rebuilt from the chain.
func (s *Store) deltaArgs(ctx context.Context, tx *sql.Tx, cp *runtime.Checkpoint, d checkpoint.Delta, args []any) error {
	var (
		baseDelta            bool
		baseSeq, baseSnapSeq int64
		depth, chainBytes    int
		snapBytes            sql.NullInt64
	)
	err := s.ws.in(ctx, tx, qDeltaBase).QueryRowContext(ctx, cp.ThreadID, d.Base).Scan(&baseDelta, &baseSeq, &baseSnapSeq, &depth, &chainBytes, &snapBytes)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("its base checkpoint %s: %w", d.Base, runtime.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read its base checkpoint %s: %w", d.Base, err)
	}
	size := d.Size()
	snapSeq, snapID := baseSeq, d.Base // the base is a snapshot: the chain starts there
	if baseDelta {
		snapSeq, snapID = baseSnapSeq, ""
	}
	base := baseArg(cp, d)
	args[12], args[13], args[14], args[15] = base, snapSeq, depth+1, chainBytes+size
	if baseDelta {
		// What was read is the base's own size, not its snapshot's.
		snapBytes = sql.NullInt64{}
		// The snapshot's size and id are read only when a snapshot may be
		// due: with no snapshot bytes the rule asks the least of the chain
		// (Every deltas, Bytes, or MinCompactionBytes when adaptive), so a
		// chain it leaves as a delta stays one whatever the snapshot's
		// size, and most supersteps skip this read. A compaction reads the
		// chain from the snapshot; the adaptive rule weighs the chain
		// against it.
		if s.opts.compact.Snapshot(depth, chainBytes, size, 0) {
			if err := s.ws.in(ctx, tx, qSnapBytes).QueryRowContext(ctx, cp.ThreadID, baseSnapSeq).Scan(&snapID, &snapBytes); err != nil {
				return fmt.Errorf("read the snapshot of its chain: %w", err)
			}
		}
	}
	if s.opts.compact.Snapshot(depth, chainBytes, size, int(snapBytes.Int64)) {
		full := &runtime.Checkpoint{ID: cp.ID, ThreadID: cp.ThreadID, Channels: args[6].([]byte)}
		if err := s.rebuild(ctx, s.ws.in(ctx, tx, qChain), full, d.Base, snapID, d.Base, nil); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
		args[6], args[12], args[13], args[14], args[15] = []byte(full.Channels), "", 0, 0, 0
	}
	return nil
}
