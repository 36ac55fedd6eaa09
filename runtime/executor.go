package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/ilmek-go/ilmek/spec"
)

// runner executes one run of a graph: the superstep loop shared by every
// program kind.
type runner[S, U any] struct {
	g      *Graph[S, U]
	p      Program[S, U]
	cfg    runConfig
	ctx    context.Context
	cancel context.CancelFunc
	info   runInfo

	yield   func(Event, error) bool // nil when nobody consumes events
	seq     int64
	stopped bool // the consumer stopped iterating

	state   S
	latest  *Checkpoint // the thread's checkpoint the run builds on
	planID  string      // id of the checkpoint the current tasks were planned at
	step    int         // supersteps the thread has completed
	replay  bool        // the current tasks may have journals from earlier passes
	planner *Planner[S]
	cur     []plan[S]
	nxt     []plan[S]
	slots   []*slot[S, U]
	updates []U
	msgs    chan int
}

// slot is the reusable per-task storage of a superstep.
type slot[S, U any] struct {
	info taskInfo
	ctx  Ctx
	upd  U
	err  error
}

func newRunner[S, U any](g *Graph[S, U], ctx context.Context, cfg runConfig, yield func(Event, error) bool) *runner[S, U] {
	rctx, cancel := context.WithCancel(ctx)
	r := &runner[S, U]{g: g, p: g.p, cfg: cfg, ctx: rctx, cancel: cancel, yield: yield}
	r.info = runInfo{shape: g.shape, runID: newID(), threadID: cfg.thread, meta: cfg.meta, logger: cfg.logger, limit: cfg.limit, strict: cfg.strict, cp: cfg.cp}
	r.planner = newPlanner[S](g.ids)
	return r
}

func (r *runner[S, U]) live() bool { return r.yield != nil && !r.stopped }

// emit fills the envelope of ev and hands it to the consumer.
func (r *runner[S, U]) emit(ev Event) {
	if !r.live() {
		return
	}
	r.seq++
	ev.RunID, ev.ThreadID, ev.Seq = r.info.runID, r.info.threadID, r.seq
	if ev.NS == nil {
		ev.NS = []string{}
	}
	if ev.Err != nil && ev.Error == "" {
		ev.Error = ev.Err.Error()
	}
	if !r.yield(ev, nil) {
		r.stopped = true
		r.cancel()
	}
}

