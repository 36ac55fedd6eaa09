package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var _ checkpoint.Pruner = (*Store)(nil)

// pruneRow is what Prune reads of a checkpoint row, and what it decides.
type pruneRow struct {
	entry      checkpoint.PruneEntry
	base, snap string
	size       int64
	full       []byte // the rebuilt channels of a kept delta whose base goes
	newSnap    string
	depth      int32
	sum        int64
	isSnapshot bool
}

// Prune drops the thread's checkpoints that opts and the rules of
// checkpoint.Pruner do not keep, in one transaction. A kept delta whose base
// goes is rewritten as a full snapshot first, and the chains of the kept
// deltas are renumbered from their new snapshots, so what is kept reads
// exactly as before. A run may go on meanwhile: the checkpoint it writes
// is newer than every one Prune looks at, and the one it continues from is
// the latest Prune saw, which stays.
func (s *Store) Prune(ctx context.Context, threadID string, opts checkpoint.PruneOptions) (int, error) {
	removed := 0
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, s.q.pruneList, threadID)
		if err != nil {
			return err
		}
		rows, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) (*pruneRow, error) {
			p := &pruneRow{}
			var created int64
			err := r.Scan(&p.entry.ID, &p.entry.ParentID, &p.entry.PlanID, &created, &p.base, &p.snap, &p.size)
			p.entry.Created = time.Unix(0, created).UTC()
			return p, err
		})
		if err != nil || len(rows) == 0 {
			return err
		}
		entries := make([]checkpoint.PruneEntry, len(rows))
		for i, r := range rows {
			entries[i] = r.entry
		}
		keep, err := checkpoint.PruneKeep(entries, opts)
		if err != nil {
			return err
		}
		// First rebuild, from the chains as they are, every kept delta
		// whose base goes; then write.
		byID := map[string]*pruneRow{}
		for _, r := range rows {
			byID[r.entry.ID] = r
			if !keep[r.entry.ID] || r.base == "" || keep[r.base] {
				continue
			}
			sr, err := s.getRow(ctx, tx, threadID, r.entry.ID)
			if err != nil {
				return err
			}
			if err := s.rebuild(ctx, tx, sr.cp, r.base, r.snap, nil); err != nil {
				return err
			}
			r.full = sr.cp.Channels
		}
		var drop []string
		for _, r := range rows {
			if !keep[r.entry.ID] {
				drop = append(drop, r.entry.ID)
				continue
			}
			switch {
			case r.full != nil:
				r.isSnapshot = true
				if _, err := tx.Exec(ctx, s.q.pruneRebase, threadID, r.entry.ID, r.full); err != nil {
					return err
				}
			case r.base == "":
				r.isSnapshot = true
			default:
				b := byID[r.base]
				r.newSnap, r.depth, r.sum = b.newSnap, b.depth+1, b.sum+r.size
				if b.isSnapshot {
					r.newSnap = b.entry.ID
				}
				if _, err := tx.Exec(ctx, s.q.pruneRenumber, threadID, r.entry.ID, r.newSnap, r.depth, r.sum); err != nil {
					return err
				}
			}
		}
		if len(drop) > 0 {
			tag, err := tx.Exec(ctx, s.q.pruneDrop, threadID, drop)
			if err != nil {
				return err
			}
			removed = int(tag.RowsAffected())
		}
		// The events before the oldest checkpoint kept go with the history.
		_, err = tx.Exec(ctx, s.q.pruneEvents, threadID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: prune thread %q in %s: %w", threadID, s.where(), err)
	}
	return removed, nil
}
