package runtime

import (
	"context"
	"errors"
	"fmt"
	"github.com/ilmek-go/ilmek/runtime/internal/contract"
	"runtime/debug"
	"slices"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// runner executes one run of a graph: the superstep loop shared by every
// program kind.
type runner[S, U any] struct {
	g      *Graph[S, U]
	p      program[S, U]
	cfg    runConfig
	ctx    context.Context
	cancel context.CancelCauseFunc
	info   runInfo

	yield   func(Event, error) bool // nil when nobody consumes events
	seq     int64
	stopped bool // the consumer stopped iterating

	obsState   // observer and timing (observe.go)
	deltaState // checkpoints as deltas (writes.go)
	threadRun  // thread metadata, outcome and event log (threads_run.go)

	state  S
	next   S           // the state being planned on, before it is committed
	latest *Checkpoint // the thread's checkpoint the run builds on
	planID string      // id of the checkpoint the current tasks were planned at
	step   int         // supersteps the thread has completed
	replay bool        // the current tasks may have journals from earlier passes

	// stateAt is the id of the checkpoint whose channels state holds
	// (stateCache): set where a checkpoint is built from the state or
	// the state is decoded from one.
	stateAt string
	// held is the cached state of checkpoint heldAt that readStart took
	// for load.
	held   S
	heldAt string

	// Buffers that live as long as the runner; runners are pooled per
	// graph, so a run reuses the storage of earlier ones.
	planner *contract.Planner[S]
	cur     []plan[S]
	nxt     []plan[S]
	slots   []slot[S, U] // one per task of the current superstep
	used    int          // slots this run has initialised
	// ctxs is room for tasks' Ctx values never handed to a node: a Ctx
	// once handed out is never written again (slot.ctx), so runs take
	// theirs from here, one allocation for many.
	ctxs    []Ctx
	updates []U
	msgs    chan int
	noEdge  []string // nodes of this superstep whose guarded edges all failed (routes.go)

	seed *S // a subgraph's first state, run without a checkpointer (subgraph.go)

	hold *holdingLease      // the run's lease when it keeps checkpoints for its next write (durability.go)
	we   writeEncoder[S, U] // the program's, when the run's Checkpointer stores deltas (setupDeltas)
}

// slot is the reusable per-task storage of a superstep. The task's update
// goes to updates[idx], the slice Reduce receives.
type slot[S, U any] struct {
	info taskInfo
	// ctx is the task's handle, allocated for the slot's first task of a
	// run (and for each task of an observed run) and never written after
	// a node got it: as a context.Context it stays valid, cancelled with
	// the run, in whatever goroutine the node handed it to (net/http's
	// background dial, an SDK's cancellation notice), after the node
	// returned and after the run ended.
	ctx *Ctx
	idx int
	err error
	to  []target[S] // the task's command, nil without one

	obsTask // the task's observer record and timing (observe.go)
}

// newRunner takes a runner from g's pool (or makes one) and sets it up for
// one run. Give it back with release when the run's result was read.
func newRunner[S, U any](g *Graph[S, U], ctx context.Context, cfg runConfig, yield func(Event, error) bool) *runner[S, U] {
	r, _ := g.runners.Get().(*runner[S, U])
	if r == nil {
		r = &runner[S, U]{planner: contract.NewPlanner[S](g.ids)}
	}
	if cfg.durability == 0 {
		cfg.durability = g.durable
	}
	rctx, cancel := context.WithCancelCause(ctx)
	r.g, r.p, r.cfg, r.ctx, r.cancel, r.yield = g, g.p, cfg, rctx, cancel, yield
	runID := cfg.runID
	if runID == "" {
		runID = newID()
	}
	r.info = runInfo{shape: g.shape, runID: runID, threadID: cfg.thread, meta: cfg.meta, logger: cfg.logger, limit: cfg.limit, strict: cfg.strict, cp: cfg.cp, stopSig: cfg.stop, parkAfter: cfg.timers.or(g.timers).threshold()}
	r.obs = g.observer(&cfg)
	r.info.obs = r.obs
	r.encoded, r.werr = false, nil
	r.setupDeltas()
	r.setupThread()
	return r
}

// release drops every reference the finished run left in r and puts r
// back in its graph's pool, keeping its buffers.
func (r *runner[S, U]) release() {
	g := r.g
	clear(r.slots[:r.used])
	clear(r.updates[:cap(r.updates)])
	clear(r.cur[:cap(r.cur)])
	clear(r.nxt[:cap(r.nxt)])
	clear(r.writes[:cap(r.writes)])
	ws, ids := r.writes[:0], r.ids
	contract.Drop(r.planner)
	*r = runner[S, U]{planner: r.planner, cur: r.cur[:0], nxt: r.nxt[:0], slots: r.slots, ctxs: r.ctxs, updates: r.updates[:0], msgs: r.msgs, noEdge: r.noEdge[:0]}
	r.writes, r.ids = ws, ids
	g.runners.Put(r)
}

// live reports whether the run's events are wanted: by a consumer that
// still iterates, or by the event store (WithEventLog).
func (r *runner[S, U]) live() bool { return (r.yield != nil && !r.stopped) || r.evs != nil }

// stopRequested reports whether WithStopSignal's channel is closed.
func (r *runner[S, U]) stopRequested() bool {
	if r.cfg.stop == nil {
		return false
	}
	select {
	case <-r.cfg.stop:
		return true
	default:
		return false
	}
}

// emit fills the envelope of ev and hands it to the consumer.
func (r *runner[S, U]) emit(ev Event) {
	if !r.live() {
		return
	}
	r.seq++
	ev.RunID, ev.ThreadID, ev.Seq = r.info.runID, r.info.threadID, r.seq
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if ev.NS == nil {
		ev.NS = []string{}
	}
	if ev.Err != nil && ev.Error == "" {
		ev.Error = ev.Err.Error()
	}
	if r.evs != nil {
		r.evbuf = append(r.evbuf, encodeEvent(ev))
	}
	if r.folding {
		r.tail = append(r.tail, ev) // handed over once the write that stores it returned
		return
	}
	r.deliver(ev)
}

// deliver hands ev to the consumer, if one still iterates.
func (r *runner[S, U]) deliver(ev Event) {
	if r.yield != nil && !r.stopped && !r.yield(ev, nil) {
		r.stopped = true
		r.cancel(nil)
	}
}

// stepEvents emits a committed superstep's state event and then ck, the
// event of its checkpoint (none when ck.CheckpointID is "").
func (r *runner[S, U]) stepEvents(ck Event) {
	ev := Event{Type: EventState, Step: r.step, Channels: r.state, Duration: time.Since(r.stepT0)}
	if len(r.noEdge) > 0 {
		ev.NoEdgeHeld = slices.Clone(r.noEdge)
	}
	r.emit(ev)
	if ck.CheckpointID != "" {
		r.emit(ck)
	}
}

// runBody executes the run and returns its result. A refused run returns a
// Result with an empty Status and Err set. run (observe.go) wraps it.
func (r *runner[S, U]) runBody(in *U, a *Answers) (res Result[S]) {
	defer r.cancel(nil)
	res.RunID = r.info.runID
	if r.cfg.cp != nil {
		// Losing the lease cancels the run at once: nodes see their
		// context done and Step starts no new effect, rather than running
		// effects the new holder of the thread will run again.
		lease, err := r.cfg.cp.Lease(r.ctx, r.cfg.thread, checkpoint.LeaseOptions{Lost: r.leaseLost(), Renewed: r.leaseRenewed()})
		if err != nil {
			if !errors.Is(err, ErrThreadBusy) {
				err = &CheckpointError{Op: "lease", Err: err}
			}
			return Result[S]{RunID: r.info.runID, Err: err}
		}
		lease = r.holdWrites(lease)
		defer lease.Release()
		r.info.lease, r.info.stop = lease, r.cancel
		if r.obs != nil {
			r.obs.Lease(r.ctx, r.rec, LeaseRecord{Event: LeaseTaken})
		}
	}
	err := r.start(in, a)
	if a != nil && r.obs != nil {
		r.observeResume(err)
	}
	if err != nil {
		// Refusals of the thread as it stands write nothing: not the
		// thread's outcome either, which stays its last run's.
		var ce *CheckpointError
		var re *ResumeError
		var ie *IncompatibleError
		if errors.As(err, &re) || errors.As(err, &ce) || errors.As(err, &ie) || errors.Is(err, ErrThreadMoved) {
			return Result[S]{RunID: r.info.runID, Err: err}
		}
		// A refused input (undeclared channel) ends the run before it starts.
		r.emit(Event{Type: EventRunStart})
		return r.end(res, StatusError, err)
	}
	r.emit(Event{Type: EventRunStart})
	for len(r.cur) > 0 {
		if err := r.ctx.Err(); err != nil {
			return r.end(res, StatusAborted, err)
		}
		if r.stopRequested() {
			r.cancel(ErrStopRequested)
			return r.end(res, StatusAborted, ErrStopRequested)
		}
		if r.info.runSteps >= r.cfg.limit {
			return r.end(res, StatusError, &RecursionLimitError{Limit: r.cfg.limit})
		}
		r.info.runSteps++
		r.info.stepIndex = r.step + 1
		res.Supersteps++
		status, err := r.timedSuperstep()
		if status != "" {
			if status == StatusInterrupted || status == StatusParked {
				res.Pending = r.pending()
				res.WakeAt = checkpoint.EarliestWake(res.Pending)
			}
			return r.end(res, status, err)
		}
	}
	return r.end(res, StatusDone, nil)
}

func (r *runner[S, U]) end(res Result[S], status Status, err error) Result[S] {
	status, err = r.flushKept(status, err)
	r.keepUnwrittenEvents()
	if status == StatusAborted {
		cause := context.Cause(r.ctx)
		switch lerr := r.lostLease(); {
		case lerr != nil:
			// Not the caller's cancellation: the thread now belongs to
			// another run, and this one failed to keep it.
			status, err = StatusError, lerr
		case cause == nil:
			err = fmt.Errorf("%w: %w", ErrAborted, context.Canceled)
		case errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded):
			err = fmt.Errorf("%w: %w", ErrAborted, cause)
		default:
			// A cause of the caller's own: still a cancellation.
			err = fmt.Errorf("%w: %w (%w)", ErrAborted, cause, context.Canceled)
		}
	}
	if status == StatusError {
		err = r.ownLeaseLost(err)
	}
	res.Status, res.Err, res.State = status, err, r.state
	if r.latest != nil {
		res.CheckpointID = r.latest.ID
	}
	if r.hold != nil {
		if id, lost := r.hold.latest(); lost {
			res.CheckpointID = id // the thread's latest: a kept checkpoint was lost
		}
	}
	if err == nil && status != StatusError && status != StatusAborted {
		r.cacheState()
	}
	switch {
	case r.folded:
		// The last checkpoint's write stored run_end and the outcome, and
		// gave the lease back (foldsEnd): nothing is left to write.
		r.deliver(r.tail[len(r.tail)-1])
		return res
	case r.live():
		ev := Event{Type: EventRunEnd, Status: status, Err: err, Duration: time.Since(r.t0)}
		if status == StatusAborted {
			ev.Reason = err.Error()
		}
		r.emit(ev)
	}
	if r.trec != nil || r.evs != nil {
		r.finalCommit(status, err, res.Pending)
	}
	return res
}

