package runtime

import (
	"context"
	"time"
)

// Observer receives the lifecycle calls of runs: the hook behind the
// runtime's slog records (WithLogger, WithLogger) and the OpenTelemetry
// package (module github.com/ilmek-go/ilmek/otel), and the place to plug in
// anything else (metrics of your own, an audit log) without forking. Set one
// per graph with WithObserver or per run with WithObserver. A run without
// an observer and without a logger makes none of these calls and pays
// nothing for them.
//
// The calls of one run come in this order: RunStart; Lease (taken); Resume
// (for a run that answers interrupts; a refused resume is followed by RunEnd);
// then per superstep SuperstepStart, the tasks' calls, CheckpointCommit,
// InterruptOpened (for a pause), SuperstepEnd; and RunEnd last. The tasks of
// a superstep run concurrently, so TaskStart, TaskRetry, Step and TaskEnd
// come from several goroutines at once (those of one task from one
// goroutine, in order); Lease (lost) may come from any goroutine. Every
// other call comes from the run's goroutine. An implementation must be safe
// for that, must return quickly, and must not keep the records' slices.
//
// The Start calls return the context the calls within them receive: an
// Observer may add values to it (a trace span), and it must return ctx or
// a context derived from ctx, so that cancellation still reaches the run.
// The context a TaskStart returns is also the context.Context of the
// task's Ctx, so what a node does with it (its own spans) nests under it.
//
// Embed NopObserver to implement only some of the calls.
type Observer interface {
	RunStart(ctx context.Context, run RunRecord) context.Context
	RunEnd(ctx context.Context, run RunRecord, end RunEnd)
	SuperstepStart(ctx context.Context, run RunRecord, step SuperstepRecord) context.Context
	SuperstepEnd(ctx context.Context, run RunRecord, step SuperstepRecord, end SuperstepEnd)
	TaskStart(ctx context.Context, task TaskRecord) context.Context
	TaskRetry(ctx context.Context, task TaskRecord, retry TaskRetry)
	TaskEnd(ctx context.Context, task TaskRecord, end TaskEnd)
	// Step reports one Step of a task: executed (its function ran and its
	// result was journaled) or replayed from the journal.
	Step(ctx context.Context, task TaskRecord, step StepRecord)
	// InterruptOpened reports a pause written to the thread; ctx is the
	// superstep's. A parked timer (Sleep, Until) is a pause too: p.Timer
	// is true and p.WakeAt is its wake time (a timer set).
	InterruptOpened(ctx context.Context, run RunRecord, p PendingInterrupt)
	// InterruptAnswered reports an answer a resume journaled, or, with
	// p.Timer true, a timer firing: a wake run (Thread.Wake, a waker)
	// took the parked timer p, whose wake time p.WakeAt has passed; it
	// comes before the Resume call of that run.
	InterruptAnswered(ctx context.Context, run RunRecord, p PendingInterrupt)
	// Resume reports whether a resume was accepted or refused, and why.
	Resume(ctx context.Context, run RunRecord, r ResumeRecord)
	// CheckpointCommit reports a checkpoint write, failed or not.
	CheckpointCommit(ctx context.Context, run RunRecord, c CheckpointRecord)
	// Lease reports the thread's lease taken, renewed or lost.
	Lease(ctx context.Context, run RunRecord, l LeaseRecord)
}

// PauseAnnotator is implemented by an Observer that keeps data with each
// pause of a thread: the map it returns (ctx is the pausing superstep's)
// is stored in the Meta of every interrupt the pause writes, and a later
// Resume call hands it back in ResumeRecord.Paused. The OpenTelemetry
// package keeps the pausing run's span context this way, so the resumed
// run links to it.
type PauseAnnotator interface {
	AnnotatePause(ctx context.Context, run RunRecord) map[string]string
}

// RunRecord identifies a run in every Observer call.
type RunRecord struct {
	RunID    string
	ThreadID string // "" for a run without a thread
	Graph    string // the graph's name
	// Resume is true for a run started by Resume or StreamResume.
	Resume bool
	Start  time.Time
}

