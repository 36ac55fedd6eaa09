package runtime

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// execute runs the tasks: inline when there is one, concurrently otherwise,
// delivering custom events live and node events as tasks finish.
func (r *runner[S, U]) execute(tasks []plan[S]) {
	if len(tasks) == 1 {
		s := &r.slots[0]
		if r.live() {
			s.info.emit = r.emit
			r.emit(Event{Type: EventNodeStart, Node: r.g.ids[tasks[0].Node], TaskID: s.info.taskID()})
		}
		r.runTask(s, &tasks[0])
		r.finished(s)
		return
	}
	if r.live() {
		r.executeLive(tasks)
		return
	}
	// Nobody consumes events: every task but the first gets a goroutine of
	// its own and the first runs on this one, concurrently with them; the
	// superstep waits for all.
	var wg sync.WaitGroup
	wg.Add(len(tasks) - 1)
	for i := 1; i < len(tasks); i++ {
		go r.runAsync(&r.slots[i], &tasks[i], &wg)
	}
	r.runTask(&r.slots[0], &tasks[0])
	wg.Wait()
}

// runAsync runs one task on its own goroutine and reports it done.
func (r *runner[S, U]) runAsync(s *slot[S, U], pl *plan[S], wg *sync.WaitGroup) {
	r.runTask(s, pl)
	wg.Done()
}

// executeLive runs the tasks of a superstep concurrently while the run is
// streamed: custom events are delivered live and node events as tasks
// finish.
func (r *runner[S, U]) executeLive(tasks []plan[S]) {
	events := make(chan Event, 16)
	for i := range tasks {
		s := &r.slots[i]
		s.info.emit = func(ev Event) { events <- ev }
		r.emit(Event{Type: EventNodeStart, Node: r.g.ids[tasks[i].Node], TaskID: s.info.taskID()})
	}
	if cap(r.msgs) < len(tasks) {
		r.msgs = make(chan int, len(tasks))
	}
	for i := range tasks {
		go func(i int) {
			r.runTask(&r.slots[i], &tasks[i])
			r.msgs <- i
		}(i)
	}
	for left := len(tasks); left > 0; {
		select {
		case ev := <-events:
			r.emit(ev)
		case i := <-r.msgs:
			left--
			r.finished(&r.slots[i])
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
		r.emit(Event{Type: EventNodeError, Node: node, TaskID: s.info.taskID(), Err: s.err, Duration: s.dur})
		return
	}
	r.emit(Event{Type: EventNodeEnd, Node: node, TaskID: s.info.taskID(), Update: r.updates[s.idx], Duration: s.dur})
}

// runTaskBody runs one task: its first attempt here, and the retries of
// its node's policy, if it fails, in retry. The split keeps the frame of the
// common path small, so that a task's goroutine rarely grows its stack.
// runTask (observe.go) wraps it.
func (r *runner[S, U]) runTaskBody(s *slot[S, U], pl *plan[S]) {
	u, err := r.call(s, pl)
	if s.info.halted {
		return
	}
	if err == nil && r.cfg.strict {
		err = r.strictCheck(s)
	}
	if err == nil {
		r.updates[s.idx] = u
		return
	}
	r.retry(s, pl, err)
}

// retry applies the node's retry policy to a task whose first attempt
// failed with err: it waits, re-runs the body (its completed steps replay
// from the journal) and records the outcome of the last attempt.
func (r *runner[S, U]) retry(s *slot[S, U], pl *plan[S], err error) {
	policy := r.g.retry[pl.Node]
	for attempt := 1; ; attempt++ {
		if policy == nil || attempt >= policy.MaxAttempts || (policy.RetryOn != nil && !policy.RetryOn(unwrapNode(err))) {
			s.err = err
			return
		}
		if s.info.emit != nil {
			s.info.emit(Event{Type: EventNodeRetry, Node: r.g.ids[pl.Node], TaskID: s.info.taskID(), Attempt: attempt, Err: err, Error: err.Error(), Time: time.Now()})
		}
		if r.obs != nil {
			r.obs.TaskRetry(s.ctx.Context, s.rec, TaskRetry{Attempt: attempt, Err: err, Backoff: policy.wait(attempt)})
		}
		s.attempts = attempt + 1
		if w := policy.wait(attempt); w > 0 {
			t := time.NewTimer(w)
			select {
			case <-t.C:
			case <-r.ctx.Done():
				t.Stop()
				s.err = &NodeError{Node: r.g.ids[pl.Node], TaskKey: pl.Key, Err: fmt.Errorf("retry stopped by cancellation after attempt %d: %w", attempt, unwrapNode(err))}
				return
			}
		}
		if s.info.jr != nil {
			s.info.jr.newPass()
		}
		s.to, s.info.commandSet, s.info.command = nil, false, nil
		u, err2 := r.call(s, pl)
		if s.info.halted {
			return
		}
		if err2 == nil {
			err2 = r.strictCheck(s)
		}
		if err2 == nil {
			r.updates[s.idx] = u
			return
		}
		err = err2
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
			err = &NodeError{Node: r.g.ids[pl.Node], TaskKey: pl.Key, Err: fmt.Errorf("panic: %v", v), Stack: string(debug.Stack())}
		}
	}()
	st := &r.state
	if pl.Send {
		st = &pl.Input
	}
	u, s.to, err = r.p.Run(s.ctx, pl.Node, *st)
	if err == nil && s.to != nil {
		err = r.checkTargets(s.to)
	}
	if err != nil && !s.info.halted {
		err = r.nodeError(pl, err)
	}
	return u, err
}

// nodeError wraps a node's error in a NodeError naming the task, unless it
// is one already.
func (r *runner[S, U]) nodeError(pl *plan[S], err error) error {
	var ne *NodeError
	if !errors.As(err, &ne) {
		err = &NodeError{Node: r.g.ids[pl.Node], TaskKey: pl.Key, Err: err}
	}
	return err
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
