package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/queuehook"
	"github.com/ilmek-go/ilmek/runtime/postgres/internal/pgside"
)

// Worker claims requests from a queue and runs them on its graphs.
type Worker struct {
	q      *Queue
	graphs map[string]Runnable
	opts   workerOptions

	wake    chan struct{}      // a request may have become runnable
	mu      sync.Mutex         // guards running and ended
	running map[int64]func()   // request id → ask its run to stop
	ended   map[int64]struct{} // requests whose end this worker recorded, until their notification arrives
}

// WorkerOption configures NewWorker.
type WorkerOption func(*workerOptions)

type workerOptions struct {
	name        string
	ttl         time.Duration
	poll        time.Duration
	concurrency int
	logger      *slog.Logger
	onRetry     checkpoint.RetryFunc
	maxClaims   int
	retries     int                                      // TransientRetries
	grace       time.Duration                            // ScheduleGrace
	onFiring    func(context.Context, checkpoint.Firing) // OnFiring
	onEvent     func(context.Context, Event)
	keep, every time.Duration // Retention
}

// DefaultClaimTTL is how long a claim lasts without renewal unless ClaimTTL
// says otherwise.
const DefaultClaimTTL = 30 * time.Second

// ClaimTTL sets how long a worker's claim on a request lasts without
// renewal (default 30 s): after a worker died, its request is claimed
// again once this has passed.
func ClaimTTL(d time.Duration) WorkerOption { return func(o *workerOptions) { o.ttl = d } }

// Poll sets how often an idle worker looks for requests when no
// notification woke it sooner (default 1 s). New requests and ended ones
// wake idle workers at once; the poll finds requests whose claim expired.
func Poll(d time.Duration) WorkerOption { return func(o *workerOptions) { o.poll = d } }

// Concurrency sets how many requests a worker runs at once (default 4).
func Concurrency(n int) WorkerOption { return func(o *workerOptions) { o.concurrency = n } }

// Name sets how the worker names itself in the requests it claims
// (default "pid N on HOST"); the request's worker column holds the name,
// " #" and a tag of the claim.
func Name(s string) WorkerOption { return func(o *workerOptions) { o.name = s } }

// Logger sets where the worker logs requests it could not run.
func Logger(l *slog.Logger) WorkerOption { return func(o *workerOptions) { o.logger = l } }

