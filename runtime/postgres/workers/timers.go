package workers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
)

// kindWake is the stored kind of a request that wakes a parked thread (a
// timer of runtime.Sleep or runtime.Until) or an interrupted one whose
// deadline (runtime.WithTimeout) passed. Workers queue it themselves
// (QueueDueWakes); it runs runtime's Thread.Wake under the thread's lease.
const kindWake = "wake"

// QueueDueWakes queues one wake request for each thread that is parked or
// interrupted with a timer or deadline that has passed and has no request
// queued or running, and returns their ids. The request runs on the graph
// of the thread's latest request, in its partition and at its priority
// (first among that priority's requests: its fair sequence number is 0) (a thread no request ever ran is left to
// runtime/waker or to its application). Workers call it every poll; any
// number of them may race: a thread has at most one active wake request
// (migration 7), and Thread.Wake refuses a thread with nothing due under
// its lease, so a thread is woken once. A wake is queued under the
// thread's lock (the one Submit and Cancel take), with the thread read
// again once the lock is held, so a Cancel that marks the thread aborted
// meanwhile is not followed by a wake; a thread whose lock another
// transaction holds is left to the next scan.
func (q *Queue) QueueDueWakes(ctx context.Context) ([]int64, error) {
	r, t := q.t("ilmek_requests"), q.t("ilmek_threads")
	// due is the condition of a thread to wake, on the row t.
	due := `t.status IN ('parked', 'interrupted') AND t.pending IS NOT NULL
		AND EXISTS (SELECT 1 FROM jsonb_array_elements(convert_from(t.pending, 'UTF8')::jsonb) p
			WHERE jsonb_typeof(p) = 'object' AND p ? 'wake_at' AND (p->>'wake_at')::timestamptz <= clock_timestamp())
		AND NOT EXISTS (SELECT 1 FROM ` + r + ` a WHERE a.thread_id = t.thread_id AND a.state IN ('queued', 'running'))`
	fail := func(err error) ([]int64, error) {
		return nil, fmt.Errorf("workers: queue the wakes of due timers in schema %q: %w", q.store.SchemaName(), err)
	}
	// The scan reads without locks: most scans find nothing.
	rows, err := q.store.Pool().Query(ctx, `SELECT t.thread_id FROM `+t+` t WHERE `+due+`
		AND EXISTS (SELECT 1 FROM `+r+` g WHERE g.thread_id = t.thread_id) ORDER BY t.thread_id`)
	if err != nil {
		return fail(err)
	}
	threads, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fail(err)
	}
	if len(threads) == 0 {
		return nil, nil
	}
	var ids []int64
	err = pgx.BeginFunc(ctx, q.store.Pool(), func(tx pgx.Tx) error {
		// Each thread's lock, as Submit and Cancel take it; one held
		// elsewhere is skipped, not waited for.
		rows, err := tx.Query(ctx, `SELECT th FROM unnest($2::text[]) th WHERE pg_try_advisory_xact_lock(hashtextextended($1 || '/' || th, 1))`, q.s, threads)
		if err != nil {
			return err
		}
		locked, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(locked) == 0 {
			return err
		}
		// A statement of its own, so that it sees what a transaction that
		// held a lock committed before this one got it (a Cancel).
		rows, err = tx.Query(ctx, `WITH due AS (
				SELECT t.thread_id, l.graph, l.partition_key, l.priority
				FROM `+t+` t LEFT JOIN LATERAL (SELECT g.graph, g.partition_key, g.priority FROM `+r+` g WHERE g.thread_id = t.thread_id ORDER BY g.id DESC LIMIT 1) l ON true
				WHERE t.thread_id = ANY($1::text[]) AND `+due+`),
			ins AS (INSERT INTO `+r+` (thread_id, graph, kind, policy, partition_key, priority)
				SELECT thread_id, graph, 'wake', 'enqueue', partition_key, priority FROM due WHERE graph IS NOT NULL
				ON CONFLICT DO NOTHING RETURNING id)
			SELECT id FROM ins ORDER BY id`, locked)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	if err != nil {
		return fail(err)
	}
	for _, id := range ids {
		q.local.submittedHere(id)
	}
	return ids, nil
}

// minTimerScan is the shortest interval between a worker's scans for due
// timers, however short its Poll: a scan reads every waiting thread.
const minTimerScan = 100 * time.Millisecond

// scanTimers queues the wakes of due timers every interval until ctx is
// done, waking the claim loop when it queued any.
func (w *Worker) scanTimers(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ids, err := w.q.QueueDueWakes(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !transient(err):
			w.opts.logger.Warn("queue the wakes of due timers", "err", err)
		case len(ids) > 0:
			w.opts.logger.Info("timers due", "requests", len(ids))
			// The other workers hear of them at their next poll or scan.
			_, _ = w.q.store.Pool().Exec(ctx, "SELECT pg_notify($1, $2)", w.q.ch, noteNew+strconv.FormatInt(ids[len(ids)-1], 10))
			signal(w.wake)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// notDue reports whether err is Thread.Wake's refusal of a thread with
// nothing due (woken already, answered, deleted or cancelled).
func notDue(err error) bool {
	return errors.Is(err, runtime.ErrNotDue) || errors.Is(err, runtime.ErrNotInterrupted)
}

// finishNotDue records a wake request whose thread had nothing due: an
// earlier claim of it woke the thread before its worker died (the thread
// moved past the request's base, and the event log holds that claim's
// run: its outcome is recorded), or a person answered, resumed, cancelled
// or deleted the thread first (the request ends cancelled, and nothing
// ran), also when an earlier claim's worker died before its run wrote.
//
// Whether the thread moved past the request's base is asked of the thread
// as it is now, not as the claim found it: an earlier claim's run whose
// worker still lives (its claim expired, not its lease) may have woken
// the thread and parked it again after the claim read it and before this
// claim's run took the lease.
func (w *Worker) finishNotDue(ctx context.Context, c *claimed, g Runnable, why error) {
	if c.baseCP != nil {
		out, at, ended, err := g.ended(ctx, w.q.store, c.thread)
		if err == nil && *c.baseCP != at {
			committed, err := w.earlierRunCommitted(ctx, c)
			if err != nil {
				w.releaseRefused(c, err) // nothing ran: a later claim asks again
				return
			}
			if committed && ended {
				w.finish(c, string(out.Status), &out, "")
				return
			}
		}
	}
	msg := "nothing was due: " + why.Error()
	w.opts.logger.Info("timer dropped: its thread has nothing due", "request", c.id, "thread", c.thread, "graph", c.graph, "err", why)
	w.event(ctx, Event{Kind: EventTimerDropped, Request: c.id, Thread: c.thread, Graph: c.graph, Partition: c.partition, Claim: c.claim, Error: msg})
	w.finish(c, "cancelled", nil, msg)
}

// cancelTimers marks the thread aborted when it is parked, so that no
// worker wakes it later (the scan takes parked and interrupted threads
// only); it reports whether it did.
func cancelTimers(ctx context.Context, tx pgx.Tx, q *Queue, thread string) (bool, error) {
	tag, err := tx.Exec(ctx, "UPDATE "+q.t("ilmek_threads")+" SET status = 'aborted', error = 'cancelled while parked' WHERE thread_id = $1 AND status = 'parked'", thread)
	return tag.RowsAffected() > 0, err
}
