package server

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// run is one request the server executes on a thread: a run with input,
// a resume with answers, or a fork from a checkpoint.
type run struct {
	id, thread, graph, kind string
	created                 time.Time
	input                   json.RawMessage
	answers                 map[string]any
	from                    string
	expect                  *string // expected_checkpoint_id: runtime.WithExpectedLatest

	stop    chan struct{} // closed to stop at the next superstep boundary
	stopped sync.Once
	started chan struct{} // closed when the run emitted its first event, was refused or ended
	done    chan struct{} // closed when the run ended
	// waited is set (under Server.mu, before the run starts) when its
	// request waits for the start to answer: a refusal is then the
	// response, and the run leaves no trace (Server.finish).
	waited bool

	mu           sync.Mutex
	cancel       context.CancelFunc
	status       runtime.Status
	errText      string
	refusal      error
	runtimeRunID string
	checkpointID string
	pending      []runtime.PendingInterrupt
	lastSeq      int64
	endSeen      runtime.Status // the status of the run's run_end event, once recorded
	leaseLost    bool           // the run ended with its thread's lease lost (checkpoint.ErrLeaseLost)
	ended        time.Time
	notify       chan struct{}            // closed and replaced on every new event
	log          []checkpoint.StoredEvent // the run's latest events, live (at most maxLog)
	maxLog       int
	unflushed    []checkpoint.StoredEvent // events not yet in the store's event log
}

func newRun(id, thread, graph, kind string, maxLog int) *run {
	return &run{id: id, thread: thread, graph: graph, kind: kind, created: time.Now().UTC(),
		stop: make(chan struct{}), started: make(chan struct{}), done: make(chan struct{}),
		status: runtime.StatusNew, notify: make(chan struct{}), maxLog: maxLog}
}

// appendLog keeps ev in the run's live log, dropping the oldest event past
// the bound; r.mu is held.
func (r *run) appendLog(ev checkpoint.StoredEvent) {
	r.log = append(r.log, ev)
	if len(r.log) > r.maxLog {
		r.log = append(r.log[:0:0], r.log[len(r.log)-r.maxLog:]...)
	}
}

// readLog returns at most limit of the run's live events with Seq >
// afterSeq, in order.
func (r *run) readLog(afterSeq int64, limit int) []checkpoint.StoredEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []checkpoint.StoredEvent
	for _, ev := range r.log {
		if ev.Seq > afterSeq {
			out = append(out, ev)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out
}

func (r *run) requestStop() { r.stopped.Do(func() { close(r.stop) }) }

// changed returns a channel closed at the run's next event or end.
func (r *run) changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notify
}

func (r *run) isDone() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// RunView is the JSON form of a run.
type RunView struct {
	RunID        string                     `json:"run_id"`
	ThreadID     string                     `json:"thread_id"`
	Graph        string                     `json:"graph"`
	Kind         string                     `json:"kind"`
	Status       runtime.Status             `json:"status"`
	Error        string                     `json:"error,omitempty"`
	CheckpointID string                     `json:"checkpoint_id,omitempty"`
	Pending      []runtime.PendingInterrupt `json:"pending,omitempty"`
	LastSeq      int64                      `json:"last_seq"`
	Created      time.Time                  `json:"created"`
	Ended        *time.Time                 `json:"ended,omitempty"`
}

func (r *run) view() RunView {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := RunView{RunID: r.id, ThreadID: r.thread, Graph: r.graph, Kind: r.kind, Status: r.status, Error: r.errText,
		CheckpointID: r.checkpointID, Pending: r.pending, LastSeq: r.lastSeq, Created: r.created}
	if !r.ended.IsZero() {
		e := r.ended
		v.Ended = &e
	}
	return v
}

// threadRuns is a thread's active run and the requests queued behind it.
type threadRuns struct {
	active *run
	queue  []*run
}

// submit queues r on its thread under policy. It returns whether r starts
// right away (nothing was ahead of it).
func (s *Server) submit(r *run, policy runtime.DoubleTexting) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[r.thread]
	if q == nil {
		q = &threadRuns{}
		s.queues[r.thread] = q
	}
	busy := len(q.queue) > 0 || q.active != nil && q.active.ending() == ""
	if busy {
		switch policy {
		case runtime.DoubleTextReject:
			return false, errf(409, "thread-busy", "The thread is busy",
				"thread "+r.thread+" has a run queued or running; wait for it, or send double_texting \"enqueue\" or \"cancel-and-replace\"")
		case runtime.DoubleTextCancelReplace:
			for _, old := range q.queue {
				s.finish(old, runtime.StatusAborted, "replaced by run "+r.id+" (cancel-and-replace)", nil)
			}
			q.queue = nil
			if q.active != nil {
				q.active.requestStop()
			}
		}
	}
	q.queue = append(q.queue, r)
	s.remember(r)
	// r starts at once when nothing was ahead of it, or when the active
	// run has sent its run_end and is about to free the thread.
	r.waited = q.active == nil || !busy
	if q.active == nil {
		s.startNext(q)
	}
	return r.waited, nil
}

