package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/internal/queuehook"
)

// This file holds the claim: the one statement a worker sends to take a
// request, with the flow control it applies (priority, fairness between
// partitions, concurrency limits and token buckets of ilmek_flow,
// migration 10), and the statement that gives back what a claim took from
// the limits when it lost a race for them.

// covers is the SQL condition that limit row f covers request row req: the
// limit of its graph or of its partition.
func covers(req string) string {
	return "(f.scope = 'graph' AND f.key = " + req + ".graph OR f.scope = 'partition' AND f.key = " + req + ".partition_key)"
}

// The SQL of a limit row f: its bucket's level now, and whether it lets a
// request start now (a slot free, a token in the bucket).
const (
	flowLevel = `LEAST(f.burst, f.tokens + f.rate * extract(epoch FROM clock_timestamp() - f.refilled)::float8)`
	flowOpen  = `((f.concurrency = 0 OR f.running < f.concurrency) AND (f.rate = 0 OR ` + flowLevel + ` >= 1))`
)

// claimSQL is the claim statement. It picks, FOR UPDATE SKIP LOCKED, the
// first runnable request (queued, or running under an expired claim; the
// oldest active one of its thread) in the order highest priority, lowest
// fair sequence, oldest. When limited, it skips the queued requests whose
// limits look full in the statement's snapshot; unlimited, it is the
// plain claim, whose plan is an ordered scan of the claim_order index
// even before the table has statistics (the correlated check of the
// limits lowers the planner's estimate of the rows enough that, without
// statistics, it sorts every active request instead).
//
// Either way, for a request it moves from queued to running it takes a
// slot and a token from each limit covering it (take, a row lock each, so
// that concurrent claims of different workers see each other's) and
// claims it only when every covering limit gave them: a limit that is
// full, or filled up meanwhile, leaves the request queued, and what the
// other limits gave is returned (taken) for giveBack. So limits hold
// whichever form a worker sends. It always returns one row: the claim (id
// 0 for none), whether more requests are queued, whether a request was
// picked, what was taken, how long until the emptiest bucket holds a
// token again when nothing was claimed (NULL without one), whether
// any limit is set (the worker sends the limited form while one is), and
// the epoch of the thread's lease, which the claim takes for the run as
// the Store's Lease would ($3 the owner, the Store's and the claim's tag;
// $4 the Store's lease TTL in µs; postgres.Store.AdoptLease): NULL when
// another live holder has the lease (the run's Lease then asks again,
// and fails as busy). A cancelled request's claim takes it too: its
// outcome waits until no earlier claim's run holds the thread
// (finishCancelled). It also sets the
// claimed thread for the rest of the claim's transaction
// (claimedThreadSetting), for the read that follows it (claimread.go).
// Its entry in the claims log notes whether it set the request's base
// (base_cp; "first"), for a retry that finds the claim after its reply was
// lost (claim). The lease is taken after the statement's snapshot, so the latest
// checkpoint this statement reads may predate the last commit of a
// holder it took over from: that read, a statement of its own after the
// lease is taken, is what the run starts from, and WithExpectedLatest
// compares the two.
func (q *Queue) claimSQL(limited bool) string {
	r, cps, f := q.t("ilmek_requests"), q.t("ilmek_checkpoints"), q.t("ilmek_flow")
	skipFull := ""
	if limited {
		skipFull = `AND (q.state = 'running' OR NOT EXISTS (SELECT 1 FROM ` + f + ` f WHERE ` + covers("q") + ` AND NOT ` + flowOpen + `))`
	}
	return `WITH pick AS (
		SELECT q.id, q.base_cp, q.state AS was, q.graph, q.partition_key,
			COALESCE((SELECT c.id FROM ` + cps + ` c WHERE c.thread_id = q.thread_id ORDER BY c.seq DESC LIMIT 1), '') AS latest
		FROM ` + r + ` q
		WHERE q.state IN ('queued', 'running') AND (q.state = 'queued' OR q.claim_until < clock_timestamp())
		  AND NOT EXISTS (SELECT 1 FROM ` + r + ` e WHERE e.thread_id = q.thread_id AND e.id < q.id AND e.state IN ('queued', 'running'))
		  ` + skipFull + `
		ORDER BY q.priority DESC, q.fair_seq, q.id LIMIT 1 FOR UPDATE OF q SKIP LOCKED),
	covering AS (SELECT count(*) AS n FROM ` + f + ` f, pick WHERE pick.was = 'queued' AND ` + covers("pick") + `),
	take AS (UPDATE ` + f + ` f SET running = f.running + (f.concurrency > 0)::int,
			tokens = CASE WHEN f.rate > 0 THEN ` + flowLevel + ` - 1 ELSE f.tokens END, refilled = clock_timestamp()
		FROM pick WHERE pick.was = 'queued' AND ` + covers("pick") + ` AND ` + flowOpen + `
		RETURNING f.scope, f.key),
	upd AS (UPDATE ` + r + ` u SET state = 'running', worker = $1, claim = u.claim + 1,
			claim_until = clock_timestamp() + $2::bigint * interval '1 microsecond', updated = clock_timestamp(),
			base_cp = COALESCE(u.base_cp, pick.latest),
			run_ids = CASE WHEN u.cancel THEN u.run_ids ELSE array_append(u.run_ids, $5::text) END,
			claims_log = CASE WHEN u.cancel THEN u.claims_log ELSE u.claims_log || jsonb_set(` + claimEntry("u.claim + 1", "$1::text") + `, '{0,first}', to_jsonb(u.base_cp IS NULL)) END
		FROM pick WHERE u.id = pick.id AND (SELECT count(*) FROM take) = (SELECT n FROM covering)
		RETURNING u.id, u.thread_id, u.graph, u.kind, u.input, u.claim, u.cancel, u.partition_key, u.expected_latest),
	lease AS (INSERT INTO ` + q.t("ilmek_leases") + ` (thread_id, epoch, owner, expires)
		SELECT upd.thread_id, nextval('` + q.t("ilmek_lease_epoch") + `'), $3, clock_timestamp() + $4::bigint * interval '1 microsecond' FROM upd
		ON CONFLICT (thread_id) DO UPDATE SET epoch = excluded.epoch, owner = excluded.owner, expires = excluded.expires
		WHERE ` + q.t("ilmek_leases") + `.expires <= clock_timestamp() RETURNING epoch)
	SELECT COALESCE(upd.id, 0), COALESCE(upd.thread_id, ''), COALESCE(upd.graph, ''), COALESCE(upd.kind, ''), upd.input,
		COALESCE(upd.claim, 0), pick.base_cp, COALESCE(upd.cancel, false), COALESCE(pick.latest, ''), COALESCE(upd.partition_key, ''),
		EXISTS (SELECT 1 FROM ` + r + ` m WHERE m.state IN ('queued', 'running') AND m.state = 'queued' AND m.id <> COALESCE(upd.id, 0)),
		pick.id IS NOT NULL,
		(SELECT array_agg(t.scope) FROM take t), (SELECT array_agg(t.key) FROM take t),
		CASE WHEN upd.id IS NULL THEN (SELECT min((1 - ` + flowLevel + `) / f.rate) FROM ` + f + ` f WHERE f.rate > 0 AND ` + flowLevel + ` < 1) END,
		EXISTS (SELECT 1 FROM ` + f + `),
		(SELECT epoch FROM lease),
		set_config('` + claimedThreadSetting + `', COALESCE(upd.thread_id, ''), true),
		upd.expected_latest
	FROM (SELECT 1) one LEFT JOIN pick ON true LEFT JOIN upd ON true`
}

