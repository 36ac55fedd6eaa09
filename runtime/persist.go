package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ilmek-go/ilmek/runtime/internal/contract"
	"runtime/debug"
	"slices"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// The executor's persistence: where a run starts (a new thread, its latest
// checkpoint, a fork, a resume), how a superstep and a pause are committed,
// and how a lost lease stops the commits.

// commitPause writes the checkpoint of a paused superstep: nothing reduced,
// the same plan, the open interrupts, and the journals kept.
func (r *runner[S, U]) commitPause() error {
	pend := r.pending()
	// An id is "<task key>:<interrupt key>", and both halves may hold a
	// colon, so two tasks can spell the same id. Answers are addressed by
	// id, so such a pause could not be answered unambiguously: refuse it
	// before it is written.
	for i := 1; i < len(pend); i++ {
		if a, b := pend[i-1], pend[i]; a.ID == b.ID {
			// An id is <task key>:<interrupt key>, so a colon in either
			// half can make two ids equal.
			return &NodeError{Node: b.Node, TaskKey: b.ID[:len(b.ID)-len(b.Key)-1], Err: fmt.Errorf(
				"interrupt id %q is also the id of an interrupt of node %q in the same superstep; give one of them a key without ':' (runtime.WithKey)", b.ID, a.Node)}
		}
	}
	if r.obs != nil {
		r.annotatePause(pend)
	}
	if r.cfg.cp != nil {
		if err := r.lostLease(); err != nil {
			return err
		}
		cp := cloneCheckpoint(r.latest)
		cp.ID, cp.ParentID, cp.Pending, cp.Created = newID(), r.latest.ID, pend, time.Now().UTC()
		// The journals of the superstep's tasks stay with the pause, so a
		// fork from it replays what had run (see checkpoint.TaskRef).
		for i := range cp.Next {
			cp.Next[i].Journal = nil
			if i >= len(r.cur) {
				continue
			}
			s := &r.slots[i]
			switch {
			case s.info.jr != nil && len(s.info.jr.entries) > 0:
				cp.Next[i].Journal = slices.Clone(s.info.jr.entries)
			case len(s.info.preload) > 0:
				cp.Next[i].Journal = slices.Clone(s.info.preload)
			}
		}
		if r.trec != nil {
			r.outcomeWith(checkpoint.PauseStatus(pend), r.refusedAnswer(), pend)
		}
		// The run ends with this commit; a refused answer ends it with an
		// outcome of its own, written after.
		r.last = r.lastCommit() && r.refusedAnswer() == nil
		// Every task of the superstep finished (or paused): commit it even
		// when the caller is cancelling the run (put writes durably).
		if err := r.put(cp, nil, true); err != nil {
			return &CheckpointError{Op: "put", Err: err}
		}
		if r.stateAt == r.latest.ID {
			r.stateAt = cp.ID // a pause keeps its parent's channels
		}
		r.latest = cp
		if r.live() {
			r.emit(Event{Type: EventCheckpoint, CheckpointID: cp.ID, Duration: r.putDur, Bytes: r.putBytes})
		}
	}
	if r.obs != nil {
		r.interruptsOpened(pend)
	}
	if r.live() {
		r.emit(Event{Type: EventInterrupt, Pending: pend, Duration: time.Since(r.stepT0)})
	}
	return nil
}

// lostLease returns the lease CheckpointError when the run's lease was
// reported lost (or passed its deadline), so that a superstep whose tasks finished anyway is
// not committed over the thread's new holder, whether or not the
// Checkpointer fences its writes. A run cancelled by its caller still
// commits a superstep that completed.
func (r *runner[S, U]) lostLease() error {
	if r.ctx.Err() == nil {
		return nil
	}
	var lost *leaseLostError
	if errors.As(context.Cause(r.ctx), &lost) {
		return &CheckpointError{Op: "lease", Err: lost.err}
	}
	return nil
}