// RunEnd is how a run ended. A run refused before it started (a busy
// thread, a refused resume, a checkpointer that failed while loading)
// ends with an empty Status and Err set.
type RunEnd struct {
	Status     Status
	Err        error
	Supersteps int
	Duration   time.Duration
}

// SuperstepRecord identifies a superstep.
type SuperstepRecord struct {
	Step  int // the thread's superstep counter for this superstep
	Tasks int // how many tasks it runs
	Start time.Time
}

// SuperstepEnd is how a superstep ended: Status is "" when the run goes on,
// or the status the run ends with here.
type SuperstepEnd struct {
	Status   Status
	Err      error
	Duration time.Duration
}

// TaskRecord identifies a task.
type TaskRecord struct {
	RunID    string
	ThreadID string
	Step     int    // the superstep
	Node     string // node id
	NodeType string // the node's registry type ("" for a code node)
	TaskKey  string // node id, or node#n for a send
	TaskID   string // the task's id within its thread (names its journal)
	Start    time.Time
}

// TaskRetry is a failed attempt that the node's retry policy re-runs after
// Backoff.
type TaskRetry struct {
	Attempt int // the attempt that failed, from 1
	Err     error
	Backoff time.Duration
}

// TaskEnd is how a task ended. Attempts counts the runs of its body. A task
// that paused on an interrupt has Halted set and no error; a body that
// panicked has a *NodeError with the Stack.
type TaskEnd struct {
	Attempts int
	Err      error
	Halted   bool
	Duration time.Duration
}

// StepRecord is one call of Step. A replayed step returned its journaled
// value without running its function; Duration is then 0. Err is the
// function's error (nothing was journaled) or the journal write's.
type StepRecord struct {
	Key      string // the full key, e.g. "charge#0"
	Replayed bool
	Err      error
	Duration time.Duration
}

// ResumeRecord says whether a resume was accepted. Reason is why it was
// refused. Paused lists the interrupts of the pause being resumed (with the
// Meta that PauseAnnotators stored); it is empty when the resume was
// refused before they were read.
type ResumeRecord struct {
	Accepted bool
	Reason   string
	Err      error
	Paused   []PendingInterrupt
}

// CheckpointRecord is one checkpoint write. Bytes is the size of what was
// encoded for it: the channels, the send inputs and the interrupts'
// payloads. Pause is true for the checkpoint of a pause.
type CheckpointRecord struct {
	ID       string
	Step     int
	Pause    bool
	Bytes    int
	Duration time.Duration
	Err      error
}

// LeaseEvent is what happened to a thread's lease.
type LeaseEvent string

// The lease events.
const (
	LeaseTaken   LeaseEvent = "taken"
	LeaseRenewed LeaseEvent = "renewed"
	LeaseLost    LeaseEvent = "lost"
)

// LeaseRecord is one lease event; Err is why a lease was lost.
type LeaseRecord struct {
	Event LeaseEvent
	Err   error
	// Deadline is a renewed lease's new local deadline (Lease.Deadline).
	Deadline time.Time
}

// NopObserver implements every Observer call as doing nothing; embed it in
// an Observer that implements only some.
type NopObserver struct{}

// RunStart returns ctx.
func (NopObserver) RunStart(ctx context.Context, _ RunRecord) context.Context { return ctx }

// RunEnd does nothing.
func (NopObserver) RunEnd(context.Context, RunRecord, RunEnd) {}

// SuperstepStart returns ctx.
func (NopObserver) SuperstepStart(ctx context.Context, _ RunRecord, _ SuperstepRecord) context.Context {
	return ctx
}

// SuperstepEnd does nothing.
func (NopObserver) SuperstepEnd(context.Context, RunRecord, SuperstepRecord, SuperstepEnd) {}

// TaskStart returns ctx.
func (NopObserver) TaskStart(ctx context.Context, _ TaskRecord) context.Context { return ctx }

// TaskRetry does nothing.
func (NopObserver) TaskRetry(context.Context, TaskRecord, TaskRetry) {}

// TaskEnd does nothing.
func (NopObserver) TaskEnd(context.Context, TaskRecord, TaskEnd) {}