// run executes the run and returns its result. A refused run returns a
// Result with an empty Status and Err set.
func (r *runner[S, U]) run(in *U, a *Answers) (res Result[S]) {
	defer r.cancel()
	res.RunID = r.info.runID
	if r.cfg.cp != nil {
		release, err := r.cfg.cp.Lease(r.ctx, r.cfg.thread)
		if err != nil {
			if !errors.Is(err, ErrThreadBusy) {
				err = &CheckpointError{Op: "lease", Err: err}
			}
			return Result[S]{RunID: r.info.runID, Err: err}
		}
		defer release()
	}
	if err := r.start(in, a); err != nil {
		var ce *CheckpointError
		var re *ResumeError
		if errors.As(err, &re) || errors.As(err, &ce) {
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
		if r.info.runSteps >= r.cfg.limit {
			return r.end(res, StatusError, &RecursionLimitError{Limit: r.cfg.limit})
		}
		r.info.runSteps++
		r.info.stepIndex = r.step + 1
		res.Supersteps++
		status, err := r.superstep()
		if status != "" {
			if status == StatusInterrupted {
				res.Pending = r.pending()
			}
			return r.end(res, status, err)
		}
	}
	return r.end(res, StatusDone, nil)
}

func (r *runner[S, U]) end(res Result[S], status Status, err error) Result[S] {
	if status == StatusAborted {
		cause := context.Cause(r.ctx)
		if cause == nil {
			cause = context.Canceled
		}
		err = fmt.Errorf("%w: %w", errAborted, cause)
	}
	res.Status, res.Err, res.State = status, err, r.state
	if r.latest != nil {
		res.CheckpointID = r.latest.ID
	}
	if r.live() {
		ev := Event{Type: EventRunEnd, Status: status, Err: err}
		if status == StatusAborted {
			ev.Reason = err.Error()
		}
		r.emit(ev)
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
			keys[i] = tasks[i].key
		}
		r.emit(Event{Type: EventStepStart, Step: r.info.stepIndex, Tasks: keys})
	}
	if err := r.prepare(tasks); err != nil {
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
		return StatusInterrupted, nil
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
			err = &NodeError{Node: r.g.ids[tasks[where].node], TaskKey: tasks[where].key, Err: fmt.Errorf("panic while planning the next superstep: %v", v), Stack: string(debug.Stack())}
		}
	}()
	r.updates = r.updates[:0]
	for i := range tasks {
		r.updates = append(r.updates, r.slots[i].upd)
	}
	next, failed, err := r.p.Reduce(r.state, r.updates)
	clear(r.updates) // drop references to the updates
	if err != nil {
		return StatusError, &ReduceError{Node: r.g.ids[tasks[failed].node], Err: err}
	}
	r.planner.reset(r.nxt)
	for i := range tasks {
		s := r.slots[i]
		if s.info.gotoSet {
			targets, _ := s.info.gotoTargets.([]Target[S])
			for _, t := range targets {
				r.planner.Target(t)
			}
			continue
		}
		where = i
		if err := r.p.Plan(&next, tasks[i].node, r.planner); err != nil {
			r.nxt = r.planner.tasks[:0]
			return StatusError, &NodeError{Node: r.g.ids[tasks[i].node], TaskKey: tasks[i].key, Err: err}
		}
	}
	prev := r.state
	r.state = next
	r.nxt = r.cur[:0]
	r.cur = r.planner.done()
	r.step++
	id, err := r.commit(tasks)
	if err != nil {
		// The previous checkpoint stands, and so does the state it holds.
		r.state = prev
		r.step--
		return StatusError, err
	}
	if r.live() {
		r.emit(Event{Type: EventState, Step: r.step, Channels: r.state})
		if id != "" {
			r.emit(Event{Type: EventCheckpoint, CheckpointID: id})
		}
	}
	return "", nil
}

