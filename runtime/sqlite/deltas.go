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
	var base any = d.Base
	if d.Base == cp.ParentID {
		base = nil // the parent: implied
	}
	args[12], args[13], args[14], args[15] = base, snapSeq, depth+1, chainBytes+size
	if baseDelta && (s.opts.compact.Bytes == 0 || s.opts.compact.Snapshot(depth, chainBytes, size, 0)) {
		// The adaptive rule weighs the chain against its snapshot; a
		// compaction reads the chain from it.
		if err := s.ws.in(ctx, tx, qSnapBytes).QueryRowContext(ctx, cp.ThreadID, baseSnapSeq).Scan(&snapID, &snapBytes); err != nil {
			return fmt.Errorf("read the snapshot of its chain: %w", err)
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
