package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Checkpoint is the durable record of a thread after a superstep: its
// channels and what runs next. Checkpoints name their parent, so a thread is
// a tree: running from an older checkpoint forks a branch.
type Checkpoint struct {
	// ID is unique and sorts after every checkpoint created before it.
	ID       string `json:"id"`
	ParentID string `json:"parent_id,omitempty"`
	ThreadID string `json:"thread_id"`
	// PlanID is the id of the checkpoint at which Next was planned. Task ids
	// (and so journals) derive from it, and it survives checkpoints written
	// by an interrupt or by folding new input into a pending plan.
	PlanID string `json:"plan_id"`
	// Step is the number of supersteps the thread has completed.
	Step int `json:"step"`
	// Channels is the JSON object of the thread's channels.
	Channels json.RawMessage `json:"channels"`
	// Next lists the tasks of the next superstep, in task order.
	Next []TaskRef `json:"next"`
	// Pending lists the interrupts the thread waits on, sorted by id.
	Pending []PendingInterrupt `json:"pending,omitempty"`
	Created time.Time          `json:"ts"`
}

// TaskRef is one planned task in a checkpoint.
type TaskRef struct {
	Node string `json:"node"`
	Key  string `json:"key"`
	// Input is a send's input (the task's state), nil for a static task.
	Input json.RawMessage `json:"input,omitempty"`
}

// PendingInterrupt is an open question to a person. Answer it by ID.
type PendingInterrupt struct {
	// ID addresses the pause from outside the thread: "<taskKey>:<key>".
	ID string `json:"id"`
	// Key addresses the entry in the task's journal: "interrupt#0".
	Key     string          `json:"key"`
	Node    string          `json:"node"`
	TaskID  string          `json:"task_id"`
	Payload json.RawMessage `json:"payload"`
}

// JournalEntry is one recorded step or interrupt of a task.
type JournalEntry struct {
	Key string `json:"key"`
	// Interrupt is true for an interrupt, false for a step.
	Interrupt bool `json:"interrupt,omitempty"`
	// Value is a step's result or an interrupt's answer (JSON).
	Value json.RawMessage `json:"value,omitempty"`
	// Answered is true once an interrupt has its answer in Value.
	Answered bool `json:"answered,omitempty"`
	// Payload is an interrupt's question (JSON).
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Checkpointer is the memory port: where threads keep their checkpoints and
// their tasks' journals. Every backend passes the same contract tests
// (runtime/checkpointtest).
type Checkpointer interface {
	// Put stores cp and, in the same atomic commit, drops the journals of the
	// task ids in done (the tasks whose superstep cp commits).
	Put(ctx context.Context, cp *Checkpoint, done []string) error
	// Get returns the checkpoint id of thread, or its latest checkpoint when
	// id is "". It returns ErrNotFound when there is none.
	Get(ctx context.Context, threadID, id string) (*Checkpoint, error)
	// List returns the thread's checkpoints newest first, at most limit of
	// them (all when limit <= 0).
	List(ctx context.Context, threadID string, limit int) ([]*Checkpoint, error)
	// PutJournal replaces the journal of a task.
	PutJournal(ctx context.Context, threadID, taskID string, entries []JournalEntry) error
	// GetJournal returns the journal of a task (nil when it has none).
	GetJournal(ctx context.Context, threadID, taskID string) ([]JournalEntry, error)
	// DeleteThread removes the thread's checkpoints, journals and lease.
	DeleteThread(ctx context.Context, threadID string) error
	// Lease takes the thread's exclusive lease for one run; release gives it
	// back. It fails fast with ErrThreadBusy while another run holds it.
	Lease(ctx context.Context, threadID string) (release func(), err error)
}

// LeaseWatcher is implemented by a Checkpointer whose lease can be lost
// while a run holds it: another process took the thread over after the
// lease expired unrenewed (the holder was paused or cut off), or deleted
// the thread. The executor then takes the lease with WatchLease instead of
// Lease, and the Checkpointer calls lost, once and from any goroutine,
// when it learns that the lease is gone. The run is cancelled at once: its
// nodes see their context done, Step starts no new effect, nothing more is
// committed, and the run ends with StatusError and a *CheckpointError (Op
// "lease") that wraps lost's error. A Checkpointer without it is still
// fenced: its next write fails.
type LeaseWatcher interface {
	WatchLease(ctx context.Context, threadID string, lost func(error)) (release func(), err error)
}

// leaseLostError is the cancellation cause of a run whose lease was lost.
type leaseLostError struct{ err error }

func (e *leaseLostError) Error() string { return "lease lost: " + e.err.Error() }
func (e *leaseLostError) Unwrap() error { return e.err }

// ErrNotFound is returned by Checkpointer.Get when there is no such
// checkpoint.
var ErrNotFound = errors.New("checkpoint not found")

// ErrThreadBusy is returned when a run or resume is started on a thread that
// another run is executing right now. Retry later; nothing was executed.
var ErrThreadBusy = errors.New("thread is busy: another run holds its lease")