// NewWorker returns a worker running q's requests on graphs, by the name
// requests give in Request.Graph.
func NewWorker(q *Queue, graphs map[string]Runnable, opts ...WorkerOption) *Worker {
	host, _ := os.Hostname()
	o := workerOptions{name: fmt.Sprintf("pid %d on %s", os.Getpid(), host), ttl: DefaultClaimTTL, poll: time.Second, concurrency: 4, maxClaims: DefaultMaxClaims, retries: DefaultTransientRetries, grace: DefaultScheduleGrace, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	if o.concurrency < 1 {
		o.concurrency = 1
	}
	return &Worker{q: q, graphs: graphs, opts: o, wake: make(chan struct{}, 1), running: map[int64]func(){}, ended: map[int64]struct{}{}}
}

// claimed is a request a worker claimed.
type claimed struct {
	id                  int64
	thread, graph, kind string
	input               []byte
	claim               int64
	baseCP              *string // the request's base_cp before this claim (nil at its first)
	continueAt          *string // the checkpoint a continuing run must start from (runClaimed)
	latest              string  // the thread's latest checkpoint as the claim found it ("" for none)
	expect              *string // Request.ExpectedLatest (nil: none)
	partition           string  // the request's partition key
	cancelled           bool
	more                bool // another request was queued when this one was claimed
	// epoch is the thread's lease the claim took (nil: none; a retried
	// claim that found its lost attempt's request finds that attempt's
	// lease by its owner), leaseSent when the claim was sent.
	epoch     *int64
	leaseSent time.Time
	// read is what the claim's read found of the thread (nil: no read;
	// claimread.go), which the run starts from.
	read *claimRead
	// runID is the id the claim recorded for the request's run ("" for
	// none: a cancelled request's claim). A claim retried after its reply
	// was lost sends the same id, so the row it finds holds it too.
	runID string
	// ran says the claim's run was started and not refused: the request
	// keeps runID among its runs. A claim that ends or gives back the
	// request without one takes runID out again.
	ran bool
	cp  *claimedStore // the run's Checkpointer, holding the claim's lease
}

// Run claims and runs requests until ctx is done, then waits for the
// requests it is running to stop (they stop with ctx; their claims expire
// and another worker continues them). It returns ctx's error.
func (w *Worker) Run(ctx context.Context) error {
	sem := make(chan struct{}, w.opts.concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer w.q.local.add(w.wake, w.stopRequest)() // before listening: a notification heard wakes the local workers
	lctx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.q.listen(lctx, w.notified, func() { signal(w.wake) })
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.scanTimers(lctx, max(w.opts.poll, minTimerScan))
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.fireSchedules(lctx, max(w.opts.poll, minTimerScan))
	}()
	if w.opts.keep > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.prune(lctx)
		}()
	}
	claimNow := true // claim without waiting: at the start, and while requests may be queued
	for {
		if !claimNow {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-w.wake:
			case <-time.After(w.opts.poll):
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case sem <- struct{}{}:
		}
		sent := time.Now()
		res, err := w.claim(ctx)
		c := res.c
		if err != nil || c == nil {
			<-sem
			if err != nil && ctx.Err() == nil {
				w.opts.logger.Warn("claim a request", "err", err)
			}
			claimNow = res.raced
			if res.wait > 0 && res.wait < w.opts.poll {
				// A rate limit holds requests back: claim again when its
				// bucket holds a token, rather than at the next poll.
				w.rateWait(ctx, res.wait)
				claimNow = true
			}
			continue
		}
		w.claimed(ctx, c, sent)
		// Claim again as soon as a slot is free only when more requests
		// were queued; otherwise a notification (a new request, or the
		// end of one that another of its thread waited behind) or the
		// poll wakes the loop.
		claimNow = c.more
		w.q.local.claimedHere(c.id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			w.runClaimed(ctx, c)
		}()
	}
}

// stopRequest stops request id's run at its next superstep boundary if
// this worker runs it.
func (w *Worker) stopRequest(id int64) {
	w.mu.Lock()
	stop := w.running[id]
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// notified handles a notification on the queue's channel: a new or ended
// request wakes the claim loop; a cancel stops the named request's run at
// its next superstep boundary if this worker runs it.
func (w *Worker) notified(payload string) {
	if id, ok := strings.CutPrefix(payload, noteCancel); ok {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			w.stopRequest(n)
		}
		return
	}
	if id, ok := strings.CutPrefix(payload, noteNew); ok {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			w.q.local.heard(n) // unless Submit or another worker's notification woke them
			return
		}
	}
	if id, ok := strings.CutPrefix(payload, noteEnd); ok {
		// The end of a request this worker recorded: finish already woke
		// the loop if a request of its thread waited behind it.
		n, err := strconv.ParseInt(id, 10, 64)
		w.mu.Lock()
		_, own := w.ended[n]
		delete(w.ended, n)
		w.mu.Unlock()
		if err == nil && own {
			return
		}
	}
	signal(w.wake)
}

// The budgets of the worker's retried statements: a claim gives up and
// waits for the next poll; an outcome is retried for longer, since a
// request whose outcome is not recorded waits for its claim to expire.
const (
	claimBudget  = 5 * time.Second
	finishBudget = 30 * time.Second
)

// testHookClaimDecided, when set by a test, is called once runClaimed
// has decided how a claim's run goes, before the run takes the thread.
var testHookClaimDecided func(runMode)

