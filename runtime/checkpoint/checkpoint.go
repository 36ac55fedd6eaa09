package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Format is the version of the checkpoint format the runtime writes;
// every checkpoint records it in Checkpoint.Format.
const Format = 1

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
	// Fingerprint identifies the graph version that wrote the checkpoint
	// (Graph.Fingerprint); "" for checkpoints written before versions were
	// recorded, which any version runs unchecked. Format is the checkpoint
	// format version (Format), 0 for those.
	Fingerprint string `json:"fingerprint,omitempty"`
	Format      int    `json:"format,omitempty"`
	// MigratedFrom is set on a checkpoint written by Migrate: the
	// fingerprint of the version the thread was migrated from.
	MigratedFrom string `json:"migrated_from,omitempty"`
}

// TaskRef is one planned task in a checkpoint.
type TaskRef struct {
	Node string `json:"node"`
	Key  string `json:"key"`
	// Input is a send's input (the task's state), nil for a static task.
	Input json.RawMessage `json:"input,omitempty"`
	// Journal is the task's journal as it stood when the checkpoint was
	// committed, for a task in flight then (a superstep that paused): a
	// run or resume from this checkpoint when it is no longer the
	// thread's latest (a fork) restores it, so the fork replays exactly
	// the steps that had run when the checkpoint was current. Nil for a
	// task that had not started.
	Journal []JournalEntry `json:"journal,omitempty"`
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
	// Expects is what the answer must decode into (recorded by
	// Interrupt[T]); nil in checkpoints written before it was recorded.
	Expects *Expects `json:"expects,omitempty"`
	// Meta is what the run's PauseAnnotator observers kept with the pause
	// (the OpenTelemetry package: the pausing run's trace context); it is
	// stored with the checkpoint's interrupts.
	Meta map[string]string `json:"meta,omitempty"`
	// WakeAt is when the pause ends without an answer: a timer's wake
	// time (runtime.Sleep, runtime.Until) or an interrupt's deadline
	// (runtime.WithTimeout). Zero when nothing but an answer ends it.
	WakeAt time.Time `json:"wake_at,omitzero"`
	// Timer is true for a timer's pause: nobody answers it, the clock
	// ends it (a waker, or runtime's Thread.Wake once WakeAt has passed).
	Timer bool `json:"timer,omitempty"`
	// Actions are the answers the interrupt offers (runtime.WithActions),
	// in the order given; empty when it offers none.
	Actions []Action `json:"actions,omitempty"`
}

// Action is one answer an interrupt offers: the label a person picks and
// the answer (JSON) it stands for. An empty Value means the label itself,
// as a JSON string, is the answer.
type Action struct {
	Label string          `json:"label"`
	Value json.RawMessage `json:"value,omitempty"`
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
	// WakeAt is a timer's wake time or an interrupt's deadline, journaled
	// once when first asked for, so a replay never moves it.
	WakeAt time.Time `json:"wake_at,omitzero"`
	// TimedOut is true once an interrupt's deadline passed without an
	// answer: Value holds its default answer, or nothing when the node
	// gets a timeout error instead.
	TimedOut bool `json:"timed_out,omitempty"`
}

// Checkpointer is the memory port: where threads keep their checkpoints and
// their tasks' journals. Every backend passes the same contract tests
// (runtime/checkpointtest).
//
// A run writes only through the Lease it takes, which fences every write.
// Put and PutJournal are the unleased path, unfenced, for writes outside a
// run (tests, tools that seed a store).
type Checkpointer interface {
	// Put stores cp and, in the same atomic commit, drops the journals of
	// the task ids in done (the tasks whose superstep cp commits),
	// without a lease: nothing fences it.
	Put(ctx context.Context, cp *Checkpoint, done []string) error
	// Get returns the checkpoint id of thread, or its latest checkpoint when
	// id is "". It returns ErrNotFound when there is none.
	Get(ctx context.Context, threadID, id string) (*Checkpoint, error)
	// List returns the thread's checkpoints newest first, at most limit of
	// them (all when limit <= 0).
	List(ctx context.Context, threadID string, limit int) ([]*Checkpoint, error)
	// PutJournal replaces the journal of a task, without a lease.
	PutJournal(ctx context.Context, threadID, taskID string, entries []JournalEntry) error
	// GetJournal returns the journal of a task (nil when it has none).
	GetJournal(ctx context.Context, threadID, taskID string) ([]JournalEntry, error)
	// DeleteThread removes everything of the thread: its checkpoints, every
	// journal of its tasks and its lease, matched by exact thread id. It
	// returns without waiting for a run that holds the thread: such a run
	// in this process is told through its LeaseOptions.Lost (with an error
	// matching ErrThreadDeleted) and every later write of it fails; a run
	// in another process fails its next write, since the lease it would be
	// fenced by is gone. Nothing of the thread reappears.
	DeleteThread(ctx context.Context, threadID string) error
	// Lease takes the thread's exclusive lease for one run. It fails fast
	// with an error matching ErrThreadBusy while another run holds it.
	// The lease is the run's write handle: each of its writes is checked,
	// in the write's own transaction, against the lease's fencing token,
	// so that a holder that lost the lease (it stalled past its expiry and
	// another run took the thread over, or the thread was deleted) writes
	// nothing.
	Lease(ctx context.Context, threadID string, opts LeaseOptions) (Lease, error)
}

