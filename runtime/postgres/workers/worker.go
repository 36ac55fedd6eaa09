package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Worker claims requests from a queue and runs them on its graphs.
type Worker struct {
	q      *Queue
	graphs map[string]Runnable
	opts   workerOptions

	wake    chan struct{}    // a request may have become runnable
	mu      sync.Mutex       // guards running
	running map[int64]func() // request id → ask its run to stop
}

// WorkerOption configures NewWorker.
type WorkerOption func(*workerOptions)

type workerOptions struct {
	name        string
	ttl         time.Duration
	poll        time.Duration
	concurrency int
	logger      *slog.Logger
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
// (default "pid N on HOST").
func Name(s string) WorkerOption { return func(o *workerOptions) { o.name = s } }

// Logger sets where the worker logs requests it could not run.
func Logger(l *slog.Logger) WorkerOption { return func(o *workerOptions) { o.logger = l } }

// NewWorker returns a worker running q's requests on graphs, by the name
// requests give in Request.Graph.
func NewWorker(q *Queue, graphs map[string]Runnable, opts ...WorkerOption) *Worker {
	host, _ := os.Hostname()
	o := workerOptions{name: fmt.Sprintf("pid %d on %s", os.Getpid(), host), ttl: DefaultClaimTTL, poll: time.Second, concurrency: 4, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	if o.concurrency < 1 {
		o.concurrency = 1
	}
	return &Worker{q: q, graphs: graphs, opts: o, wake: make(chan struct{}, 1), running: map[int64]func(){}}
}

// claimed is a request a worker claimed.
type claimed struct {
	id                  int64
	thread, graph, kind string
	input               []byte
	claim               int64
	baseCP              *string
	cancelled           bool
}

// Run claims and runs requests until ctx is done, then waits for the
// requests it is running to stop (they stop with ctx; their claims expire
// and another worker continues them). It returns ctx's error.
func (w *Worker) Run(ctx context.Context) error {
	sem := make(chan struct{}, w.opts.concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	lctx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.q.listen(lctx, w.notified, func() { signal(w.wake) })
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case sem <- struct{}{}:
		}
		c, err := w.claim(ctx)
		if err != nil || c == nil {
			<-sem
			if err != nil && ctx.Err() == nil {
				w.opts.logger.Warn("claim a request", "err", err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-w.wake:
			case <-time.After(w.opts.poll):
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			w.runClaimed(ctx, c)
		}()
	}
}

// notified handles a notification on the queue's channel: a new or ended
// request wakes the claim loop; a cancel stops the named request's run at
// its next superstep boundary if this worker runs it.
func (w *Worker) notified(payload string) {
	if id, ok := strings.CutPrefix(payload, noteCancel); ok {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return
		}
		w.mu.Lock()
		stop := w.running[n]
		w.mu.Unlock()
		if stop != nil {
			stop()
		}
		return
	}
	signal(w.wake)
}

// claim takes the oldest runnable request: queued, or running under a
// claim that expired; and the oldest active one of its thread.
func (w *Worker) claim(ctx context.Context) (*claimed, error) {
	r := w.q.t("ilmek_requests")
	var c claimed
	err := w.q.store.Pool().QueryRow(ctx, `UPDATE `+r+` SET state = 'running', worker = $1, claim = claim + 1,
			claim_until = clock_timestamp() + $2::bigint * interval '1 microsecond', updated = clock_timestamp()
		WHERE id = (
			SELECT q.id FROM `+r+` q
			WHERE q.state IN ('queued', 'running') AND (q.state = 'queued' OR q.claim_until < clock_timestamp())
			  AND NOT EXISTS (SELECT 1 FROM `+r+` e WHERE e.thread_id = q.thread_id AND e.id < q.id AND e.state IN ('queued', 'running'))
			ORDER BY q.id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, thread_id, graph, kind, input, claim, base_cp, cancel`,
		w.opts.name, w.opts.ttl.Microseconds()).Scan(&c.id, &c.thread, &c.graph, &c.kind, &c.input, &c.claim, &c.baseCP, &c.cancelled)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// runClaimed runs a claimed request and records its outcome.
func (w *Worker) runClaimed(ctx context.Context, c *claimed) {
	g := w.graphs[c.graph]
	if g == nil {
		w.finish(c, "error", nil, fmt.Sprintf("no graph %q is registered with the worker %s; register it in NewWorker's map", c.graph, w.opts.name))
		return
	}
	if c.cancelled {
		w.finish(c, "aborted", nil, "cancelled before it ran")
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
	if c.kind == string(KindResume) {
		mode = modeResume
	}
	latest := ""
	if last, err := cp.Get(ctx, c.thread, ""); err == nil {
		latest = last.ID
	} else if !errors.Is(err, runtime.ErrNotFound) {
		w.release(c, err)
		return
	}
	if c.baseCP == nil {
		// First claim: note where the thread stood, so a later claim knows
		// whether this request's input was folded in already.
		tag, err := w.q.store.Pool().Exec(ctx, "UPDATE "+w.q.t("ilmek_requests")+" SET base_cp = $1 WHERE id = $2 AND claim = $3", latest, c.id, c.claim)
		if err != nil {
			w.release(c, err)
			return
		}
		if tag.RowsAffected() == 0 {
			return // the claim expired: another worker has the request now
		}
	} else if *c.baseCP != latest {
		// An earlier claim ran this request past its first commit. If the
		// run ended before its worker could record that, record it now;
		// running again would start the thread anew.
		out, ended, err := g.ended(ctx, cp, c.thread)
		if err != nil {
			w.release(c, err)
			return
		}
		if ended {
			w.finish(c, string(out.Status), &out, "")
			return
		}
		mode = modeContinue
		from = "" // the fork's branch is the thread's latest now
	}
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
	extra := []runtime.RunOption{runtime.WithStopSignal(stopRun), runtime.WithObserver(runStarted{w: w, c: c})}
	if mode == modeStart {
		// Fold the input only into the thread as this claim found it: if
		// another claim's run moved it meanwhile, a later claim looks again.
		extra = append(extra, runtime.WithExpectedLatest(latest))
	}
	if _, ok := runtime.Checkpointer(cp).(checkpoint.EventStore); ok {
		extra = append(extra, runtime.WithEventLog())
	}
	out, err := g.run(runCtx, cp, c.thread, from, c.input, mode, extra...)
	close(stop)
	<-hb
	stopped := errors.Is(err, runtime.ErrStopRequested)
	var ce *runtime.CheckpointError
	switch {
	case errors.Is(err, runtime.ErrThreadBusy):
		w.release(c, err) // a dead worker's lease has not expired yet: later
		return
	case errors.Is(err, runtime.ErrThreadMoved):
		w.release(c, err) // an earlier claim's run got there first: look again
		return
	case (errors.As(err, &ce) || transient(err)) && !stopped:
		// The store failed (a connection cut, a server restart) or the
		// thread's lease was lost: nothing past the last commit was
		// written, so the request is claimed again and continues there.
		w.release(c, err)
		return
	case ctx.Err() != nil:
		return // this worker stops; the claim expires and another continues
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
		err := w.q.store.Pool().QueryRow(ctx, "UPDATE "+w.q.t("ilmek_requests")+" SET claim_until = clock_timestamp() + $3::bigint * interval '1 microsecond' WHERE id = $1 AND claim = $2 RETURNING cancel",
			c.id, c.claim, w.opts.ttl.Microseconds()).Scan(&cancelled)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			cancel(errors.New("the claim on the request was taken over"))
			return
		case err == nil && cancelled:
			requestStop()
		}
	}
}

// finish records the request's outcome under its claim.
func (w *Worker) finish(c *claimed, state string, out *runOutcome, msg string) {
	var result []byte
	if out != nil {
		result, _ = json.Marshal(out)
	}
	// A few tries: a connection cut now would leave the request to be
	// claimed and run again.
	for try := 0; try < 5; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := pgx.BeginFunc(ctx, w.q.store.Pool(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "UPDATE "+w.q.t("ilmek_requests")+" SET state = $3, result = $4, error = $5, claim_until = NULL, updated = clock_timestamp() WHERE id = $1 AND claim = $2",
				c.id, c.claim, state, result, msg); err != nil {
				return err
			}
			return w.q.notify(ctx, tx, noteEnd+strconv.FormatInt(c.id, 10))
		})
		cancel()
		if err == nil {
			return
		}
		w.opts.logger.Warn("record a request's outcome", "request", c.id, "err", err)
		time.Sleep(200 * time.Millisecond)
	}
}

// release gives a claimed request back to the queue, to be claimed again
// after a short pause.
func (w *Worker) release(c *claimed, why error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.opts.logger.Info("request released", "request", c.id, "why", why)
	w.q.store.Pool().Exec(ctx, "UPDATE "+w.q.t("ilmek_requests")+" SET claim_until = clock_timestamp() + interval '200 milliseconds' WHERE id = $1 AND claim = $2", c.id, c.claim)
}

// transient reports whether err comes from the server or the connection to
// it rather than from the graph: the connection was cut or could not be
// made, the server is shutting down or starting, or a transaction lost a
// serialization race. Running the request again later is then right.
func transient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") ||
			strings.HasPrefix(pe.Code, "53") || pe.Code == "40001" || pe.Code == "40P01"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// runStarted records, as a run of a claimed request starts, its run id in
// the request's row (under the claim), so that any process can find the
// request's events in the store's event log (Queue.Runs).
type runStarted struct {
	runtime.NopObserver
	w *Worker
	c *claimed
}

func (o runStarted) RunStart(ctx context.Context, run runtime.RunRecord) context.Context {
	if _, err := o.w.q.store.Pool().Exec(ctx, "UPDATE "+o.w.q.t("ilmek_requests")+" SET run_ids = array_append(run_ids, $3) WHERE id = $1 AND claim = $2",
		o.c.id, o.c.claim, run.RunID); err != nil {
		o.w.opts.logger.Warn("record a request's run", "request", o.c.id, "run", run.RunID, "err", err)
	}
	return ctx
}