// runClaimed runs a claimed request and records its outcome. The lease
// its claim took goes to its run (claimedStore); when no run took it, it
// is dropped before the outcome is recorded.
func (w *Worker) runClaimed(ctx context.Context, c *claimed) {
	c.cp = &claimedStore{Store: w.q.store, thread: c.thread, epoch: c.epoch, sent: c.leaseSent}
	if c.epoch != nil {
		c.cp.read = c.read // read under the claim's lease: only its run may start from it
	}
	defer c.cp.dropUnused()
	g := w.graphs[c.graph]
	if g == nil {
		w.finish(c, "error", nil, fmt.Sprintf("no graph %q is registered with the worker %s; register it in NewWorker's map", c.graph, w.opts.name))
		return
	}
	if c.cancelled {
		w.finishCancelled(ctx, c, g)
		return
	}
	if w.buryIfSpent(ctx, c) {
		return
	}
	cp := w.q.store
	from := "" // a fork's checkpoint
	if c.kind == kindFork {
		var f forkInput
		if err := json.Unmarshal(c.input, &f); err != nil {
			w.finish(c, "error", nil, fmt.Sprintf("the stored fork request is not JSON: %v", err))
			return
		}
		c.kind, c.input, from = string(f.Kind), f.Input, f.From
	}
	mode := modeStart
	switch c.kind {
	case string(KindResume):
		mode = modeResume
	case kindWake:
		// Thread.Wake itself continues a wake an earlier claim's worker
		// died in, and refuses a thread with nothing due.
		if testHookClaimDecided != nil {
			testHookClaimDecided(modeWake)
		}
		w.runClaimedRun(ctx, c, g, "", modeWake)
		return
	}
	// The first claim noted where the thread stood (base_cp), so that a
	// later claim knows whether this request's input was folded in already.
	latest := c.latest
	if c.baseCP != nil && *c.baseCP != latest {
		// The thread moved since then: by an earlier claim's run, which
		// got past its first commit, or by another writer while no run of
		// this request had committed (its worker died first). The run's
		// events commit with its checkpoints, so they tell which.
		committed, err := w.earlierRunCommitted(ctx, c)
		if err != nil {
			w.releaseRefused(c, err) // nothing ran: a later claim asks again
			return
		}
		if committed {
			// An earlier claim ran this request past its first commit. If
			// the run ended before its worker could record that, record it
			// now; running again would start the thread anew.
			out, at, ended, err := g.ended(ctx, cp, c.thread)
			if err != nil {
				w.releaseRefused(c, err)
				return
			}
			if ended {
				w.finish(c, string(out.Status), &out, "")
				return
			}
			mode = modeContinue
			from = "" // the fork's branch is the thread's latest now
			// Continue from the checkpoint just read, and only from it. A
			// run of an earlier claim whose worker still lives (its claim
			// expired, not its lease) may end the thread before this run
			// takes the lease: on an ended thread, a run with no input
			// starts the graph anew. The run is then refused as moved, and
			// the next claim records the ended run's outcome.
			c.continueAt = &at
		}
	}
	if testHookClaimDecided != nil {
		testHookClaimDecided(mode)
	}
	if mode != modeContinue && c.expect != nil && *c.expect != latest {
		// Decided against a thread as it no longer is (Request.ExpectedLatest):
		// a resume retried after the first one answered, a start after
		// another run. Nothing ran.
		w.finish(c, "error", nil, fmt.Sprintf("thread %q: latest checkpoint %q, expected %q: %v", c.thread, latest, *c.expect, runtime.ErrThreadMoved))
		return
	}
	if from != "" {
		// A fork, decided against the thread as the claim found it: an
		// earlier claim's run whose worker still lives may have run the
		// fork's branch since. The runtime's WithExpectedLatest does not
		// take a fork, so the run's lease checks (claimedStore.expect).
		c.cp.expect = &latest
	}
	w.runClaimedRun(ctx, c, g, from, mode)
}

// finishCancelled records a request cancelled while it was running, now
// claimed again: its worker died, or stalled past its claim. A run of an
// earlier claim may have written to the thread, or be writing still (its
// worker alive, its lease held), so the outcome waits for the lease and
// then tells the thread as it is. A run that had ended the thread before
// the cancel reached it is recorded as it ended; one cut short is
// recorded aborted, saying the thread keeps what it committed; with none
// that wrote, the request was cancelled before it ran.
func (w *Worker) finishCancelled(ctx context.Context, c *claimed, g Runnable) {
	if c.baseCP == nil {
		w.finish(c, "aborted", nil, "cancelled before it ran") // no earlier claim
		return
	}
	if c.epoch == nil {
		// The thread's lease is another's: an earlier claim's run, its
		// worker alive (the cancel stops it at its next boundary), or a
		// dead one's lease not lapsed yet. Look again once it is free.
		w.releaseRefused(c, fmt.Errorf("thread %q is held by an earlier claim's run: %w", c.thread, runtime.ErrThreadBusy))
		return
	}
	committed, err := w.earlierRunCommitted(ctx, c)
	if err != nil {
		w.releaseRefused(c, err)
		return
	}
	if !committed {
		w.finish(c, "aborted", nil, "cancelled before it ran")
		return
	}
	out, _, ended, err := g.ended(ctx, w.q.store, c.thread)
	if err != nil {
		w.releaseRefused(c, err)
		return
	}
	if ended {
		w.finish(c, string(out.Status), &out, "") // it ended before the cancel reached it
		return
	}
	w.finish(c, "aborted", nil, "cancelled after an earlier claim's run had begun it: the thread keeps what that run committed, and its next run continues from there")
}

