package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// journal is a task's replay memory: the entries recorded by earlier passes
// and this pass, and the keys this pass asked for (for strict mode).
type journal struct {
	entries []checkpoint.JournalEntry
	index   map[string]int // key -> position in entries
	counts  map[string]int // base key -> occurrences this pass
	used    map[string]bool
	loaded  int // entries that existed before this pass
}

func newJournal(entries []checkpoint.JournalEntry) *journal {
	j := &journal{entries: entries, index: make(map[string]int, len(entries)), loaded: len(entries)}
	for i, e := range entries {
		j.index[e.Key] = i
	}
	return j
}

// next returns the full key of the next occurrence of base in this pass.
func (j *journal) next(base string) string {
	if j.counts == nil {
		j.counts = map[string]int{}
	}
	n := j.counts[base]
	j.counts[base] = n + 1
	key := base + "#" + strconv.Itoa(n)
	if j.used == nil {
		j.used = map[string]bool{}
	}
	j.used[key] = true
	return key
}

func (j *journal) lookup(key string) (*checkpoint.JournalEntry, bool) {
	i, ok := j.index[key]
	if !ok {
		return nil, false
	}
	return &j.entries[i], true
}

func (j *journal) add(e checkpoint.JournalEntry) {
	j.index[e.Key] = len(j.entries)
	j.entries = append(j.entries, e)
}

// skipped returns the first journaled step key this pass did not ask for.
func (j *journal) skipped() (string, bool) {
	for _, e := range j.entries[:j.loaded] {
		if !j.used[e.Key] {
			return e.Key, true
		}
	}
	return "", false
}

// errHalt is what Interrupt returns on the pass that pauses the task.
type haltError struct{ id string }

func (e *haltError) Error() string {
	return "task halted on interrupt " + strconv.Quote(e.id) + " (return this error from the node)"
}

// IsInterrupt reports whether err is the signal Interrupt returns when it
// pauses a task. A node that catches errors must return this one unchanged;
// even if it does not, the task still halts.
func IsInterrupt(err error) bool {
	var h *haltError
	return errors.As(err, &h)
}

// ErrNotInTask is returned by Step and Interrupt when they are called outside
// a node's task (from a guard, a router or a Ctx kept past its node): only a
// task has a journal.
var ErrNotInTask = errors.New("Step and Interrupt are only available inside a node's task; guards and routers must not have side effects")

// Step runs fn once for this task and journals its JSON result under key
// (suffixed #0, #1... by occurrence within the pass). On a replay of the task
// (after an interrupt, a retry or a crash) it returns the journaled value
// without calling fn. The result is persisted before Step returns. An error
// from fn is returned and not journaled, so a later pass calls fn again.
// On a run that is already cancelled (by the caller, or because another
// run took the thread's lease over) Step does not call fn: it returns the
// cancellation's cause, and a later run of the thread takes the step up.
// Nor does it call fn when the run held the task's checkpoint for its next
// write (DurableWithNextWrite) and that write failed (ErrPlanLost). Inside
// fn, Ctx.StepID gives the step's id, the same in every attempt: the
// idempotency key for the effect fn makes.
//
// T must survive a JSON round trip: what fn returns and what the journal
// gives back on replay must be equal.
func Step[T any](ctx *Ctx, key string, fn func() (T, error)) (T, error) {
	var zero T
	if ctx == nil || ctx.t == nil {
		return zero, ErrNotInTask
	}
	t := ctx.t
	if t.halted {
		return zero, &haltError{id: t.pending[0].ID}
	}
	j := t.j()
	full := j.next(key)
	if e, ok := j.lookup(full); ok {
		if e.Interrupt {
			return zero, &NondeterminismError{Node: ctx.Node(), Key: full, Reason: "the journal holds an interrupt under this key, the replay asked for a step"}
		}
		var v T
		if err := json.Unmarshal(e.Value, &v); err != nil {
			return zero, fmt.Errorf("step %q: decode journaled value into %T: %w", full, v, err)
		}
		if t.rec != nil {
			observeStep(ctx, full, true, time.Time{}, nil)
		}
		return v, nil
	}
	// A cancelled run starts no new effect: the caller gave up on it, or
	// another run took the thread over and will run this step itself.
	if err := context.Cause(ctx); err != nil {
		return zero, fmt.Errorf("step %q not run: %w", full, err)
	}
	// Nor does a run whose lease passed its deadline: it cannot be sure
	// that it still holds the thread.
	if err := ctx.r.leaseValid(); err != nil {
		return zero, fmt.Errorf("step %q not run: %w", full, err)
	}
	if err := ctx.planLost(); err != nil {
		return zero, fmt.Errorf("step %q not run: %w", full, err)
	}
	if t.rec == nil {
		return runStep(ctx, full, fn)
	}
	t0 := time.Now()
	v, err := runStep(ctx, full, fn)
	observeStep(ctx, full, false, t0, err)
	return v, err
}

// runStep runs fn for the step full and journals its result.
func runStep[T any](ctx *Ctx, full string, fn func() (T, error)) (T, error) {
	var zero T
	j := ctx.t.jr
	outer := ctx.t.stepKey // a Step inside another's function
	ctx.t.stepKey = full
	v, err := fn()
	ctx.t.stepKey = outer
	if err != nil {
		return zero, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return zero, fmt.Errorf("step %q: its result must be JSON-serializable to be journaled: %w", full, err)
	}
	j.add(checkpoint.JournalEntry{Key: full, Value: raw})
	if err := ctx.persistJournal(); err != nil {
		return zero, fmt.Errorf("step %q: persist journal: %w", full, err)
	}
	return v, nil
}

