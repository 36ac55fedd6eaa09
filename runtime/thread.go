package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Thread is a handle on one thread of a graph: a conversation or a case
// whose checkpoints, journals and pending questions live in a checkpointer,
// so that its runs survive their process, pause for people and resume
// anywhere. It is cheap: make one per request with Graph.Thread. A handle
// holds no lock; two runs of one thread at once are refused by the thread's
// lease (ErrThreadBusy), wherever they run.
type Thread[S, U any] struct {
	g    *Graph[S, U]
	cp   Checkpointer
	id   string
	from string // Fork: the checkpoint the next run starts from
}

// Thread returns the handle on thread id of g, kept in cp (a
// checkpoint.NewMemory() for one process, a sqlite or postgres store to
// survive it). The id must pass CheckThreadID; a bad id or a nil cp is
// reported by every call on the handle, before the store is touched.
func (g *Graph[S, U]) Thread(cp Checkpointer, id string) *Thread[S, U] {
	return &Thread[S, U]{g: g, cp: cp, id: id}
}

// ID returns the thread's id.
func (t *Thread[S, U]) ID() string { return t.id }

// check refuses a handle that cannot name a thread.
func (t *Thread[S, U]) check() error {
	if t.cp == nil {
		return &OptionError{Msg: fmt.Sprintf("runtime: thread %q has no checkpointer: pass one to Graph.Thread (checkpoint.NewMemory() for one process)", t.id)}
	}
	return CheckThreadID(t.id)
}

// Invoke runs the graph on the thread with input folded into its channels
// first, from the thread's latest checkpoint (a new thread starts at
// __start__), and returns how the run ended. A run that pauses for a person
// ends StatusInterrupted with its questions in Result.Pending, and no error;
// Resume answers them. err is non-nil when the run was refused (the thread
// is busy or waits on a person) or ended in error or aborted (then also
// Result.Err).
func (t *Thread[S, U]) Invoke(ctx context.Context, input U, opts ...RunOption) (Result[S], error) {
	return t.g.invoke(ctx, t, &input, nil, opts)
}

// Stream is Invoke with the run's events yielded live. A refused run
// yields one error and no event. Stopping the iteration aborts the run at
// the next superstep boundary (the last checkpoint stands).
func (t *Thread[S, U]) Stream(ctx context.Context, input U, opts ...RunOption) iter.Seq2[Event, error] {
	return t.g.stream(ctx, t, &input, nil, opts)
}

// Resume answers the thread's pending interrupts and continues its run.
// The answers must cover every open interrupt (Pending lists them), or the
// resume is refused and writes nothing. An answer that does not decode into
// the type its node asked for pauses the run again with a *ResumeError
// matching ErrAnswerType (in err and Result.Err).
func (t *Thread[S, U]) Resume(ctx context.Context, a Answers, opts ...RunOption) (Result[S], error) {
	return t.g.invoke(ctx, t, nil, &a, opts)
}

// StreamResume is Resume with the events yielded live, as Stream does.
func (t *Thread[S, U]) StreamResume(ctx context.Context, a Answers, opts ...RunOption) iter.Seq2[Event, error] {
	return t.g.stream(ctx, t, nil, &a, opts)
}

// Fork returns a handle whose runs start from the thread's checkpoint
// checkpointID instead of its latest one: the new checkpoints branch the
// thread's tree there, and the branch becomes the thread's latest. A fork
// from a checkpoint where tasks paused replays what they had journaled (a
// Step done before the pause is not run again); Resume on the fork answers
// the questions open at that checkpoint, Invoke folds new input in.
func (t *Thread[S, U]) Fork(checkpointID string) *Thread[S, U] {
	f := *t
	f.from = checkpointID
	return &f
}

// Delete removes everything of the thread: checkpoints, journals, lease,
// record and events. A run holding the thread fails its next write.
func (t *Thread[S, U]) Delete(ctx context.Context) error {
	if err := t.check(); err != nil {
		return err
	}
	if k, ok := stateKeyOf(t.cp, t.id); ok {
		t.g.states.forget(k)
	}
	return t.cp.DeleteThread(ctx, t.id)
}