// commit writes the checkpoint of a reduced superstep and drops the journals
// of its tasks.
func (r *runner[S, U]) commit(done []plan[S]) (string, error) {
	if r.cfg.cp == nil {
		return "", nil
	}
	if err := r.lostLease(); err != nil {
		return "", err
	}
	var drop []string
	for i := range done {
		if s := &r.slots[i]; s.info.jr != nil || len(s.info.preload) > 0 {
			drop = append(drop, s.info.taskID())
		}
	}
	cp, err := r.checkpoint(r.step, nil)
	if err != nil {
		return "", err
	}
	mark, seq := len(r.evbuf), r.seq
	if len(r.cur) == 0 {
		// The run ends with this commit.
		if r.trec != nil {
			r.outcomeWith(StatusDone, nil, nil)
		}
		r.last = r.lastCommit()
		if r.foldsEnd() {
			// It is the run's last write, its last events with it.
			r.last, r.folding = true, true
		}
	}
	// Every task of the superstep completed: commit it even when the
	// caller is cancelling the run (the run then ends aborted, or done when
	// nothing is planned), on every backend alike (put writes durably).
	err = r.put(cp, drop, false)
	folding := r.folding
	r.folding = false
	if err != nil {
		if folding {
			// Not written: the run ends with the error, and its last
			// events are others (end).
			clear(r.evbuf[mark:])
			r.evbuf, r.seq, r.tail = r.evbuf[:mark], seq, nil
		}
		return "", &CheckpointError{Op: "put", Err: err}
	}
	r.folded = folding
	r.latest, r.stateAt = cp, cp.ID
	r.planID = cp.ID
	return cp.ID, nil
}

// checkpoint builds a checkpoint of the current state and plan. planID ""
// means the plan was made at this checkpoint.
//
// When the program encoded the superstep's writes (r.encoded), the
// checkpoint's Channels are left nil: write hands over the writes.
func (r *runner[S, U]) checkpoint(step int, keepPlan *string) (*Checkpoint, error) {
	if r.werr != nil {
		err := r.werr
		r.werr, r.encoded = nil, false
		return nil, err
	}
	var chans []byte
	if !r.encoded {
		var err error
		if chans, err = r.p.EncodeState(r.state); err != nil {
			return nil, &CheckpointError{Op: "encode state", Err: err}
		}
	}
	// The checkpoint and its plan in one allocation when it plans one task.
	a := r.checkpointRoom()
	var next []checkpoint.TaskRef
	if len(r.cur) <= len(a.next) {
		next = a.next[:len(r.cur)]
	} else {
		next = make([]checkpoint.TaskRef, len(r.cur))
	}
	for i, t := range r.cur {
		// Field by field too (see below): a whole TaskRef is four
		// pointers' write barriers in one slow bulk barrier while the
		// collector marks.
		n := &next[i]
		setString(&n.Node, r.g.ids[t.Node])
		setString(&n.Key, t.Key)
		if n.Input != nil {
			n.Input = nil
		}
		if n.Journal != nil {
			n.Journal = nil
		}
		if t.Send {
			in, err := r.p.EncodeState(t.Input)
			if err != nil {
				return nil, &CheckpointError{Op: "encode send input of " + t.Key, Err: err}
			}
			next[i].Input = in
		}
	}
	cp := &a.cp
	id, at := r.ids.newIDAt()
	// Field by field, and the fields that keep their values not written
	// again: a's memory is the runner's, on the heap, and a whole-struct
	// copy costs write barriers for every pointer while the garbage
	// collector marks.
	parent, plan := "", id
	if r.latest != nil {
		parent = r.latest.ID
	}
	if keepPlan != nil {
		plan = *keepPlan
	}
	cp.ID, cp.ParentID, cp.PlanID, cp.Step, cp.Channels, cp.Next, cp.Created = id, parent, plan, step, chans, next, at
	setString(&cp.ThreadID, r.cfg.thread)
	setString(&cp.Fingerprint, r.g.Fingerprint())
	setString(&cp.MigratedFrom, "")
	cp.Format = checkpoint.Format
	if cp.Pending != nil {
		cp.Pending = nil
	}
	return cp, nil
}

// setString sets *p to v unless it holds v already.
func setString(p *string, v string) {
	if *p != v {
		*p = v
	}
}

// checkpointAlloc is a checkpoint with room for a one-task plan.
type checkpointAlloc struct {
	cp   Checkpoint
	next [1]checkpoint.TaskRef
}

