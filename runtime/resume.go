package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// startResume checks every answer against the thread's open interrupts and,
// only when all are acceptable, journals them and loads the paused superstep
// for replay. A refused resume writes nothing.
func (r *runner[S, U]) startResume(latest *Checkpoint, a *Answers) error {
	thread := r.cfg.thread
	if a.wake {
		return r.startWake(latest)
	}
	if latest == nil || len(latest.Pending) == 0 {
		why := "start a run with Invoke instead"
		switch {
		case latest == nil:
			why = "no run has started it (it has no checkpoints); start one with Invoke"
		case len(latest.Next) == 0:
			why = "its last run finished; start a new run with Invoke"
		}
		return &ResumeError{ThreadID: thread, Reason: ErrNotInterrupted, Msg: fmt.Sprintf("cannot resume thread %q — it is not interrupted: %s", thread, why)}
	}
	pauses, open, err := readPauses(r.ctx, r.cfg.cp, thread, latest.Pending)
	if err != nil {
		return &CheckpointError{Op: "get journal", Err: err}
	}
	// A timer is not a question: the clock ends it (Thread.Wake).
	if pauses, open = answerable(pauses, open); len(pauses) == 0 {
		return &ResumeError{ThreadID: thread, Reason: ErrNotInterrupted, Msg: fmt.Sprintf("cannot resume thread %q — it is parked on a timer, not interrupted; it continues when woken (Thread.Wake)", thread)}
	}
	answers := map[string]json.RawMessage{} // pause id -> answer to journal
	encode := func(id string, v any) (json.RawMessage, error) {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, &ResumeError{ThreadID: thread, Reason: ErrAnswerType, Interrupt: id, Msg: fmt.Sprintf("answer to interrupt %q is not JSON-serializable: %v", id, err)}
		}
		return raw, nil
	}
	// check decides what to do with an answer to pause p: journal it, or,
	// when p already holds an answer, accept only the same one.
	check := func(p pauseJournal, v any) error {
		raw, err := encode(p.p.ID, v)
		if err != nil {
			return err
		}
		if p.answered() {
			if !sameJSON(p.entries[p.at].Value, raw) {
				return &ResumeError{ThreadID: thread, Reason: ErrAnswerConflict, Interrupt: p.p.ID, Msg: fmt.Sprintf("interrupt %q already holds an accepted answer %s and its superstep is being retried; resume with the same answer or start a plain run", p.p.ID, p.entries[p.at].Value)}
			}
			return nil
		}
		if err := CheckAnswer(p.p, raw); err != nil {
			re := err.(*ResumeError)
			re.ThreadID, re.Msg = thread, re.Msg+"; nothing was written, the interrupt stays open"
			return re
		}
		answers[p.p.ID] = raw
		return nil
	}
	if !a.isMap {
		switch {
		case len(open) == 1:
			for _, p := range pauses {
				if p.p.ID == open[0].ID {
					if err := check(p, a.bare); err != nil {
						return err
					}
				}
			}
		case len(open) == 0 && len(pauses) == 1:
			if err := check(pauses[0], a.bare); err != nil {
				return err
			}
		default:
			n := len(open)
			if n == 0 {
				n = len(pauses)
			}
			return &ResumeError{ThreadID: thread, Reason: ErrAmbiguousAnswer, Msg: fmt.Sprintf("%d interrupts are pending, so a bare answer is ambiguous; answer each by id with runtime.AnswersByID: %s", n, idList(latest.Pending))}
		}
	} else {
		known := map[string]bool{}
		for _, p := range pauses {
			known[p.p.ID] = true
		}
		for id := range a.keyed {
			if !known[id] {
				return &ResumeError{ThreadID: thread, Reason: ErrUnknownInterrupt, Interrupt: id, Msg: fmt.Sprintf("no pending interrupt %q on thread %q; the pending ids are %s", id, thread, idList(latest.Pending))}
			}
		}
		for _, p := range pauses {
			v, ok := a.keyed[p.p.ID]
			if !ok {
				if p.answered() {
					continue
				}
				return &ResumeError{ThreadID: thread, Reason: ErrMissingAnswer, Interrupt: p.p.ID, Msg: fmt.Sprintf("no answer supplied for pending interrupt %q (node %q); a resume must answer every open interrupt: %s", p.p.ID, p.p.Node, idList(open))}
			}
			if err := check(p, v); err != nil {
				return err
			}
		}
	}
	// Every answer is acceptable: journal them, one write per task.
	byTask := map[string][]checkpoint.JournalEntry{}
	var order []string
	for _, p := range pauses {
		raw, ok := answers[p.p.ID]
		if !ok {
			continue
		}
		entries, seen := byTask[p.p.TaskID]
		if !seen {
			entries = p.entries
			order = append(order, p.p.TaskID)
		}
		if p.at >= 0 {
			entries[p.at].Value, entries[p.at].Answered = raw, true
		} else {
			entries = append(entries, checkpoint.JournalEntry{Key: p.p.Key, Interrupt: true, Payload: p.p.Payload, Value: raw, Answered: true})
		}
		byTask[p.p.TaskID] = entries
	}
	for _, id := range order {
		if err := r.info.lease.PutJournal(r.ctx, id, byTask[id]); err != nil {
			return &CheckpointError{Op: "put journal", Err: err}
		}
	}
	if r.obs != nil {
		for _, p := range pauses {
			if _, ok := answers[p.p.ID]; ok {
				r.obs.InterruptAnswered(r.ctx, r.rec, p.p)
			}
		}
	}
	r.latest = latest
	return r.load(latest)
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

// CheckAnswer reports whether answer, JSON, fits what the pending
// interrupt p expects (p.Expects, recorded by Interrupt[T]) as a Resume
// would check it, without a run: a *ResumeError with reason ErrAnswerType
// naming the place in the value that does not fit, or nil. An interrupt
// that recorded no Expects (a checkpoint written before they were
// recorded) takes any answer here; its node decodes it. A server or a
// command that queues answers for a worker uses it to refuse a wrong
// answer at once, before anything is queued.
func CheckAnswer(p PendingInterrupt, answer json.RawMessage) error {
	x := p.Expects
	if x == nil {
		return nil
	}
	if err := checkAnswer(x.Schema, answer); err != nil {
		return &ResumeError{Reason: ErrAnswerType, Interrupt: p.ID,
			Msg: fmt.Sprintf("the answer %s to interrupt %q does not decode into %s: %v", answer, p.ID, x.Type, err)}
	}
	return nil
}
