package checkpoint

import (
	"encoding/json"
	"time"
)

// Status is a thread's or a run's state in the runtime's words: how a run
// ended (done, interrupted, parked, error, aborted; the values a thread
// record's outcome holds) or where a thread is (new, running, and the
// others). A thread's status is ThreadStatus's, in every tool that shows
// one.
type Status string

// The statuses. A store records the five a run ends with; new and running
// describe a thread only.
const (
	// StatusNew is a thread no run has written a checkpoint of yet.
	StatusNew Status = "new"
	// StatusInterrupted is a run paused on interrupts that wait for answers.
	StatusInterrupted Status = "interrupted"
	// StatusRunning is a thread a run holds right now.
	StatusRunning Status = "running"
	// StatusParked is a thread whose run stopped at a superstep boundary
	// with work left, to be continued later, by this process or another:
	// its tasks wait on timers (runtime.Sleep, runtime.Until) until their
	// wake time, or (a thread only) its latest checkpoint plans tasks that
	// no run is going on with, as when the process of its run died; the
	// thread's next run or request continues them.
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

// ThreadFacts is what a thread's status is derived from (ThreadStatus):
// what its store holds, and what the caller knows of a run going on.
type ThreadFacts struct {
	// Held reports that a run holds the thread right now, as far as the
	// caller can know: a run of this process, a lease it sees held, a
	// request a worker runs.
	Held bool
	// Checkpoint reports that the thread has a checkpoint; Next is the
	// number of tasks its latest checkpoint plans, and Created when that
	// checkpoint was written.
	Checkpoint bool
	Next       int
	Created    time.Time
	// Open are the interrupts of the latest checkpoint still waiting:
	// those whose answer is not journaled (runtime's Thread.Pending).
	Open []PendingInterrupt
	// Outcome is how the thread's last run ended as far as the caller
	// knows (ThreadInfo.Outcome, or a run it ran itself); zero when none
	// has. A zero Ended is taken as the latest run's.
	Outcome ThreadOutcome
}

// ThreadStatus is a thread's status: the one rule the server, its console,
// the ilmek command and the runtime's thread reports apply, first match
// wins:
//
//  1. a run holds the thread (Held): running;
//  2. interrupts are open: PauseStatus(Open), interrupted when a person
//     is asked, parked when only timers wait, unless the latest run ended
//     error or aborted (3): a run after a pause on timers only is their
//     wake, and the wake failed or was cut short, its timers left in the
//     checkpoint it replays;
//  3. the last run ended error or aborted, and it is the latest run (it
//     ended no earlier than the latest checkpoint was written, if any; a
//     failed or aborted run writes its outcome after its last
//     checkpoint): that outcome;
//  4. no checkpoint: new;
//  5. the latest checkpoint plans tasks: parked, with work left for the
//     next run (a run that stopped on timers, or one whose process died
//     mid-run, with no outcome or the outcome of an earlier run);
//  6. else done.
//
// Whether an outcome is the latest run's is read off the two times, so
// it relies on the clocks of the processes that wrote them (a later run
// on a machine whose clock is behind by more than the time between the
// runs leaves the earlier outcome showing).
func ThreadStatus(f ThreadFacts) Status {
	o := f.Outcome
	ended := (o.Status == StatusError || o.Status == StatusAborted) && (!f.Checkpoint || o.Ended.IsZero() || !o.Ended.Before(f.Created))
	switch pause := PauseStatus(f.Open); {
	case f.Held:
		return StatusRunning
	case len(f.Open) > 0 && (pause == StatusInterrupted || !ended):
		return pause
	case ended:
		return o.Status
	case !f.Checkpoint:
		return StatusNew
	case f.Next > 0:
		return StatusParked
	}
	return StatusDone
}

// OutcomeFilter is the ThreadQuery.Status that preselects, from a
// ThreadLister, every thread whose ThreadStatus can be s: s itself for
// error and aborted, which ThreadStatus gives only when the last run ended
// so; "" (no preselection) for the others, which the latest checkpoint, its
// open interrupts and a run going on decide (a thread still asking a
// person after a later run failed is interrupted, whatever its outcome).
// A listing by status checks ThreadStatus of what comes back.
func OutcomeFilter(s Status) Status {
	if s == StatusError || s == StatusAborted {
		return s
	}
	return ""
}
