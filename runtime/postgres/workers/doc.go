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
// and for notifications lost while a listener reconnects.
//
// # Workers and crashes
//
// A worker claims the oldest runnable request with SELECT ... FOR UPDATE
// SKIP LOCKED, so workers never block each other, and marks it running
// under a numbered claim until a claim deadline it renews every third of
// ClaimTTL. It runs the request on the thread through the store, so the
// thread's own lease and fencing keep one run per thread, and records the
// outcome (status, state, pending interrupts, error) under its claim
// number. When a worker dies, its claim expires and another worker claims
// the request again: the run continues from the thread's last checkpoint,
// and the journal keeps completed steps from running again (the one gap:
// a step whose effect completed but whose journal write did not reach the
// server runs again). A re-claimed start request folds its input in again
// only when the thread has no checkpoint written since the request was
// first claimed.
package workers
