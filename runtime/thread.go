package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ThreadState is what a thread holds between runs: its state as of its
// latest checkpoint, what runs next, and the interrupts it waits on.
type ThreadState[S any] struct {
	// State is the thread's channels as of Checkpoint.
	State S
	// Checkpoint is the thread's latest checkpoint.
	Checkpoint *Checkpoint
	// Next lists the task keys the next run executes first (empty when the
	// next run starts again at spec.Start).
	Next []string
	// Open lists the interrupts still waiting for an answer, sorted by id;
	// when it is empty the thread takes plain runs.
	Open []PendingInterrupt
	// WakeAt is when the thread is to be woken: its earliest timer or
	// interrupt deadline (Graph.Wake); zero when it waits on none.
	WakeAt time.Time
}

// Waiting reports whether the thread waits on a person or a timer: a
// plain run is refused until Resume answers every open interrupt and
// every timer has fired.
func (t ThreadState[S]) Waiting() bool { return len(t.Open) > 0 }

// ThreadState reads the thread's latest state from cp. A thread that has no
// checkpoint yet returns ErrNotFound.
func (g *Graph[S, U]) ThreadState(ctx context.Context, cp Checkpointer, threadID string) (ThreadState[S], error) {
	var ts ThreadState[S]
	if err := CheckThreadID(threadID); err != nil {
		return ts, err
	}
	latest, err := cp.Get(ctx, threadID, "")
	if err != nil {
		return ts, err
	}
	st, err := g.p.DecodeState(latest.Channels)
	if err != nil {
		return ts, fmt.Errorf("thread %q: decode checkpoint %s: %w", threadID, latest.ID, err)
	}
	open, err := PendingInterrupts(ctx, cp, threadID)
	if err != nil {
		return ts, err
	}
	ts.State, ts.Checkpoint, ts.Open, ts.WakeAt = st, latest, open, EarliestWake(open)
	for _, t := range latest.Next {
		ts.Next = append(ts.Next, t.Key)
	}
	return ts, nil
}

// PendingInterrupts returns the interrupts the thread waits on, sorted by
// id: those of its latest checkpoint whose answer is not journaled yet. A
// UI renders these and answers them with AnswersByID.
func PendingInterrupts(ctx context.Context, cp Checkpointer, threadID string) ([]PendingInterrupt, error) {
	if err := CheckThreadID(threadID); err != nil {
		return nil, err
	}
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
