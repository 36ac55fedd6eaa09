package checkpoint

import "fmt"

// DoubleTexting is what happens to a new run request for a thread that
// already has one queued or running (a person "double-texting" a thread).
// It is defined once here, for every place that accepts run requests: the
// PostgreSQL workers' queue, the server, and a schedule's overlap policy
// (Schedule.Overlap), where the new request is a tick's firing and the one
// running is the previous firing: reject skips the tick, enqueue fires it
// anyway, cancel-and-replace stops the previous firing and fires it. The
// runtime names it runtime.DoubleTexting.
type DoubleTexting string

const (
	// DoubleTextReject refuses the new request (an error matching
	// runtime.ErrThreadBusy) while the thread has one queued or running.
	DoubleTextReject DoubleTexting = "reject"
	// DoubleTextEnqueue runs the new request after those before it, in the
	// order they were submitted.
	DoubleTextEnqueue DoubleTexting = "enqueue"
	// DoubleTextCancelReplace cancels the thread's queued requests and the
	// running one at its next superstep boundary (it ends StatusAborted),
	// then runs the new request. It is refused, like DoubleTextReject, while
	// the thread waits on a person (it has pending interrupts): answer them
	// with a resume instead. When the superstep the running request was in
	// pauses on a person, that request ends StatusInterrupted, not aborted
	// (the question is kept), and the new one, accepted before, is then
	// refused the same way: it ends with the error that the thread waits on
	// a person.
	DoubleTextCancelReplace DoubleTexting = "cancel-and-replace"
)

// doubleTextings lists the policies, in the order of their documentation.
var doubleTextings = []DoubleTexting{DoubleTextReject, DoubleTextEnqueue, DoubleTextCancelReplace}

// Validate returns an error naming the known policies when p is none of
// them. The empty policy is not valid: callers choose their default.
func (p DoubleTexting) Validate() error {
	for _, k := range doubleTextings {
		if p == k {
			return nil
		}
	}
	return fmt.Errorf("unknown double-texting policy %q: want %q, %q or %q", string(p), DoubleTextReject, DoubleTextEnqueue, DoubleTextCancelReplace)
}