// Step does nothing.
func (NopObserver) Step(context.Context, TaskRecord, StepRecord) {}

// InterruptOpened does nothing.
func (NopObserver) InterruptOpened(context.Context, RunRecord, PendingInterrupt) {}

// InterruptAnswered does nothing.
func (NopObserver) InterruptAnswered(context.Context, RunRecord, PendingInterrupt) {}

// Resume does nothing.
func (NopObserver) Resume(context.Context, RunRecord, ResumeRecord) {}

// CheckpointCommit does nothing.
func (NopObserver) CheckpointCommit(context.Context, RunRecord, CheckpointRecord) {}

// Lease does nothing.
func (NopObserver) Lease(context.Context, RunRecord, LeaseRecord) {}

// Observers combines observers into one that calls each in turn, threading
// the contexts the Start calls return from one to the next; nil entries are
// skipped. It returns nil for none.
func Observers(os ...Observer) Observer {
	var out multiObserver
	for _, o := range os {
		switch o := o.(type) {
		case nil:
		case multiObserver:
			out = append(out, o...)
		default:
			out = append(out, o)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

type multiObserver []Observer

func (m multiObserver) RunStart(ctx context.Context, r RunRecord) context.Context {
	for _, o := range m {
		ctx = o.RunStart(ctx, r)
	}
	return ctx
}

func (m multiObserver) RunEnd(ctx context.Context, r RunRecord, e RunEnd) {
	for _, o := range m {
		o.RunEnd(ctx, r, e)
	}
}

func (m multiObserver) SuperstepStart(ctx context.Context, r RunRecord, s SuperstepRecord) context.Context {
	for _, o := range m {
		ctx = o.SuperstepStart(ctx, r, s)
	}
	return ctx
}

func (m multiObserver) SuperstepEnd(ctx context.Context, r RunRecord, s SuperstepRecord, e SuperstepEnd) {
	for _, o := range m {
		o.SuperstepEnd(ctx, r, s, e)
	}
}

func (m multiObserver) TaskStart(ctx context.Context, t TaskRecord) context.Context {
	for _, o := range m {
		ctx = o.TaskStart(ctx, t)
	}
	return ctx
}

func (m multiObserver) TaskRetry(ctx context.Context, t TaskRecord, r TaskRetry) {
	for _, o := range m {
		o.TaskRetry(ctx, t, r)
	}
}

func (m multiObserver) TaskEnd(ctx context.Context, t TaskRecord, e TaskEnd) {
	for _, o := range m {
		o.TaskEnd(ctx, t, e)
	}
}

func (m multiObserver) Step(ctx context.Context, t TaskRecord, s StepRecord) {
	for _, o := range m {
		o.Step(ctx, t, s)
	}
}

func (m multiObserver) InterruptOpened(ctx context.Context, r RunRecord, p PendingInterrupt) {
	for _, o := range m {
		o.InterruptOpened(ctx, r, p)
	}
}

func (m multiObserver) InterruptAnswered(ctx context.Context, r RunRecord, p PendingInterrupt) {
	for _, o := range m {
		o.InterruptAnswered(ctx, r, p)
	}
}

func (m multiObserver) Resume(ctx context.Context, r RunRecord, rr ResumeRecord) {
	for _, o := range m {
		o.Resume(ctx, r, rr)
	}
}

func (m multiObserver) CheckpointCommit(ctx context.Context, r RunRecord, c CheckpointRecord) {
	for _, o := range m {
		o.CheckpointCommit(ctx, r, c)
	}
}

func (m multiObserver) Lease(ctx context.Context, r RunRecord, l LeaseRecord) {
	for _, o := range m {
		o.Lease(ctx, r, l)
	}
}

// AnnotatePause merges the maps of the observers that annotate pauses;
// a later observer's key wins.
func (m multiObserver) AnnotatePause(ctx context.Context, r RunRecord) map[string]string {
	var out map[string]string
	for _, o := range m {
		a, ok := o.(PauseAnnotator)
		if !ok {
			continue
		}
		for k, v := range a.AnnotatePause(ctx, r) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
