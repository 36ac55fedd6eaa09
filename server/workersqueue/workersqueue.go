// Package workersqueue adapts the PostgreSQL run-request queue of
// runtime/postgres/workers to server.Queue, so that a server sends its
// runs and resumes to a pool of workers:
//
//	q := workers.NewQueue(store)
//	srv, err := server.New(server.Config{
//		Graphs:       graphs,
//		Queue:        workersqueue.New(q),
//		Authenticate: authenticate,
//	})
//
// It is a package of its own so that a server on another store does not
// compile the PostgreSQL driver.
package workersqueue

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/server"
)

// Queue is a workers.Queue as a server.Queue.
type Queue struct{ q *workers.Queue }

var (
	_ server.Queue        = (*Queue)(nil)
	_ server.DeadLetters  = (*Queue)(nil)
	_ server.ThreadHolder = (*Queue)(nil)
)

// Holds reports whether a worker holds a request of thread.
func (a *Queue) Holds(ctx context.Context, thread string) (bool, error) {
	return a.q.Holds(ctx, thread)
}

// New returns q as a server.Queue.
func New(q *workers.Queue) *Queue { return &Queue{q: q} }

// Store returns the queue's PostgreSQL store.
func (a *Queue) Store() runtime.Checkpointer { return a.q.Store() }

// Submit queues r. workers.ErrWaitsOnPerson is also matched by
// runtime.ErrWaitingOnPerson.
func (a *Queue) Submit(ctx context.Context, r server.QueueRequest) (string, error) {
	req := workers.Request{Graph: r.Graph, Thread: r.Thread, Kind: workers.KindStart, Input: r.Input, Policy: r.Policy, From: r.From, Partition: r.Partition, Priority: r.Priority, Key: r.Key, ExpectedLatest: r.ExpectedLatest}
	if r.Resume {
		req.Kind = workers.KindResume
	}
	id, err := a.q.Submit(ctx, req)
	if errors.Is(err, workers.ErrWaitsOnPerson) {
		return "", fmt.Errorf("%w: %w", runtime.ErrWaitingOnPerson, err)
	}
	if errors.Is(err, workers.ErrKeyReused) {
		return "", fmt.Errorf("%w: %w", server.ErrKeyReused, err)
	}
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

// Outcome returns what became of request id; a request the queue does not
// hold (or an id that is not one) matches runtime.ErrNotFound.
func (a *Queue) Outcome(ctx context.Context, id string) (server.QueueOutcome, error) {
	n, err := parse(id)
	if err != nil {
		return server.QueueOutcome{}, err
	}
	o, err := a.q.Outcome(ctx, n)
	return outcome(o, err)
}

// Wait returns request id's outcome once it has ended.
func (a *Queue) Wait(ctx context.Context, id string) (server.QueueOutcome, error) {
	n, err := parse(id)
	if err != nil {
		return server.QueueOutcome{}, err
	}
	o, err := a.q.Wait(ctx, n, 0)
	return outcome(o, err)
}

// Cancel cancels the thread's requests.
func (a *Queue) Cancel(ctx context.Context, thread string) error {
	_, err := a.q.Cancel(ctx, thread)
	return err
}

// Dead lists up to limit dead requests with their claims.
func (a *Queue) Dead(ctx context.Context, limit int) ([]server.DeadRequest, error) {
	ds, err := a.q.Dead(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]server.DeadRequest, 0, len(ds))
	for _, d := range ds {
		dr := server.DeadRequest{RequestID: strconv.FormatInt(d.ID, 10), ThreadID: d.Thread, Graph: d.Graph, Error: d.Error, Dead: d.Dead.UTC(),
			Claims: make([]server.DeadClaim, 0, len(d.Claims))}
		for _, c := range d.Claims {
			dr.Claims = append(dr.Claims, server.DeadClaim{Claim: c.Claim, Worker: c.Worker, At: c.At.UTC(), Error: c.Error, Released: c.Released, Stuck: c.Stuck, Refused: c.Refused, Retry: c.Retry})
		}
		out = append(out, dr)
	}
	return out, nil
}

// Retry queues dead request id again; workers.ErrNoRequest is also
// matched by runtime.ErrNotFound, workers.ErrNotDead by server.ErrNotDead.
func (a *Queue) Retry(ctx context.Context, id string) error {
	n, err := parse(id)
	if err != nil {
		return err
	}
	err = a.q.Retry(ctx, n)
	switch {
	case errors.Is(err, workers.ErrNoRequest):
		return fmt.Errorf("%w: %w", runtime.ErrNotFound, err)
	case errors.Is(err, workers.ErrNotDead):
		return fmt.Errorf("%w: %w", server.ErrNotDead, err)
	}
	return err
}

func parse(id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("workersqueue: request id %q is not a number: %w", id, runtime.ErrNotFound)
	}
	return n, nil
}

// outcome maps a workers.Outcome: "cancelled" (before it ran) is aborted,
// and an end without a status (a request refused before it ran) is an
// error.
func outcome(o workers.Outcome, err error) (server.QueueOutcome, error) {
	if errors.Is(err, workers.ErrNoRequest) {
		return server.QueueOutcome{}, fmt.Errorf("%w: %w", runtime.ErrNotFound, err)
	}
	if err != nil {
		return server.QueueOutcome{}, err
	}
	out := server.QueueOutcome{Thread: o.Thread, Status: runtime.Status(o.State), Error: o.Error, Pending: o.Pending, Runs: o.Runs}
	switch o.State {
	case "queued":
		out.Status = runtime.StatusNew
	case "running":
		out.Status = runtime.StatusRunning
	case "cancelled":
		out.Status = runtime.StatusAborted
		if out.Error == "" {
			out.Error = "cancelled before it started"
		}
	case string(runtime.StatusDone), string(runtime.StatusInterrupted), string(runtime.StatusParked), string(runtime.StatusError), string(runtime.StatusAborted):
	case workers.StateDead:
		out.Status = runtime.StatusError
		out.Error = "dead: " + out.Error
	default:
		out.Status = runtime.StatusError
		if out.Error == "" {
			out.Error = fmt.Sprintf("the request ended in state %q", o.State)
		}
	}
	return out, nil
}