// Interrupt asks a person: on the first pass it journals payload as pending
// and returns an error for which IsInterrupt is true; the node must return
// it, which halts the task and, with it, the superstep. When the thread is
// resumed with an answer, the task replays and Interrupt returns the answer
// decoded into T. The default key is "interrupt", suffixed #0, #1... by
// occurrence, so several pauses in one node resolve one at a time.
// WithTimeout gives the question a deadline, after which the node gets a
// default answer or an *InterruptTimeoutError instead.
func Interrupt[T any](ctx *Ctx, payload any, opts ...InterruptOption) (T, error) {
	var zero T
	if ctx == nil || ctx.t == nil {
		return zero, ErrNotInTask
	}
	t := ctx.t
	if t.halted {
		return zero, &haltError{id: t.pending[0].ID}
	}
	cfg := interruptOptions(opts)
	if err := cfg.checkDefault(expectsOf[T]()); err != nil {
		return zero, err
	}
	if err := cfg.checkActions(expectsOf[T]()); err != nil {
		return zero, err
	}
	j := t.j()
	full := j.next(cfg.key)
	id := t.key + ":" + full
	if e, ok := j.lookup(full); ok {
		if !e.Interrupt {
			return zero, &NondeterminismError{Node: ctx.Node(), Key: full, Reason: "the journal holds a step under this key, the replay asked for an interrupt"}
		}
		if timedOut(e) {
			if err := ctx.timeOut(e, &cfg); err != nil {
				return zero, fmt.Errorf("interrupt %q: journal its timeout: %w", id, err)
			}
		}
		if e.TimedOut && len(e.Value) == 0 {
			return zero, &InterruptTimeoutError{Interrupt: id, Deadline: e.WakeAt}
		}
		if e.Answered {
			var v T
			// The answer is checked as Resume checks it (an answer
			// journaled under an older, looser schema included), so null,
			// a misspelt or missing member never becomes the zero value.
			err := checkAnswer(expectsOf[T]().Schema, e.Value)
			if err == nil {
				err = json.Unmarshal(e.Value, &v)
			}
			if err != nil {
				// An answer the node cannot use must not wedge the thread:
				// take it back, and pause again on the same interrupt.
				refused := &ResumeError{ThreadID: ctx.ThreadID(), Reason: ErrAnswerType, Interrupt: id,
					Msg: fmt.Sprintf("the answer %s to interrupt %q does not decode into %s (%v); the interrupt stays open: resume it with an answer of that type", e.Value, id, expectsOf[T]().Type, err)}
				e.Answered, e.Value = false, nil
				if err := ctx.persistJournal(); err != nil {
					return zero, fmt.Errorf("interrupt %q: take back an answer that does not decode: %w", id, err)
				}
				t.refused = refused
				t.halt(ctx, id, full, e.Payload, expectsOf[T]())
				t.offer(cfg.actions)
				t.wakeAt(e.WakeAt, false)
				return zero, &haltError{id: id}
			}
			return v, nil
		}
		t.halt(ctx, id, full, e.Payload, expectsOf[T]())
		t.offer(cfg.actions)
		t.wakeAt(e.WakeAt, false)
		return zero, &haltError{id: id}
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return zero, fmt.Errorf("interrupt %q: payload must be JSON-serializable: %w", id, err)
	}
	var deadline time.Time
	if cfg.timeout > 0 {
		deadline = time.Now().Add(cfg.timeout).UTC()
	}
	j.add(checkpoint.JournalEntry{Key: full, Interrupt: true, Payload: raw, WakeAt: deadline})
	if err := ctx.persistJournal(); err != nil {
		return zero, fmt.Errorf("interrupt %q: persist journal: %w", id, err)
	}
	t.halt(ctx, id, full, raw, expectsOf[T]())
	t.offer(cfg.actions)
	t.wakeAt(deadline, false)
	return zero, &haltError{id: id}
}

func (t *taskInfo) halt(ctx *Ctx, id, key string, payload json.RawMessage, expects *Expects) {
	t.halted = true
	t.pending = append(t.pending, PendingInterrupt{ID: id, Key: key, Node: ctx.Node(), TaskID: t.taskID(), Payload: payload, Expects: expects})
}

// j returns the task's journal, building it on first use from the entries
// earlier passes recorded.
func (t *taskInfo) j() *journal {
	if t.jr == nil {
		t.jr = newJournal(t.preload)
	}
	return t.jr
}

// persistJournal writes the task's journal through the checkpointer. Without
// one the journal lives only as long as the task (it still serves retries).
// The write ignores the run's cancellation (it is bounded by
// durableWriteTimeout instead): a step whose function returned must be
// journaled even when the caller is cancelling the run, or the next run
// would call the function again. It keeps the run's lease, which fences it.
func (c *Ctx) persistJournal() error {
	return c.persistEntries(c.t.jr.entries)
}

// persistEntries is persistJournal with the entries to write given: a
// copy of the task's journal taken while nothing could change it.
func (c *Ctx) persistEntries(entries []checkpoint.JournalEntry) error {
	if c.r.cp == nil {
		return nil
	}
	ctx, cancel := durableWrite(c.Context)
	defer cancel()
	return c.r.lease.PutJournal(ctx, c.t.taskID(), entries)
}

// durableWriteTimeout bounds a write that must not be abandoned when the
// run is cancelled: a journal entry of a step that ran, the checkpoint of
// a superstep whose tasks all completed.
const durableWriteTimeout = 30 * time.Second

// durableWrite returns a context for such a write: ctx's values (the run's
// lease among them) without its cancellation, and a deadline.
func durableWrite(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), durableWriteTimeout)
}

// newPass starts another pass of the task over the same journal (a retry):
// occurrence counters restart, recorded entries stay.
func (j *journal) newPass() {
	clear(j.counts)
	clear(j.used)
	j.loaded = len(j.entries)
}