// prepare readies one slot per task: identity, state, and the journal that
// earlier passes recorded when the tasks are a replay.
func (r *runner[S, U]) prepare(tasks []plan[S]) error {
	for len(r.slots) < len(tasks) {
		s := &slot[S, U]{}
		r.slots = append(r.slots, s)
	}
	for i := range tasks {
		s := r.slots[i]
		pl := &tasks[i]
		var zero U
		s.upd, s.err = zero, nil
		s.info = taskInfo{node: pl.node, key: pl.key, planID: r.planID, runID: r.info.runID, step: r.info.stepIndex}
		if pl.send {
			s.info.state = &pl.input
		} else {
			s.info.state = &r.state
		}
		s.ctx = Ctx{Context: r.ctx, r: &r.info, t: &s.info}
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

// execute runs the tasks: inline when there is one, concurrently otherwise,
// delivering custom events live and node events as tasks finish.
func (r *runner[S, U]) execute(tasks []plan[S]) {
	if len(tasks) == 1 {
		s := r.slots[0]
		if r.live() {
			s.info.emit = r.emit
			r.emit(Event{Type: EventNodeStart, Node: r.g.ids[tasks[0].node], TaskID: s.info.taskID()})
		}
		r.runTask(s, &tasks[0])
		r.finished(s)
		return
	}
	var events chan Event
	if r.live() {
		events = make(chan Event, 16)
		for i := range tasks {
			s := r.slots[i]
			s.info.emit = func(ev Event) { events <- ev }
			r.emit(Event{Type: EventNodeStart, Node: r.g.ids[tasks[i].node], TaskID: s.info.taskID()})
		}
	}
	if cap(r.msgs) < len(tasks) {
		r.msgs = make(chan int, len(tasks))
	}
	for i := range tasks {
		go func(i int) {
			r.runTask(r.slots[i], &tasks[i])
			r.msgs <- i
		}(i)
	}
	for left := len(tasks); left > 0; {
		select {
		case ev := <-events:
			r.emit(ev)
		case i := <-r.msgs:
			left--
			r.finished(r.slots[i])
		}
	}
	// Deliver what tasks emitted just before they finished.
	for events != nil {
		select {
		case ev := <-events:
			r.emit(ev)
		default:
			events = nil
		}
	}
}

// finished emits the end event of one task.
func (r *runner[S, U]) finished(s *slot[S, U]) {
	if !r.live() || s.info.halted {
		return
	}
	node := r.g.ids[s.info.node]
	if s.err != nil {
		r.emit(Event{Type: EventNodeError, Node: node, TaskID: s.info.taskID(), Err: s.err})
		return
	}
	r.emit(Event{Type: EventNodeEnd, Node: node, TaskID: s.info.taskID(), Update: s.upd})
}

// runTask runs one task with its node's retry policy.
func (r *runner[S, U]) runTask(s *slot[S, U], pl *plan[S]) {
	policy := r.g.retry[pl.node]
	for attempt := 1; ; attempt++ {
		u, err := r.call(s, pl)
		if s.info.halted {
			return
		}
		if err == nil {
			err = r.strictCheck(s)
		}
		if err == nil {
			s.upd = u
			return
		}
		if policy == nil || attempt >= policy.MaxAttempts || (policy.RetryOn != nil && !policy.RetryOn(unwrapNode(err))) {
			s.err = err
			return
		}
		if s.info.emit != nil {
			s.info.emit(Event{Type: EventNodeRetry, Node: r.g.ids[pl.node], TaskID: s.info.taskID(), Attempt: attempt, Err: err, Error: err.Error()})
		}
		if w := policy.wait(attempt); w > 0 {
			t := time.NewTimer(w)
			select {
			case <-t.C:
			case <-r.ctx.Done():
				t.Stop()
				s.err = &NodeError{Node: r.g.ids[pl.node], TaskKey: pl.key, Err: fmt.Errorf("retry stopped by cancellation after attempt %d: %w", attempt, unwrapNode(err))}
				return
			}
		}
		if s.info.jr != nil {
			s.info.jr.newPass()
		}
		s.info.gotoSet, s.info.gotoTargets, s.info.commandSet, s.info.command = false, nil, false, nil
	}
}

func unwrapNode(err error) error {
	var ne *NodeError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

// call runs the node body once, turning a panic into a NodeError.
func (r *runner[S, U]) call(s *slot[S, U], pl *plan[S]) (u U, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &NodeError{Node: r.g.ids[pl.node], TaskKey: pl.key, Err: fmt.Errorf("panic: %v", v), Stack: string(debug.Stack())}
		}
	}()
	var st S
	if pl.send {
		st = pl.input
	} else {
		st = r.state
	}
	u, err = r.p.Run(&s.ctx, pl.node, st)
	if err != nil && !s.info.halted {
		var ne *NodeError
		if !errors.As(err, &ne) {
			err = &NodeError{Node: r.g.ids[pl.node], TaskKey: pl.key, Err: err}
		}
	}
	return u, err
}

// strictCheck reports a journaled key that the finished pass never asked for.
func (r *runner[S, U]) strictCheck(s *slot[S, U]) error {
	if !r.cfg.strict {
		return nil
	}
	var key string
	switch {
	case s.info.jr != nil:
		k, ok := s.info.jr.skipped()
		if !ok {
			return nil
		}
		key = k
	case len(s.info.preload) > 0:
		key = s.info.preload[0].Key
	default:
		return nil
	}
	node := r.g.ids[s.info.node]
	return &NodeError{Node: node, TaskKey: s.info.key, Err: &NondeterminismError{Node: node, Key: key, Reason: "the journal recorded this key but the replay never asked for it; node bodies must be deterministic modulo steps"}}
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

// commitPause writes the checkpoint of a paused superstep: nothing reduced,
// the same plan, the open interrupts, and the journals kept.
func (r *runner[S, U]) commitPause() error {
	pend := r.pending()
	if r.cfg.cp != nil {
		cp := cloneCheckpoint(r.latest)
		cp.ID, cp.ParentID, cp.Pending, cp.Created = newID(), r.latest.ID, pend, time.Now().UTC()
		if err := r.cfg.cp.Put(r.ctx, cp, nil); err != nil {
			return &CheckpointError{Op: "put", Err: err}
		}
		r.latest = cp
		if r.live() {
			r.emit(Event{Type: EventCheckpoint, CheckpointID: cp.ID})
		}
	}
	if r.live() {
		r.emit(Event{Type: EventInterrupt, Pending: pend})
	}
	return nil
}

// commit writes the checkpoint of a reduced superstep and drops the journals
// of its tasks.
func (r *runner[S, U]) commit(done []plan[S]) (string, error) {
	if r.cfg.cp == nil {
		return "", nil
	}
	var drop []string
	for i := range done {
		if s := r.slots[i]; s.info.jr != nil || len(s.info.preload) > 0 {
			drop = append(drop, s.info.taskID())
		}
	}
	cp, err := r.checkpoint(r.step, nil)
	if err != nil {
		return "", err
	}
	if err := r.cfg.cp.Put(r.ctx, cp, drop); err != nil {
		return "", &CheckpointError{Op: "put", Err: err}
	}
	r.latest = cp
	r.planID = cp.ID
	return cp.ID, nil
}

// checkpoint builds a checkpoint of the current state and plan. planID ""
// means the plan was made at this checkpoint.
func (r *runner[S, U]) checkpoint(step int, keepPlan *string) (*Checkpoint, error) {
	chans, err := r.p.EncodeState(r.state)
	if err != nil {
		return nil, &CheckpointError{Op: "encode state", Err: err}
	}
	next := make([]TaskRef, len(r.cur))
	for i, t := range r.cur {
		next[i] = TaskRef{Node: r.g.ids[t.node], Key: t.key}
		if t.send {
			in, err := r.p.EncodeState(t.input)
			if err != nil {
				return nil, &CheckpointError{Op: "encode send input of " + t.key, Err: err}
			}
			next[i].Input = in
		}
	}
	cp := &Checkpoint{ID: newID(), ThreadID: r.cfg.thread, Step: step, Channels: chans, Next: next, Created: time.Now().UTC()}
	if r.latest != nil {
		cp.ParentID = r.latest.ID
	}
	cp.PlanID = cp.ID
	if keepPlan != nil {
		cp.PlanID = *keepPlan
	}
	return cp, nil
}

// start loads or creates the thread's state and the first tasks of the run.
func (r *runner[S, U]) start(in *U, a *Answers) error {
	if r.cfg.cp == nil {
		if a != nil {
			return &ResumeError{Msg: "cannot resume without a thread: pass runtime.Thread and runtime.WithCheckpointer"}
		}
		r.state = r.p.Zero()
		if err := r.foldInput(in); err != nil {
			return err
		}
		return r.planStart()
	}
	latest, err := r.cfg.cp.Get(r.ctx, r.cfg.thread, r.cfg.fromID)
	switch {
	case errors.Is(err, ErrNotFound) && r.cfg.fromID == "":
		latest = nil
	case err != nil:
		return &CheckpointError{Op: "get", Err: err}
	}
	if a != nil {
		return r.startResume(latest, a)
	}
	if latest == nil {
		r.state = r.p.Zero()
		if err := r.foldInput(in); err != nil {
			return err
		}
		if err := r.planStart(); err != nil {
			return err
		}
		cp, err := r.checkpoint(0, nil)
		if err != nil {
			return err
		}
		return r.putStart(cp)
	}
	open, err := r.openInterrupts(latest)
	if err != nil {
		return err
	}
	if len(open) > 0 {
		return &ResumeError{ThreadID: r.cfg.thread, Msg: fmt.Sprintf("thread %q is waiting on interrupt(s) %s; answer with Resume instead of starting a run", r.cfg.thread, idList(open))}
	}
	r.latest = latest
	if err := r.load(latest); err != nil {
		return err
	}
	if err := r.foldInput(in); err != nil {
		return err
	}
	var keep *string
	if len(r.cur) > 0 {
		keep = &latest.PlanID
	} else if err := r.planStart(); err != nil {
		return err
	}
	cp, err := r.checkpoint(latest.Step, keep)
	if err != nil {
		return err
	}
	return r.putStart(cp)
}

func (r *runner[S, U]) putStart(cp *Checkpoint) error {
	if err := r.cfg.cp.Put(r.ctx, cp, nil); err != nil {
		return &CheckpointError{Op: "put", Err: err}
	}
	r.latest, r.planID = cp, cp.PlanID
	r.replay = cp.PlanID != cp.ID
	return nil
}

// load takes the state, the superstep counter and the planned tasks of cp.
func (r *runner[S, U]) load(cp *Checkpoint) error {
	st, err := r.p.DecodeState(cp.Channels)
	if err != nil {
		return &CheckpointError{Op: "decode checkpoint " + cp.ID, Err: err}
	}
	r.state, r.step, r.planID = st, cp.Step, cp.PlanID
	r.cur = r.cur[:0]
	for _, t := range cp.Next {
		i, ok := r.g.index[t.Node]
		if !ok {
			return &CheckpointError{Op: "load", Err: fmt.Errorf("checkpoint %s plans node %q, which this graph does not have; was the graph changed under a running thread?", cp.ID, t.Node)}
		}
		pl := plan[S]{node: i, key: t.Key}
		if t.Input != nil {
			in, err := r.p.DecodeState(t.Input)
			if err != nil {
				return &CheckpointError{Op: "decode send input of " + t.Key, Err: err}
			}
			pl.send, pl.input = true, in
		}
		r.cur = append(r.cur, pl)
	}
	r.replay = true
	return nil
}

func (r *runner[S, U]) foldInput(in *U) (err error) {
	if in == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = &ReduceError{Err: fmt.Errorf("panic while folding the input: %v\n%s", v, debug.Stack())}
		}
	}()
	next, _, err := r.p.Reduce(r.state, []U{*in})
	if err != nil {
		return &ReduceError{Err: err}
	}
	r.state = next
	return nil
}

