package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// Queue is a run-request queue that a pool of workers drains, for
// Config.Queue: the server submits runs and resumes to it instead of
// running them, and reads, waits for and cancels them through it.
// Package server/workersqueue adapts the PostgreSQL queue of
// runtime/postgres/workers.
type Queue interface {
	// Store is the checkpointer the workers run the threads in.
	Store() runtime.Checkpointer
	// Submit queues r and returns its id, which has no "/", "?" or "#".
	// When the thread has a request queued or running it follows
	// r.Policy: under runtime.DoubleTextReject it fails with an error
	// matching runtime.ErrThreadBusy; under cancel-and-replace it fails
	// with one matching runtime.ErrWaitingOnPerson when the thread waits
	// on a person.
	Submit(ctx context.Context, r QueueRequest) (id string, err error)
	// Outcome returns what became of request id so far, or an error
	// matching runtime.ErrNotFound when the queue holds no such request.
	Outcome(ctx context.Context, id string) (QueueOutcome, error)
	// Wait returns request id's outcome once it has ended, or ctx's
	// error.
	Wait(ctx context.Context, id string) (QueueOutcome, error)
	// Cancel drops the thread's queued requests (they end aborted) and
	// asks its running one to stop at its next superstep boundary.
	Cancel(ctx context.Context, thread string) error
}

// QueueRequest is a run or a resume submitted to a Queue.
type QueueRequest struct {
	Graph  string
	Thread string
	// Resume is set for a resume: Input is then a JSON object of answers
	// by interrupt id; else Input is the run's input (JSON of the graph's
	// update type).
	Resume bool
	Input  json.RawMessage
	// Policy applies when the thread has a request queued or running.
	Policy runtime.DoubleTexting
	// From, when set, forks the thread at that earlier checkpoint
	// (POST /threads/{id}/history/{checkpoint_id}/fork): a start folds
	// Input into its channels, a resume answers the interrupts open there.
	From string
	// Partition is the request's partition key (a tenant): the value of
	// the thread's metadata key Config.QueuePartition, "" without one.
	Partition string
	// Priority orders the request among those waiting to be claimed:
	// higher first (Config.QueuePriority; 0 without it).
	Priority int32
	// Key is the client's key for the request, from its Idempotency-Key
	// header ("" without one): a Submit with a key the thread's requests
	// already hold queues nothing and returns that request's id, and one
	// whose key names another request fails matching ErrKeyReused.
	Key string
	// ExpectedLatest, when set, runs the request only if the thread's
	// latest checkpoint is the one it names when the request first runs
	// (the body's expected_checkpoint_id; "": none yet); otherwise the
	// request ends with status error, matching runtime.ErrThreadMoved,
	// having written nothing. Never set with From.
	ExpectedLatest *string
}

// ErrKeyReused is matched by a Queue's Submit error when the request's Key
// names another request of the thread; the server answers it 422.
var ErrKeyReused = errors.New("the Idempotency-Key names another request of this thread")

// QueueOutcome is what became of a queued request.
type QueueOutcome struct {
	Thread string
	// Status is runtime.StatusNew (queued), StatusRunning, or how the
	// request ended:
	// runtime.StatusDone, StatusInterrupted, StatusParked (on a timer,
	// woken by the queue's workers), StatusError (also a request refused
	// before it ran: bad input, wrong answers, a thread that was not
	// waiting, a request dead after its workers kept dying) or
	// StatusAborted (cancelled).
	Status runtime.Status
	// Error is the text of an error or abort.
	Error string
	// Pending lists the interrupts the thread waits on (interrupted).
	Pending []runtime.PendingInterrupt
	// Runs are the ids of the runs workers started for the request, in
	// order (more than one when a worker died and another took it over);
	// each run's events are in the store's event log under its id.
	Runs []string
}

// Ended reports whether the request has ended.
func (o QueueOutcome) Ended() bool {
	return o.Status != runtime.StatusNew && o.Status != runtime.StatusRunning
}

// queuedPrefix starts the id of a run submitted to Config.Queue; the rest
// is the request's id in the queue.
const queuedPrefix = "q-"

