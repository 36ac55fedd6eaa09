package runtime

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// The runtime's own records, written to the graph's logger (WithLogger)
// or the run's (WithLogger), and their levels:
//
//	Debug  run started, superstep started/ended, task started/ended, step
//	       executed/replayed, checkpoint written, lease taken/renewed,
//	       the stack of a recovered panic
//	Info   run ended (done, interrupted), interrupt opened/answered,
//	       timer set/fired (a parked Sleep or Until: its wake time, and
//	       when fired its lateness past it), resume accepted
//	Warn   task attempt failed and will be retried (with its backoff),
//	       task failed, resume refused (with the reason), run aborted
//	       (cancellation), a document's warnings (when the graph is built)
//	Error  run ended in error, recovered panic, checkpoint write failed,
//	       lease lost
//
// Attribute names are stable: run, thread, graph, superstep, node,
// node_type, task (the task key), task_id, attempt, backoff, step_key,
// replayed, status, supersteps, tasks, checkpoint, bytes, duration,
// interrupt, key (a timer's journal key), wake_at, lateness, reason,
// error, stack; a document's warning has graph,
// position, path, message and hint. A record whose level the handler has
// disabled is not built.
const (
	attrRun        = "run"
	attrThread     = "thread"
	attrGraph      = "graph"
	attrSuperstep  = "superstep"
	attrNode       = "node"
	attrNodeType   = "node_type"
	attrTask       = "task"
	attrTaskID     = "task_id"
	attrAttempt    = "attempt"
	attrBackoff    = "backoff"
	attrStepKey    = "step_key"
	attrReplayed   = "replayed"
	attrStatus     = "status"
	attrSupersteps = "supersteps"
	attrTasks      = "tasks"
	attrCheckpoint = "checkpoint"
	attrBytes      = "bytes"
	attrDuration   = "duration"
	attrInterrupt  = "interrupt"
	attrKey        = "key"
	attrWakeAt     = "wake_at"
	attrLateness   = "lateness"
	attrReason     = "reason"
	attrError      = "error"
	attrStack      = "stack"
)

// logObserver is the Observer that writes the runtime's records to a
// logger.
type logObserver struct {
	NopObserver
	l *slog.Logger
}

func newLogObserver(l *slog.Logger) Observer { return logObserver{l: l} }

func (o logObserver) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	o.l.LogAttrs(ctx, level, msg, attrs...)
}

func (o logObserver) on(ctx context.Context, level slog.Level) bool { return o.l.Enabled(ctx, level) }

func runAttrs(r RunRecord, more ...slog.Attr) []slog.Attr {
	return append([]slog.Attr{slog.String(attrRun, r.RunID), slog.String(attrThread, r.ThreadID)}, more...)
}

func taskAttrs(t TaskRecord, more ...slog.Attr) []slog.Attr {
	return append([]slog.Attr{slog.String(attrRun, t.RunID), slog.String(attrThread, t.ThreadID), slog.Int(attrSuperstep, t.Step),
		slog.String(attrNode, t.Node), slog.String(attrTask, t.TaskKey)}, more...)
}

func errAttr(err error) slog.Attr { return slog.String(attrError, err.Error()) }

func (o logObserver) RunStart(ctx context.Context, r RunRecord) context.Context {
	if o.on(ctx, slog.LevelDebug) {
		o.log(ctx, slog.LevelDebug, "run started", runAttrs(r, slog.String(attrGraph, r.Graph))...)
	}
	return ctx
}

func (o logObserver) RunEnd(ctx context.Context, r RunRecord, e RunEnd) {
	level, msg := slog.LevelInfo, "run ended"
	switch e.Status {
	case StatusError:
		level = slog.LevelError
	case StatusAborted:
		level, msg = slog.LevelWarn, "run aborted"
	case "":
		// A refused run: the Resume or Lease record said why.
		level, msg = slog.LevelDebug, "run refused"
	}
	if !o.on(ctx, level) {
		return
	}
	attrs := runAttrs(r, slog.String(attrStatus, string(e.Status)), slog.Int(attrSupersteps, e.Supersteps), slog.Duration(attrDuration, e.Duration))
	if e.Err != nil {
		attrs = append(attrs, errAttr(e.Err))
	}
	o.log(ctx, level, msg, attrs...)
}