// superstep runs the current tasks, then reduces, plans and commits. It
// returns a non-empty status when the run ends here.
func (r *runner[S, U]) superstep() (status Status, err error) {
	tasks := r.cur
	if r.live() {
		keys := make([]string, len(tasks))
		for i := range tasks {
			keys[i] = tasks[i].Key
		}
		r.emit(Event{Type: EventStepStart, Step: r.info.stepIndex, Tasks: keys})
	}
	if err := r.prepare(tasks); err != nil {
		if r.ctx.Err() != nil && r.lostLease() == nil {
			return StatusAborted, err // cancelled while reading the journals
		}
		return StatusError, err
	}
	r.execute(tasks)
	// A failing task voids the superstep and wins over pauses and reduce
	// errors; the first failure in task order is the run's error.
	for i := range tasks {
		if err := r.slots[i].err; err != nil {
			if r.ctx.Err() != nil {
				return StatusAborted, err // cancelled under the running tasks
			}
			if errors.Is(err, ErrStopRequested) && r.stopRequested() {
				// A subgraph stopped at its own superstep boundary: the
				// run stops as at its own, the task's update unwritten.
				r.cancel(ErrStopRequested)
				return StatusAborted, ErrStopRequested
			}
			return StatusError, err
		}
	}
	halted := false
	for i := range tasks {
		halted = halted || r.slots[i].info.halted
	}
	if halted {
		if err := r.commitPause(); err != nil {
			return StatusError, err
		}
		// An answer a node could not decode was taken back: the run
		// pauses on that interrupt again, and says why.
		for i := range tasks {
			if rf := r.slots[i].info.refused; rf != nil {
				return StatusInterrupted, rf
			}
		}
		return checkpoint.PauseStatus(r.pending()), nil
	}
	// Reducers and guards are the program's (and, in code-built graphs, the
	// application's) code: a panic there fails the run like a node's does.
	where := -1 // the task whose plan is being made, -1 while reducing
	defer func() {
		if v := recover(); v != nil {
			status = StatusError
			if where < 0 {
				err = &ReduceError{Err: fmt.Errorf("panic while reducing: %v\n%s", v, debug.Stack())}
				return
			}
			err = &NodeError{Node: r.g.ids[tasks[where].Node], TaskKey: tasks[where].Key, Err: fmt.Errorf("panic while planning the next superstep: %v", v), Stack: string(debug.Stack())}
		}
	}()
	// The next state lives in the runner, not on the stack: Plan takes its
	// address through an interface, which would move a local to the heap.
	var failed int
	r.next, failed, err = r.p.Reduce(r.state, r.updates)
	if err != nil {
		clear(r.updates)
		return StatusError, &ReduceError{Node: r.g.ids[tasks[failed].Node], Err: err}
	}
	r.encodeWrites(&r.state, &r.next, r.updates)
	clear(r.updates) // drop references to the updates
	contract.Reset(r.planner, r.nxt)
	r.noEdge = r.noEdge[:0]
	for i := range tasks {
		s := &r.slots[i]
		if targets := s.to; targets != nil {
			if err := r.checkGoto(tasks[i].Node, targets); err != nil {
				r.nxt = contract.Tasks(r.planner)[:0]
				return StatusError, &NodeError{Node: r.g.ids[tasks[i].Node], TaskKey: tasks[i].Key, Err: err}
			}
			for _, t := range targets {
				r.planner.Target(t)
			}
			continue
		}
		where = i
		held := contract.Held(r.planner)
		if err := r.p.Plan(&r.next, tasks[i].Node, r.planner); err != nil {
			r.nxt = contract.Tasks(r.planner)[:0]
			return StatusError, &NodeError{Node: r.g.ids[tasks[i].Node], TaskKey: tasks[i].Key, Err: err}
		}
		if contract.Held(r.planner) == held && r.noEdgeHeld(tasks[i].Node, held, &r.next) {
			r.reportNoEdge(tasks[i].Node)
		}
	}
	prev := r.state
	r.state = r.next
	r.nxt = r.cur[:0]
	r.cur = contract.Done(r.planner)
	r.step++
	id, err := r.commit(tasks)
	if err != nil {
		// The previous checkpoint stands, and so does the state it holds.
		r.state = prev
		r.step--
		return StatusError, err
	}
	switch {
	case r.folded:
		// The checkpoint's write stored these (endEvents); run_end is end's.
		for _, ev := range r.tail[:len(r.tail)-1] {
			r.deliver(ev)
		}
	case r.live():
		r.stepEvents(Event{Type: EventCheckpoint, CheckpointID: id, Duration: r.putDur, Bytes: r.putBytes})
	}
	return "", nil
}