// submitQueued submits a run or a resume to Config.Queue, where the
// workers run it, and answers 202 at once.
func (s *Server) submitQueued(w http.ResponseWriter, r *http.Request, p Principal, t threadRecord, lr launchReq) error {
	kind := lr.kind
	req := QueueRequest{Graph: t.Graph, Thread: t.ID, Input: lr.input, Policy: lr.policy, From: lr.from, Key: r.Header.Get("Idempotency-Key"), ExpectedLatest: lr.expect}
	if s.cfg.QueuePartition != "" {
		req.Partition = t.Meta[s.cfg.QueuePartition]
	}
	if kind == "resume" || kind == "fork" && lr.answers != nil {
		data, err := json.Marshal(lr.answers)
		if err != nil {
			return badRequest("the answers do not encode as JSON: " + err.Error())
		}
		req.Resume, req.Input = true, data
	}
	if s.cfg.QueuePriority != nil {
		req.Priority = s.cfg.QueuePriority(r.Context(), p, req)
	}
	id, err := s.cfg.Queue.Submit(r.Context(), req)
	if errors.Is(err, ErrKeyReused) {
		return errf(http.StatusUnprocessableEntity, "idempotency-key-reused", "The Idempotency-Key names another request",
			"Idempotency-Key "+strconv.Quote(req.Key)+" was sent with another request of thread "+t.ID+"; send each request with a key of its own, and the same key only to retry the same request")
	}
	if errors.Is(err, runtime.ErrWaitingOnPerson) {
		return errf(http.StatusConflict, "waiting-on-person", "The thread is waiting on interrupts",
			"thread "+t.ID+" waits on a person; cancel-and-replace does not discard a pause: answer it with POST /threads/"+t.ID+"/resume")
	}
	if err != nil {
		return err
	}
	v := RunView{RunID: queuedPrefix + id, ThreadID: t.ID, Graph: t.Graph, Kind: kind, Status: runtime.StatusNew, Created: time.Now().UTC()}
	if req.Key != "" {
		// A retry finds its request as it stands now: queued, running or
		// ended.
		if qv, err := s.queuedView(r.Context(), t, v.RunID, id); err == nil {
			qv.Kind = kind
			v = qv
		}
	}
	s.noteRun(context.WithoutCancel(r.Context()), t.ID, v.RunID, kind)
	w.Header().Set("Location", "/threads/"+t.ID+"/runs/"+v.RunID)
	return writeJSON(w, http.StatusAccepted, v)
}

// queuedID is a queued run's request id; ok is false for other ids.
func (s *Server) queuedID(runID string) (string, bool) {
	rest, ok := strings.CutPrefix(runID, queuedPrefix)
	if !ok || rest == "" || s.cfg.Queue == nil {
		return "", false
	}
	return rest, true
}

// queuedView reads a queued run of thread t.
func (s *Server) queuedView(ctx context.Context, t threadRecord, runID string, id string) (RunView, error) {
	o, err := s.cfg.Queue.Outcome(ctx, id)
	if errors.Is(err, runtime.ErrNotFound) || err == nil && o.Thread != t.ID {
		return RunView{}, notFound("thread " + t.ID + " has no run " + runID)
	}
	if err != nil {
		return RunView{}, err
	}
	return outcomeView(t, runID, o), nil
}

func outcomeView(t threadRecord, runID string, o QueueOutcome) RunView {
	v := RunView{RunID: runID, ThreadID: t.ID, Graph: t.Graph, Kind: "run", Status: o.Status, Error: o.Error, Pending: o.Pending}
	switch o.Status {
	case runtime.StatusNew, runtime.StatusRunning, runtime.StatusDone, runtime.StatusInterrupted, runtime.StatusParked, runtime.StatusAborted:
	default:
		// An end the API does not name (a queue's own word, or none) is
		// an error.
		v.Status = runtime.StatusError
		if v.Error == "" {
			v.Error = fmt.Sprintf("the queued request ended with status %q", o.Status)
		}
	}
	return v
}

