package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// PutDelta stores cp as the delta d of checkpoint d.Base (a row whose
// channels column holds d's writes), or, when the chain since the last
// full snapshot reaches the Compact limits, as a full snapshot rebuilt
// from the chain; and drops the journals of done, in one transaction.
// Snapshots are new rows: no stored row is rewritten, so a concurrent
// reader never sees a chain half compacted.
func (s *Store) PutDelta(ctx context.Context, cp *runtime.Checkpoint, d checkpoint.Delta, done []string) error {
	if cp == nil || cp.ID == "" {
		return fmt.Errorf("sqlite: PutDelta on %q: the checkpoint is nil or has no ID", s.path)
	}
	writes, err := json.Marshal(d.Writes)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q: encode its delta: %w", cp.ID, cp.ThreadID, err)
	}
	next, err := json.Marshal(cp.Next)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q: encode next tasks: %w", cp.ID, cp.ThreadID, err)
	}
	pending, err := json.Marshal(cp.Pending)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q: encode pending interrupts: %w", cp.ID, cp.ThreadID, err)
	}
	var created int64
	if !cp.Created.IsZero() {
		created = cp.Created.UnixNano()
	}
	err = s.tx(ctx, cp.ThreadID, func(tx *sql.Tx) error {
		var (
			baseBase, baseSnap string
			depth, chainBytes  int
			snapBytes          sql.NullInt64
		)
		err := s.ws.in(ctx, tx, qDeltaBase).QueryRowContext(ctx, cp.ThreadID, d.Base).Scan(&baseBase, &baseSnap, &depth, &chainBytes, &snapBytes)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("its base checkpoint %s: %w", d.Base, runtime.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read its base checkpoint %s: %w", d.Base, err)
		}
		size := d.Size()
		args := []any{cp.ID, cp.ThreadID, cp.ParentID, cp.PlanID, cp.Step, created, writes, next, pending, cp.Fingerprint, cp.Format, cp.MigratedFrom,
			d.Base, baseSnap, depth + 1, chainBytes + size}
		if baseBase == "" {
			args[13] = d.Base // the base is a snapshot: the chain starts there
		}
		if baseBase != "" && s.opts.compact.Bytes == 0 {
			// The adaptive rule weighs the chain against its snapshot.
			if err := s.ws.in(ctx, tx, qSnapBytes).QueryRowContext(ctx, cp.ThreadID, baseSnap).Scan(&snapBytes); err != nil {
				return fmt.Errorf("read the snapshot %s of its chain: %w", baseSnap, err)
			}
		}
		if s.opts.compact.Snapshot(depth, chainBytes, size, int(snapBytes.Int64)) {
			full := &runtime.Checkpoint{ID: cp.ID, ThreadID: cp.ThreadID, Channels: writes}
			if err := s.rebuild(ctx, s.ws.in(ctx, tx, qChain), full, d.Base, args[13].(string), nil); err != nil {
				return fmt.Errorf("compact: %w", err)
			}
			args[6], args[12], args[13], args[14], args[15] = []byte(full.Channels), "", "", 0, 0
		}
		return s.putTx(ctx, tx, args, cp.ThreadID, done)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q as a delta of %s in %q: %w", cp.ID, cp.ThreadID, d.Base, s.path, err)
	}
	return nil
}