// freeSQL is a CTE, named freed, that takes back the slot a request held
// in the concurrency limits covering it: o is a CTE of the request's row
// as it was (graph, partition_key), empty unless it was running. The
// statements that end a running request include it. Its rows say whether
// the limit was full (was_full): only then may it have held a request
// back, which a worker should claim now.
func (q *Queue) freeSQL() string {
	return `freed AS (UPDATE ` + q.t("ilmek_flow") + ` f SET running = GREATEST(f.running - 1, 0)
		FROM o WHERE f.concurrency > 0 AND ` + covers("o") + ` RETURNING f.running + 1 >= f.concurrency AS was_full)`
}

// giveBack returns the slots and tokens a claim took from the limits
// (scopes[i], keys[i]) when another limit of its request was full.
func (q *Queue) giveBack(ctx context.Context, scopes, keys []string) error {
	_, err := q.store.Pool().Exec(ctx, `UPDATE `+q.t("ilmek_flow")+` f SET running = GREATEST(f.running - (f.concurrency > 0)::int, 0),
		tokens = CASE WHEN f.rate > 0 THEN LEAST(f.burst, f.tokens + 1) ELSE f.tokens END
		WHERE (f.scope, f.key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`, scopes, keys)
	return err
}

// claimResult is what a claim found: a request (nil for none) and, when
// none, how long until a rate limit lets one start (0: no rate limit
// held a request back).
type claimResult struct {
	c *claimed
	// wait is how long until the emptiest token bucket holds a token,
	// when nothing was claimed (0: none is empty).
	wait time.Duration
	// raced is set when the picked request's limits filled up before the
	// claim took them: claim again at once.
	raced bool
}

