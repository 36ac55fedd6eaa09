package workers

import (
	"context"
	"fmt"
)

// earlierRunCommitted reports whether a run of an earlier claim of c's
// request wrote anything to its thread. A run's events commit with its
// checkpoints (and its outcome) in one statement, so a run that has none
// stored never got past its first commit: its worker died before it, and
// the request's input is not in the thread yet. The store's Prune keeps
// the events of the runs of requests still queued or running, so this
// holds however the thread's history is trimmed meanwhile.
//
// It is asked only when the thread moved since the request's first claim
// noted it (base_cp), which a claim's run that committed, or another
// writer, did.
func (w *Worker) earlierRunCommitted(ctx context.Context, c *claimed) (bool, error) {
	var ok bool
	err := w.q.store.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+w.q.t("ilmek_requests")+` r, unnest(r.run_ids) AS x(run_id)
		WHERE r.id = $1 AND x.run_id <> $2 AND EXISTS (SELECT 1 FROM `+w.q.t("ilmek_events")+` e WHERE e.run_id = x.run_id))`, c.id, c.runID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("workers: read whether request %d's earlier runs wrote to thread %q: %w", c.id, c.thread, err)
	}
	return ok, nil
}