func (o logObserver) SuperstepStart(ctx context.Context, r RunRecord, s SuperstepRecord) context.Context {
	if o.on(ctx, slog.LevelDebug) {
		o.log(ctx, slog.LevelDebug, "superstep started", runAttrs(r, slog.Int(attrSuperstep, s.Step), slog.Int(attrTasks, s.Tasks))...)
	}
	return ctx
}

func (o logObserver) SuperstepEnd(ctx context.Context, r RunRecord, s SuperstepRecord, e SuperstepEnd) {
	if o.on(ctx, slog.LevelDebug) {
		o.log(ctx, slog.LevelDebug, "superstep ended", runAttrs(r, slog.Int(attrSuperstep, s.Step), slog.String(attrStatus, string(e.Status)), slog.Duration(attrDuration, e.Duration))...)
	}
}

// The calls a task's goroutine makes (TaskStart, TaskRetry, TaskEnd, Step)
// only check the level; the records are built in functions of their own,
// so that a goroutine whose records are disabled keeps a small stack.

func (o logObserver) TaskStart(ctx context.Context, t TaskRecord) context.Context {
	if o.on(ctx, slog.LevelDebug) {
		o.taskStarted(ctx, &t)
	}
	return ctx
}

//go:noinline
func (o logObserver) taskStarted(ctx context.Context, t *TaskRecord) {
	o.log(ctx, slog.LevelDebug, "task started", taskAttrs(*t, slog.String(attrNodeType, t.NodeType), slog.String(attrTaskID, t.TaskID))...)
}

func (o logObserver) TaskRetry(ctx context.Context, t TaskRecord, r TaskRetry) {
	if o.on(ctx, slog.LevelWarn) {
		o.taskRetried(ctx, &t, &r)
	}
}

//go:noinline
func (o logObserver) taskRetried(ctx context.Context, t *TaskRecord, r *TaskRetry) {
	o.log(ctx, slog.LevelWarn, "task attempt failed, retrying", taskAttrs(*t, slog.Int(attrAttempt, r.Attempt), slog.Duration(attrBackoff, r.Backoff), errAttr(r.Err))...)
}

func (o logObserver) TaskEnd(ctx context.Context, t TaskRecord, e TaskEnd) {
	switch {
	case e.Err != nil:
		o.taskFailed(ctx, &t, &e)
	case o.on(ctx, slog.LevelDebug):
		o.taskEnded(ctx, &t, &e)
	}
}

//go:noinline
func (o logObserver) taskEnded(ctx context.Context, t *TaskRecord, e *TaskEnd) {
	status := "done"
	if e.Halted {
		status = "interrupted"
	}
	o.log(ctx, slog.LevelDebug, "task ended", taskAttrs(*t, slog.String(attrStatus, status), slog.Int(attrAttempt, e.Attempts), slog.Duration(attrDuration, e.Duration))...)
}

//go:noinline
func (o logObserver) taskFailed(ctx context.Context, t *TaskRecord, e *TaskEnd) {
	var ne *NodeError
	if errors.As(e.Err, &ne) && ne.Stack != "" {
		if o.on(ctx, slog.LevelError) {
			o.log(ctx, slog.LevelError, "task panicked", taskAttrs(*t, slog.Int(attrAttempt, e.Attempts), errAttr(ne.Err))...)
		}
		if o.on(ctx, slog.LevelDebug) {
			o.log(ctx, slog.LevelDebug, "task panic stack", taskAttrs(*t, slog.String(attrStack, ne.Stack))...)
		}
		return
	}
	if o.on(ctx, slog.LevelWarn) {
		o.log(ctx, slog.LevelWarn, "task failed", taskAttrs(*t, slog.Int(attrAttempt, e.Attempts), slog.Duration(attrDuration, e.Duration), errAttr(e.Err))...)
	}
}

