package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
)

var _ runtime.Pruner = (*Store)(nil)

// Prune drops the thread's checkpoints that opts and the rules of
// runtime.Pruner do not keep, in one transaction. Every checkpoint here is
// a full snapshot, so what is kept reads exactly as before. A run may go on
// meanwhile: the checkpoint it writes is newer than every one Prune looks
// at, and the one it continued from is the latest Prune saw, which stays.
func (s *Store) Prune(ctx context.Context, threadID string, opts runtime.PruneOptions) (int, error) {
	removed := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.q.pruneList, threadID)
		if err != nil {
			return err
		}
		entries, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (runtime.PruneEntry, error) {
			var e runtime.PruneEntry
			var created int64
			err := r.Scan(&e.ID, &e.ParentID, &e.PlanID, &created)
			e.Created = time.Unix(0, created).UTC()
			return e, err
		})
		if err != nil || len(entries) == 0 {
			return err
		}
		keep, err := runtime.PruneKeep(entries, opts)
		if err != nil {
			return err
		}
		var drop []string
		for _, e := range entries {
			if !keep[e.ID] {
				drop = append(drop, e.ID)
			}
		}
		if len(drop) == 0 {
			return nil
		}
		tag, err := tx.Exec(ctx, s.q.pruneDrop, threadID, drop)
		removed = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: prune thread %q in %s: %w", threadID, s.where(), err)
	}
	return removed, nil
}