// Commit is one atomic write of a run (Lease.Commit): a superstep's
// checkpoint with what rides along, or the run's final write.
type Commit struct {
	// Checkpoint is the checkpoint to store; nil for a write without one
	// (the run's final write of its thread record and last events, when
	// the run did not end with a checkpoint that carries them: a pause, a
	// failure).
	Checkpoint *Checkpoint
	// Delta, when not nil, stores Checkpoint as the change from
	// checkpoint Delta.Base of the same thread (see DeltaCheckpointer);
	// Checkpoint.Channels is then ignored. A store that is not a
	// DeltaCheckpointer is never handed one.
	Delta *Delta
	// Done are the task ids whose journals the checkpoint's superstep
	// finished: they are dropped.
	Done []string
	// Thread, when not nil, is recorded in the thread's record
	// (ThreadRecorder).
	Thread *ThreadWrite
	// Events are the run's events since its last commit, in Seq order
	// (EventStore); empty unless the run stores its events.
	Events []StoredEvent
	// Release says this is the run's last write (the checkpoint that ends
	// a run done, with its last events when it keeps an event log; a
	// pause's without one; or the final write of the thread record and
	// the last events): a backend may give the
	// lease back in the same atomic commit (the SQLite and PostgreSQL
	// stores do: one transaction, one flush less per run), after which
	// Lease.Release does nothing. A backend that does not keeps the lease
	// until Release, as for any other commit. A failed commit releases
	// nothing.
	Release bool
}

// Lease is one run's exclusive hold on a thread (Checkpointer.Lease), and
// the handle through which every write of the run goes, fenced by it.
type Lease interface {
	// Fence is the lease's fencing token: a different value every time
	// the thread's lease is taken (an epoch or a random token, as the
	// backend chooses), which the backend checks every write against. For
	// logs and traces.
	Fence() string
	// Deadline is the local time until which the holder can be sure it
	// still holds the lease: the monotonic time at which the last
	// successful renewal (or the take) was sent, plus the lease's time to
	// live, minus a safety margin. The zero Time means the lease does not
	// expire (an in-process backend). Past the deadline Step starts no
	// effect: another process may have taken the thread over.
	Deadline() time.Time
	// Commit writes c in one atomic commit, fenced: the checkpoint (full
	// or delta), the dropped journals of c.Done, the thread record and
	// the events all land, or none of them does. A lease that is no
	// longer current writes nothing and gets an error (matching
	// ErrThreadDeleted when the thread was deleted). A delta whose base
	// the thread lacks fails with an error matching ErrNotFound. Commit
	// keeps nothing of c after it returns (copy what you store): the
	// runtime reuses the checkpoint, delta and events it hands over.
	Commit(ctx context.Context, c Commit) error
	// PutJournal replaces the journal of a task of the thread, fenced.
	PutJournal(ctx context.Context, taskID string, entries []JournalEntry) error
	// Release gives the lease back; later calls do nothing.
	Release()
}