// runClaimedRun runs a claimed request's run in mode and records its
// outcome.
func (w *Worker) runClaimedRun(ctx context.Context, c *claimed, g Runnable, from string, mode runMode) {
	cp := c.cp
	defer cp.flushFinal() // a run's last write that no outcome took (the worker stopping)
	latest := c.latest
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A cancel request stops the run between supersteps: the superstep in
	// flight finishes and commits.
	stopRun := make(chan struct{})
	var stopOnce sync.Once
	requestStop := func() { stopOnce.Do(func() { close(stopRun) }) }
	w.mu.Lock()
	w.running[c.id] = requestStop
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.running, c.id)
		w.mu.Unlock()
	}()
	stop := make(chan struct{})
	hb := make(chan struct{})
	go func() { defer close(hb); w.heartbeat(runCtx, c, cancel, requestStop, stop) }()
	extra := []runtime.RunOption{runtime.WithStopSignal(stopRun)}
	if mode == modeResume && from == "" {
		// Answer the questions of the checkpoint the claim found (the one
		// the request names, when it names one: runClaimed checked), not
		// those of a checkpoint written since. An earlier claim's run whose
		// worker still lives may have answered them and asked again (a
		// loop) before this run takes the lease: the run is then refused
		// as moved, and the next claim records that run's outcome.
		extra = append(extra, runtime.WithExpectedLatest(latest))
	}
	if mode == modeContinue && c.continueAt != nil {
		extra = append(extra, runtime.WithExpectedLatest(*c.continueAt))
	}
	if mode == modeStart && from == "" {
		// Fold the input only into the thread as this claim found it: if
		// another claim's run moved it meanwhile, a later claim looks again.
		// (A fork starts from its own checkpoint, not the latest: the
		// runtime would refuse it as moved, and the claim would loop.)
		extra = append(extra, runtime.WithExpectedLatest(latest))
	}
	if c.runID != "" {
		if o, ok := queuehook.RunID(c.runID).(runtime.RunOption); ok {
			extra = append(extra, o)
		}
	}
	if mode == modeStart {
		// The request's row keeps its input durable: the run's first
		// checkpoint (the input's) is written with its next write, one
		// commit less. A crash before that loses nothing the next claim
		// does not redo (the thread then has no checkpoint since the
		// request was first claimed).
		if o, ok := queuehook.KeepFirst.(runtime.RunOption); ok {
			extra = append(extra, o)
		}
	}
	if _, ok := runtime.Checkpointer(cp).(checkpoint.EventStore); ok {
		extra = append(extra, runtime.WithEventLog())
	}
	c.ran = true
	out, err := g.run(runCtx, cp, c.thread, from, c.input, mode, extra...)
	close(stop)
	<-hb
	stopped := errors.Is(err, runtime.ErrStopRequested)
	// A run refused before it ran has no status. A run that ran and failed
	// has one, whatever its error wraps (a node that drove another thread,
	// which was busy): it may have committed, so it is no refusal.
	refused := out.Status == ""
	var ce *runtime.CheckpointError
	switch {
	case refused && errors.Is(err, runtime.ErrThreadBusy):
		c.ran = false
		w.releaseRefused(c, err) // a dead worker's lease has not expired yet, or another run holds the thread: later
		return
	case refused && errors.Is(err, runtime.ErrThreadMoved):
		c.ran = false
		w.releaseRefused(c, err) // another writer got there first: look again
		return
	case errors.As(err, &ce) && !stopped:
		// The store failed (a connection cut, a server restart) or the
		// thread's lease was lost: nothing past the last commit was
		// written, so the request is claimed again and continues there.
		w.release(c, err)
		return
	case transient(err) && !stopped && w.releaseFailed(c, out.Supersteps < 2, err):
		// A node's error that looks transient (an API that timed out, its
		// database restarting): given back likewise, after a pause that
		// grows while its runs get nowhere; past TransientRetries such
		// claims in a row it is the run's error, below.
		return
	case ctx.Err() != nil:
		return // this worker stops; the claim expires and another continues
	case mode == modeWake && notDue(err):
		c.ran = false // refused: nothing was due
		w.finishNotDue(ctx, c, g, err)
		return
	case stopped:
		out.Status = runtime.StatusAborted
	}
	msg := ""
	if err != nil {
		msg = err.Error()
		if out.Status == "" {
			out.Status = runtime.StatusError // refused before it ran: bad input, answers that do not fit
		}
	}
	w.finish(c, string(out.Status), &out, msg)
}