// ending is the status of the run's run_end event once it was recorded
// (the run is then over but may not have freed its thread yet), else "".
func (r *run) ending() runtime.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.endSeen
}

// remember keeps r for lookups, forgetting the oldest ended runs past the
// server's bound.
func (s *Server) remember(r *run) {
	s.runs[r.id] = r
	s.runOrder = append(s.runOrder, r.id)
	for len(s.runOrder) > s.cfg.MaxRuns {
		old := s.runs[s.runOrder[0]]
		if old != nil && !old.isDone() {
			break
		}
		delete(s.runs, s.runOrder[0])
		s.runOrder = s.runOrder[1:]
	}
}

// forget drops r from the runs this server remembers.
func (s *Server) forget(r *run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[r.id] == r {
		delete(s.runs, r.id)
	}
	if i := slices.Index(s.runOrder, r.id); i >= 0 {
		s.runOrder = slices.Delete(s.runOrder, i, i+1)
	}
}

// startNext starts the thread's next queued run; s.mu is held.
func (s *Server) startNext(q *threadRuns) {
	if len(q.queue) == 0 {
		return
	}
	r := q.queue[0]
	q.queue = q.queue[1:]
	q.active = r
	ctx, cancel := context.WithCancel(s.base)
	r.mu.Lock()
	r.cancel = cancel
	r.status = runtime.StatusRunning
	r.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		end := s.execute(ctx, r)
		// Free the thread before the run reads as ended, so that a
		// client that waited for the end can send the next request at
		// once without finding the thread busy.
		s.mu.Lock()
		if s.queues[r.thread] == q {
			q.active = nil
			if len(q.queue) == 0 {
				delete(s.queues, r.thread)
			}
		}
		s.mu.Unlock()
		s.finish(r, end.status, end.text, end.err)
		s.log.Debug("server: run ended", "run", r.id, "thread", r.thread, "status", end.status)
		s.mu.Lock()
		if s.queues[r.thread] == q && q.active == nil {
			s.startNext(q)
		}
		s.mu.Unlock()
	}()
}

// runEnd is how execute saw a run end.
type runEnd struct {
	status runtime.Status
	text   string
	err    error
}

// threadBusy reports whether the thread has a run queued or running here;
// a run that has sent its run_end is not running, so that no client that
// saw the end reads the thread as busy.
func (s *Server) threadBusy(thread string) (*run, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[thread]
	if q == nil {
		return nil, false
	}
	return q.active, len(q.queue) > 0 || q.active != nil && q.active.ending() == ""
}

// lastRun is the latest run of a thread this server remembers.
func (s *Server) lastRun(thread string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.runOrder) - 1; i >= 0; i-- {
		if r := s.runs[s.runOrder[i]]; r != nil && r.thread == thread {
			return r
		}
	}
	return nil
}

func (s *Server) execute(ctx context.Context, r *run) runEnd {
	g, ok := s.graphs[r.graph]
	if !ok {
		return runEnd{runtime.StatusError, "", notFound("no graph " + r.graph)}
	}
	v, err := g.forThread(ctx, s.cfg.Checkpointer, r.thread)
	if err != nil {
		return runEnd{runtime.StatusError, "", err}
	}
	on := threadRef{cp: s.cfg.Checkpointer, id: r.thread, from: r.from}
	opts := []runtime.RunOption{runtime.WithStopSignal(r.stop)}
	if s.cfg.Logger != nil {
		opts = append(opts, runtime.WithLogger(s.cfg.Logger))
	}
	opts = append(opts, s.cfg.RunOptions...)
	if r.expect != nil {
		opts = append(opts, runtime.WithExpectedLatest(*r.expect))
	}
	var events iter.Seq2[runtime.Event, error]
	if r.answers != nil {
		events = v.streamResume(ctx, on, runtime.AnswersByID(r.answers), opts...)
	} else {
		events, err = v.stream(ctx, on, r.input, opts...)
		if err != nil {
			return runEnd{runtime.StatusError, "", err}
		}
	}
	var last runtime.Event
	seen := false
	for ev, err := range events {
		if err != nil {
			if !seen {
				return runEnd{runtime.StatusError, "", err}
			}
			continue
		}
		seen = true
		last = ev
		if err := s.record(ctx, r, ev); err != nil {
			s.log.Error("server: storing a run event failed", "run", r.id, "err", err)
		}
	}
	if !seen || last.Type != runtime.EventRunEnd {
		return runEnd{runtime.StatusAborted, "the run ended without its run_end event", nil}
	}
	if errors.Is(last.Err, checkpoint.ErrLeaseLost) {
		r.mu.Lock()
		r.leaseLost = true
		r.mu.Unlock()
	}
	return runEnd{last.Status, last.Error, nil}
}

