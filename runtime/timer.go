package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// DefaultParkAfter is how long a timer may wait inside a run before the
// run parks its thread instead (WithParkAfter).
const DefaultParkAfter = time.Second

// timerOptions are a run's timer settings (WithParkAfter).
type timerOptions struct {
	parkAfter time.Duration
	set       bool
}

// or returns o when it was set, else g (the graph's).
func (o timerOptions) or(g timerOptions) timerOptions {
	if o.set {
		return o
	}
	return g
}

// threshold is the longest wait a run holds its thread for.
func (o timerOptions) threshold() time.Duration {
	if !o.set {
		return DefaultParkAfter
	}
	return o.parkAfter
}

// WithParkAfter sets the longest wait (Sleep, Until) a run holds its
// thread's lease and a goroutine for (default DefaultParkAfter), given to
// a graph for every run of it, or to one run: a longer
// one parks the thread. The run ends StatusParked with no error and the
// wake time in Result.WakeAt; the thread continues when a waker (the
// package runtime/waker) or a call of Thread.Wake runs it once the time has
// come, in any process. d <= 0 parks every wait that has not passed yet.
// A run without a checkpointer never parks: it waits in process.
func WithParkAfter(d time.Duration) SharedOption {
	o := timerOptions{parkAfter: d, set: true}
	return sharedOption{
		graph: func(c *graphConfig) { c.timers = o },
		run:   func(c *runConfig) { c.timers = o },
	}
}

// Sleep waits d inside a node (d <= 0 returns at once). The wake time is journaled under key
// (suffixed #0, #1... by occurrence) the first time the task asks, so a
// replay after a resume or a crash waits only for what is left of it,
// never longer or shorter. A wait of at most the run's WithParkAfter
// happens in process; a longer one parks the thread: Sleep returns an
// error the node must return (IsInterrupt holds for it), the superstep
// pauses as on an interrupt, and when the thread is woken the node runs
// again and Sleep returns nil. Cancelling the run ends an in-process wait
// with the cancellation's cause.
func Sleep(ctx *Ctx, key string, d time.Duration) error {
	return wait(ctx, key, func(now time.Time) time.Time { return now.Add(d) })
}

// Until is Sleep up to the time t: it returns at once when t has passed
// (the zero time included). A t after the year 9999 is refused with an
// error: the journal cannot keep it.
func Until(ctx *Ctx, key string, t time.Time) error {
	return wait(ctx, key, func(time.Time) time.Time { return t })
}

// maxWakeYear is the latest year of a wake time a journal keeps (RFC
// 3339 in JSON).
const maxWakeYear = 9999

// wait journals the wake time of the timer key once, then waits for it
// in process or parks the task.
func wait(ctx *Ctx, key string, at func(time.Time) time.Time) error {
	if ctx == nil || ctx.t == nil {
		return ErrNotInTask
	}
	t := ctx.t
	if t.halted {
		return &haltError{id: t.pending[0].ID}
	}
	j := t.j()
	full := j.next("sleep:" + key)
	id := t.key + ":" + full
	e, ok := j.lookup(full)
	var wake time.Time
	switch {
	case ok && (e.Interrupt || e.WakeAt.IsZero()):
		return &NondeterminismError{Node: ctx.Node(), Key: full, Reason: "the journal holds a step or an interrupt under this key, the replay asked for a timer"}
	case ok:
		wake = e.WakeAt
	default:
		if err := context.Cause(ctx); err != nil {
			return fmt.Errorf("timer %q not set: %w", id, err)
		}
		now := time.Now()
		wake = at(now).UTC()
		if wake.Before(now) {
			// A time that has passed (the zero time, a negative duration)
			// is journaled as now: a zero wake time is no timer's (a
			// replay would take the entry for a step's), and a year
			// before 0 cannot be stored.
			wake = now.UTC()
		}
		if wake.Year() > maxWakeYear {
			return fmt.Errorf("timer %q: wake time %s is after the year %d, which a store cannot keep (JSON time); wait until an earlier time", id, wake.Format(time.RFC3339), maxWakeYear)
		}
		j.add(checkpoint.JournalEntry{Key: full, WakeAt: wake})
		if err := ctx.persistJournal(); err != nil {
			return fmt.Errorf("timer %q: persist journal: %w", id, err)
		}
	}
	left := time.Until(wake)
	if left <= 0 {
		return nil
	}
	if ctx.r.cp == nil || left <= ctx.r.parkAfter {
		tm := time.NewTimer(left)
		defer tm.Stop()
		select {
		case <-tm.C:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("timer %q: %w", id, context.Cause(ctx))
		}
	}
	t.halt(ctx, id, full, nil, nil)
	t.wakeAt(wake, true)
	return &haltError{id: id}
}