func (o logObserver) Step(ctx context.Context, t TaskRecord, s StepRecord) {
	if o.on(ctx, slog.LevelDebug) {
		o.stepped(ctx, &t, &s)
	}
}

//go:noinline
func (o logObserver) stepped(ctx context.Context, t *TaskRecord, s *StepRecord) {
	attrs := taskAttrs(*t, slog.String(attrStepKey, s.Key), slog.Bool(attrReplayed, s.Replayed))
	msg := "step executed"
	if s.Replayed {
		msg = "step replayed"
	} else {
		attrs = append(attrs, slog.Duration(attrDuration, s.Duration))
	}
	if s.Err != nil {
		msg = "step failed"
		attrs = append(attrs, errAttr(s.Err))
	}
	o.log(ctx, slog.LevelDebug, msg, attrs...)
}

func (o logObserver) InterruptOpened(ctx context.Context, r RunRecord, p PendingInterrupt) {
	if !o.on(ctx, slog.LevelInfo) {
		return
	}
	if p.Timer {
		o.log(ctx, slog.LevelInfo, "timer set", timerAttrs(r, &p)...)
		return
	}
	o.log(ctx, slog.LevelInfo, "interrupt opened", runAttrs(r, slog.String(attrInterrupt, p.ID), slog.String(attrNode, p.Node))...)
}

func (o logObserver) InterruptAnswered(ctx context.Context, r RunRecord, p PendingInterrupt) {
	if !o.on(ctx, slog.LevelInfo) {
		return
	}
	if p.Timer {
		o.log(ctx, slog.LevelInfo, "timer fired", timerAttrs(r, &p, slog.Duration(attrLateness, max(time.Since(p.WakeAt), 0)))...)
		return
	}
	o.log(ctx, slog.LevelInfo, "interrupt answered", runAttrs(r, slog.String(attrInterrupt, p.ID), slog.String(attrNode, p.Node))...)
}

// timerAttrs are the attributes of a timer's record.
func timerAttrs(r RunRecord, p *PendingInterrupt, more ...slog.Attr) []slog.Attr {
	return runAttrs(r, append([]slog.Attr{slog.String(attrNode, p.Node), slog.String(attrKey, p.Key), slog.String(attrInterrupt, p.ID),
		slog.Time(attrWakeAt, p.WakeAt)}, more...)...)
}

func (o logObserver) Resume(ctx context.Context, r RunRecord, rr ResumeRecord) {
	if rr.Accepted {
		if o.on(ctx, slog.LevelInfo) {
			o.log(ctx, slog.LevelInfo, "resume accepted", runAttrs(r)...)
		}
		return
	}
	if o.on(ctx, slog.LevelWarn) {
		o.log(ctx, slog.LevelWarn, "resume refused", runAttrs(r, slog.String(attrReason, rr.Reason))...)
	}
}

func (o logObserver) CheckpointCommit(ctx context.Context, r RunRecord, c CheckpointRecord) {
	if c.Err != nil {
		if o.on(ctx, slog.LevelError) {
			o.log(ctx, slog.LevelError, "checkpoint write failed", runAttrs(r, slog.String(attrCheckpoint, c.ID), slog.Int(attrSuperstep, c.Step), errAttr(c.Err))...)
		}
		return
	}
	if o.on(ctx, slog.LevelDebug) {
		o.log(ctx, slog.LevelDebug, "checkpoint written", runAttrs(r, slog.String(attrCheckpoint, c.ID), slog.Int(attrSuperstep, c.Step), slog.Int(attrBytes, c.Bytes), slog.Duration(attrDuration, c.Duration))...)
	}
}

func (o logObserver) Lease(ctx context.Context, r RunRecord, l LeaseRecord) {
	if l.Event == LeaseLost {
		if o.on(ctx, slog.LevelError) {
			attrs := runAttrs(r)
			if l.Err != nil {
				attrs = append(attrs, errAttr(l.Err))
			}
			o.log(ctx, slog.LevelError, "lease lost", attrs...)
		}
		return
	}
	if o.on(ctx, slog.LevelDebug) {
		o.log(ctx, slog.LevelDebug, "lease "+string(l.Event), runAttrs(r)...)
	}
}
