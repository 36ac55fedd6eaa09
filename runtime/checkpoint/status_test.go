package checkpoint

import (
	"testing"
	"time"
)

// TestThreadStatus: every row of the rule ThreadStatus documents, in its
// order, and the cases where an earlier row wins over a later one.
func TestThreadStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	before, after := t0.Add(-time.Second), t0.Add(time.Second)
	ask := []PendingInterrupt{{ID: "review:interrupt#0", Node: "review"}}
	nap := []PendingInterrupt{{ID: "wait:sleep#0", Node: "wait", Timer: true, WakeAt: after}}
	both := append(append([]PendingInterrupt{}, nap...), ask...)
	ended := func(s Status, at time.Time) ThreadOutcome { return ThreadOutcome{Status: s, RunID: "r", Ended: at} }
	cases := []struct {
		name string
		f    ThreadFacts
		want Status
	}{
		// 1. held
		{"held, never ran", ThreadFacts{Held: true}, StatusRunning},
		{"held while asking", ThreadFacts{Held: true, Checkpoint: true, Created: t0, Open: ask, Outcome: ended(StatusInterrupted, t0)}, StatusRunning},
		{"held after a failure", ThreadFacts{Held: true, Checkpoint: true, Next: 1, Created: t0, Outcome: ended(StatusError, after)}, StatusRunning},
		// 2. open interrupts
		{"asks a person", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Open: ask, Outcome: ended(StatusInterrupted, t0)}, StatusInterrupted},
		{"asks, outcome unknown", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Open: ask}, StatusInterrupted},
		{"timers only", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Open: nap, Outcome: ended(StatusParked, t0)}, StatusParked},
		{"a timer and a person", ThreadFacts{Checkpoint: true, Next: 2, Created: t0, Open: both, Outcome: ended(StatusInterrupted, t0)}, StatusInterrupted},
		{"timers only, an earlier run failed", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Open: nap, Outcome: ended(StatusError, before)}, StatusParked},
		{"a timer and a person, a later run failed", ThreadFacts{Checkpoint: true, Next: 2, Created: t0, Open: both, Outcome: ended(StatusError, after)}, StatusInterrupted},
		// 3. the latest run failed or was aborted
		{"failed, no checkpoint", ThreadFacts{Outcome: ended(StatusError, t0)}, StatusError},
		{"failed", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Outcome: ended(StatusError, after)}, StatusError},
		{"failed at the checkpoint's instant", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Outcome: ended(StatusError, t0)}, StatusError},
		{"failed, end time unknown", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Outcome: ThreadOutcome{Status: StatusError}}, StatusError},
		{"aborted with tasks planned", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Outcome: ended(StatusAborted, after)}, StatusAborted},
		{"aborted, nothing planned", ThreadFacts{Checkpoint: true, Created: t0, Outcome: ended(StatusAborted, after)}, StatusAborted},
		{"timers only, their wake failed", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Open: nap, Outcome: ended(StatusError, after)}, StatusError},
		{"timers only, their wake cut short", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Open: nap, Outcome: ended(StatusAborted, after)}, StatusAborted},
		// 4. no checkpoint
		{"never ran", ThreadFacts{}, StatusNew},
		{"metadata only, done elsewhere", ThreadFacts{Outcome: ended(StatusDone, t0)}, StatusNew},
		// 5. tasks planned, no run ended on them
		{"crashed mid-run, first run", ThreadFacts{Checkpoint: true, Next: 1, Created: t0}, StatusParked},
		{"crashed mid-run after a done run", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Outcome: ended(StatusDone, before)}, StatusParked},
		{"crashed mid-run after a failed run", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Outcome: ended(StatusError, before)}, StatusParked},
		{"crashed mid-run after an aborted run", ThreadFacts{Checkpoint: true, Next: 2, Created: t0, Outcome: ended(StatusAborted, before)}, StatusParked},
		{"timers fired, wake not run", ThreadFacts{Checkpoint: true, Next: 1, Created: t0, Outcome: ended(StatusParked, t0)}, StatusParked},
		// 6. done
		{"done", ThreadFacts{Checkpoint: true, Created: t0, Outcome: ended(StatusDone, t0)}, StatusDone},
		{"done, outcome unknown", ThreadFacts{Checkpoint: true, Created: t0}, StatusDone},
		{"answered since by a fork", ThreadFacts{Checkpoint: true, Created: t0, Outcome: ended(StatusInterrupted, before)}, StatusDone},
		{"failed run, then a later checkpoint with nothing planned", ThreadFacts{Checkpoint: true, Created: t0, Outcome: ended(StatusError, before)}, StatusDone},
	}
	for _, c := range cases {
		if got := ThreadStatus(c.f); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestOutcomeFilter: a listing preselects by outcome only the statuses that
// imply it, so no thread of the status is left out.
func TestOutcomeFilter(t *testing.T) {
	for _, c := range []struct{ s, want Status }{
		{StatusError, StatusError}, {StatusAborted, StatusAborted},
		{StatusNew, ""}, {StatusRunning, ""}, {StatusInterrupted, ""}, {StatusParked, ""}, {StatusDone, ""}, {"", ""},
	} {
		if got := OutcomeFilter(c.s); got != c.want {
			t.Errorf("OutcomeFilter(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}