// start loads or creates the thread's state and the first tasks of the run.
func (r *runner[S, U]) start(in *U, a *Answers) error {
	if r.cfg.cp == nil {
		if a != nil {
			return &ResumeError{Reason: ErrNotInterrupted, Msg: "cannot resume without a thread: resume through Graph.Thread(store, id)"}
		}
		r.state = r.zeroState()
		if err := r.foldInput(in); err != nil {
			return err
		}
		return r.planStart()
	}
	latest, err := r.readStart()
	switch {
	case errors.Is(err, ErrNotFound) && r.cfg.fromID == "":
		latest = nil
	case err != nil:
		return &CheckpointError{Op: "get", Err: err}
	}
	if err := r.checkVersion(latest); err != nil {
		return err
	}
	if err := r.restoreJournals(latest); err != nil {
		return err
	}
	if want := r.cfg.ifLatest; want != nil {
		got := ""
		if latest != nil {
			got = latest.ID
		}
		if got != *want {
			return fmt.Errorf("thread %q: latest checkpoint %q, expected %q: %w", r.cfg.thread, got, *want, ErrThreadMoved)
		}
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
		return &ResumeError{ThreadID: r.cfg.thread, Reason: ErrWaitingOnPerson, Msg: fmt.Sprintf("thread %q is waiting on interrupt(s) %s; answer with Resume instead of starting a run", r.cfg.thread, idList(open))}
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
	if keep != nil {
		if err := r.keptJournals(cp); err != nil {
			return err
		}
	}
	return r.putStart(cp)
}

// keptJournals records in cp, a run's first checkpoint that keeps the plan
// of the checkpoint it starts from, the journals the plan's tasks have in
// the store: those a failed or cancelled superstep kept for this retry
// (or a fork restored). A failed superstep writes no checkpoint, so its
// steps ran while the checkpoint it started from was current; with the
// journals recorded here, a later fork from that checkpoint, or from this
// one, replays those steps (restoreJournals) instead of running them
// again.
func (r *runner[S, U]) keptJournals(cp *Checkpoint) error {
	for i := range cp.Next {
		j, err := r.cfg.cp.GetJournal(r.ctx, r.cfg.thread, cp.PlanID+":"+cp.Next[i].Key)
		if err != nil {
			return &CheckpointError{Op: "get journal", Err: err}
		}
		cp.Next[i].Journal = j
	}
	return nil
}

// restoreJournals gives the planned tasks of from, the checkpoint a fork
// starts at (Thread.Fork at a checkpoint that is not the thread's
// latest), the journals they had when from was committed
// (checkpoint.TaskRef.Journal; none for a task that had not started), so
// the fork replays exactly the steps that had run then, and runs the
// others in its own branch.
func (r *runner[S, U]) restoreJournals(from *Checkpoint) error {
	if r.cfg.fromID == "" || from == nil || len(from.Next) == 0 {
		return nil
	}
	cur, err := r.cfg.cp.Get(r.ctx, r.cfg.thread, "")
	if err != nil {
		return &CheckpointError{Op: "get", Err: err}
	}
	if cur.ID == from.ID {
		return nil
	}
	retry, err := r.retryOf(from)
	if err != nil {
		return err
	}
	for i, t := range from.Next {
		if t.Journal == nil && retry != nil && i < len(retry.Next) && retry.Next[i].Key == t.Key {
			t.Journal = retry.Next[i].Journal
		}
		if err := r.info.lease.PutJournal(r.ctx, from.PlanID+":"+t.Key, t.Journal); err != nil {
			return &CheckpointError{Op: "put journal", Err: err}
		}
	}
	return nil
}

// retryOf returns the checkpoint a retry of from's plan started with (a
// child of from that keeps its plan and is not a pause), or nil. Its
// journals (keptJournals) are what from's tasks had run when from was
// current, before a superstep failed on it.
func (r *runner[S, U]) retryOf(from *Checkpoint) (*Checkpoint, error) {
	all, err := r.cfg.cp.List(r.ctx, r.cfg.thread, 0)
	if err != nil {
		return nil, &CheckpointError{Op: "list", Err: err}
	}
	for _, c := range all {
		if c.ParentID == from.ID && c.PlanID == from.PlanID && len(c.Pending) == 0 && len(c.Next) == len(from.Next) {
			return c, nil
		}
	}
	return nil, nil
}

func (r *runner[S, U]) putStart(cp *Checkpoint) error {
	if err := r.put(cp, nil, false); err != nil {
		return &CheckpointError{Op: "put", Err: err}
	}
	r.latest, r.planID, r.stateAt = cp, cp.PlanID, cp.ID
	r.replay = cp.PlanID != cp.ID
	return nil
}

// load takes the state, the superstep counter and the planned tasks of cp.
func (r *runner[S, U]) load(cp *Checkpoint) error {
	st, ok := r.cachedState(cp.ID)
	if !ok {
		stateDecodes.Add(1)
		var err error
		if st, err = r.p.DecodeState(cp.Channels); err != nil {
			return &CheckpointError{Op: "decode checkpoint " + cp.ID, Err: err}
		}
	}
	r.state, r.step, r.planID, r.stateAt = st, cp.Step, cp.PlanID, cp.ID
	r.cur = r.cur[:0]
	for _, t := range cp.Next {
		i, ok := r.g.index[t.Node]
		if !ok {
			return &CheckpointError{Op: "load", Err: fmt.Errorf("checkpoint %s plans node %q, which this graph does not have; was the graph changed under a running thread?", cp.ID, t.Node)}
		}
		pl := plan[S]{Node: i, Key: t.Key}
		if t.Input != nil {
			in, err := r.p.DecodeState(t.Input)
			if err != nil {
				return &CheckpointError{Op: "decode send input of " + t.Key, Err: err}
			}
			pl.Send, pl.Input = true, in
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
	ups := []U{*in}
	next, _, err := r.p.Reduce(r.state, ups)
	if err != nil {
		return &ReduceError{Err: err}
	}
	r.encodeWrites(&r.state, &next, ups)
	r.state = next
	return nil
}

func (r *runner[S, U]) planStart() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &NodeError{Node: spec.Start, TaskKey: spec.Start, Err: fmt.Errorf("panic while planning the first superstep: %v", v), Stack: string(debug.Stack())}
		}
	}()
	contract.Reset(r.planner, r.nxt)
	if err := r.p.Plan(&r.state, startNode, r.planner); err != nil {
		r.nxt = contract.Tasks(r.planner)[:0]
		return &NodeError{Node: spec.Start, TaskKey: spec.Start, Err: err}
	}
	r.nxt = r.cur[:0]
	r.cur = contract.Done(r.planner)
	return nil
}

