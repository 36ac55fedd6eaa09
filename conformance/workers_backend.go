package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// workersStore is a checkpointer of the "workers" backend: a PostgreSQL
// store (a schema of its own, lent to one case at a time like the
// postgres backend's) whose runs Drive makes as requests to the store's
// queue (driveWorkers).
type workersStore struct {
	*pooledStore
	pg *postgres.Store
	// q is the store's queue, one for every case the store serves: Wait's
	// listener, a connection of its own, lingers after a case's last
	// waiter (listenLinger), and a queue per case left one such connection
	// for each case of the last seconds, past the server's limit.
	q *workers.Queue
}

// location refuses a killed run: see WorkersSkip.
func (s *workersStore) location() (string, string) { return "workers", "" }

// openWorkers opens the "workers" backend: the postgres backend's pool of
// schemas, each store handed out as a workersStore.
func openWorkers() (Backend, error) {
	b, err := openPostgres("workers")
	if err != nil {
		return Backend{}, err
	}
	inner := b.New
	var mu sync.Mutex
	queues := map[*postgres.Store]*workers.Queue{}
	b.New = func() runtime.Checkpointer {
		cp := inner()
		ps, ok := cp.(*pooledStore)
		if !ok {
			return cp // a brokenCheckpointer: its error shows in the case
		}
		pg := ps.pooled.(*postgres.Store)
		mu.Lock()
		defer mu.Unlock()
		q := queues[pg]
		if q == nil {
			q = workers.NewQueue(pg)
			queues[pg] = q
		}
		return &workersStore{pooledStore: ps, pg: pg, q: q}
	}
	b.Skip = WorkersSkip
	return b, nil
}

// WorkersSkip returns why the workers backend does not run c, or "" when it
// does. A request to the queue carries a start input, answers by interrupt
// id, or a fork's checkpoint; what it cannot carry:
//
//   - a bare resume (Run.Resume) to a thread that the run before leaves
//     (or the fork's) leaves with other than exactly one open interrupt
//     (the retry of an answer journaled before a failed superstep among
//     them): a resume request
//     answers by id only, so the bare answer is sent as the answer to the
//     one open interrupt, and with none or several there is nothing to
//     send it to (the refusal such a case expects happens before any
//     request);
//   - a killed run (Run.Kill): a killed worker's request is claimed again
//     by another worker once its claim expires, and continues there
//     without a run of its own, which the case cannot describe;
//     runtime/postgres/workers' crash tests show that path.
func WorkersSkip(c *Case) string {
	runs := c.plan()
	for i, r := range runs {
		switch {
		case r.Kill != "":
			return fmt.Sprintf("runs[%d] kills its process: a killed worker's request is continued by another worker, which a case cannot describe", i)
		case r.Resume != nil && r.ResumeKeyed == nil && r.Input == nil:
			// The run whose end the resume answers: the one before, or
			// the fork's.
			before := i - 1
			if r.ForkFromRun != nil {
				before = *r.ForkFromRun
			}
			n := 0
			if before >= 0 && runs[before].Expect.Status == "interrupted" {
				n = len(runs[before].Expect.Pending)
			}
			if n != 1 {
				return fmt.Sprintf("runs[%d] is a bare resume of a thread with %d open interrupts: a resume request answers by id only", i, n)
			}
		}
	}
	return ""
}

// errorRecorder is an observer that keeps the error value of the last run
// or refused resume in this process: an outcome holds only its text, and
// the case compares the error's kind (errorKind).
type errorRecorder struct {
	runtime.NopObserver
	mu  sync.Mutex
	err error
}

func (r *errorRecorder) RunEnd(_ context.Context, _ runtime.RunRecord, end runtime.RunEnd) {
	if end.Err != nil {
		r.set(end.Err)
	}
}

func (r *errorRecorder) Resume(_ context.Context, _ runtime.RunRecord, rr runtime.ResumeRecord) {
	if !rr.Accepted && rr.Err != nil {
		r.set(rr.Err)
	}
}

func (r *errorRecorder) set(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// take returns the error kept since the last take and forgets it.
func (r *errorRecorder) take() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	r.err = nil
	return err
}

