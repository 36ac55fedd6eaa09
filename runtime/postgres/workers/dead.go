package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultMaxClaims is how many claims of a request may expire (their
// worker died or stalled while running it) before the request is dead,
// unless MaxClaims says otherwise.
const DefaultMaxClaims = 20

// MaxClaims sets how many claims of a request may expire, their worker
// having died or stalled while running it, before the next claim ends the
// request in state "dead" instead of running it again (default
// DefaultMaxClaims; 0 or less: no limit). Claims given back to the queue
// (the thread was busy, the store failed) do not count. Queue.Dead lists
// dead requests, Queue.Retry queues one again.
func MaxClaims(n int) WorkerOption { return func(o *workerOptions) { o.maxClaims = n } }

// StateDead is the state of a request whose claims expired MaxClaims
// times: it is not claimed again until Queue.Retry.
const StateDead = "dead"

// ErrNotDead is matched by Retry's error for a request that is not dead.
var ErrNotDead = errors.New("the run request is not dead; only a dead request is retried by hand")

// Claim is one claim of a request, as the claims log records it: the
// claim statement writes it (a claim that buries the request leaves none).
type Claim struct {
	Claim  int64     `json:"claim"`
	Worker string    `json:"worker"`
	At     time.Time `json:"at"`
	// Error is why the claim ended without an outcome: the error of a
	// claim given back to the queue, or that its claim expired.
	Error string `json:"error,omitempty"`
	// Released is true for a claim its worker gave back (not counted
	// against MaxClaims).
	Released bool `json:"released,omitempty"`
	// Stuck is true for a claim given back whose run failed with a
	// transient error of a node's in the first superstep it ran: such
	// claims in a row are counted against TransientRetries.
	Stuck bool `json:"stuck,omitempty"`
	// Refused is true for a claim given back without running anything:
	// its run was refused before it ran (the thread busy with another run,
	// or moved since the claim), or the claim could not read what earlier
	// claims' runs wrote. It neither ends nor starts a row of stuck claims.
	Refused bool `json:"refused,omitempty"`
	// Retry marks a retry by hand (Queue.Retry); its other fields are
	// empty but At.
	Retry bool `json:"retry,omitempty"`
}

// ErrClaimExpired is the Error of a claim whose worker died or stalled.
const ErrClaimExpired = "the claim expired: its worker died or stalled while running the request"

// DeadRequest is a dead request and its claims.
type DeadRequest struct {
	ID     int64     `json:"id"`
	Thread string    `json:"thread"`
	Graph  string    `json:"graph"`
	Error  string    `json:"error"`
	Dead   time.Time `json:"dead"`
	Claims []Claim   `json:"claims"`
}

// claimEntry is the SQL of a claims log entry, an array of one: claim
// number claim, by worker, now. The claim statement appends it with the
// run's id.
func claimEntry(claim, worker string) string {
	return "jsonb_build_array(jsonb_build_object('claim', " + claim + ", 'worker', " + worker + ", 'at', clock_timestamp()))"
}

// expiredSince counts the claims since the last retry by hand that
// expired, in SQL over the claims log, but the current claim ($2), whose
// entry the claim statement wrote.
const expiredSince = `(SELECT count(*) FROM jsonb_array_elements(claims_log) WITH ORDINALITY e(v, n)
	WHERE NOT v ? 'retry' AND NOT v ? 'released' AND (v->>'claim')::bigint IS DISTINCT FROM $2::bigint
	  AND n > coalesce((SELECT max(m) FROM jsonb_array_elements(claims_log) WITH ORDINALITY r(x, m) WHERE x ? 'retry'), 0))`

// buryIfSpent ends a request claimed again in state dead when MaxClaims of
// its claims expired; it reports whether it did. The claim that buries
// the request ran nothing: its entry leaves the claims log, which then
// lists the claims that expired, and its run id the request's runs.
func (w *Worker) buryIfSpent(ctx context.Context, c *claimed) bool {
	if w.opts.maxClaims <= 0 || c.claim <= int64(w.opts.maxClaims) {
		return false
	}
	r := w.q.t("ilmek_requests")
	var dead bool
	err := w.retry(ctx, "dead", c.id, finishBudget, func(int) error {
		err := w.q.store.Pool().QueryRow(ctx, `WITH o AS (SELECT graph, partition_key FROM `+r+` WHERE id = $1 AND claim = $2 AND state = 'running' AND `+expiredSince+` >= $3),
			u AS (UPDATE `+r+` SET state = 'dead', claim_until = NULL, updated = clock_timestamp(),
				claims_log = CASE WHEN (claims_log->-1->>'claim')::bigint = $2 THEN claims_log - (-1) ELSE claims_log END,
				run_ids = array_remove(run_ids, $6::text),
				error = 'claimed ' || $3::text || ' times; each claim expired (its worker died or stalled); see its claims, and retry it by hand'
			WHERE id = $1 AND claim = $2 AND `+expiredSince+` >= $3 RETURNING id),
			`+w.q.freeSQL()+`
			SELECT pg_notify($4, $5) FROM u`,
			c.id, c.claim, w.opts.maxClaims, w.q.ch, noteEnd+strconv.FormatInt(c.id, 10), c.runID).Scan(nil)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		dead = err == nil
		return err
	})
	if err != nil {
		w.opts.logger.Warn("end a request dead", "request", c.id, "err", err)
		return false
	}
	if dead {
		w.opts.logger.Warn("request dead", "request", c.id, "thread", c.thread, "claims", c.claim)
		w.event(ctx, Event{Kind: EventDead, Request: c.id, Thread: c.thread, Graph: c.graph, Partition: c.partition, Claim: c.claim,
			Error: fmt.Sprintf("claimed %d times; each claim expired", c.claim)})
		w.q.deliverEnd(noteEnd + strconv.FormatInt(c.id, 10))
	}
	return dead
}

// Dead lists up to limit dead requests (all when limit <= 0), oldest first.
func (q *Queue) Dead(ctx context.Context, limit int) ([]DeadRequest, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := q.store.Pool().Query(ctx, "SELECT id, thread_id, graph, error, updated, claims_log FROM "+q.t("ilmek_requests")+" WHERE state = 'dead' ORDER BY id LIMIT $1", limit)
	if err != nil {
		return nil, fmt.Errorf("workers: list the dead requests of schema %q: %w", q.store.SchemaName(), err)
	}
	defer rows.Close()
	var out []DeadRequest
	var log []byte
	for rows.Next() {
		var d DeadRequest
		if err := rows.Scan(&d.ID, &d.Thread, &d.Graph, &d.Error, &d.Dead, &log); err != nil {
			return nil, fmt.Errorf("workers: list the dead requests: %w", err)
		}
		if err := json.Unmarshal(log, &d.Claims); err != nil {
			return nil, fmt.Errorf("workers: dead request %d: the claims log is corrupt: %w", d.ID, err)
		}
		for i := range d.Claims {
			if !d.Claims[i].Retry && d.Claims[i].Error == "" {
				d.Claims[i].Error = ErrClaimExpired
			}
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workers: list the dead requests: %w", err)
	}
	return out, nil
}

// Retry queues dead request id again, with MaxClaims claims ahead of it;
// its claims log keeps the claims before (and marks the retry). It fails
// with an error matching ErrNoRequest or ErrNotDead.
func (q *Queue) Retry(ctx context.Context, id int64) error {
	var state string
	err := q.store.Pool().QueryRow(ctx, `WITH o AS (SELECT state FROM `+q.t("ilmek_requests")+` WHERE id = $1),
		u AS (UPDATE `+q.t("ilmek_requests")+` SET state = 'queued', error = '', claim_until = NULL, updated = clock_timestamp(),
			claims_log = claims_log || jsonb_build_array(jsonb_build_object('retry', true, 'at', clock_timestamp()))
			WHERE id = $1 AND state = 'dead' RETURNING id)
		SELECT o.state, pg_notify($2, $3 || $1::text) FROM o`, id, q.ch, noteNew).Scan(&state, nil)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("workers: retry request %d in schema %q: %w", id, q.store.SchemaName(), ErrNoRequest)
	case err != nil:
		return fmt.Errorf("workers: retry request %d: %w", id, err)
	case state != StateDead:
		return fmt.Errorf("workers: retry request %d (state %s): %w", id, state, ErrNotDead)
	}
	q.local.submittedHere(id)
	return nil
}

// Prune deletes the requests that ended (done, interrupted, parked,
// error, aborted, cancelled) more than keep ago, and returns how many.
// Queued, running and dead requests are kept; a dead one leaves by Retry.
func (q *Queue) Prune(ctx context.Context, keep time.Duration) (int64, error) {
	// The copies of AnyPartition's limit that no active request uses,
	// with a full bucket, go too (a partition copies it again at its next
	// request).
	r, f := q.t("ilmek_requests"), q.t("ilmek_flow")
	var n int64
	err := q.store.Pool().QueryRow(ctx, `WITH d AS (DELETE FROM `+r+` WHERE state NOT IN ('queued', 'running', 'dead') AND updated < clock_timestamp() - $1::bigint * interval '1 microsecond' RETURNING 1),
		p AS (DELETE FROM `+f+` f WHERE f.inherited AND f.running = 0 AND (f.rate = 0 OR `+flowLevel+` >= f.burst)
			AND NOT EXISTS (SELECT 1 FROM `+r+` a WHERE a.partition_key = f.key AND a.state IN ('queued', 'running')))
		SELECT count(*) FROM d`, keep.Microseconds()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("workers: prune the requests of schema %q that ended over %v ago: %w", q.store.SchemaName(), keep, err)
	}
	return n, nil
}

// claimReleased marks this claim's entry in the claims log (the last one,
// when it is this claim's) released with the error $3, refused when $4
// (Claim.Refused) and stuck when $7 (Claim.Stuck).
const claimReleased = `claims_log = CASE WHEN (claims_log->-1->>'claim')::bigint = $2
	THEN jsonb_set(claims_log, '{-1}', (claims_log->-1) || jsonb_build_object('error', $3::text, 'released', true)
		|| CASE WHEN $4::bool THEN '{"refused": true}'::jsonb ELSE '{}'::jsonb END
		|| CASE WHEN $7::bool THEN '{"stuck": true}'::jsonb ELSE '{}'::jsonb END) ELSE claims_log END`
