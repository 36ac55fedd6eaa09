package runtime

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// obsState is the runner's part of observing a run. timed is set for a run
// that is observed or streamed: only such a run reads the clock.
type obsState struct {
	obs    Observer
	rec    RunRecord
	timed  bool
	t0     time.Time       // the run's start
	stepT0 time.Time       // the running superstep's start
	sctx   context.Context // the running superstep's context (the run's between supersteps)

	putDur   time.Duration // of the last checkpoint write
	putBytes int
}

// obsTask is a slot's part of observing a task.
type obsTask struct {
	rec      TaskRecord
	start    time.Time
	attempts int
	dur      time.Duration
}

// runObserver is the observer of a run with the given logger and observers
// of its own (nil, nil: the graph's, built once in New).
func (g *Graph[S, U]) runObserver(logger *slog.Logger, own []Observer) Observer {
	if logger == nil {
		logger = g.logger
	}
	list := make([]Observer, 0, 1+len(g.gobs)+len(own))
	if logger != nil {
		list = append(list, newLogObserver(logger))
	}
	list = append(list, g.gobs...)
	list = append(list, own...)
	return Observers(list...)
}

// observer returns the observer of a run configured by cfg.
func (g *Graph[S, U]) observer(cfg *runConfig) Observer {
	if cfg.logger == nil && len(cfg.observers) == 0 {
		return g.obs
	}
	return g.runObserver(cfg.logger, cfg.observers)
}

// run executes the run (runBody) and, when it is observed, reports its
// start and end.
func (r *runner[S, U]) run(in *U, a *Answers) Result[S] {
	if r.obs == nil && r.yield == nil && r.evs == nil {
		return r.runBody(in, a)
	}
	r.timed, r.t0 = true, time.Now()
	if r.obs == nil {
		return r.runBody(in, a)
	}
	r.rec = RunRecord{RunID: r.info.runID, ThreadID: r.cfg.thread, Graph: r.g.shape.Name, Resume: a != nil, Start: r.t0}
	r.ctx = r.obs.RunStart(r.ctx, r.rec)
	r.sctx = r.ctx
	res := r.runBody(in, a)
	r.obs.RunEnd(r.ctx, r.rec, RunEnd{Status: res.Status, Err: res.Err, Supersteps: res.Supersteps, Duration: time.Since(r.t0)})
	return res
}

// timedSuperstep runs a superstep and, when the run is observed, reports
// its start and end.
func (r *runner[S, U]) timedSuperstep() (Status, error) {
	if !r.timed {
		return r.superstep()
	}
	r.stepT0 = time.Now()
	if r.obs == nil {
		return r.superstep()
	}
	rec := SuperstepRecord{Step: r.info.stepIndex, Tasks: len(r.cur), Start: r.stepT0}
	r.sctx = r.obs.SuperstepStart(r.ctx, r.rec, rec)
	status, err := r.superstep()
	r.obs.SuperstepEnd(r.sctx, r.rec, rec, SuperstepEnd{Status: status, Err: err, Duration: time.Since(r.stepT0)})
	r.sctx = r.ctx
	return status, err
}

// runTask runs one task (runTaskBody) and, when the run is timed, measures
// it and reports its start and end to the observer (runTaskTimed). Its
// frame must stay as small as runTaskBody's: a task's goroutine starts with
// a small stack, and a frame that holds the timed path's records made every
// goroutine of an unobserved fan-out grow (copy) its stack, doubling the
// CPU time per task of fanout-1000.
func (r *runner[S, U]) runTask(s *slot[S, U], pl *plan[S]) {
	if r.timed {
		r.runTaskTimed(s, pl)
		return
	}
	r.runTaskBody(s, pl)
}

// runTaskTimed is runTask for a timed run. Its frame is small too: the
// observer's calls, whose records are large, are in functions of their
// own, whose frames are gone by the time the node runs.
//
//go:noinline
func (r *runner[S, U]) runTaskTimed(s *slot[S, U], pl *plan[S]) {
	s.start, s.attempts = time.Now(), 1
	if r.obs != nil {
		r.taskStarted(s, pl)
	}
	r.runTaskBody(s, pl)
	s.dur = time.Since(s.start)
	if r.obs != nil {
		r.taskEnded(s)
	}
}

// taskStarted reports a task's start to the observer.
//
//go:noinline
func (r *runner[S, U]) taskStarted(s *slot[S, U], pl *plan[S]) {
	// Field by field, not a literal: a literal is built on the stack first.
	rec := &s.rec
	rec.RunID, rec.ThreadID, rec.Step, rec.Node = r.info.runID, r.cfg.thread, s.info.step, r.g.ids[pl.Node]
	rec.NodeType, rec.TaskKey, rec.TaskID, rec.Start = r.g.shape.Nodes[pl.Node].Type, pl.Key, s.info.taskID(), s.start
	s.info.rec = rec
	// A Ctx of its own: the previous task's may still be read by a
	// goroutine its node started.
	s.ctx = &Ctx{Context: r.obs.TaskStart(r.sctx, s.rec), r: &r.info, t: &s.info}
}