// wakeAt marks the pause the task just recorded with its wake time, and
// as a timer's when timer is true.
func (t *taskInfo) wakeAt(at time.Time, timer bool) {
	p := &t.pending[len(t.pending)-1]
	p.WakeAt, p.Timer = at, timer
}

// timedOut reports whether e is an interrupt whose deadline passed
// without an answer and whose timeout is not journaled yet.
func timedOut(e *checkpoint.JournalEntry) bool {
	return !e.Answered && !e.TimedOut && !e.WakeAt.IsZero() && !time.Now().Before(e.WakeAt)
}

// timeOut journals that the interrupt e timed out, with its default
// answer when cfg has one.
func (c *Ctx) timeOut(e *checkpoint.JournalEntry, cfg *interruptConfig) error {
	e.TimedOut = true
	if cfg.hasDef {
		e.Answered, e.Value = true, cfg.def
	}
	return c.persistJournal()
}

// checkDefault refuses a default answer that the interrupt's type does
// not accept, before anything is journaled.
func (c *interruptConfig) checkDefault(x *Expects) error {
	if !c.hasDef {
		return nil
	}
	if c.defErr != nil {
		return fmt.Errorf("interrupt %q: the default answer is not JSON-serializable: %w", c.key, c.defErr)
	}
	if err := checkAnswer(x.Schema, c.def); err != nil {
		return fmt.Errorf("interrupt %q: the default answer %s does not decode into %s: %w", c.key, c.def, x.Type, err)
	}
	return nil
}

// ErrNotDue is the Reason of the ResumeError of Thread.Wake on a thread
// that waits on no timer or deadline that has passed.
var ErrNotDue = errors.New("the thread waits on no timer or deadline that has passed")

// Wake continues a thread that waits on a timer (Sleep, Until) or on an
// interrupt deadline (WithTimeout) once the wake time has passed, from
// any process: the paused superstep replays, timers that are due return,
// deadlines that passed take their timeout path, and the rest pause
// again. A thread whose last run stopped before its end without pausing
// (its process died during a wake) is continued from its last checkpoint. A thread with nothing due (woken
// already, answered, not yet due, or done) is refused with a *ResumeError
// whose Reason is ErrNotDue, writing nothing; since the check is made
// under the thread's lease, wakers that race wake a thread once.
func (t *Thread[S, U]) Wake(ctx context.Context, opts ...RunOption) (Result[S], error) {
	return t.g.invoke(ctx, t, nil, &Answers{wake: true}, opts)
}

// startWake loads the paused superstep of latest for a replay when one
// of its pauses is due.
func (r *runner[S, U]) startWake(latest *Checkpoint) error {
	cutShort := latest != nil && len(latest.Pending) == 0 && len(latest.Next) > 0
	if at := checkpoint.EarliestWake(latestPending(latest)); !cutShort && (at.IsZero() || time.Now().Before(at)) {
		msg := fmt.Sprintf("thread %q waits on no timer or deadline that has passed; nothing was run", r.cfg.thread)
		if !at.IsZero() {
			msg = fmt.Sprintf("thread %q is not due before %s; nothing was run", r.cfg.thread, at.Format(time.RFC3339Nano))
		}
		return &ResumeError{ThreadID: r.cfg.thread, Reason: ErrNotDue, Msg: msg}
	}
	r.latest = latest
	if r.obs != nil {
		r.timersFired(latest.Pending)
	}
	return r.load(latest)
}

// timersFired reports to the observer each timer of pend whose wake time
// has passed: the wake run takes it (InterruptAnswered with Timer set).
func (r *runner[S, U]) timersFired(pend []PendingInterrupt) {
	now := time.Now()
	for _, p := range pend {
		if p.Timer && !p.WakeAt.After(now) {
			r.obs.InterruptAnswered(r.ctx, r.rec, p)
		}
	}
}

func latestPending(cp *Checkpoint) []PendingInterrupt {
	if cp == nil {
		return nil
	}
	return cp.Pending
}

// answerable drops the timers' pauses from those a person answers.
func answerable(pauses []pauseJournal, open []PendingInterrupt) ([]pauseJournal, []PendingInterrupt) {
	ps := pauses[:0:0]
	for _, p := range pauses {
		if !p.p.Timer {
			ps = append(ps, p)
		}
	}
	op := open[:0:0]
	for _, p := range open {
		if !p.Timer {
			op = append(op, p)
		}
	}
	return ps, op
}
