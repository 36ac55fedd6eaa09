package store

import "github.com/ilmek-go/ilmek/runtime/checkpoint"

// PruneRow is one stored checkpoint as a prune reads it, in the order the
// thread's checkpoints were stored.
type PruneRow struct {
	Entry checkpoint.PruneEntry
	// Base is the checkpoint a delta row changes ("" for a snapshot), Snap
	// the snapshot its chain starts at, Size its delta bytes.
	Base, Snap string
	Size       int64
}

// PruneOps are a store's writes of one prune, in its transaction.
type PruneOps interface {
	// Rebuild returns the full channels of the kept delta id, whose base
	// goes, read from the chain as it is.
	Rebuild(id, base, snap string) ([]byte, error)
	// Rebase rewrites id as a full snapshot of channels full.
	Rebase(id string, full []byte) error
	// Renumber sets a kept delta's chain snapshot, depth and delta bytes.
	Renumber(id, snap string, depth int, bytes int64) error
	// Drop deletes the checkpoints ids and returns how many it deleted.
	Drop(ids []string) (int, error)
}

// Prune applies the prune rules (checkpoint.PruneKeep) to rows through ops:
// first every kept delta whose base goes is rebuilt from the chains as they
// are, then it is rewritten as a snapshot, the chains of the kept deltas are
// renumbered from their new snapshots, and the others are dropped. It
// returns how many were dropped.
func Prune(rows []PruneRow, opts checkpoint.PruneOptions, ops PruneOps) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	entries := make([]checkpoint.PruneEntry, len(rows))
	for i, r := range rows {
		entries[i] = r.Entry
	}
	keep, err := checkpoint.PruneKeep(entries, opts)
	if err != nil {
		return 0, err
	}
	type state struct {
		full       []byte
		snap       string
		depth      int
		sum        int64
		isSnapshot bool
	}
	st := make(map[string]*state, len(rows))
	for _, r := range rows {
		s := &state{}
		st[r.Entry.ID] = s
		if !keep[r.Entry.ID] || r.Base == "" || keep[r.Base] {
			continue
		}
		if s.full, err = ops.Rebuild(r.Entry.ID, r.Base, r.Snap); err != nil {
			return 0, err
		}
	}
	var drop []string
	for _, r := range rows {
		id, s := r.Entry.ID, st[r.Entry.ID]
		switch {
		case !keep[id]:
			drop = append(drop, id)
		case s.full != nil:
			s.isSnapshot = true
			if err := ops.Rebase(id, s.full); err != nil {
				return 0, err
			}
		case r.Base == "":
			s.isSnapshot = true
		default:
			b := st[r.Base]
			s.snap, s.depth, s.sum = b.snap, b.depth+1, b.sum+r.Size
			if b.isSnapshot {
				s.snap = r.Base
			}
			if err := ops.Renumber(id, s.snap, s.depth, s.sum); err != nil {
				return 0, err
			}
		}
	}
	if len(drop) == 0 {
		return 0, nil
	}
	return ops.Drop(drop)
}
