package postgres

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// DefaultRetryBudget bounds how long a write is retried unless RetryBudget
// says otherwise.
const DefaultRetryBudget = 30 * time.Second

// RetryBudget sets how long a run's fenced write (a commit, a journal
// write, a lease renewal) is retried after errors that are safe to retry:
// a dropped or refused connection, a server shutting down or restarting
// (57P01-57P03, class 08), a serialization failure (40001) or a deadlock
// (40P01). Default DefaultRetryBudget; 0 turns retries off. The write's
// context may end it sooner.
func RetryBudget(d time.Duration) Option { return func(o *options) { o.retryBudget = d } }

// OnRetry sets a function told of each retry besides the WARN line logged
// through slog.Default (as a worker's OnRetry is), for example the otel
// module's Observer.Retry, which counts them; Thread is the thread written.
func OnRetry(fn checkpoint.RetryFunc) Option { return func(o *options) { o.onRetry = fn } }

// retrier is the Store's store.Retrier.
func (s *Store) retrier() *store.Retrier {
	also := s.opts.onRetry
	return &store.Retrier{
		Budget:    s.opts.retryBudget,
		Transient: transient,
		Report: func(ctx context.Context, r checkpoint.Retry) {
			slog.WarnContext(ctx, "postgres: retrying a write after an error safe to retry", "op", r.Op, "thread", r.Thread,
				"attempt", r.Attempt, "wait", r.Wait, "schema", s.schema, "err", r.Err)
			if also != nil {
				also(ctx, r)
			}
		},
	}
}

// transient reports whether err is safe to retry: the statement was not
// applied, or (for a commit cut off on its way back) a check can tell.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "57P01", "57P02", "57P03", "53300":
			return true
		}
		return strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), pgconn.SafeToRetry(err):
		return true
	}
	// pgx reports a connection it found broken as "conn closed".
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "broken pipe")
}