// prepare readies one slot per task: identity, state, and the journal that
// earlier passes recorded when the tasks are a replay.
func (r *runner[S, U]) prepare(tasks []plan[S]) error {
	if len(r.slots) < len(tasks) {
		r.slots = make([]slot[S, U], max(len(tasks), 2*len(r.slots)))
		r.used = 0
	}
	r.used = max(r.used, len(tasks))
	r.updates = slices.Grow(r.updates[:0], len(tasks))[:len(tasks)]
	clear(r.updates)
	for i := range tasks {
		s := &r.slots[i]
		pl := &tasks[i]
		s.idx, s.err = i, nil
		if s.to != nil {
			s.to = nil
		}
		// Only what differs from the slot's last task is written: a
		// superstep of one task then stores a few words, not the whole
		// taskInfo, which matters while the GC's write barrier is on.
		if !s.info.clean() {
			s.info = taskInfo{}
		}
		s.info.node, s.info.key, s.info.id, s.info.step = pl.Node, pl.Key, "", r.info.stepIndex
		if s.info.planID != r.planID {
			s.info.planID = r.planID
		}
		if s.info.runID != r.info.runID {
			s.info.runID = r.info.runID
		}
		st := any(&r.state)
		if pl.Send {
			st = &pl.Input
		}
		if s.info.state != st {
			s.info.state = st
		}
		if s.ctx == nil || s.ctx.t != &s.info || s.ctx.Context != r.ctx || s.ctx.r != &r.info {
			if len(r.ctxs) == 0 {
				r.ctxs = make([]Ctx, max(len(tasks)-i, 4))
			}
			s.ctx, r.ctxs = &r.ctxs[0], r.ctxs[1:]
			*s.ctx = Ctx{Context: r.ctx, r: &r.info, t: &s.info}
		}
		if r.replay && r.cfg.cp != nil {
			j, err := r.cfg.cp.GetJournal(r.ctx, r.cfg.thread, s.info.taskID())
			if err != nil {
				return &CheckpointError{Op: "get journal", Err: err}
			}
			s.info.preload = j
		}
	}
	r.replay = false
	return nil
}

// pending lists the open interrupts of the halted tasks, sorted by id.
func (r *runner[S, U]) pending() []PendingInterrupt {
	var out []PendingInterrupt
	for i := range r.cur {
		out = append(out, r.slots[i].info.pending...)
	}
	slices.SortFunc(out, func(a, b PendingInterrupt) int { return cmpString(a.ID, b.ID) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
