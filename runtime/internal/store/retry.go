package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Retrier retries a store's writes that fail with an error the database
// says is safe to retry (a dropped connection, a server shutting down, a
// serialization failure, a deadlock), with backoff, within a budget.
type Retrier struct {
	// Budget bounds the time from the first attempt to the last one's
	// start (the context's deadline may end it sooner).
	Budget time.Duration
	// Transient says whether err is safe to retry.
	Transient func(err error) bool
	// Report, when not nil, is told of each retry before its wait.
	Report checkpoint.RetryFunc
}

// backoff is the wait before retry n (1, 2, ...): 20 ms doubling to 1 s,
// with up to a quarter of jitter so that writers cut off together do not
// come back together.
func backoff(n int) time.Duration {
	d := 20 * time.Millisecond << min(n-1, 6)
	d = min(d, time.Second)
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// Do runs fn (the write op of thread, as reports name it) until it succeeds, fails with an error
// that is not transient, or the budget or ctx runs out; then it returns
// fn's last error. A write that may have taken effect although its
// attempt failed (a commit whose answer was cut off) passes settled: it is
// asked, before each retry, whether the failed attempt's write is in the
// database after all, and then Do returns nil instead of writing twice. A
// write that is idempotent passes settled nil.
func (r *Retrier) Do(ctx context.Context, op, thread string, settled func(ctx context.Context) (bool, error), fn func(ctx context.Context) error) error {
	end := time.Now().Add(r.Budget)
	attempt := 0
	err := fn(ctx)
	if r.Budget <= 0 {
		return err
	}
	for err != nil && r.Transient(err) {
		attempt++
		wait := backoff(attempt)
		if time.Now().Add(wait).After(end) {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		if r.Report != nil {
			r.Report(ctx, checkpoint.Retry{Op: op, Thread: thread, Attempt: attempt, Wait: wait, Err: err})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		if settled != nil {
			done, cerr := settled(ctx)
			switch {
			case cerr != nil:
				err = cerr // not known yet: ask again after the next wait
				continue
			case done:
				return nil
			}
		}
		err = fn(ctx)
	}
	return err
}