// queuedRoute serves the run routes for a queued run; handled is false
// when runID is not one.
func (s *Server) queuedRoute(w http.ResponseWriter, r *http.Request, p Principal, op string) (bool, error) {
	runID := r.PathValue("run_id")
	id, ok := s.queuedID(runID)
	if !ok {
		return false, nil
	}
	a := ActionRead
	if op == "cancel" {
		a = ActionRun
	}
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), a)
	if err != nil {
		return true, err
	}
	v, err := s.queuedView(r.Context(), t, runID, id)
	if err != nil {
		return true, err
	}
	switch op {
	case "get":
		return true, writeJSON(w, http.StatusOK, v)
	case "wait":
		timeout, err := waitTimeout(r)
		if err != nil {
			return true, err
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		o, err := s.cfg.Queue.Wait(ctx, id)
		if err != nil {
			if ctx.Err() != nil && r.Context().Err() == nil {
				v, err := s.queuedView(r.Context(), t, runID, id)
				if err != nil {
					return true, err
				}
				return true, writeJSON(w, http.StatusAccepted, v)
			}
			return true, err
		}
		return true, writeJSON(w, http.StatusOK, outcomeView(t, runID, o))
	case "cancel":
		switch r.URL.Query().Get("mode") {
		case "", "stop":
		case "abort":
			return true, badRequest(`a queued run stops at its next superstep boundary; mode "abort" is for runs in this process`)
		default:
			return true, badRequest(`mode must be "stop" (at the next superstep boundary, the default) or "abort" (now, voiding the superstep in flight)`)
		}
		if v.Status == runtime.StatusNew || v.Status == runtime.StatusRunning {
			// The queue cancels per thread: the thread's queued requests
			// and its running one.
			if err := s.cfg.Queue.Cancel(r.Context(), t.ID); err != nil {
				return true, err
			}
		}
		return true, writeJSON(w, http.StatusAccepted, v)
	}
	closeStream, err := s.openStream(w, runID)
	if err != nil {
		return true, err
	}
	defer closeStream()
	return true, s.streamQueued(w, r, id)
}

// streamQueued streams the events of a queued run from the store's event
// log: the events of each run a worker started for the request, in order
// (more than one when a worker died and another took the request over),
// with ids "<worker run id>:<seq>", until the request has ended and its
// last run's events are all sent. Last-Event-ID names any of those runs.
func (s *Server) streamQueued(w http.ResponseWriter, r *http.Request, id string) error {
	if s.events == nil {
		return notFound("the events of a queued run are kept in the queue's store, which has no event log")
	}
	o, err := s.cfg.Queue.Outcome(r.Context(), id)
	if err != nil {
		return err
	}
	k, after := 0, int64(0)
	if last := lastEventID(r); last != "" {
		rid, seq, _ := strings.Cut(last, ":")
		n, err := strconv.ParseInt(seq, 10, 64)
		k = slices.Index(o.Runs, rid)
		if k < 0 || err != nil || n < 0 {
			return badRequest("Last-Event-ID " + last + " is not an id of this run's events (<worker run id>:<seq>)")
		}
		after = n
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return errors.New("server: the response writer cannot flush; SSE needs it")
	}
	sseHeaders(w)
	fl.Flush()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ended := o.Ended()
		for k < len(o.Runs) {
			evs, err := s.events.ReadEvents(r.Context(), o.Runs[k], after, 256)
			if err != nil {
				s.log.Error("server: reading a queued run's events failed", "request", id, "err", err)
				return nil
			}
			for _, ev := range evs {
				fmt.Fprintf(w, "id: %s:%d\nevent: %s\ndata: %s\n\n", o.Runs[k], ev.Seq, ev.Kind, ev.Data)
				after = ev.Seq
			}
			fl.Flush()
			if len(evs) == 256 {
				continue
			}
			if k == len(o.Runs)-1 {
				break
			}
			k, after = k+1, 0
		}
		if ended {
			return nil
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return nil
		}
		if o, err = s.cfg.Queue.Outcome(r.Context(), id); err != nil {
			return nil
		}
	}
}
