package workers

import (
	"context"
	"time"
)

// EventKind names what a worker reports to OnEvent.
type EventKind string

const (
	// EventClaim: the worker claimed a request (Request, Thread, Graph,
	// Partition, Claim).
	EventClaim EventKind = "claim"
	// EventDead: the worker ended a request dead after MaxClaims of its
	// claims expired (Request, Thread, Graph, Claim, Error).
	EventDead EventKind = "dead"
	// EventRateWait: nothing could be claimed because a rate limit's
	// bucket is empty; the worker waits Wait before it claims again.
	EventRateWait EventKind = "rate_wait"
	// EventPrune: the worker's periodic pruner (Retention) deleted Pruned
	// ended requests.
	EventPrune EventKind = "prune"
	// EventTimerDropped: the worker dropped a wake request (Request,
	// Thread, Graph, Partition, Claim) because its thread had no timer
	// or deadline due any more: it was deleted, cancelled, answered or
	// woken already. Error says why; the request ends cancelled and
	// nothing ran.
	EventTimerDropped EventKind = "timer_dropped"
)

// Event is something a worker did to the queue, for OnEvent: the otel
// module's QueueObserver.Event turns events into spans and metrics.
type Event struct {
	Kind EventKind
	// Worker is the worker's name (Name).
	Worker string
	// At is when it happened; for EventClaim, when the claim's statement
	// was sent (a claim sent after a request was submitted sees it).
	At        time.Time
	Request   int64
	Thread    string
	Graph     string
	Partition string
	// Claim is the claim's number (EventClaim, EventDead).
	Claim int64
	// Wait is how long the worker waits for a token (EventRateWait).
	Wait time.Duration
	// Pruned counts the requests an EventPrune deleted.
	Pruned int64
	Error  string
}

// OnEvent sets a function the worker calls for each claim, dead request,
// rate-limit wait, prune and dropped wake (Event), besides the slog record
// it writes (Logger: claims and rate-limit waits at debug level, dead
// requests as warnings, prunes and dropped wakes as info). It is called on the worker's goroutines;
// keep it short.
func OnEvent(fn func(context.Context, Event)) WorkerOption {
	return func(o *workerOptions) { o.onEvent = fn }
}

// event logs e and passes it to OnEvent.
func (w *Worker) event(ctx context.Context, e Event) {
	e.Worker = w.opts.name
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if w.opts.onEvent != nil {
		w.opts.onEvent(ctx, e)
	}
}

// claimed reports a claim whose statement was sent at sent.
func (w *Worker) claimed(ctx context.Context, c *claimed, sent time.Time) {
	w.opts.logger.Debug("request claimed", "request", c.id, "thread", c.thread, "graph", c.graph, "partition", c.partition, "claim", c.claim)
	w.event(ctx, Event{Kind: EventClaim, At: sent, Request: c.id, Thread: c.thread, Graph: c.graph, Partition: c.partition, Claim: c.claim})
}

// rateWait reports a rate-limit wait and waits d, or less when ctx is done
// or the worker is woken (a new request may be one no limit holds back).
func (w *Worker) rateWait(ctx context.Context, d time.Duration) {
	w.opts.logger.Debug("rate limit: waiting for a token", "wait", d)
	w.event(ctx, Event{Kind: EventRateWait, Wait: d})
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-w.wake:
	}
}