// openInterrupts returns the pending interrupts of cp that have no answer in
// their task's journal yet.
func (r *runner[S, U]) openInterrupts(cp *Checkpoint) ([]PendingInterrupt, error) {
	_, open, err := readPauses(r.ctx, r.cfg.cp, r.cfg.thread, cp.Pending)
	if err != nil {
		return nil, &CheckpointError{Op: "get journal", Err: err}
	}
	return open, nil
}

func idList(ps []PendingInterrupt) string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// ownLeaseLost returns err, the error a run failed with, as a
// CheckpointError of a lost lease (Op "lease", wrapping err) when err
// holds the loss of this run's own thread's lease (a Step's journal write
// refused by the store's fence, say, which a node returned): every run
// that lost its lease ends with an error whose text starts "checkpointer
// lease: ", whichever way the loss reached it. A node's error that names
// the lost lease of another thread (a run the node made itself) stays the
// node's.
func (r *runner[S, U]) ownLeaseLost(err error) error {
	if ce, ok := err.(*CheckpointError); ok && ce.Op == "lease" || !holdsLeaseLoss(err, r.cfg.thread) {
		return err
	}
	return &CheckpointError{Op: "lease", Err: err}
}

// holdsLeaseLoss reports whether err, or an error it wraps (joined ones
// included), is the loss of thread's lease.
func holdsLeaseLoss(err error, thread string) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *checkpoint.LeaseLostError:
		if e.Thread == thread {
			return true
		}
	case interface{ Unwrap() []error }:
		for _, w := range e.Unwrap() {
			if holdsLeaseLoss(w, thread) {
				return true
			}
		}
		return false
	}
	return holdsLeaseLoss(errors.Unwrap(err), thread)
}

// leaseLostError is the cancellation cause of a run whose lease was lost,
// or passed its deadline.
type leaseLostError struct{ err error }

func (e *leaseLostError) Error() string { return "lease lost: " + e.err.Error() }
func (e *leaseLostError) Unwrap() error { return e.err }

// cloneCheckpoint returns a copy of c with its own Next and Pending.
func cloneCheckpoint(c *checkpoint.Checkpoint) *checkpoint.Checkpoint {
	out := *c
	out.Next = slices.Clone(c.Next)
	out.Pending = slices.Clone(c.Pending)
	return &out
}
