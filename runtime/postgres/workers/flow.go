package workers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// Scope says what a Limit limits: the requests of a graph or of a
// partition.
type Scope string

const (
	// ScopeGraph limits the requests of the graph named by Limit.Key.
	ScopeGraph Scope = "graph"
	// ScopePartition limits the requests whose Request.Partition is
	// Limit.Key; with Key AnyPartition, each partition on its own.
	ScopePartition Scope = "partition"
)

// AnyPartition is the Limit.Key of a partition limit that applies to each
// partition without a limit of its own, separately: each partition gets
// its own slots and its own bucket, copied at its first request.
const AnyPartition = "*"

// anyPartition is AnyPartition in the SQL.
const anyPartition = AnyPartition

// Limit is the flow control of a graph's or a partition's requests, held
// in the store (table ilmek_flow), so that it holds across every worker
// process of the queue.
type Limit struct {
	Scope Scope  `json:"scope"`
	Key   string `json:"key"`
	// Concurrency is how many of its requests may run at once (0: no
	// limit). A request holds its slot from its first claim to its end,
	// across claims that expire.
	Concurrency int `json:"concurrency,omitempty"`
	// Rate is how many of its requests may start per second (0: no
	// limit): a token bucket refilling at Rate, from which each first
	// claim of a request takes a token.
	Rate float64 `json:"rate,omitempty"`
	// Burst is how many tokens the bucket holds at most: how many
	// requests may start at once after a quiet spell (default 1).
	Burst int `json:"burst,omitempty"`
	// Running is how many of its requests run now (read by Limits;
	// SetLimit ignores it).
	Running int `json:"running"`
}

// ErrBadLimit is matched by SetLimit's error for a limit it refuses.
var ErrBadLimit = errors.New("invalid flow limit")

// SetLimit sets (or replaces) the limit of l.Scope and l.Key; a limit of
// neither concurrency nor rate is deleted. Its count of running requests
// is taken from the queue as it stands, and its bucket starts full.
// Setting AnyPartition's limit also resets the limits partitions copied
// from it before.
func (q *Queue) SetLimit(ctx context.Context, l Limit) error {
	switch {
	case l.Scope != ScopeGraph && l.Scope != ScopePartition:
		return fmt.Errorf("workers: set a limit: %w: scope %q, want %q or %q", ErrBadLimit, l.Scope, ScopeGraph, ScopePartition)
	case l.Key == "":
		return fmt.Errorf("workers: set a %s limit: %w: the key is empty; name the graph or the partition", l.Scope, ErrBadLimit)
	case l.Scope == ScopeGraph && l.Key == AnyPartition:
		return fmt.Errorf("workers: set a graph limit: %w: %q means every partition, and is for partition limits only", ErrBadLimit, AnyPartition)
	case l.Concurrency < 0 || l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) || l.Burst < 0:
		return fmt.Errorf("workers: set the %s limit of %q: %w: concurrency %d, rate %v, burst %d; want zero (none) or positive numbers", l.Scope, l.Key, ErrBadLimit, l.Concurrency, l.Rate, l.Burst)
	}
	if l.Concurrency == 0 && l.Rate == 0 {
		return q.DeleteLimit(ctx, l.Scope, l.Key)
	}
	burst := max(l.Burst, 1)
	f, r := q.t("ilmek_flow"), q.t("ilmek_requests")
	running := `(SELECT count(*) FROM ` + r + ` c WHERE c.state IN ('queued', 'running') AND c.state = 'running'
		AND CASE WHEN $1 = 'graph' THEN c.graph = k.key ELSE c.partition_key = k.key END)`
	err := pgx.BeginFunc(ctx, q.store.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO `+f+` (scope, key, concurrency, running, rate, burst, tokens, refilled)
			SELECT $1, k.key, $3, `+running+`, $4, $5, $5, clock_timestamp() FROM (SELECT $2::text AS key) k
			ON CONFLICT (scope, key) DO UPDATE SET concurrency = EXCLUDED.concurrency, running = EXCLUDED.running,
				rate = EXCLUDED.rate, burst = EXCLUDED.burst, tokens = EXCLUDED.tokens, refilled = EXCLUDED.refilled, inherited = false`,
			string(l.Scope), l.Key, l.Concurrency, l.Rate, float64(burst)); err != nil {
			return err
		}
		if l.Scope != ScopePartition || l.Key != AnyPartition {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE `+f+` k SET concurrency = $2, rate = $3, burst = $4, tokens = $4, refilled = clock_timestamp(), running = `+running+`
			WHERE k.scope = $1 AND k.inherited`, string(l.Scope), l.Concurrency, l.Rate, float64(burst))
		return err
	})
	if err != nil {
		return fmt.Errorf("workers: set the %s limit of %q in schema %q: %w", l.Scope, l.Key, q.store.SchemaName(), err)
	}
	q.limitsChanged(ctx)
	return nil
}