// record stores one event of r and updates r's view. At r's first event
// (the runtime accepted the run) it lists r in its thread's record, before
// the request waiting for the start is answered.
func (s *Server) record(ctx context.Context, r *run, ev runtime.Event) error {
	r.mu.Lock()
	first := r.runtimeRunID == ""
	r.mu.Unlock()
	if first {
		s.noteRun(context.WithoutCancel(ctx), r.thread, r.id, r.kind)
	}
	rid := ev.RunID
	ev.RunID = r.id
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	se := checkpoint.StoredEvent{RunID: r.id, Seq: ev.Seq, ThreadID: r.thread, Time: ev.Time, Kind: string(ev.Type), Data: data}
	if s.events != nil {
		// The store's event log is written at the run's start (so that
		// another process sees at once that the run goes on), once per
		// superstep (at its checkpoint or pause) and at the run's end, not
		// per event.
		r.unflushed = append(r.unflushed, se)
		switch ev.Type {
		case runtime.EventRunStart, runtime.EventCheckpoint, runtime.EventInterrupt, runtime.EventRunEnd:
			s.flush(context.WithoutCancel(ctx), r)
		default:
			if len(r.unflushed) >= 256 {
				s.flush(context.WithoutCancel(ctx), r)
			}
		}
	}
	r.mu.Lock()
	if r.runtimeRunID == "" {
		r.runtimeRunID = rid
		close(r.started)
	}
	r.appendLog(se)
	r.lastSeq = ev.Seq
	switch ev.Type {
	case runtime.EventCheckpoint:
		r.checkpointID = ev.CheckpointID
	case runtime.EventInterrupt:
		r.pending = ev.Pending
	case runtime.EventRunEnd:
		r.endSeen = ev.Status
	}
	close(r.notify)
	r.notify = make(chan struct{})
	r.mu.Unlock()
	return nil
}

// flush writes r's events not yet in the store's event log there, in one
// append. A failed write is logged; the events stay in the live log, and a
// reader of the store's sees the gap in Seq.
func (s *Server) flush(ctx context.Context, r *run) {
	if len(r.unflushed) == 0 {
		return
	}
	if err := s.events.AppendEvents(ctx, r.unflushed); err != nil {
		s.log.Error("server: writing a run's events to the store's event log failed", "run", r.id, "thread", r.thread, "events", len(r.unflushed), "err", err)
	}
	r.unflushed = nil
}

// finish ends r with status. A refusal (err set, the run never started)
// is kept for the request that waits on it and logged when internal; a
// synthetic run_end closes the run's live log either way. A run that never
// started is listed in its thread's record now, and its run_end written to
// the store's event log, unless its request waited for the start (waited)
// and was refused: the refusal is then the response, and the run leaves
// nothing in the store nor among the runs this server remembers.
func (s *Server) finish(r *run, status runtime.Status, text string, err error) {
	r.mu.Lock()
	unstarted := r.runtimeRunID == ""
	silent := err != nil && r.waited && unstarted
	r.mu.Unlock()
	if silent {
		// Before r reads as ended: a client answered the refusal does
		// not find r afterwards.
		s.forget(r)
	}
	r.mu.Lock()
	if r.isDone() {
		r.mu.Unlock()
		return
	}
	if err != nil {
		r.refusal = err
		if p, ok := problemOf(err); ok {
			text = p.Detail
		} else {
			s.log.Error("server: run failed before it started", "run", r.id, "thread", r.thread, "err", err)
			text = "the run failed before it started; the server's log has the details"
		}
	}
	r.status, r.errText, r.ended = status, text, time.Now().UTC()
	synth := r.runtimeRunID == "" || status == runtime.StatusAborted && r.lastSeq == 0
	seq := r.lastSeq + 1
	select {
	case <-r.started:
	default:
		close(r.started)
	}
	r.mu.Unlock()
	if synth {
		ev := runtime.Event{Type: runtime.EventRunEnd, RunID: r.id, ThreadID: r.thread, Seq: seq, Time: time.Now().UTC(), Status: status, Error: text}
		if data, err := json.Marshal(ev); err == nil {
			se := checkpoint.StoredEvent{RunID: r.id, Seq: seq, ThreadID: r.thread, Time: ev.Time, Kind: string(ev.Type), Data: data}
			r.mu.Lock()
			r.appendLog(se)
			r.lastSeq = seq
			r.mu.Unlock()
			if s.events != nil && !silent {
				r.unflushed = append(r.unflushed, se)
			}
		}
	}
	if unstarted && !silent {
		s.noteRun(context.Background(), r.thread, r.id, r.kind)
	}
	if s.events != nil && !silent {
		s.flush(context.Background(), r)
	}
	r.mu.Lock()
	close(r.done)
	close(r.notify)
	r.notify = make(chan struct{})
	r.mu.Unlock()
}

// refused returns the error a run was refused with before it started.
func (r *run) refusedWith() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refusal
}
