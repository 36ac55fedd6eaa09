package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// InterruptOption configures one Interrupt: its key (WithKey), a deadline
// (WithTimeout) and what the node gets when it passes (WithDefaultAnswer).
// Only this package makes them, so options can be added later (labels,
// actions for a form) without breaking a caller.
type InterruptOption interface {
	applyInterrupt(*interruptConfig)
}

// interruptConfig is what the options of one Interrupt set.
type interruptConfig struct {
	key     string
	timeout time.Duration
	// def is the default answer's JSON, set by WithDefaultAnswer; defErr
	// is why it could not be encoded.
	def    json.RawMessage
	hasDef bool
	defErr error
	// actions are the answers offered (WithActions).
	actions []Action
}

type interruptOptionFunc func(*interruptConfig)

func (f interruptOptionFunc) applyInterrupt(c *interruptConfig) { f(c) }

// WithKey gives an interrupt an explicit key instead of "interrupt" (use a
// stable key derived from the data inside loops, e.g. "approve:"+item.ID).
// The interrupt's id is "<task key>:<key>#<n>"; a pause in which two tasks
// spell the same id (possible when node ids hold ':' too) cannot be
// answered by id, so the run fails with a NodeError that names it.
func WithKey(key string) InterruptOption {
	return interruptOptionFunc(func(c *interruptConfig) { c.key = key })
}

// WithTimeout gives an interrupt a deadline d after it is first asked
// (journaled then, so a resume or a crash never moves it; the pending
// interrupt's WakeAt). When nobody has answered by then, the thread is
// woken (a waker such as runtime/waker, or Thread.Wake) and Interrupt
// returns the default answer (WithDefaultAnswer) or, without one, an
// *InterruptTimeoutError matching ErrInterruptTimeout; the outcome is
// journaled, so the node takes that path once. An answer that arrives
// before the wake wins. d <= 0 sets no deadline.
func WithTimeout(d time.Duration) InterruptOption {
	return interruptOptionFunc(func(c *interruptConfig) { c.timeout = d })
}

// WithDefaultAnswer is the answer an interrupt with a deadline
// (WithTimeout) takes when nobody answers in time. It must encode to JSON
// that the interrupt's answer type accepts, or Interrupt fails.
func WithDefaultAnswer(v any) InterruptOption {
	return interruptOptionFunc(func(c *interruptConfig) {
		c.hasDef = true
		c.def, c.defErr = json.Marshal(v)
	})
}

// ErrInterruptTimeout is matched (errors.Is) by the error Interrupt
// returns when its deadline passed without an answer and it has no
// default answer.
var ErrInterruptTimeout = errors.New("the interrupt's deadline passed without an answer")

// InterruptTimeoutError is what Interrupt returns to the node when its
// deadline (WithTimeout) passed without an answer and no default answer
// was given. The node decides what follows (escalate, fail the task).
type InterruptTimeoutError struct {
	// Interrupt is the interrupt's id; Deadline is when it timed out.
	Interrupt string
	Deadline  time.Time
}

// Error names the interrupt and its deadline.
func (e *InterruptTimeoutError) Error() string {
	return fmt.Sprintf("interrupt %q was not answered by its deadline %s; give it a default answer (runtime.WithDefaultAnswer) or handle this error in the node", e.Interrupt, e.Deadline.UTC().Format(time.RFC3339))
}

// Is makes the error match ErrInterruptTimeout.
func (e *InterruptTimeoutError) Is(target error) bool { return target == ErrInterruptTimeout }

// interruptOptions applies opts over the defaults.
func interruptOptions(opts []InterruptOption) interruptConfig {
	c := interruptConfig{key: "interrupt"}
	for _, o := range opts {
		if o != nil {
			o.applyInterrupt(&c)
		}
	}
	return c
}
