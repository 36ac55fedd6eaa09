package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// ErrNotInStep is returned by Ctx.StepID outside the function of a Step:
// only a step has an id that its later attempts share.
var ErrNotInStep = errors.New("StepID is only available inside the function a Step runs; call it there (runtime.Step(ctx, key, func() (T, error) { id, err := ctx.StepID(); ... }))")

// StepID returns the id of the step whose function is running: the same
// on every attempt of that step, in this run and in every later run of
// the thread that takes it up (a retry of the node, a resume, a run after
// a crash), and different for every other step of the thread (another
// key, another occurrence of the key in the task, another task). Pass it
// as the idempotency key of the effect the step makes (a payment API's
// Idempotency-Key, an A2A message id): an effect that was made but whose
// result was not journaled, because the process died or the connection
// dropped before the journal was written, is then sent again under the
// same key, and a service that keeps its keys answers it once.
//
// The id is a UUID (RFC 9562, version 8) made from a SHA-256 of the
// thread's id, the ids of the tasks from the thread's run down to the step
// (Ctx.TaskID; in a subgraph, its parent's task first) and the step's
// journal key with its occurrence ("charge#0"), so it names nothing of the
// thread to the service it is sent to. A run without a checkpointer has no later run:
// its ids are the same across the node's retries only.
//
// A task's id derives from the checkpoint it was planned at. Under
// DurableWithNextWrite that checkpoint may still be held for the run's
// next write; StepID writes it first, so that the id outlives a crash.
// An error is that write's: the step should return it (the step is then
// not journaled, and a later attempt runs it again, under the same id).
//
// Some services keep the answer to a failed request under its key and
// give it to every retry: a step that must try afresh after a failure it
// knows to be final sends a key of its own making, the id and a suffix it
// changes after such a failure.
func (c *Ctx) StepID() (string, error) {
	if c == nil || c.t == nil || c.t.stepKey == "" {
		return "", ErrNotInStep
	}
	// A child run's tasks are named within the parent task that runs it:
	// the id takes the path of tasks from the thread's run to the step.
	path := []string{c.t.stepKey, c.t.taskID()}
	root := c
	for s := root.child(); s != nil; s = root.child() {
		root = s.parent
		path = append(path, root.t.taskID())
	}
	path = append(path, root.r.threadID)
	if h, ok := root.r.lease.(*holdingLease); ok {
		ctx, cancel := durableWrite(c.Context)
		err := h.flush(ctx)
		cancel()
		if err != nil {
			return "", fmt.Errorf("step %q: write the checkpoint its task was planned at, so that its id outlives a crash: %w", c.t.stepKey, err)
		}
	}
	return stepUUID(path), nil
}

// stepUUID is the version 8 UUID of a step: the first 16 bytes of the
// SHA-256 of its path (the step's key, its task's id, the ids of the
// tasks that run it as a child, its thread's id), read from the thread
// down, each part ended by a zero byte, with the version and variant bits
// set.
func stepUUID(path []string) string {
	h := sha256.New()
	for i := len(path) - 1; i >= 0; i-- {
		h.Write([]byte(path[i]))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	u := h.Sum(sum[:0])[:16]
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // variant 10
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:16])
	return string(b[:])
}

// child returns the store of c's run when it is a child run (the parent
// task's journal, which names the parent's Ctx), nil otherwise.
func (c *Ctx) child() *subStore {
	s, _ := c.r.cp.(*subStore)
	return s
}

// planLost returns an error when the run (or the run of which it is a
// child) held a checkpoint for its next write and that write failed: the
// tasks planned at it are planned again by the thread's next run, so a
// step of theirs that has not started must not start its effect now.
func (c *Ctx) planLost() error {
	root := c
	for s := root.child(); s != nil; s = root.child() {
		root = s.parent
	}
	if h, ok := root.r.lease.(*holdingLease); ok && h.dropped.Load() {
		return ErrPlanLost
	}
	return nil
}

// ErrPlanLost is the error of a Step that did not start its function
// because the run held its task's checkpoint for its next write
// (DurableWithNextWrite) and that write failed: the thread's next run
// plans the task again and runs the step then. The run ends with the
// write's error, or with this one when a node went on past that error.
var ErrPlanLost = errors.New("the checkpoint this task was planned at was held for the run's next write, and that write failed; the thread's next run plans the task again and runs the step")