// taskEnded reports a task's end to the observer.
//
//go:noinline
func (r *runner[S, U]) taskEnded(s *slot[S, U]) {
	r.obs.TaskEnd(s.ctx.Context, s.rec, TaskEnd{Attempts: s.attempts, Err: s.err, Halted: s.info.halted, Duration: s.dur})
}

// put writes a checkpoint; a timed run measures the write, and an observed
// one reports it.
func (r *runner[S, U]) put(cp *Checkpoint, done []string, pause bool) (err error) {
	ctx := r.writeContext()
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = durableWrite(r.ctx)
		defer cancel()
	}
	if r.tw != nil {
		// The thread's metadata or the run's outcome ride with the write.
		defer func() { r.threadWritten(err) }()
	}
	// So do the events emitted since the last commit (and, when the write
	// ends the run, its last ones: endEvents).
	defer func() {
		if err == nil && len(r.evbuf) > 0 {
			r.eventsCommitted()
		}
	}()
	if !r.timed {
		_, err := r.write(ctx, cp, done)
		return err
	}
	t := time.Now()
	n, err := r.write(ctx, cp, done)
	r.putDur, r.putBytes = time.Since(t), n
	if r.obs != nil {
		r.obs.CheckpointCommit(r.sctx, r.rec, CheckpointRecord{ID: cp.ID, Step: cp.Step, Pause: pause, Bytes: r.putBytes, Duration: r.putDur, Err: err})
	}
	return err
}

// checkpointBytes is the size of what was encoded for cp.
func checkpointBytes(cp *Checkpoint) int {
	n := len(cp.Channels)
	for i := range cp.Next {
		n += len(cp.Next[i].Input)
	}
	for i := range cp.Pending {
		n += len(cp.Pending[i].Payload)
	}
	return n
}

// annotatePause stores what PauseAnnotator observers keep with a pause in
// each of its interrupts.
func (r *runner[S, U]) annotatePause(pend []PendingInterrupt) {
	a, ok := r.obs.(PauseAnnotator)
	if !ok {
		return
	}
	meta := a.AnnotatePause(r.sctx, r.rec)
	if len(meta) == 0 {
		return
	}
	for i := range pend {
		pend[i].Meta = meta
	}
	for i := range r.cur { // what Result.Pending lists
		for j := range r.slots[i].info.pending {
			r.slots[i].info.pending[j].Meta = meta
		}
	}
}

func (r *runner[S, U]) interruptsOpened(pend []PendingInterrupt) {
	for _, p := range pend {
		r.obs.InterruptOpened(r.sctx, r.rec, p)
	}
}

// observeResume reports whether the resume was accepted (err == nil).
func (r *runner[S, U]) observeResume(err error) {
	rec := ResumeRecord{Accepted: err == nil, Err: err}
	var re *ResumeError
	switch {
	case errors.As(err, &re):
		rec.Reason = re.Msg
	case err != nil:
		rec.Reason = err.Error()
	}
	if err == nil && r.latest != nil {
		rec.Paused = r.latest.Pending
	}
	r.obs.Resume(r.ctx, r.rec, rec)
}

// leaseRenewed returns the LeaseOptions.Renewed callback of the run: it
// reports each renewal to the observer, nil when nobody observes.
func (r *runner[S, U]) leaseRenewed() func(time.Time) {
	obs, rec, ctx := r.obs, r.rec, r.ctx
	if obs == nil {
		return nil
	}
	return func(deadline time.Time) {
		obs.Lease(ctx, rec, LeaseRecord{Event: LeaseRenewed, Deadline: deadline})
	}
}

// leaseLost returns the LeaseOptions.Lost callback of the run: it reports
// the loss and cancels the run.
func (r *runner[S, U]) leaseLost() func(error) {
	obs, rec, ctx, cancel := r.obs, r.rec, r.ctx, r.cancel
	return func(lost error) {
		if obs != nil {
			obs.Lease(ctx, rec, LeaseRecord{Event: LeaseLost, Err: lost})
		}
		cancel(&leaseLostError{err: lost})
	}
}

// observeStep reports one executed or replayed Step of an observed task.
func observeStep(ctx *Ctx, key string, replayed bool, t0 time.Time, err error) {
	rec := StepRecord{Key: key, Replayed: replayed, Err: err}
	if !replayed {
		rec.Duration = time.Since(t0)
	}
	ctx.r.obs.Step(ctx.Context, *ctx.t.rec, rec)
}
