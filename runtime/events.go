package runtime

import (
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// EventType names one kind of run event.
type EventType string

// The event catalog, in the order a run emits them.
const (
	EventRunStart   EventType = "run_start"
	EventStepStart  EventType = "step_start"
	EventNodeStart  EventType = "node_start"
	EventCustom     EventType = "custom"
	EventNodeRetry  EventType = "node_retry"
	EventNodeEnd    EventType = "node_end"
	EventNodeError  EventType = "node_error"
	EventState      EventType = "state"
	EventCheckpoint EventType = "checkpoint"
	EventInterrupt  EventType = "interrupt"
	EventRunEnd     EventType = "run_end"
)

// Status is how a run ended, or where a thread is (checkpoint.Status).
type Status = checkpoint.Status

// The statuses: a run ends done, interrupted, error or aborted.
const (
	StatusNew         = checkpoint.StatusNew
	StatusInterrupted = checkpoint.StatusInterrupted
	StatusRunning     = checkpoint.StatusRunning
	StatusParked      = checkpoint.StatusParked
	StatusDone        = checkpoint.StatusDone
	StatusError       = checkpoint.StatusError
	StatusAborted     = checkpoint.StatusAborted
)

// Event is one item of a run's stream. The envelope (RunID, ThreadID, Seq,
// NS, Type, Time) is always set; the other fields belong to the types noted.
//
// Duration is the time a task took (node_end, node_error: every attempt and
// the retries' waits), a superstep took (state, interrupt: from its start to
// its checkpoint), a checkpoint write took (checkpoint) or the run took
// (run_end). With WithEventLog, the checkpoint that ends a run done is
// written together with its state, checkpoint and run_end events: that
// checkpoint event has no Duration, and the state and run_end Durations
// stop before the write. Bytes is the size of what a checkpoint wrote
// (checkpoint): its channels, send inputs and interrupt payloads as
// encoded.
type Event struct {
	Type     EventType `json:"type"`
	RunID    string    `json:"run_id"`
	ThreadID string    `json:"thread_id"`
	// Seq is 1-based and gap-free within a run: a consumer that reconnects
	// skips everything up to the last Seq it saw.
	Seq int64 `json:"seq"`
	// NS is the namespace path of the (sub)graph that emitted the event;
	// empty at the root.
	NS []string `json:"ns"`
	// Time is the wall-clock time the event happened.
	Time time.Time `json:"time"`

	Step         int                `json:"step,omitempty"`          // step_start
	Tasks        []string           `json:"tasks,omitempty"`         // step_start: task keys
	Node         string             `json:"node,omitempty"`          // node_*, custom
	TaskID       string             `json:"task_id,omitempty"`       // node_*, custom
	Payload      any                `json:"payload,omitempty"`       // custom
	Attempt      int                `json:"attempt,omitempty"`       // node_retry: the attempt that failed
	Update       any                `json:"update,omitempty"`        // node_end: the node's update
	Err          error              `json:"-"`                       // node_error, node_retry, run_end{error}
	Error        string             `json:"error,omitempty"`         // Err's text
	Channels     any                `json:"channels,omitempty"`      // state: the state after reduce
	CheckpointID string             `json:"checkpoint_id,omitempty"` // checkpoint
	Pending      []PendingInterrupt `json:"pending,omitempty"`       // interrupt
	Status       Status             `json:"status,omitempty"`        // run_end
	Reason       string             `json:"reason,omitempty"`        // run_end{aborted}
	Duration     time.Duration      `json:"duration_ns,omitempty"`   // node_end, node_error, state, interrupt, checkpoint, run_end
	Bytes        int                `json:"bytes,omitempty"`         // checkpoint
	// NoEdgeHeld (state) names the nodes of the superstep whose outgoing
	// edges are all guarded and of which none held on the state after it:
	// their tasks ended, and the run followed no edge from them. With no
	// other task planned the run ends "done" after this state event. Nodes
	// that route by goto or a router are not included. ilmekgen check warns
	// about such nodes; this says it happened.
	NoEdgeHeld []string `json:"no_edge_held,omitempty"`
}
