package checkpoint

import (
	"context"
	"errors"
	"time"
)

// PruneOptions say which of a thread's checkpoints Prune keeps besides
// those it always keeps (see Pruner). At least one rule must be set.
type PruneOptions struct {
	// KeepLast keeps the thread's newest KeepLast checkpoints (in the
	// order they were stored); 0 sets no count rule.
	KeepLast int
	// KeepAfter keeps the checkpoints created after it; the zero time sets
	// no time rule.
	KeepAfter time.Time
}

// ErrPruneOptions is matched by the error of Prune called with neither
// KeepLast nor KeepAfter: it would keep only what is always kept, which is
// more likely a mistake than a wish.
var ErrPruneOptions = errors.New("prune options keep nothing by count or time: set KeepLast or KeepAfter")

// Pruner is a Checkpointer that can drop a thread's old checkpoints
// (Memory, the SQLite and the PostgreSQL stores implement it). Prune keeps
// a checkpoint when a rule of opts keeps it or when it is one of these,
// always kept:
//
//  1. the thread's latest checkpoint (what the next run continues);
//  2. every tip of a branch: a checkpoint no checkpoint names as its
//     parent. A thread forked with Thread.Fork keeps each branch's
//     newest state, so each can still be continued, and every pause that
//     can still be answered (a tip's pending interrupts) stays;
//  3. every fork point: a checkpoint two or more checkpoints name as their
//     parent;
//  4. the plan checkpoint (Checkpoint.PlanID) of every checkpoint kept, as
//     task ids and journals derive from it.
//
// A kept checkpoint stored as a delta of one that goes is rebuilt into a
// full snapshot first, in the same transaction, so what remains reads
// exactly as before; the storage a pruned thread takes is then about its
// live state plus the kept deltas. Journals are not touched (a finished
// superstep's journals are dropped when it commits). Parent ids of kept
// checkpoints may name checkpoints that are gone: List shows what is kept.
type Pruner interface {
	// Prune drops the thread's checkpoints that opts and the rules above
	// do not keep, in one atomic commit, and returns how many it dropped.
	Prune(ctx context.Context, threadID string, opts PruneOptions) (int, error)
}

// PruneEntry is what the prune rules look at of one checkpoint.
type PruneEntry struct {
	ID, ParentID, PlanID string
	Created              time.Time
}

// PruneKeep applies the prune rules (Pruner) to a thread's checkpoints,
// given in the order they were stored, and returns the ids to keep. For
// backends.
func PruneKeep(cps []PruneEntry, opts PruneOptions) (map[string]bool, error) {
	if opts.KeepLast <= 0 && opts.KeepAfter.IsZero() {
		return nil, ErrPruneOptions
	}
	keep := map[string]bool{}
	children := map[string]int{}
	for _, c := range cps {
		if c.ParentID != "" {
			children[c.ParentID]++
		}
	}
	for i, c := range cps {
		switch {
		case i == len(cps)-1,
			opts.KeepLast > 0 && i >= len(cps)-opts.KeepLast,
			!opts.KeepAfter.IsZero() && c.Created.After(opts.KeepAfter),
			children[c.ID] == 0, // a branch tip, with its open interrupts
			children[c.ID] >= 2:
			keep[c.ID] = true
		}
	}
	for _, c := range cps {
		if keep[c.ID] && c.PlanID != "" {
			keep[c.PlanID] = true
		}
	}
	return keep, nil
}
