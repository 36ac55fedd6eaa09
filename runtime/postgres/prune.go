package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

var _ checkpoint.Pruner = (*Store)(nil)

// Prune drops the thread's checkpoints that opts and the rules of
// checkpoint.Pruner do not keep, in one transaction. A kept delta whose base
// goes is rewritten as a full snapshot first, and the chains of the kept
// deltas are renumbered from their new snapshots (store.Prune), so what is
// kept reads exactly as before. A run may go on meanwhile: the checkpoint
// it writes is newer than every one Prune looks at, and the one it
// continues from is the latest Prune saw, which stays.
func (s *Store) Prune(ctx context.Context, threadID string, opts checkpoint.PruneOptions) (int, error) {
	removed := 0
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, s.q.pruneList, threadID)
		if err != nil {
			return err
		}
		rows, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) (store.PruneRow, error) {
			var p store.PruneRow
			var created int64
			err := r.Scan(&p.Entry.ID, &p.Entry.ParentID, &p.Entry.PlanID, &created, &p.Base, &p.Snap, &p.Size)
			p.Entry.Created = time.Unix(0, created).UTC()
			return p, err
		})
		if err != nil {
			return err
		}
		if removed, err = store.Prune(rows, opts, &pgPrune{s: s, ctx: ctx, tx: tx, thread: threadID}); err != nil {
			return err
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

// pgPrune is a prune's writes in its transaction (store.PruneOps).
type pgPrune struct {
	s      *Store
	ctx    context.Context
	tx     pgx.Tx
	thread string
}

func (p *pgPrune) Rebuild(id, base, snap string) ([]byte, error) {
	sr, err := p.s.getRow(p.ctx, p.tx, p.thread, id)
	if err != nil {
		return nil, err
	}
	if err := p.s.rebuild(p.ctx, p.tx, sr.cp, base, snap, nil); err != nil {
		return nil, err
	}
	return sr.cp.Channels, nil
}

func (p *pgPrune) Rebase(id string, full []byte) error {
	_, err := p.tx.Exec(p.ctx, p.s.q.pruneRebase, p.thread, id, full)
	return err
}

func (p *pgPrune) Renumber(id, snap string, depth int, bytes int64) error {
	_, err := p.tx.Exec(p.ctx, p.s.q.pruneRenumber, p.thread, id, snap, int32(depth), bytes)
	return err
}

func (p *pgPrune) Drop(ids []string) (int, error) {
	tag, err := p.tx.Exec(p.ctx, p.s.q.pruneDrop, p.thread, ids)
	return int(tag.RowsAffected()), err
}