// testHookClaimReply, when set by a test, is called after each claim
// statement that succeeded, with its attempt's number; an error it
// returns is taken for the attempt's, as if the reply had been lost after
// the claim committed.
var testHookClaimReply func(attempt int) error

// claim takes the first runnable request in the claim order (claimSQL).
// A transient failure is retried (within claimBudget); since the failed
// attempt may have committed before its reply was lost, each claim
// writes a tag of its own into the request's worker column, and a retry
// first takes back the request that carries it.
func (w *Worker) claim(ctx context.Context) (claimResult, error) {
	r := w.q.t("ilmek_requests")
	var b [8]byte
	rand.Read(b[:])
	tag := w.opts.name + " #" + hex.EncodeToString(b[:])
	cps := w.q.t("ilmek_checkpoints")
	// The lease the claim takes names the claim, so that a retry finds
	// the lease its lost attempt took.
	owner := w.q.store.LeaseOwner() + ", claim " + tag
	var (
		c            claimed
		picked       bool
		scopes, keys []string
		wait         *float64
		limits       bool
	)
	c.leaseSent = time.Now() // the first attempt's: a lease a lost attempt took counts from it
	// The run's id, recorded by the claim (every attempt's, so that a
	// retry finds the one its lost attempt recorded).
	runID := queuehook.NewRunID()
	err := w.retry(ctx, "claim", 0, claimBudget, func(attempt int) error {
		if attempt > 1 {
			c.epoch = nil
			var first bool
			err := w.q.store.Pool().QueryRow(ctx, `SELECT id, thread_id, graph, kind, input, claim, base_cp, cancel,
				COALESCE((SELECT c.id FROM `+cps+` c WHERE c.thread_id = r.thread_id ORDER BY c.seq DESC LIMIT 1), ''), partition_key, true,
				(SELECT l.epoch FROM `+w.q.t("ilmek_leases")+` l WHERE l.thread_id = r.thread_id AND l.owner = $2 AND l.expires > clock_timestamp()),
				expected_latest,
				(claims_log->-1->>'claim')::bigint IS NOT DISTINCT FROM claim AND (claims_log->-1->>'first')::boolean IS TRUE
				FROM `+r+` r
				WHERE state IN ('queued', 'running') AND state = 'running' AND worker = $1 AND claim_until > clock_timestamp()`, tag, owner).
				Scan(&c.id, &c.thread, &c.graph, &c.kind, &c.input, &c.claim, &c.baseCP, &c.cancelled, &c.latest, &c.partition, &c.more, &c.epoch, &c.expect, &first)
			if !errors.Is(err, pgx.ErrNoRows) {
				if err == nil && first {
					// The lost attempt set the base (its entry in the
					// claims log says so): this claim is the request's
					// first. A base that merely equals the thread's latest
					// checkpoint may be an earlier claim's, whose run has
					// not committed yet (its worker may still live).
					c.baseCP = nil
				}
				return err
			}
		}
		err := w.q.sendClaim(ctx, w.q.claimSQL(w.q.limited.Load()), []any{tag, w.opts.ttl.Microseconds(),
			owner, w.q.store.LeaseTTLOf().Microseconds(), runID}, func(row pgx.Row) error {
			return row.Scan(&c.id, &c.thread, &c.graph, &c.kind, &c.input, &c.claim, &c.baseCP, &c.cancelled, &c.latest, &c.partition, &c.more,
				&picked, &scopes, &keys, &wait, &limits, &c.epoch, nil, &c.expect)
		}, &c.read)
		if err == nil && testHookClaimReply != nil {
			err = testHookClaimReply(attempt)
		}
		return err
	})
	if err == nil {
		w.q.limited.Store(limits)
	}
	if err != nil {
		return claimResult{}, err
	}
	if c.id != 0 {
		if !c.cancelled {
			c.runID = runID
		}
		return claimResult{c: &c}, nil
	}
	var res claimResult
	if wait != nil {
		res.wait = max(time.Duration(*wait*float64(time.Second)), time.Millisecond)
	}
	if picked {
		// A limit of the picked request filled up between the snapshot and
		// its row lock.
		res.raced = true
		if len(scopes) > 0 {
			if err := w.q.giveBack(ctx, scopes, keys); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
