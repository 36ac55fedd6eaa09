package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

var _ checkpoint.Pruner = (*Store)(nil)

// pruneRead reads what Prune weighs of each checkpoint of thread ?, in
// order; pruneEvents drops the events of thread ?1 older than its oldest
// checkpoint.
const (
	pruneRead = "SELECT c.id, c.parent_id, coalesce(c.plan_id, c.id), coalesce(c.base_id, c.parent_id)," +
		" coalesce((SELECT s.id FROM ilmek_checkpoints s WHERE s.thread_id = c.thread_id AND s.seq = c.snap_seq AND c.snap_seq > 0), ''), c.created_ns, " +
		channelsLength + " FROM ilmek_checkpoints c WHERE c.thread_id = ? ORDER BY c.seq"
	pruneEvents = "DELETE FROM ilmek_events WHERE thread_id = ?1 AND time_ns < (SELECT min(created_ns) FROM ilmek_checkpoints WHERE thread_id = ?1)"
)

// Prune drops the thread's checkpoints that opts and the rules of
// checkpoint.Pruner do not keep, in one transaction. A kept delta whose base
// goes is rewritten as a full snapshot, and the chains of the kept deltas
// are renumbered from their new snapshots (store.Prune).
func (s *Store) Prune(ctx context.Context, threadID string, opts checkpoint.PruneOptions) (int, error) {
	removed := 0
	err := s.tx(ctx, nil, func(tx *sql.Tx) error {
		rs, err := tx.QueryContext(ctx, pruneRead, threadID)
		if err != nil {
			return err
		}
		var rows []store.PruneRow
		for rs.Next() {
			var r store.PruneRow
			var created int64
			var size sql.NullInt64
			if err := rs.Scan(&r.Entry.ID, &r.Entry.ParentID, &r.Entry.PlanID, &r.Base, &r.Snap, &created, &size); err != nil {
				rs.Close()
				return err
			}
			r.Entry.Created, r.Size = time.Unix(0, created).UTC(), size.Int64
			rows = append(rows, r)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		if removed, err = store.Prune(rows, opts, &sqlitePrune{s: s, ctx: ctx, tx: tx, thread: threadID}); err != nil {
			return err
		}
		// The events before the oldest checkpoint kept go with the history.
		_, err = tx.ExecContext(ctx, pruneEvents, threadID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune thread %q in %q: %w", threadID, s.path, err)
	}
	return removed, nil
}

// sqlitePrune is a prune's writes in its transaction (store.PruneOps).
type sqlitePrune struct {
	s      *Store
	ctx    context.Context
	tx     *sql.Tx
	thread string
}

func (p *sqlitePrune) Rebuild(id, base, snap string) ([]byte, error) {
	var writes []byte
	if err := p.tx.QueryRowContext(p.ctx, "SELECT "+rowChannels+" FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?", p.thread, id).Scan(&writes); err != nil {
		return nil, err
	}
	cp := &runtime.Checkpoint{ID: id, ThreadID: p.thread, Channels: writes}
	if err := p.s.rebuild(p.ctx, p.s.ws.in(p.ctx, p.tx, qChain), cp, base, snap, id, nil); err != nil {
		return nil, err
	}
	return cp.Channels, nil
}

func (p *sqlitePrune) Rebase(id string, full []byte) error {
	inRow, big, err := p.s.placeChannels(p.ctx, p.tx, full)
	if err != nil {
		return err
	}
	_, err = p.tx.ExecContext(p.ctx, "UPDATE ilmek_checkpoints SET channels = ?, big = ?, base_id = '', snap_seq = 0, depth = 0, chain_bytes = 0 WHERE thread_id = ? AND id = ?", inRow, big, p.thread, id)
	return err
}

func (p *sqlitePrune) Renumber(id, snap string, depth int, bytes int64) error {
	_, err := p.tx.ExecContext(p.ctx, "UPDATE ilmek_checkpoints SET snap_seq = (SELECT s.seq FROM ilmek_checkpoints s WHERE s.thread_id = ?4 AND s.id = ?1), depth = ?2, chain_bytes = ?3 WHERE thread_id = ?4 AND id = ?5", snap, depth, bytes, p.thread, id)
	return err
}

func (p *sqlitePrune) Drop(ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		res, err := p.tx.ExecContext(p.ctx, "DELETE FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?", p.thread, id)
		if err != nil {
			return n, err
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	return n, nil
}