func (r *runner[S, U]) planStart() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &NodeError{Node: spec.Start, TaskKey: spec.Start, Err: fmt.Errorf("panic while planning the first superstep: %v", v), Stack: string(debug.Stack())}
		}
	}()
	r.planner.reset(r.nxt)
	if err := r.p.Plan(&r.state, StartNode, r.planner); err != nil {
		r.nxt = r.planner.tasks[:0]
		return &NodeError{Node: spec.Start, TaskKey: spec.Start, Err: err}
	}
	r.nxt = r.cur[:0]
	r.cur = r.planner.done()
	return nil
}

// openInterrupts returns the pending interrupts of cp that have no answer in
// their task's journal yet.
func (r *runner[S, U]) openInterrupts(cp *Checkpoint) ([]PendingInterrupt, error) {
	var open []PendingInterrupt
	for _, p := range cp.Pending {
		e, err := r.journalEntry(p)
		if err != nil {
			return nil, err
		}
		if e == nil || !e.Answered {
			open = append(open, p)
		}
	}
	return open, nil
}

func (r *runner[S, U]) journalEntry(p PendingInterrupt) (*JournalEntry, error) {
	j, err := r.cfg.cp.GetJournal(r.ctx, r.cfg.thread, p.TaskID)
	if err != nil {
		return nil, &CheckpointError{Op: "get journal", Err: err}
	}
	for i := range j {
		if j[i].Key == p.Key {
			return &j[i], nil
		}
	}
	return nil, nil
}

func idList(ps []PendingInterrupt) string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// newID returns a unique id that sorts after every id this process made
// before it (and, clocks permitting, other processes' earlier ids).
func newID() string { return idGen.next() }
