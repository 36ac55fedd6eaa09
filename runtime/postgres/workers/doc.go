// Package workers runs graphs from a durable queue of run requests on
// PostgreSQL, drained by any number of worker processes on any number of
// machines (DESIGN.md §11).
//
//	q := workers.NewQueue(store) // store: a *postgres.Store
//	id, err := q.Submit(ctx, workers.Request{Graph: "checkout", Thread: "order-42", Input: in})
//	out, err := q.Wait(ctx, id) // from any process
//
// and in each worker process:
//
//	w := workers.NewWorker(q, map[string]workers.Runnable{"checkout": workers.Graph(g)})
//	err := w.Run(ctx) // until ctx is done
//
// # Requests
//
// A request starts a thread's run with input (KindStart) or resumes it with
// answers (KindResume), from the thread's latest checkpoint or, with
// Request.From, from an earlier one (a fork, runtime.Thread.Fork);
// Cancel stops a thread's running request at its next superstep boundary
// (runtime.WithStopSignal: the superstep in flight
// finishes and commits, then the request ends aborted) and drops its
// queued ones. Submit returns at once
// with the request's id; the request is a row of ilmek_requests in the
// store's schema (migration 2). A request runs once no request submitted
// before it for the same thread is queued or running: requests of a thread
// run in submission order, requests of different threads in parallel.
//
// Concurrent requests for one thread follow the request's
// runtime.DoubleTexting policy: reject it while another is queued or
// running, enqueue it behind them, or cancel them and run it
// (cancel-and-replace, refused while the thread waits on a person).
//
// # Timers
//
// A run that parks its thread on a timer (runtime.Sleep, runtime.Until
// past runtime.WithParkAfter) ends its request parked, with the timer in
// Outcome.Pending. Each worker looks for due timers every Poll, at least
// 100 ms apart (Queue.QueueDueWakes): a thread parked, or interrupted with a deadline
// (runtime.WithTimeout), whose wake time has passed and that has no
// request queued or running gets one request of its own kind, "wake" (at
// most one per thread, by a unique index, migration 7), on the graph of
// the thread's latest request. A worker claims it like any request and
// runs runtime's Thread.Wake under the thread's lease, so the thread is
// woken once however many workers race or die; a wake whose thread has
// nothing due (answered, resumed, deleted, or woken by an earlier claim)
// ends cancelled, or with the earlier claim's outcome; a wake dropped
// this way is an INFO record "timer dropped" and an EventTimerDropped to
// OnEvent (the timer set and fired are the runs' own: runtime.Observer,
// the runtime's slog records "timer set" and "timer fired"). Cancel on a parked
// thread marks it aborted, so it is not woken: the scan queues a wake under
// the thread's lock (the one Cancel and Submit take), checking the thread
// again, and leaves a thread locked elsewhere to its next pass
// (TestTimerScanRacesCancel). A thread that no request
// ever ran is not woken by the workers (runtime/waker is for those).
//
// # Scheduled runs
//
// The store keeps schedules (checkpoint.Schedule: a cron expression in a
// time zone or an interval, the graph, the input, a thread template, an
// overlap and a catch-up policy; store.CreateSchedule, PauseSchedule,
// DeleteSchedule, or the server's /schedules routes), and the workers fire
// them: each worker, every Poll (at least 100 ms apart), looks at the
// schedules whose next tick has passed (Queue.FireDueSchedules) and fires
// each in one transaction that locks the schedule's row (FOR UPDATE SKIP
// LOCKED: one worker fires a schedule at a time), inserts a start request
// for each due tick together with the tick's firing row, keyed by
// (schedule, tick) (migration 9), and the thread's metadata
// (checkpoint.Schedule.ThreadMeta: the schedule's, its name and the
// tick), and moves the schedule's last tick. A
// tick therefore becomes exactly one request however many workers race,
// and a worker killed mid-way leaves no half-fired tick: the transaction
// commits whole or not at all (TestScheduleEveryTickOnce: 60 ticks, four
// worker processes SIGKILLed and restarted).
//
// A tick at most ScheduleGrace (default DefaultScheduleGrace) late fires
// as on time; older ticks were missed while no worker ran, and the
// catch-up policy fires none of them, the latest, or each up to
// MaxCatchUp. The overlap policy is a runtime.DoubleTexting applied to
// the schedule's previous firing: reject skips the tick while that
// firing's request is queued or running (a firing row with Skipped
// "overlap", no request), enqueue fires anyway (on one thread the request
// runs after the previous one, by the queue's order), cancel-and-replace
// cancels the previous firing's requests as Cancel does and fires. Each
// firing and skip is an INFO record of the worker's Logger and is told to
// OnFiring (the otel module's ScheduleFirings makes spans and metrics of
// them).
//
// # Dead requests and retention
//
// A request whose claims keep expiring (its run kills or stalls its
// worker every time) ends in state dead once MaxClaims claims (default
// DefaultMaxClaims) expired since it was queued or retried; claims a
// worker gave back (the thread was busy, the store failed) do not count.
// Each claim that started a run is in the request's claims log with its
// worker and error (migration 8). Queue.Dead lists dead requests,
// Queue.Retry queues one again, and Queue.Prune deletes the requests that
// ended longer ago than it is told (dead ones stay until retried).
//
// A worker with Retention(keep, every) calls Prune every interval itself
// (and deletes the copies of AnyPartition's limit no active request
// uses); EventPrune reports each.
//
// # Flow control
//
// Flow control is held in the store (migration 10), so it holds across
// every worker process:
//
//   - Priority. The claim takes the highest Request.Priority first, and
//     within a priority the requests in submission order (modulo
//     fairness), so a thread's requests still run in submission order.
//   - Fairness. Each request gets a fair sequence number at submit: one
//     past the last active request of its partition (Request.Partition;
//     "" is a partition too), but never below the lowest active number of
//     its priority. The claim orders by it before age, so partitions take
//     turns: a tenant that queued a thousand requests does not hold back
//     another's single request, which is claimed before W more of the
//     busy tenant's are, W the number of workers
//     (TestFairnessBetweenPartitions).
//   - Concurrency limits (Queue.SetLimit, Limit.Concurrency) per graph
//     (ScopeGraph) or per partition (ScopePartition; key AnyPartition for
//     each partition on its own). A limit row counts the running requests
//     it covers: a claim that moves a request from queued to running
//     takes a slot under the row's lock, the statement that ends it
//     (outcome, dead) gives it back; a request keeps its slot across
//     claims that expire or are given back.
//   - Rate limits (Limit.Rate, Limit.Burst): a token bucket in the limit's
//     row, refilled at Rate per second up to Burst; a claim from queued
//     takes a token. A worker that finds nothing to claim because a
//     bucket is empty waits until it holds a token (EventRateWait), not
//     for the next poll; requests start at the rate ± 10 % with several
//     workers (TestRateLimitHoldsAcrossWorkers).
//
// A claim takes its slots and tokens in the claim statement itself
// (claim.go): row locks on the limit rows serialize the workers that take
// from one limit, and a request is claimed only when every limit covering
// it gave; what the others gave in a lost race is given back by one more
// statement, which only that race costs. While the store holds no limit,
// a worker sends the plain form of the claim, whose plan stays an ordered
// scan of the claim index; each claim says whether a limit exists, and a
// limit set in another process is applied by the very next claim anyway
// (its slots and tokens are taken from whatever the claim picks). Limits
// changed with SetLimit recount the running requests they cover.
//
// Workers report claims, dead requests, rate-limit waits, prunes and
// dropped wakes to
// OnEvent (the otel module's QueueObserver.Event makes spans and metrics
// of them) and as slog records (Logger: claims and waits at debug level).
//
// # Outcomes and events
//
// Outcome (from any process) says where a request stands: queued, running,
// or how it ended, with the thread's state and pending interrupts; Wait
// blocks until it ends. Each run a worker starts for a request stores its
// events in the store's event log (runtime.WithEventLog) and its id in
// the request (Outcome.Runs, as the run starts), so a process other than
// the worker follows a request live with Store().ReadEvents(run, afterSeq,
// limit) and reconnects after the last Seq it saw.
//
// # Notifications
//
// Submitting, ending and cancelling a request send a PostgreSQL
// notification (NOTIFY on the channel "ilmek:" + schema, at commit). Each
// worker and each process that waits in Queue.Wait listens on a connection
// of its own, outside the store's pool: an idle worker claims a new request
// at once, a cancel reaches the running request's worker at once, and Wait
// returns as soon as the outcome is recorded. Polling (Poll, Wait's poll)
// remains the safety net for what sends no notification (an expired claim)
// and for notifications lost while a listener reconnects. Within one
// process, workers and waiters that share a Queue are woken directly as
// well (a submit wakes its workers, an outcome its waiters), without
// waiting for the notification's round trip; a worker ignores its own end
// notifications and claims again only when more requests were queued, or
// when the request it ended had another of its thread waiting behind it.
//
// # Statements per request
//
// A statement here is a round trip to the server (statements sent in one
// batch, one implicit transaction, count once). Besides its run's
// commits, a request costs three: the submit (under DoubleTextEnqueue,
// with its fair sequence number); the claim, which reads the thread's
// latest checkpoint's id and records it as the request's base, takes the
// request's slots and tokens, takes the thread's lease for the run, and
// records the run's id, made before the claim, with the claim's entry in
// the claims log (so a request names its run before anything of the run
// is stored), with, in its batch and transaction, the read of the
// thread's latest checkpoint the run starts from (a statement of its own,
// after the lease is taken: it sees the last write of any holder the
// claim took over from, and no later one can land); and Wait's read. A
// worker hands the outcome it recorded to the waiters of its own process,
// which do not read it back. The outcome with its notification (giving
// back the slots) is sent in one transaction with the run's last write
// (its last events and the lease's release, with the checkpoint that
// ended the run when it ended done): both land or neither does. The run
// itself costs a statement per checkpoint, the last one's in the
// outcome's transaction; a start request's first checkpoint (its input's)
// is written with the first superstep's, in one commit: the request's row
// keeps the input durable until then, so a crash before that write loses
// nothing the next claim does not redo. A request's fixed cost is then 3
// round trips, the same as a direct run's with the event log (its lease,
// its read, its last events; TestRequestStatements counts them all; flow
// control adds none). When
// the last write cannot land (the lease was taken over), neither does the
// outcome: the request is released, and a later claim runs the last
// superstep again, its Steps' journals keeping their effects from
// running twice.
//
// # Workers and crashes
//
// A worker claims the first runnable request in the claim order (see
// Flow control) with SELECT ... FOR UPDATE SKIP LOCKED, so workers never block each other, and marks it running
// under a numbered claim until a claim deadline it renews every third of
// ClaimTTL. The claim also takes the thread's lease, which the worker
// hands to the run (or drops, when the request ends without one). It runs
// the request on the thread through the store, so the
// thread's own lease and fencing keep one run per thread, and records the
// outcome (status, state, pending interrupts, error) under its claim
// number. When a worker dies, its claim expires and another worker claims
// the request again: the run continues from the thread's last checkpoint,
// and the journal keeps completed steps from running again (a gap:
// a step whose effect completed but whose journal write did not reach the
// server runs again). A re-claimed start request folds its input in again
// only when no earlier run of the request wrote to the thread: the thread
// has no checkpoint written since the request was first claimed, or it
// has, by another writer, while the event log (whose rows commit with a
// run's checkpoints) holds nothing of the request's earlier runs (their
// worker died before their first commit). In that last case the run
// starts from the other writer's checkpoint, so its tasks are planned
// anew: a step the dead run had journaled in its first superstep runs
// again, on the thread as it is now. A re-claimed request whose earlier
// run did write continues from exactly the checkpoint the claim read:
// the earlier run's worker may still live (its claim expired first, not
// its lease) and end the thread before the continuing run takes it, and
// then the continuing run is refused, and the next claim records the
// ended run's outcome. So is every run a claim decides: a start, a
// resume and a fork run only on the checkpoint the claim read (a fork's
// lease checks it, as the runtime does not take WithExpectedLatest for a
// fork), and a wake that finds nothing due looks at the thread as it is
// then, so an earlier run that has just woken it is recorded, not
// dropped. A claim whose run was refused before it wrote anything
// (the thread busy with another run, or moved by another writer since the
// claim's snapshot; a run that ran and failed is no refusal, whatever its
// error wraps) gives the request back with the base it found before
// it, so that the next claim folds the input into the thread as it is
// then. A claim found again after its reply was lost knows that base
// from its entry in the claims log.
//
// # Transient errors
//
// The worker's own statements (the claim with its read, its renewals, the
// outcome with the run's last write, a release) are retried after a transient error (a connection cut or
// terminated, the server shutting down or starting, a serialization
// failure, a deadlock) with pauses that double from 20 ms to 1 s, within
// a budget per statement: 5 s for a claim,
// a third of ClaimTTL for a renewal, 30 s for an outcome. Each is safe to
// apply twice: every write after the claim is fenced by the claim's number
// and writes the same values again, and a claim whose reply was lost after
// it committed is found again by the tag it wrote in the request's worker
// column, so it neither runs a request twice nor leaves it to wait for its
// claim to expire. Each retry is logged as a warning (Logger) and passed
// to OnRetry as a checkpoint.Retry; the otel module's Observer.Retry turns
// it into a counter and a span event.
// TestQueueStatementsSurviveTerminatedConnections cuts the connections
// with pg_terminate_backend before and after each of these commits.
//
// A run that fails with a transient error is given back too, and
// continued by the next claim from its last commit: the store's (a
// connection cut, a server restart) and a node's own alike (an API call
// that timed out, a node's database restarting, an error that wraps a
// network error with %w), since the worker cannot tell a node's database
// that is restarting from the queue's. The store's failures
// (runtime.CheckpointError) are given back after 200 ms, without limit. A
// node's are given back after a pause that starts at 200 ms and doubles,
// up to 30 s, with each claim in a row whose run failed so in the first
// superstep it ran (Claim.Stuck in the claims log); past TransientRetries
// such claims (default 10, about two minutes) the node's error ends the
// request in state error. A run that completed a superstep before it
// failed starts the count again, so a long request that meets a passing
// outage now and then is not ended by it; a claim refused because another
// run held the thread (Claim.Refused) neither counts nor starts it again
// (TestNodeTransientErrorEndsTheRequest,
// TestNodeTransientErrorsWithProgress, TestBusyClaimBetweenStuckClaims). A node that should fail the run
// at once on such an error returns it unwrapped (%v, not %w); a retry
// policy of its own (runtime.WithNodeRetry) retries it within one run.
//
// Submit is the client's statement, and it is not retried: a Submit
// whose reply was lost may have queued its request. Retry it with the
// same Request.Key, which finds that request (TestSubmitKey); without a
// key a retry queues a second request, which takes the same answers to
// the thread's next question or runs the same input again, unless the
// request names the checkpoint it was decided against
// (Request.ExpectedLatest): the second one then ends refused
// (TestSubmitExpectedLatest).
//
// # Why not River
//
// River (github.com/riverqueue/river v0.51.2) was evaluated as the engine
// under the queue and is not used, because the guarantees above do not map
// onto its jobs (checked against its source and in a scratch program on
// PostgreSQL 15):
//
//   - A claim is not fenced. River finishes a job by id while its state is
//     running (JobSetStateIfRunningMany), not by attempt: a job made
//     available again while attempt 1 still ran was claimed as attempt 2
//     by another client, and attempt 1's return marked it completed while
//     attempt 2 was still running. Here an outcome is written only under
//     the claim number that is current.
//   - No claim deadline is renewed. A running job is rescued when it has
//     run longer than RescueStuckJobsAfter (default one hour, checked
//     every 30 s by the leader), whatever its worker's health: a short
//     value runs healthy long runs twice, a long one leaves a dead
//     worker's request stuck for that long. Here a claim is renewed every
//     third of ClaimTTL and expires ClaimTTL after its worker dies.
//   - One run per thread in submission order, and the DoubleTexting
//     policies, need jobs serialized by key. River's open-source unique
//     jobs reject a duplicate insert (reject maps; enqueue behind and
//     cancel-and-replace do not); per-key sequences and partition limits
//     are in its paid edition.
//   - Periodic jobs are approximate: the elected leader keeps the
//     schedule in memory and starts over after a restart or a new
//     election, so neither exactly one firing per tick across a restart
//     nor a catch-up policy holds; intervals under a minute are
//     discouraged.
//
// What does map (priorities, a maximum number of attempts with a
// discarded state, jobs scheduled for a time, retention by a cleaner)
// is each a column, an ORDER BY term or a DELETE in ilmek_requests, and
// is added there rather than running a second queue beside this one:
// priorities, dead requests and retention are (see Flow control and Dead
// requests), with partition limits and rate limits, which River's open
// edition does not have.
// Waking parked threads (runtime.Sleep, interrupt deadlines) is done the
// same way: a due timer becomes a claimable request of kind "wake",
// fenced like any run (see Timers); runtime/waker does it for the stores
// of one process.
package workers