// heartbeat renews the claim every TTL/3; it cancels the run when the
// claim was lost and asks it to stop at its next superstep boundary when
// the request was cancelled (should the notification have been missed).
func (w *Worker) heartbeat(ctx context.Context, c *claimed, cancel context.CancelCauseFunc, requestStop func(), stop chan struct{}) {
	t := time.NewTicker(w.opts.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var cancelled bool
		// A renewal is retried until the next one is due: it only moves
		// the claim's deadline, under the claim.
		err := w.retry(ctx, "renew", c.id, w.opts.ttl/3, func(int) error {
			return w.q.store.Pool().QueryRow(ctx, "UPDATE "+w.q.t("ilmek_requests")+" SET claim_until = clock_timestamp() + $3::bigint * interval '1 microsecond' WHERE id = $1 AND claim = $2 RETURNING cancel",
				c.id, c.claim, w.opts.ttl.Microseconds()).Scan(&cancelled)
		})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			cancel(errors.New("the claim on the request was taken over"))
			return
		case err == nil && cancelled:
			requestStop()
		case err != nil && ctx.Err() == nil:
			w.opts.logger.Warn("renew a claim", "request", c.id, "err", err) // the next renewal may still reach the server in time
		}
	}
}

// finish records the request's outcome under its claim.
func (w *Worker) finish(c *claimed, state string, out *runOutcome, msg string) {
	c.cp.dropUnused() // before the end: a request of the thread behind this one would find it held
	var result []byte
	if out != nil {
		result, _ = json.Marshal(out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishBudget)
	defer cancel()
	r := w.q.t("ilmek_requests")
	w.mu.Lock()
	if len(w.ended) > 1024 {
		clear(w.ended) // notifications lost while the listener reconnected
	}
	w.ended[c.id] = struct{}{}
	w.mu.Unlock()
	var next, freed, noRow bool
	o := Outcome{ID: c.id, State: state, Error: msg}
	// One statement. It is fenced by the claim and writes the same values
	// when applied twice; o and freed give back the request's slot in its
	// concurrency limits, once: a second application finds it ended. It
	// says whether a request of the thread waits behind this one; if so,
	// the claim loop is woken (the worker ignores its own end
	// notification).
	outcome := pgside.Then{
		SQL: `WITH o AS (SELECT graph, partition_key FROM ` + r + ` WHERE id = $1 AND claim = $2 AND state = 'running'),
			u AS (UPDATE ` + r + ` SET state = $3, result = $4, error = $5, claim_until = NULL, updated = clock_timestamp(),
					run_ids = CASE WHEN $8 THEN run_ids ELSE array_remove(run_ids, $9::text) END
				WHERE id = $1 AND claim = $2 RETURNING thread_id, claim, run_ids),
			` + w.q.freeSQL() + `
			SELECT pg_notify($6, $7), EXISTS (SELECT 1 FROM ` + r + ` e, u WHERE e.thread_id = u.thread_id AND e.state IN ('queued', 'running') AND e.state = 'queued'),
				EXISTS (SELECT 1 FROM freed WHERE was_full), u.thread_id, u.claim, u.run_ids FROM u`,
		Args: []any{c.id, c.claim, state, result, msg, w.q.ch, noteEnd + strconv.FormatInt(c.id, 10), c.ran, c.runID},
		Scan: func(row pgx.Row) error {
			err := row.Scan(nil, &next, &freed, &o.Thread, &o.Claims, &o.Runs)
			noRow = errors.Is(err, pgx.ErrNoRows)
			return err
		},
	}
	w.q.recording(c.id)
	var err error
	if final, lease := c.cp.takeFinal(); final != nil {
		// The run's last write waited for this (runLease): the outcome is
		// recorded in its transaction, or neither is written. When neither
		// is (the lease was lost, the store kept failing), the request is
		// released, as when the run's last write fails.
		err = final.Write(ctx, &outcome)
		lease.Release() // nothing left to give back once written
		switch {
		case errors.Is(err, pgside.ErrUnread):
			w.q.recorded(c.id, nil) // recorded; the waiters read it
			signal(w.wake)
			return
		case err != nil:
			w.q.recorded(c.id, nil)
			w.release(c, err)
			return
		}
	} else {
		// Retried: a connection cut now would leave the request to be
		// claimed again once its claim expires.
		err = w.retry(ctx, "finish", c.id, finishBudget, func(int) error {
			return outcome.Scan(w.q.store.Pool().QueryRow(ctx, outcome.SQL, outcome.Args...))
		})
	}
	if err == nil && !noRow {
		err = o.setResult(result)
	}
	switch {
	case noRow:
		// The claim was taken over: the outcome is the new claim's.
		w.q.recorded(c.id, nil)
	case err != nil:
		w.opts.logger.Warn("record a request's outcome", "request", c.id, "err", err)
		w.q.recorded(c.id, nil)
	default:
		// This process's waiters get the outcome at once, as the row
		// now holds it (the statement returned what it wrote).
		w.q.recorded(c.id, &o)
		if next || freed {
			// A request of the thread waits behind this one, or a
			// concurrency limit that was full has a slot free again.
			signal(w.wake)
		}
	}
}

// release gives a claimed request back to the queue, to be claimed again
// after a short pause.
func (w *Worker) release(c *claimed, why error) { w.giveBack(c, why, false, releasePause, false) }

// releaseRefused is release for a request whose claim ran nothing: its run
// was refused before it wrote anything (the thread was busy, or had moved
// since the claim's snapshot), or the claim could not read what earlier
// claims' runs wrote. The request's base_cp goes back to what it was before this
// claim (none at its first claim), since this claim's run folded nothing
// in: a later claim that found the base this claim noted, and the thread
// moved on by another writer meanwhile, would take the request for one
// whose run got past its first commit, and end it without running it.
// The run's id leaves the request's runs.
func (w *Worker) releaseRefused(c *claimed, why error) {
	w.giveBack(c, why, true, releasePause, false)
}

// giveBack is release, with the request claimable again after pause;
// refused restores the request's base_cp and takes the claim's run id out
// of its runs; stuck marks the claim's entry in the claims log as a run
// that failed and got nowhere (Claim.Stuck).
func (w *Worker) giveBack(c *claimed, why error, refused bool, pause time.Duration, stuck bool) {
	c.cp.flushFinal()
	c.cp.dropUnused()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.opts.logger.Info("request released", "request", c.id, "why", why)
	err := w.retry(ctx, "release", c.id, 5*time.Second, func(int) error {
		_, err := w.q.store.Pool().Exec(ctx, "UPDATE "+w.q.t("ilmek_requests")+" SET claim_until = clock_timestamp() + $8::bigint * interval '1 microsecond', "+claimReleased+
			", base_cp = CASE WHEN $4 THEN $5::text ELSE base_cp END, run_ids = CASE WHEN $4 THEN array_remove(run_ids, $6::text) ELSE run_ids END"+
			" WHERE id = $1 AND claim = $2", c.id, c.claim, why.Error(), refused, c.baseCP, c.runID, stuck, pause.Microseconds())
		return err
	})
	if err != nil {
		w.opts.logger.Warn("release a request", "request", c.id, "err", err)
	}
}