// BatchLease is a Lease that writes several of a run's writes in one
// atomic commit: one transaction and one flush where each would take its
// own. The runtime uses it for runs with the durability
// DurableWithNextWrite, which keep a superstep's checkpoint until the
// run's next write and send the two together. A Lease that is not one
// writes each commit alone (the run is then durable at every superstep).
type BatchLease interface {
	Lease
	// CommitBatch writes the commits cs, in order, and then, when j is
	// not nil, the journal j, in one atomic commit fenced by the lease:
	// all of it lands, or none of it does. A later commit of cs may be a
	// delta of an earlier one. Like Commit, it keeps nothing of what it
	// is handed after it returns.
	CommitBatch(ctx context.Context, cs []Commit, j *JournalWrite) error
}

// JournalWrite is a task's journal written with a batch (BatchLease): it
// replaces the task's journal, as Lease.PutJournal does.
type JournalWrite struct {
	TaskID  string
	Entries []JournalEntry
}

// LeaseOptions are the notices a lease holder receives. Both functions may
// be nil, and are called from any goroutine.
type LeaseOptions struct {
	// Lost is called once when the backend learns that the lease is gone:
	// another process took the thread over after the lease expired
	// unrenewed, or the thread was deleted (the error then matches
	// ErrThreadDeleted). The executor cancels the run at once: its nodes
	// see their context done, Step starts no new effect, nothing more is
	// committed, and the run ends with StatusError and a *CheckpointError
	// (Op "lease") wrapping the error.
	Lost func(error)
	// Renewed is called after each successful renewal with the new
	// deadline (see Lease.Deadline).
	Renewed func(deadline time.Time)
}

// ErrLeaseLost is matched (errors.Is) by every error that says a run's
// lease on its thread is gone (a *LeaseLostError): another run took the
// thread over after the lease expired unrenewed, the holder's own deadline
// passed without a renewal, or the thread was deleted. A write under the
// lost lease was refused, so the new holder's state is not overwritten; the
// run that held it stops before starting another effect, and a later run
// of the thread takes its work up: the PostgreSQL queue's next claim of
// the request, runtime/waker's next poll for a firing or a wake (which
// lists the threads that failed so), or a run a person starts.
var ErrLeaseLost = errors.New("the thread's lease was lost")

// LeaseLostReason says why a lease is gone.
type LeaseLostReason string

// The reasons of a LeaseLostError.
const (
	// LeaseTakenOver: another run took the thread over after the lease
	// expired unrenewed.
	LeaseTakenOver LeaseLostReason = "taken over"
	// LeaseDeadlinePassed: the lease passed its local deadline without a
	// renewal (the process stalled, or storage was unreachable, for
	// longer than the lease lasts), so another run may hold the thread.
	LeaseDeadlinePassed LeaseLostReason = "deadline passed"
	// LeaseThreadDeleted: the thread was deleted while the run held it.
	LeaseThreadDeleted LeaseLostReason = "thread deleted"
)

// LeaseLostError is the error of a lost lease. It matches ErrLeaseLost, and
// also ErrThreadDeleted when Reason is LeaseThreadDeleted.
type LeaseLostError struct {
	Thread string
	// Store names where the lease was kept (a file, a schema); "" for a
	// loss the runtime found by the clock.
	Store string
	// Fence is the lost lease's fencing token (Lease.Fence).
	Fence  string
	Reason LeaseLostReason
	// Found says how the loss was found: "fenced write", "heartbeat",
	// "delete" or "deadline".
	Found string
}

func (e *LeaseLostError) Error() string {
	where := ""
	if e.Store != "" {
		where = " in " + e.Store
	}
	return fmt.Sprintf("the lease of thread %q%s (fence %s) was lost (%s, found by %s): nothing more of the run is written", e.Thread, where, e.Fence, e.Reason, e.Found)
}

// Is makes a LeaseLostError match ErrLeaseLost, and ErrThreadDeleted for
// a deleted thread.
func (e *LeaseLostError) Is(target error) bool {
	return target == ErrLeaseLost || target == ErrThreadDeleted && e.Reason == LeaseThreadDeleted
}

// ErrThreadDeleted is the cause of a run whose thread was deleted while it
// ran (Checkpointer.DeleteThread). Nothing of the thread was written after
// the delete.
var ErrThreadDeleted = errors.New("the thread was deleted while the run held it")

// ErrNotFound is returned by Checkpointer.Get when there is no such
// checkpoint.
var ErrNotFound = errors.New("checkpoint not found")

// ErrThreadBusy is returned when a run or resume is started on a thread that
// another run is executing right now. Retry later; nothing was executed.
var ErrThreadBusy = errors.New("thread is busy: another run holds its lease")