// History returns the thread's checkpoints, newest first, at most limit of
// them (all when limit <= 0). StateAt reads the state at one of them.
func (t *Thread[S, U]) History(ctx context.Context, limit int) ([]*Checkpoint, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return t.cp.List(ctx, t.id, limit)
}

// ThreadState is what a thread holds between runs: its state as of a
// checkpoint, what runs next, and the interrupts it waits on.
type ThreadState[S any] struct {
	// State is the thread's channels as of Checkpoint.
	State S
	// Checkpoint is the checkpoint read: the latest one for Thread.State.
	Checkpoint *Checkpoint
	// Next lists the task keys the next run executes first (empty when the
	// next run starts again at spec.Start).
	Next []string
	// Open lists the interrupts still waiting for an answer, sorted by id;
	// when it is empty the thread takes plain runs.
	Open []PendingInterrupt
	// WakeAt is when the thread is to be woken: its earliest timer or
	// interrupt deadline (Thread.Wake); zero when it waits on none.
	WakeAt time.Time
}

// Waiting reports whether the thread waits on a person or a timer: a
// plain run is refused until Resume answers every open interrupt and
// every timer has fired.
func (t ThreadState[S]) Waiting() bool { return len(t.Open) > 0 }

// State reads the thread as of its latest checkpoint. A thread that has no
// checkpoint yet returns an error matching ErrNotFound.
func (t *Thread[S, U]) State(ctx context.Context) (ThreadState[S], error) {
	return t.StateAt(ctx, "")
}

// StateAt reads the thread as of its checkpoint checkpointID ("": the
// latest); Open lists the questions that were open there.
func (t *Thread[S, U]) StateAt(ctx context.Context, checkpointID string) (ThreadState[S], error) {
	var ts ThreadState[S]
	if err := t.check(); err != nil {
		return ts, err
	}
	at, err := t.cp.Get(ctx, t.id, checkpointID)
	if err != nil {
		return ts, err
	}
	st, err := t.g.p.DecodeState(at.Channels)
	if err != nil {
		return ts, fmt.Errorf("thread %q: decode checkpoint %s: %w", t.id, at.ID, err)
	}
	_, open, err := readPauses(ctx, t.cp, t.id, at.Pending)
	if err != nil {
		return ts, err
	}
	ts.State, ts.Checkpoint, ts.Open, ts.WakeAt = st, at, open, checkpoint.EarliestWake(open)
	for _, n := range at.Next {
		ts.Next = append(ts.Next, n.Key)
	}
	return ts, nil
}

// Pending returns the interrupts the thread waits on, sorted by id: those
// of its latest checkpoint whose answer is not journaled yet (none for a
// thread that never ran). A UI renders these and answers them with
// AnswersByID.
func (t *Thread[S, U]) Pending(ctx context.Context) ([]PendingInterrupt, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return pendingInterrupts(ctx, t.cp, t.id)
}

// OpenInterrupts returns the interrupts of checkpoint at, a checkpoint of
// cp, still waiting for an answer (those whose answer is not journaled),
// sorted by id: what Thread.StateAt's Open holds, for code that has no
// typed graph and has read the checkpoint already (the ilmek command, a
// thread's status: checkpoint.ThreadFacts.Open). It reads the journal of
// each pending interrupt's task.
func OpenInterrupts(ctx context.Context, cp Checkpointer, at *Checkpoint) ([]PendingInterrupt, error) {
	if at == nil || len(at.Pending) == 0 {
		return nil, nil
	}
	_, open, err := readPauses(ctx, cp, at.ThreadID, at.Pending)
	return open, err
}

// pendingInterrupts is Thread.Pending for code that has no typed graph.
func pendingInterrupts(ctx context.Context, cp Checkpointer, threadID string) ([]PendingInterrupt, error) {
	latest, err := cp.Get(ctx, threadID, "")
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	_, open, err := readPauses(ctx, cp, threadID, latest.Pending)
	return open, err
}

// Subgraphs returns the children, at every depth, that the planned tasks of
// the thread's latest checkpoint hold: the children of a paused parent
// (whose pauses Pending lists with path-qualified ids) and those a crash or
// a failure left in flight. A thread whose tasks hold no child has none. It
// reads the store only.
func (t *Thread[S, U]) Subgraphs(ctx context.Context) ([]SubgraphState, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return subgraphStates(ctx, t.cp, t.id)
}