// DeleteLimit deletes the limit of scope and key (deleting AnyPartition's
// deletes the limits partitions copied from it too); the requests it held
// back are claimed at the next claim.
func (q *Queue) DeleteLimit(ctx context.Context, scope Scope, key string) error {
	_, err := q.store.Pool().Exec(ctx, `DELETE FROM `+q.t("ilmek_flow")+` WHERE scope = $1 AND (key = $2 OR $2 = '*' AND inherited)`, string(scope), key)
	if err != nil {
		return fmt.Errorf("workers: delete the %s limit of %q in schema %q: %w", scope, key, q.store.SchemaName(), err)
	}
	q.limitsChanged(ctx)
	return nil
}

// noteLimits is the notification of a limit set or deleted: it wakes
// every worker, since requests it held back may be claimable now.
const noteLimits = "limits"

// limitsChanged wakes the workers of every process (the notification)
// and of this one (directly).
func (q *Queue) limitsChanged(ctx context.Context) {
	q.limited.Store(true)                                                  // the next claim says whether any is left
	q.store.Pool().Exec(ctx, "SELECT pg_notify($1, $2)", q.ch, noteLimits) // a lost one leaves it to the poll
	q.local.mu.Lock()
	defer q.local.mu.Unlock()
	for ch := range q.local.wakes {
		signal(ch)
	}
}

// Limits lists the limits set by SetLimit (not the copies partitions took
// of AnyPartition's), by scope and key, with how many requests each holds
// running now.
func (q *Queue) Limits(ctx context.Context) ([]Limit, error) {
	rows, err := q.store.Pool().Query(ctx, "SELECT scope, key, concurrency, rate, burst, running FROM "+q.t("ilmek_flow")+" WHERE NOT inherited ORDER BY scope, key")
	if err != nil {
		return nil, fmt.Errorf("workers: list the limits of schema %q: %w", q.store.SchemaName(), err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Limit, error) {
		var l Limit
		var burst float64
		err := row.Scan(&l.Scope, &l.Key, &l.Concurrency, &l.Rate, &burst, &l.Running)
		l.Burst = int(burst)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("workers: list the limits of schema %q: %w", q.store.SchemaName(), err)
	}
	return out, nil
}

// inheritSQL is a CTE, named inherit, that gives partition part (an SQL
// parameter) a copy of AnyPartition's limit if it has none of its own.
func (q *Queue) inheritSQL(part string) string {
	f := q.t("ilmek_flow")
	return `inherit AS (INSERT INTO ` + f + ` (scope, key, concurrency, rate, burst, tokens, inherited)
		SELECT 'partition', ` + part + `, t.concurrency, t.rate, t.burst, t.burst, true FROM ` + f + ` t
		WHERE t.scope = 'partition' AND t.key = '*' AND ` + part + ` <> ''
		ON CONFLICT DO NOTHING)`
}

// fairSeqSQL is the fair sequence number of a request submitted with
// priority prio to partition part (SQL parameters): one past the last of
// the partition's active requests, but not below the lowest of the
// priority's active requests, so that the claim order (priority, then
// fair_seq) interleaves partitions instead of serving them in turn.
func (q *Queue) fairSeqSQL(prio, part string) string {
	r := q.t("ilmek_requests")
	return `GREATEST(COALESCE((SELECT max(p.fair_seq) FROM ` + r + ` p WHERE p.partition_key = ` + part + ` AND p.state IN ('queued', 'running')), 0) + 1,
		COALESCE((SELECT min(v.fair_seq) FROM ` + r + ` v WHERE v.priority = ` + prio + ` AND v.state IN ('queued', 'running')), 0))`
}

// Retention makes the worker delete, every interval (default one hour),
// the requests that ended more than keep ago (Queue.Prune), and the
// copies of AnyPartition's limit that partitions no longer use. Every
// worker with the option prunes; running it on a few is enough.
func Retention(keep, every time.Duration) WorkerOption {
	return func(o *workerOptions) { o.keep, o.every = keep, every }
}

// prune runs Retention's pruner until ctx is done.
func (w *Worker) prune(ctx context.Context) {
	every := w.opts.every
	if every <= 0 {
		every = time.Hour
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := w.q.Prune(ctx, w.opts.keep)
		if err != nil {
			if ctx.Err() == nil {
				w.opts.logger.Warn("prune ended requests", "keep", w.opts.keep, "err", err)
			}
			continue
		}
		w.opts.logger.Info("pruned ended requests", "keep", w.opts.keep, "deleted", n)
		w.event(ctx, Event{Kind: EventPrune, Pruned: n})
	}
}

// Holds reports whether a worker holds a request of thread: one is
// running under a claim (a run, a resume, or the wake of a parked
// thread), whoever submitted it.
func (q *Queue) Holds(ctx context.Context, thread string) (bool, error) {
	var held bool
	err := q.store.Pool().QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+q.t("ilmek_requests")+" WHERE thread_id = $1 AND state IN ('queued', 'running') AND state = 'running')", thread).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("workers: read whether a worker holds thread %q: %w", thread, err)
	}
	return held, nil
}
