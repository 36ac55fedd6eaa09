package runtime

import (
	"errors"
	"fmt"
	"strings"
)

// NodeError is a task's failure: its node returned an error or panicked.
// The superstep it ran in is void: none of its updates are applied.
type NodeError struct {
	Node    string
	TaskKey string
	Err     error
	// Stack is the goroutine stack when the node panicked, else empty.
	Stack string
}

// Error names the node and the task, says whether it panicked, and gives
// the cause.
func (e *NodeError) Error() string {
	if e.Stack != "" {
		return fmt.Sprintf("node %q (task %q) panicked: %v", e.Node, e.TaskKey, e.Err)
	}
	return fmt.Sprintf("node %q (task %q): %v", e.Node, e.TaskKey, e.Err)
}

// Unwrap returns the node's error (for a panic, one that carries the
// panic's value).
func (e *NodeError) Unwrap() error { return e.Err }

// ReduceError is an update that could not be folded into the channels, e.g.
// a write to an undeclared channel. The superstep (or the input) is void.
type ReduceError struct {
	// Node is the node whose update failed, "" for the run's input.
	Node string
	Err  error
}

// Error names the node whose update failed, or the input, and the cause.
func (e *ReduceError) Error() string {
	if e.Node == "" {
		return "input: " + e.Err.Error()
	}
	return fmt.Sprintf("reduce update of node %q: %v", e.Node, e.Err)
}

// Unwrap returns the cause, usually a *ChannelError.
func (e *ReduceError) Unwrap() error { return e.Err }

// ChannelError is a write a channel refuses. Programs return it from Reduce.
type ChannelError struct {
	Channel string
	Msg     string
}

// Error names the channel and says why it refused the write.
func (e *ChannelError) Error() string { return fmt.Sprintf("channel %q: %s", e.Channel, e.Msg) }

// errUndeclared is the ChannelError for a write to a channel the graph does
// not declare.
func errUndeclared(name string, declared []ChannelShape) error {
	names := make([]string, len(declared))
	for i, c := range declared {
		names[i] = c.Name
	}
	return &ChannelError{Channel: name, Msg: fmt.Sprintf("write to undeclared channel %q; declared channels are [%s]", name, strings.Join(names, ", "))}
}

// RecursionLimitError ends a run that would start more supersteps than its
// recursion limit allows.
type RecursionLimitError struct {
	Limit int
}

// Error gives the limit and how to raise it.
func (e *RecursionLimitError) Error() string {
	return fmt.Sprintf("recursion limit reached: the run exceeded %d supersteps; raise it with runtime.WithRecursionLimit or give the loop an exit", e.Limit)
}

// ResumeError is a run or resume refused before it started, e.g. a bare
// answer while several interrupts are pending, or input to a thread that is
// waiting on a person. Nothing was written. Reason says why, as one of the
// Err* reasons below, which the error matches with errors.Is.
type ResumeError struct {
	ThreadID string
	// Reason is why: ErrNotInterrupted, ErrWaitingOnPerson,
	// ErrAmbiguousAnswer, ErrUnknownInterrupt, ErrMissingAnswer,
	// ErrAnswerConflict or ErrAnswerType.
	Reason error
	// Interrupt is the id of the interrupt the refusal is about, when one.
	Interrupt string
	Msg       string
}

// Error says why the run or resume was refused and what to do instead.
func (e *ResumeError) Error() string { return e.Msg }

// Unwrap returns the Reason, so that errors.Is(err, ErrUnknownInterrupt)
// and its siblings tell refusals apart without reading messages.
func (e *ResumeError) Unwrap() error { return e.Reason }

// The reasons of a ResumeError.
var (
	// ErrNotInterrupted: Resume on a thread that waits on no interrupt (or
	// has no thread or checkpointer to resume).
	ErrNotInterrupted = errors.New("the thread is not interrupted")
	// ErrWaitingOnPerson: input (a plain run) to a thread that waits on
	// open interrupts; answer them with Resume.
	ErrWaitingOnPerson = errors.New("the thread is waiting on interrupts")
	// ErrAmbiguousAnswer: a bare answer while several interrupts are open;
	// answer each by id with AnswersByID.
	ErrAmbiguousAnswer = errors.New("a bare answer is ambiguous: several interrupts are open")
	// ErrUnknownInterrupt: an answer names an id that is not pending.
	ErrUnknownInterrupt = errors.New("no such pending interrupt")
	// ErrMissingAnswer: keyed answers that leave an open interrupt
	// unanswered.
	ErrMissingAnswer = errors.New("an open interrupt has no answer")
	// ErrAnswerConflict: an answer differs from the one the interrupt
	// already holds (its superstep is being retried).
	ErrAnswerConflict = errors.New("the interrupt already holds a different accepted answer")
	// ErrAnswerType: an answer the asking node cannot decode into the Go
	// type it asked for (PendingInterrupt.Expects).
	ErrAnswerType = errors.New("the answer does not decode into the type the interrupt expects")
)

// OptionError is a run refused for its options, e.g. a negative
// WithRecursionLimit or a thread handle without a checkpointer. Nothing ran.
type OptionError struct{ Msg string }

// Error names the option and what is wrong with it.
func (e *OptionError) Error() string { return e.Msg }

// NondeterminismError is strict mode's report that a replayed task did not
// ask for the journal it recorded: a node body must be deterministic modulo
// steps.
type NondeterminismError struct {
	Node   string
	Key    string
	Reason string
}

// Error names the node, the journal key and what the replay did instead.
func (e *NondeterminismError) Error() string {
	return fmt.Sprintf("nondeterminism in node %q at journal key %q: %s", e.Node, e.Key, e.Reason)
}

// UnknownTargetError is a goto, send or router result naming a node the
// graph does not have. It is an error of the node that produced it.
type UnknownTargetError struct {
	Target string
}

// Error names the unknown target.
func (e *UnknownTargetError) Error() string {
	return fmt.Sprintf("goto names unknown node %q", e.Target)
}

// SpecError is a graph that cannot be built: an invalid document, a node
// type missing from the registry, a code-built graph with a bad edge.
type SpecError struct {
	Msg string
	// Err is what caused it, matched through the SpecError (errors.Is,
	// errors.As): the document's diagnostics when the document was at
	// fault, or the errors of its nodes (a Factory's own error, such as
	// a *ConfigError, wrapped with the node it is about, errors.Join'ed).
	Err error
}

// Error says why the graph cannot be built.
func (e *SpecError) Error() string { return e.Msg }

// Unwrap returns what caused the error (Err), or nil.
func (e *SpecError) Unwrap() error { return e.Err }

// CheckpointError is a failure of the checkpointer during a run. The run
// ends with an error and the thread's previous checkpoint stands.
type CheckpointError struct {
	Op  string
	Err error
}

// Error names the checkpointer operation and the backend's error.
func (e *CheckpointError) Error() string { return "checkpointer " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the backend's error.
func (e *CheckpointError) Unwrap() error { return e.Err }

// ErrStopRequested is matched (errors.Is), besides ErrAborted, by the error
// of a run stopped between supersteps by WithStopSignal.
var ErrStopRequested = errors.New("a stop was requested: the run stopped between supersteps, after the last commit")

// ErrAborted is matched (errors.Is) by the error of a run that was
// cancelled: its context was cancelled or timed out, or the consumer of
// Stream stopped iterating. The run ends with StatusAborted and its last
// committed checkpoint stands. The error also matches the cancellation's
// cause, and context.Canceled (or context.DeadlineExceeded for a timeout)
// even when the context was cancelled with a cause of the caller's own.
var ErrAborted = errors.New("run aborted")
