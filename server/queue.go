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
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// queuedPrefix starts the id of a run submitted to Config.Queue; the rest
// is the request's id in the queue.
const queuedPrefix = "q-"

// submitQueued submits a run or a resume to the PostgreSQL run-request
// queue, where the worker pool runs it, and answers 202 at once.
func (s *Server) submitQueued(w http.ResponseWriter, r *http.Request, t threadRecord, kind string, input json.RawMessage, answers map[string]any, policy runtime.DoubleTexting) error {
	req := workers.Request{Graph: t.Graph, Thread: t.ID, Kind: workers.KindStart, Input: input, Policy: policy}
	if kind == "resume" {
		data, err := json.Marshal(answers)
		if err != nil {
			return badRequest("the answers do not encode as JSON: " + err.Error())
		}
		req.Kind, req.Input = workers.KindResume, data
	}
	id, err := s.cfg.Queue.Submit(r.Context(), req)
	if errors.Is(err, workers.ErrWaitsOnPerson) {
		return errf(http.StatusConflict, "waiting-on-person", "The thread is waiting on interrupts",
			"thread "+t.ID+" waits on a person; cancel-and-replace does not discard a pause: answer it with POST /threads/"+t.ID+"/resume")
	}
	if err != nil {
		return err
	}
	v := RunView{RunID: queuedPrefix + strconv.FormatInt(id, 10), ThreadID: t.ID, Graph: t.Graph, Kind: kind, Status: statusQueued, Created: time.Now().UTC()}
	w.Header().Set("Location", "/threads/"+t.ID+"/runs/"+v.RunID)
	return writeJSON(w, http.StatusAccepted, v)
}

// queuedID parses a queued run's id; ok is false for other ids.
func (s *Server) queuedID(runID string) (int64, bool) {
	rest, ok := strings.CutPrefix(runID, queuedPrefix)
	if !ok || s.cfg.Queue == nil {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// queuedView reads a queued run of thread t.
func (s *Server) queuedView(ctx context.Context, t threadRecord, runID string, id int64) (RunView, error) {
	o, err := s.cfg.Queue.Outcome(ctx, id)
	if errors.Is(err, workers.ErrNoRequest) || err == nil && o.Thread != t.ID {
		return RunView{}, notFound("thread " + t.ID + " has no run " + runID)
	}
	if err != nil {
		return RunView{}, err
	}
	return outcomeView(t, runID, o), nil
}

func outcomeView(t threadRecord, runID string, o workers.Outcome) RunView {
	v := RunView{RunID: runID, ThreadID: t.ID, Graph: t.Graph, Kind: "run", Status: o.State, Error: o.Error, Pending: o.Pending}
	if o.State == "cancelled" {
		v.Status = string(runtime.StatusAborted)
		if v.Error == "" {
			v.Error = "cancelled before it started"
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
		o, err := s.cfg.Queue.Wait(ctx, id, 0)
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
		if r.URL.Query().Get("mode") == "abort" {
			return true, badRequest(`a queued run stops at its next superstep boundary; mode "abort" is for runs in this process`)
		}
		if v.Status == statusQueued || v.Status == statusRunning {
			// The queue cancels per thread: the thread's queued requests
			// and its running one.
			if _, err := s.cfg.Queue.Cancel(r.Context(), t.ID); err != nil {
				return true, err
			}
		}
		return true, writeJSON(w, http.StatusAccepted, v)
	}
	return true, s.streamQueued(w, r, id)
}

// streamQueued streams the events of a queued run from the store's event
// log: the events of each run a worker started for the request, in order
// (more than one when a worker died and another took the request over),
// with ids "<worker run id>:<seq>", until the request has ended and its
// last run's events are all sent. Last-Event-ID names any of those runs.
func (s *Server) streamQueued(w http.ResponseWriter, r *http.Request, id int64) error {
	if s.durable == nil {
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
			evs, err := s.durable.ReadEvents(r.Context(), o.Runs[k], after, 256)
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