// driveWorkers is Drive on the workers backend: a Queue on the case's
// store and a Worker in this process that runs g (workers.Graph, with
// opts); each run of the case is submitted as a request and waited for,
// and observed from the request's outcome and the events its runs stored
// in the store's event log.
func driveWorkers[S, U any](ctx context.Context, g *runtime.Graph[S, U], c *Case, fx *Effects, ws *workersStore, decode func(json.RawMessage) (U, error), opts []runtime.RunOption) []Observation {
	q := ws.q
	rec := &errorRecorder{}
	runnable := workers.Graph(g, append(slices.Clone(opts), runtime.WithObserver(rec))...)
	w := workers.NewWorker(q, map[string]workers.Runnable{"case": runnable}, workers.Poll(50*time.Millisecond), workers.Name("conformance"))
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()

	th := g.Thread(ws, Thread)
	var out []Observation
	ends := map[int]string{}
	for i, r := range c.plan() {
		if c.Multi() && c.phaseOf(i) != c.phase {
			continue
		}
		req := workers.Request{Graph: "case", Thread: Thread}
		fail := func(kind, msg string) Observation {
			return Observation{Status: "error", ErrorKind: kind, Error: msg, Steps: [][]string{}, Effects: fx.Snapshot()}
		}
		var o Observation
		switch {
		case r.Kill != "":
			o = fail("kill", "the workers backend does not make killed runs (WorkersSkip)")
		case r.Input != nil:
			// The case's input as a client sends it: the worker decodes
			// it into the program's update type (json.Unmarshal), which
			// keeps what the in-process decode keeps (an explicit null,
			// a channel the graph does not declare).
			if _, err := decode(r.Input); err != nil {
				o = fail("input", err.Error())
				break
			}
			req.Input = r.Input
		default:
			req.Kind = workers.KindResume
			answers := map[string]any{}
			for k, v := range r.ResumeKeyed {
				answers[k] = decodeAny(v)
			}
			if r.ResumeKeyed == nil {
				// The open interrupts of the checkpoint the resume starts
				// from: the latest, or the fork's.
				at := ""
				if r.ForkFromRun != nil {
					at = ends[*r.ForkFromRun]
				}
				ts, err := th.StateAt(ctx, at)
				open := ts.Open
				if err != nil || len(open) != 1 {
					o = fail("resume", fmt.Sprintf("a bare answer needs exactly one open interrupt to go to (WorkersSkip); the thread has %d (%v)", len(open), err))
					break
				}
				answers[open[0].ID] = decodeAny(r.Resume)
			}
			req.Input, _ = json.Marshal(answers)
		}
		if o.Status == "" {
			if r.ForkFromRun != nil {
				req.From = ends[*r.ForkFromRun]
			}
			o = workerRun(ctx, q, ws, req, rec, fx)
		}
		ends[i] = latestID(ctx, ws)
		out = append(out, o)
	}
	return out
}

// workerRun submits req, waits for its outcome and observes it.
func workerRun(ctx context.Context, q *workers.Queue, ws *workersStore, req workers.Request, rec *errorRecorder, fx *Effects) Observation {
	rec.take()
	id, err := q.Submit(ctx, req)
	if err != nil {
		o := Observation{Status: "refused", ErrorKind: errorKind(err), Error: err.Error(), Steps: [][]string{}, Effects: fx.Snapshot()}
		if !refusal(o.ErrorKind) {
			o.Status = "error"
		}
		return o
	}
	res, err := q.Wait(ctx, id, 200*time.Millisecond)
	if err != nil {
		return Observation{Status: "error", ErrorKind: "workers", Error: err.Error(), Steps: [][]string{}, Effects: fx.Snapshot()}
	}
	var stored []runtime.Event
	for _, run := range res.Runs {
		evs, err := ws.pg.ReadEvents(ctx, run, 0, 0)
		if err != nil {
			return Observation{Status: "error", ErrorKind: "workers", Error: fmt.Sprintf("read the events of request %d's run %s: %v", id, run, err), Steps: [][]string{}, Effects: fx.Snapshot()}
		}
		for _, e := range evs {
			var ev runtime.Event
			if err := json.Unmarshal(e.Data, &ev); err != nil {
				return Observation{Status: "error", ErrorKind: "workers", Error: fmt.Sprintf("decode a stored event of run %s: %v", run, err), Steps: [][]string{}, Effects: fx.Snapshot()}
			}
			stored = append(stored, ev)
		}
	}
	o := observe(ctx, func(yield func(runtime.Event, error) bool) {
		for _, ev := range stored {
			if !yield(ev, nil) {
				return
			}
		}
	}, ws, fx)
	o.Status, o.ErrorKind, o.Error = res.State, "", res.Error
	if res.Error != "" {
		o.ErrorKind = "node" // as errorKind counts an error of no runtime type
		if err := rec.take(); err != nil {
			o.ErrorKind = errorKind(err)
		}
		if refusal(o.ErrorKind) && len(stored) == 0 {
			o.Status = "refused" // turned down before the run started, as Stream's error is
		}
	}
	return o
}
