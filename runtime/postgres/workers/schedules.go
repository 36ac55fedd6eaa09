package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// DefaultScheduleGrace is how late a schedule's tick may be fired and
// still count as on time, unless ScheduleGrace says otherwise: a tick
// older than that when a worker first sees it was missed (no worker ran)
// and follows the schedule's catch-up policy.
const DefaultScheduleGrace = 10 * time.Second

// ScheduleGrace sets how late a tick still fires as on time (default
// DefaultScheduleGrace); older ticks follow the schedule's catch-up
// policy (checkpoint.Schedule.CatchUp).
func ScheduleGrace(d time.Duration) WorkerOption { return func(o *workerOptions) { o.grace = d } }

// OnFiring sets a function told of each schedule tick a worker fired or
// skipped, once the firing is committed (the otel module's
// ScheduleFirings records them as spans and metrics).
func OnFiring(f func(context.Context, checkpoint.Firing)) WorkerOption {
	return func(o *workerOptions) { o.onFiring = f }
}

// FireDueSchedules fires the store's due schedules (checkpoint.Schedule,
// created through the store's CreateSchedule) and returns the firings it
// recorded, skipped ticks included. Each schedule fires in one
// transaction that locks its row (a schedule another worker is firing is
// passed over), inserts a start request for each due tick with the
// tick's firing row, keyed by (schedule, tick), and moves the schedule's
// last tick: a tick fires once however many workers race, and a worker
// killed mid-way leaves nothing behind. grace is how late a tick still
// fires as on time (see ScheduleGrace). Workers call it every poll.
func (q *Queue) FireDueSchedules(ctx context.Context, grace time.Duration) ([]checkpoint.Firing, error) {
	rows, err := q.store.Pool().Query(ctx, "SELECT name FROM "+q.t("ilmek_schedules")+" WHERE NOT paused AND next_tick <= clock_timestamp() ORDER BY next_tick LIMIT 100")
	if err != nil {
		return nil, fmt.Errorf("workers: list the due schedules in schema %q: %w", q.store.SchemaName(), err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("workers: list the due schedules in schema %q: %w", q.store.SchemaName(), err)
	}
	var all []checkpoint.Firing
	var errs []error
	for _, name := range names {
		fs, err := q.fireSchedule(ctx, name, grace)
		if err != nil {
			errs = append(errs, fmt.Errorf("workers: fire schedule %q in schema %q: %w", name, q.store.SchemaName(), err))
			continue
		}
		all = append(all, fs...)
	}
	return all, errors.Join(errs...)
}

// fireSchedule fires the due ticks of one schedule in one transaction.
func (q *Queue) fireSchedule(ctx context.Context, name string, grace time.Duration) ([]checkpoint.Firing, error) {
	var out []checkpoint.Firing
	var ids, replaced []int64
	err := pgx.BeginFunc(ctx, q.store.Pool(), func(tx pgx.Tx) error {
		out, ids, replaced = nil, nil, nil
		sc, ok, err := q.store.ScheduleForUpdate(ctx, tx, name)
		if !ok || err != nil {
			return err
		}
		var now time.Time
		if err := tx.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&now); err != nil {
			return err
		}
		fire, last, err := sc.Due(now, grace)
		if err != nil {
			return err
		}
		// The previous firing that ran: the overlap policy's subject.
		var prevThread string
		var prevID int64
		err = tx.QueryRow(ctx, "SELECT thread_id, request_id FROM "+q.t("ilmek_schedule_firings")+" WHERE schedule = $1 AND request_id IS NOT NULL ORDER BY tick DESC LIMIT 1", name).Scan(&prevThread, &prevID)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		for i, tick := range fire {
			f := checkpoint.Firing{Schedule: name, Tick: tick, Thread: sc.ThreadOf(tick)}
			policy := sc.Overlap
			if i > 0 {
				// Ticks that fire together (a catch-up) all run, in order.
				policy = runtime.DoubleTextEnqueue
			}
			busy := false
			if prevID != 0 && policy != runtime.DoubleTextEnqueue {
				if err := tx.QueryRow(ctx, "SELECT state IN ('queued', 'running') FROM "+q.t("ilmek_requests")+" WHERE id = $1", prevID).Scan(&busy); err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
			switch {
			case busy && policy == runtime.DoubleTextReject:
				f.Skipped = "overlap"
				out = append(out, f)
				continue
			case busy && policy == runtime.DoubleTextCancelReplace:
				if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 1))", q.s+"/"+prevThread); err != nil {
					return err
				}
				_, running, err := cancelCount(ctx, tx, q, prevThread)
				if err != nil {
					return err
				}
				replaced = append(replaced, running...)
			}
			// Queued like Submit's enqueue: under the thread's lock, after
			// the thread's earlier requests.
			var id int64
			if err := tx.QueryRow(ctx, `WITH l AS (SELECT pg_advisory_xact_lock(hashtextextended($1, 1)))
				INSERT INTO `+q.t("ilmek_requests")+` (thread_id, graph, kind, input, policy) SELECT $2, $3, $4, $5, $6 FROM l RETURNING id`,
				q.s+"/"+f.Thread, f.Thread, sc.Graph, string(KindStart), []byte(sc.Input), string(runtime.DoubleTextEnqueue)).Scan(&id); err != nil {
				return err
			}
			// The thread's metadata: the schedule's, its name and the tick.
			meta, err := json.Marshal(sc.ThreadMeta(tick))
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+q.t("ilmek_threads")+" (thread_id, meta, updated_ns) VALUES ($1, $2::jsonb, $3) "+
				"ON CONFLICT (thread_id) DO UPDATE SET meta = "+q.t("ilmek_threads")+".meta || $2::jsonb, updated_ns = greatest("+q.t("ilmek_threads")+".updated_ns, excluded.updated_ns)",
				f.Thread, meta, now.UnixNano()); err != nil {
				return err
			}
			if err := q.notify(ctx, tx, noteNew+strconv.FormatInt(id, 10)); err != nil {
				return err
			}
			f.Request, prevID, prevThread = id, id, f.Thread
			ids = append(ids, id)
			out = append(out, f)
		}
		return q.store.RecordFiringsTx(ctx, tx, sc, last, out)
	})
	if err != nil {
		return nil, err
	}
	q.local.cancelledHere(replaced)
	for _, id := range ids {
		q.local.submittedHere(id)
	}
	return out, nil
}

// fireSchedules fires due schedules every interval until ctx is done,
// logging each firing and skip.
func (w *Worker) fireSchedules(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		fs, err := w.q.FireDueSchedules(ctx, w.opts.grace)
		if err != nil && ctx.Err() == nil && !transient(err) {
			w.opts.logger.Warn("fire due schedules", "err", err)
		}
		for _, f := range fs {
			if f.Skipped != "" {
				w.opts.logger.Info("schedule tick skipped", "schedule", f.Schedule, "tick", f.Tick, "thread", f.Thread, "why", f.Skipped)
			} else {
				w.opts.logger.Info("schedule fired", "schedule", f.Schedule, "tick", f.Tick, "thread", f.Thread, "request", f.Request)
			}
			if w.opts.onFiring != nil {
				w.opts.onFiring(ctx, f)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
