package checkpoint

import (
	"context"
	"time"
)

// Retry is one retry of a database statement that failed with an error
// safe to retry (a dropped connection, a server restarting, a
// serialization failure or a deadlock): a store's fenced write or a queue
// worker's statement. The PostgreSQL store and its workers report each
// retry as one, to a RetryFunc; the otel module's Observer.Retry counts
// them.
type Retry struct {
	// Op names the statement: a store's "commit", "journal" or "renew
	// lease"; a worker's "claim", "renew", "finish", "release", "start" or
	// "run".
	Op string
	// Thread is the thread a store wrote ("" for a worker's statement).
	Thread string
	// Request is the queue request a worker's statement was about (0 for
	// a store's write and for a worker's claim).
	Request int64
	// Attempt is the number of the attempt that failed, from 1.
	Attempt int
	// Wait is the pause before the next attempt.
	Wait time.Duration
	// Err is the failed attempt's error.
	Err error
}

// RetryFunc is told of each Retry, on the retrying goroutine, before the
// pause; ctx is the statement's context (a run's, for a store's write
// within a run). It should return quickly.
type RetryFunc func(ctx context.Context, r Retry)
