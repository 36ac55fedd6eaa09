package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// DeadLetters is a Queue that keeps requests whose workers kept dying
// while running them ("dead": see runtime/postgres/workers.MaxClaims).
// With a Config.Queue that implements it, the server lists them at GET
// /queue/dead and retries one at POST /queue/dead/{request_id}/retry;
// server/workersqueue implements it.
type DeadLetters interface {
	// Dead lists up to limit dead requests, oldest first.
	Dead(ctx context.Context, limit int) ([]DeadRequest, error)
	// Retry queues dead request id again. It fails with an error matching
	// runtime.ErrNotFound for an id the queue does not hold, and with one
	// matching ErrNotDead for a request that is not dead.
	Retry(ctx context.Context, id string) error
}

// ErrNotDead is matched by DeadLetters.Retry's error for a request that is
// not dead.
var ErrNotDead = errors.New("the run request is not dead")

// DeadRequest is a dead request in GET /queue/dead.
type DeadRequest struct {
	RequestID string    `json:"request_id"`
	ThreadID  string    `json:"thread_id"`
	Graph     string    `json:"graph"`
	Error     string    `json:"error"`
	Dead      time.Time `json:"dead"`
	// Claims are the claims that started a run of it, oldest first, and
	// the retries by hand between them.
	Claims []DeadClaim `json:"claims"`
}

// DeadClaim is one claim of a dead request: the worker that held it,
// when, and why it ended without an outcome; or a retry by hand (Retry,
// with At only).
type DeadClaim struct {
	Claim    int64     `json:"claim,omitempty"`
	Worker   string    `json:"worker,omitempty"`
	At       time.Time `json:"at"`
	Error    string    `json:"error,omitempty"`
	Released bool      `json:"released,omitempty"`
	// Stuck marks a claim given back whose run failed with a node's
	// transient error before it completed a superstep (counted against
	// the workers' TransientRetries); Refused one given back because its
	// run was refused before it ran (the thread busy, or moved).
	Stuck   bool `json:"stuck,omitempty"`
	Refused bool `json:"refused,omitempty"`
	Retry   bool `json:"retry,omitempty"`
}

// deadLimit caps GET /queue/dead's limit.
const deadLimit = 1000

// deadLetters is Config.Queue as DeadLetters, or a 501 problem.
func (s *Server) deadLetters() (DeadLetters, error) {
	d, ok := s.cfg.Queue.(DeadLetters)
	if !ok {
		return nil, errf(http.StatusNotImplemented, "no-dead-letters", "The server keeps no dead requests",
			"dead requests are kept by a run-request queue of workers (Config.Queue, for example server/workersqueue); this server has none that keeps them")
	}
	return d, nil
}

// listDead serves GET /queue/dead: the dead requests of the threads the
// principal may read.
func (s *Server) listDead(w http.ResponseWriter, r *http.Request, p Principal) error {
	d, err := s.deadLetters()
	if err != nil {
		return err
	}
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > deadLimit {
			return badRequest("limit must be a whole number from 1 to " + strconv.Itoa(deadLimit))
		}
		limit = n
	}
	all, err := d.Dead(r.Context(), limit)
	if err != nil {
		return err
	}
	out := struct {
		Requests []DeadRequest `json:"requests"`
	}{Requests: []DeadRequest{}}
	for _, dr := range all {
		if _, err := s.thread(r.Context(), p, dr.ThreadID, ActionRead); err != nil {
			continue // a thread the principal may not read, or one this server does not know
		}
		if dr.Claims == nil {
			dr.Claims = []DeadClaim{}
		}
		out.Requests = append(out.Requests, dr)
	}
	return writeJSON(w, http.StatusOK, out)
}

// retryDead serves POST /queue/dead/{request_id}/retry: the request is
// queued again if the principal may run its thread.
func (s *Server) retryDead(w http.ResponseWriter, r *http.Request, p Principal) error {
	d, err := s.deadLetters()
	if err != nil {
		return err
	}
	id := r.PathValue("request_id")
	o, err := s.cfg.Queue.Outcome(r.Context(), id)
	if errors.Is(err, runtime.ErrNotFound) {
		return notFound("no run request " + id)
	}
	if err != nil {
		return err
	}
	t, err := s.thread(r.Context(), p, o.Thread, ActionRun)
	if err != nil {
		return err
	}
	switch err := d.Retry(r.Context(), id); {
	case errors.Is(err, runtime.ErrNotFound):
		return notFound("no run request " + id)
	case errors.Is(err, ErrNotDead):
		return errf(http.StatusConflict, "not-dead", "The request is not dead", "run request "+id+" of thread "+t.ID+" is "+string(o.Status)+"; only a dead request is retried")
	case err != nil:
		return err
	}
	runID := queuedPrefix + id
	v := RunView{RunID: runID, ThreadID: t.ID, Graph: t.Graph, Kind: "run", Status: runtime.StatusNew, Created: time.Now().UTC()}
	w.Header().Set("Location", "/threads/"+t.ID+"/runs/"+runID)
	return writeJSON(w, http.StatusAccepted, v)
}

// ThreadHolder is a Queue that tells whether one of its workers holds a
// request of a thread, whoever submitted it (another process, or the
// workers themselves waking a parked thread): with a Config.Queue that
// implements it, such a thread's status reads running (busy).
// server/workersqueue implements it.
type ThreadHolder interface {
	Holds(ctx context.Context, thread string) (bool, error)
}
