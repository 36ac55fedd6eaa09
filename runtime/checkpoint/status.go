package checkpoint

import "encoding/json"

// Status is a thread's or a run's state in the runtime's words: how a run
// ended (done, interrupted, error, aborted; the values a thread record's
// outcome holds) or where a thread is (new, running, parked).
type Status string

// The statuses. A store records the four a run ends with; new, running and
// parked describe a thread to the server and the queue.
const (
	// StatusNew is a thread no run has ended on yet.
	StatusNew Status = "new"
	// StatusInterrupted is a run paused on interrupts that wait for answers.
	StatusInterrupted Status = "interrupted"
	// StatusRunning is a thread a run holds right now.
	StatusRunning Status = "running"
	// StatusParked is a thread whose run stopped at a superstep boundary
	// to be continued later, by this process or another: its tasks wait
	// on timers (runtime.Sleep, runtime.Until) until their wake time.
	StatusParked Status = "parked"
	// StatusDone is a run that reached the end.
	StatusDone Status = "done"
	// StatusError is a run that failed.
	StatusError Status = "error"
	// StatusAborted is a run that was stopped (its context cancelled).
	StatusAborted Status = "aborted"
)

// Expects is what an interrupt's answer must be: the Go type the asking
// node decodes it into, and that type's JSON Schema. The runtime's
// Interrupt[T] records it with the pending interrupt
// (PendingInterrupt.Expects), so a user interface can build a form from
// the schema, and a resume checks every answer against it before anything
// is written.
type Expects struct {
	// Type is the Go type's name, e.g. "bool" or "example.com/shop.Decision".
	Type string `json:"type"`
	// Schema is the JSON Schema (draft 2020-12) of the answers the node
	// accepts, and answers are checked by it exactly: null only where the
	// Go type is a pointer, slice, map or interface; an object of a struct
	// lists its members under "required" (every member whose json tag says
	// neither omitempty nor omitzero) and refuses others
	// ("additionalProperties": false), member names written exactly as
	// the json tags spell them. A type that decodes itself (a
	// json.Unmarshaler or encoding.TextUnmarshaler other than time.Time)
	// accepts any value here and is checked when its node decodes it.
	Schema json.RawMessage `json:"schema"`
}
