package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var _ checkpoint.Pruner = (*Store)(nil)

// pruneRow is what Prune reads of a checkpoint row.
type pruneRow struct {
	id, parent, plan, base, snap string
	created                      int64
	size                         int
	// after pruning
	full       []byte // the rebuilt channels of a delta whose base goes
	depth, sum int
	newSnap    string
	isSnapshot bool
}

// Prune drops the thread's checkpoints that opts and the rules of
// checkpoint.Pruner do not keep, in one transaction. A kept delta whose base
// goes is rewritten as a full snapshot, and the chains of the kept deltas
// are renumbered from their new snapshots.
func (s *Store) Prune(ctx context.Context, threadID string, opts checkpoint.PruneOptions) (int, error) {
	removed := 0
	err := s.tx(ctx, nil, func(tx *sql.Tx) error {
		rs, err := tx.QueryContext(ctx, "SELECT id, parent_id, plan_id, base_id, snap_id, created_ns, length(channels) FROM ilmek_checkpoints WHERE thread_id = ? ORDER BY seq", threadID)
		if err != nil {
			return err
		}
		var rows []*pruneRow
		for rs.Next() {
			r := &pruneRow{}
			var size sql.NullInt64
			if err := rs.Scan(&r.id, &r.parent, &r.plan, &r.base, &r.snap, &r.created, &size); err != nil {
				rs.Close()
				return err
			}
			r.size = int(size.Int64)
			rows = append(rows, r)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		entries := make([]checkpoint.PruneEntry, len(rows))
		for i, r := range rows {
			entries[i] = checkpoint.PruneEntry{ID: r.id, ParentID: r.parent, PlanID: r.plan, Created: time.Unix(0, r.created).UTC()}
		}
		keep, err := checkpoint.PruneKeep(entries, opts)
		if err != nil {
			return err
		}
		// First rebuild, from the chains as they are, every kept delta
		// whose base goes; then write.
		chain := s.ws.in(ctx, tx, qChain)
		byID := map[string]*pruneRow{}
		for _, r := range rows {
			byID[r.id] = r
			if !keep[r.id] || r.base == "" || keep[r.base] {
				continue
			}
			var writes []byte
			if err := tx.QueryRowContext(ctx, "SELECT channels FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?", threadID, r.id).Scan(&writes); err != nil {
				return err
			}
			cp := &runtime.Checkpoint{ID: r.id, ThreadID: threadID, Channels: writes}
			if err := s.rebuild(ctx, chain, cp, r.base, r.snap, nil); err != nil {
				return err
			}
			r.full = cp.Channels
		}
		for _, r := range rows {
			if !keep[r.id] {
				if _, err := tx.ExecContext(ctx, "DELETE FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?", threadID, r.id); err != nil {
					return err
				}
				removed++
				continue
			}
			switch {
			case r.full != nil:
				r.isSnapshot = true
				if _, err := tx.ExecContext(ctx, "UPDATE ilmek_checkpoints SET channels = ?, base_id = '', snap_id = '', depth = 0, chain_bytes = 0 WHERE thread_id = ? AND id = ?", r.full, threadID, r.id); err != nil {
					return err
				}
			case r.base == "":
				r.isSnapshot = true
			default:
				b := byID[r.base]
				r.newSnap, r.depth, r.sum = b.newSnap, b.depth+1, b.sum+r.size
				if b.isSnapshot {
					r.newSnap = b.id
				}
				if _, err := tx.ExecContext(ctx, "UPDATE ilmek_checkpoints SET snap_id = ?, depth = ?, chain_bytes = ? WHERE thread_id = ? AND id = ?", r.newSnap, r.depth, r.sum, threadID, r.id); err != nil {
					return err
				}
			}
		}
		// The events before the oldest checkpoint kept go with the history.
		_, err = tx.ExecContext(ctx, "DELETE FROM ilmek_events WHERE thread_id = ?1 AND time_ns < (SELECT min(created_ns) FROM ilmek_checkpoints WHERE thread_id = ?1)", threadID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune thread %q in %q: %w", threadID, s.path, err)
	}
	return removed, nil
}
