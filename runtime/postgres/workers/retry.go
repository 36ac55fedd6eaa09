package workers

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// OnRetry sets a function the worker calls for each queue statement it
// retries (besides the warning it logs), for example the otel module's
// Observer.Retry, which counts them; Request is the request's id, 0 for a
// claim. It is called on the retrying goroutine; keep it short.
func OnRetry(fn checkpoint.RetryFunc) WorkerOption { return func(o *workerOptions) { o.onRetry = fn } }

// The pauses between attempts of a retried statement: they double from
// retryFirst up to retryMax, within each statement's budget.
const (
	retryFirst = 20 * time.Millisecond
	retryMax   = time.Second
)

// retry runs do until it succeeds, fails with an error that is not
// transient, or the budget (from now) or ctx would be exceeded by the next
// pause; it reports each retry. do must be safe to run again after a
// transient failure: every statement it runs is fenced by the claim or
// written so that a second application changes nothing.
func (w *Worker) retry(ctx context.Context, op string, request int64, budget time.Duration, do func(attempt int) error) error {
	deadline := time.Now().Add(budget)
	pause := retryFirst
	for attempt := 1; ; attempt++ {
		err := do(attempt)
		if err == nil || !transient(err) || ctx.Err() != nil || time.Now().Add(pause).After(deadline) {
			return err
		}
		w.opts.logger.Warn("retry a queue statement after a transient error",
			"op", op, "request", request, "attempt", attempt, "wait", pause, "err", err)
		if w.opts.onRetry != nil {
			w.opts.onRetry(ctx, checkpoint.Retry{Op: op, Request: request, Attempt: attempt, Wait: pause, Err: err})
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, retryMax)
	}
}

// transient reports whether err comes from the server or the connection to
// it rather than from the graph: the connection was cut or could not be
// made, the server is shutting down or starting, or a transaction lost a
// serialization race or a deadlock. Running the statement (or the request)
// again later is then right.
func transient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") ||
			strings.HasPrefix(pe.Code, "53") || pe.Code == "40001" || pe.Code == "40P01"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, pgconn.ErrConnClosed)
}
