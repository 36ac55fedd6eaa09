package waker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// DefaultScheduleGrace is how late a schedule's tick may be fired
// and still count as on time, unless WithScheduleGrace says otherwise:
// an older tick was missed (no waker ran) and follows the schedule's
// catch-up policy.
const DefaultScheduleGrace = 10 * time.Second

// WithStoredSchedules has the waker fire the schedules kept in its store
// (a checkpoint.ScheduleStore: checkpoint.NewMemory, runtime/sqlite),
// created, paused, resumed and deleted through the store's methods or the
// server's API while the waker runs; graphs maps a schedule's Graph name
// to the graph its firings run on. Each poll the waker lists the
// schedules, records each due tick's firing (checkpoint.Firing) with the
// store's compare-and-set RecordFirings, so that of several wakers on one
// store one records a tick, and then starts its run. A tick whose thread
// template holds {tick} runs only on a thread without checkpoints, and a
// waker started anew runs the recent recorded firings whose threads have
// none, and continues those a kill or a stop (Run's context done,
// ErrStopped) cut short: a process killed or stopped between the record
// and the run's end loses no tick. It does so for a paused schedule too:
// a pause stops the ticks to come, not those recorded fired. A run that
// lost its thread's lease (checkpoint.ErrLeaseLost: its process stalled,
// or could not reach the store, past the lease's time to live) stops
// before its next effect and is cut short as well: the waker that ran it
// continues it from its latest checkpoint, and a waker started anew
// continues it as one a kill cut short. A firing a person cancelled, or
// the cancel-and-replace policy stopped, is not continued.
// Wakers that start together and find the same orphaned firing run it
// once: each start expects the thread's latest checkpoint as it read it,
// and a thread whose latest checkpoint plans no task ran to its end and is
// not started again. A firing whose thread the killed process still leases
// is tried again each poll, and starts once that lease lapses.
// A tick of a template without {tick} (one thread for every firing) that
// such a kill or stop cut short is not run again, and while that thread
// waits on interrupts its ticks are recorded skipped
// (checkpoint.SkippedWaiting).
//
// That one thread may also be held by a run this waker did not start:
// another waker's firing of an earlier tick, a person's run through the
// server. Before it records a due tick, a waker with no firing of its own
// running there probes the thread's lease (takes it and gives it back at
// once). Found held, under the reject policy the tick is recorded skipped
// (checkpoint.SkippedOverlap) and does not run; under enqueue it is
// recorded fired and runs once the holder gives the thread back (the
// waker tries it every poll interval), as it would behind this waker's
// own run, and so do the later ticks of a catch-up; cancel-and-replace,
// which cannot stop another process's run, waits as enqueue does, and a
// tick still waiting when this waker fires the next one gives way to it
// (recorded fired, it never starts). The probe and the start are not one
// step: a run that takes the thread between them makes the tick wait for
// it under every policy, reject too, so that a tick recorded fired runs
// (unless the waker stops first). The probe holds the lease for a write
// or two, during which another process's start on the thread is refused
// (runtime.ErrThreadBusy). A template with {tick} runs each tick on a
// thread of its own, which the start expects empty: a start refused
// there is the tick run by another waker, and is left to it.
func WithStoredSchedules(graphs map[string]Target) Option {
	return func(w *Waker) { w.named = graphs }
}

// WithScheduleGrace sets how late a schedule's tick (stored, or a Go
// value's: WithSchedules) still fires as on time (default
// DefaultScheduleGrace); a later one was missed while no waker ran and
// follows the schedule's catch-up policy.
func WithScheduleGrace(d time.Duration) Option { return func(w *Waker) { w.grace = d } }

// WithOnFiring sets a function told of each stored schedule's tick the
// waker recorded, fired or skipped (the otel module's ScheduleFirings
// records them as spans and metrics).
func WithOnFiring(f func(context.Context, checkpoint.Firing)) Option {
	return func(w *Waker) { w.onFiring = f }
}

// ErrNoScheduleStore is matched by New's error when WithStoredSchedules
// is given a store that keeps no schedules.
var ErrNoScheduleStore = errors.New("waker: the store keeps no schedules (checkpoint.ScheduleStore); use checkpoint.NewMemory or runtime/sqlite")

// prepareStored checks the stored schedules' store and adds their graphs
// to the targets.
func (w *Waker) prepareStored() error {
	if w.named == nil {
		return nil
	}
	ss, ok := w.store.(checkpoint.ScheduleStore)
	if !ok {
		return fmt.Errorf("%w (got %T)", ErrNoScheduleStore, w.store)
	}
	w.sstore = ss
	w.stored = map[string]*scheduleState{}
	for _, name := range slices.Sorted(maps.Keys(w.named)) {
		w.targets = append(w.targets[:len(w.targets):len(w.targets)], w.named[name])
	}
	return nil
}

// fireStored fires the store's due schedules and returns the earliest
// tick to come.
func (w *Waker) fireStored(ctx context.Context, wg *sync.WaitGroup) (time.Time, error) {
	var next time.Time
	if w.sstore == nil {
		return next, nil
	}
	list, err := w.sstore.ListSchedules(ctx)
	if err != nil {
		return next, err
	}
	now := time.Now()
	seen := map[string]bool{}
	var errs []error
	for _, sc := range list {
		seen[sc.Name] = true
		target := w.named[sc.Graph]
		if target == nil {
			if !sc.Paused {
				w.log.WarnContext(ctx, "waker: schedule not fired: no graph of its name", "schedule", sc.Name, "graph", sc.Graph)
			}
			continue
		}
		st := w.stored[sc.Name]
		if st == nil || !st.created.Equal(sc.Created) {
			st = &scheduleState{Schedule: Schedule{Name: sc.Name, Graph: target, Input: sc.Input}, created: sc.Created, meta: sc.Meta, thread: sc.Thread}
			w.stored[sc.Name] = st
			// A paused schedule's recorded firings are recovered too: the
			// pause stops the ticks to come, not those recorded fired.
			w.recover(ctx, sc, st, wg)
		}
		if sc.Paused {
			continue
		}
		st.Overlap, st.meta, st.thread = sc.Overlap, sc.Meta, sc.Thread
		t, err := w.fireOne(ctx, sc, st, now, wg)
		if err != nil {
			errs = append(errs, err)
		}
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for name := range w.stored {
		if !seen[name] {
			delete(w.stored, name)
		}
	}
	return next, errors.Join(errs...)
}

// fireOne records and starts the due ticks of one stored schedule, and
// returns its next tick. A schedule with one thread for every firing
// reads its due ticks as overlapping when this waker's previous firing
// still runs there or, probed through its lease (leasedElsewhere), a run
// this waker did not start holds it; and as skipped when the thread
// waits on interrupts.
func (w *Waker) fireOne(ctx context.Context, sc checkpoint.Schedule, st *scheduleState, now time.Time, wg *sync.WaitGroup) (time.Time, error) {
	fire, last, err := sc.Due(now, w.grace)
	if err != nil {
		return time.Time{}, err
	}
	tk, _ := sc.Ticks() // Due parsed it
	if !last.After(sc.Last) {
		return tk.Next(last), nil
	}
	firings := make([]checkpoint.Firing, len(fire))
	busy := st.busy()
	elsewhere := false // a run this waker did not start holds the one thread
	var open []runtime.PendingInterrupt
	if !busy && !sc.ThreadPerTick() && len(fire) > 0 {
		thread := sc.ThreadOf(fire[0])
		// The one thread of every firing may be held by a run this waker
		// did not start (another waker's firing, a person's run through
		// the server), or wait on a person: a start on it would be
		// refused, so the ticks did not run.
		elsewhere = w.leasedElsewhere(ctx, thread)
		busy = elsewhere
		if !busy {
			open = w.openInterrupts(ctx, thread)
		}
	}
	for i, t := range fire {
		firings[i] = checkpoint.Firing{Schedule: sc.Name, Tick: t, Thread: sc.ThreadOf(t)}
		switch {
		case len(open) > 0:
			firings[i].Skipped = checkpoint.SkippedWaiting
		case i == 0 && busy && st.Overlap == runtime.DoubleTextReject:
			firings[i].Skipped = checkpoint.SkippedOverlap
		}
	}
	err = w.sstore.RecordFirings(ctx, sc.Name, sc.Last, last, firings)
	switch {
	case errors.Is(err, checkpoint.ErrScheduleMoved), errors.Is(err, checkpoint.ErrNoSchedule):
		// Another waker recorded these ticks, or the schedule is gone.
		w.log.DebugContext(ctx, "waker: schedule fired elsewhere", "schedule", sc.Name, "err", err)
		return tk.Next(last), nil
	case err != nil:
		return time.Time{}, fmt.Errorf("waker: record the firings of schedule %q: %w", sc.Name, err)
	}
	for i, f := range firings {
		switch f.Skipped {
		case checkpoint.SkippedOverlap:
			if elsewhere {
				w.log.InfoContext(ctx, "waker: tick skipped, another run holds the schedule's thread", "schedule", sc.Name, "tick", f.Tick, "thread", f.Thread)
			} else {
				w.log.InfoContext(ctx, "waker: tick skipped, the previous firing still runs", "schedule", sc.Name, "tick", f.Tick)
			}
		case checkpoint.SkippedWaiting:
			w.log.WarnContext(ctx, "waker: tick skipped, the schedule's thread waits on interrupts; answer them (runtime.Thread.Resume) and the next tick runs",
				"schedule", sc.Name, "tick", f.Tick, "thread", f.Thread, "interrupt", open[0].ID, "open", len(open))
		default:
			policy := st.Overlap
			if i > 0 {
				policy = runtime.DoubleTextEnqueue
			}
			var expect *string
			if sc.ThreadPerTick() {
				expect = new(string)
			}
			w.launch(ctx, st, f.Tick.UTC().Format(tickFormat), f.Thread, expect, policy, false, wg)
		}
		if w.onFiring != nil {
			w.onFiring(ctx, f)
		}
	}
	return tk.Next(last), nil
}

// leasedElsewhere reports whether a run holds thread's lease: it takes
// the lease and gives it back at once, as the server does to tell a live
// run of another process from one that ended (Server.leaseFree). Wakers
// on one store reach a tick at one instant and may each find the other's
// probe: a lease found held is tried again, probeTries times in all a few
// milliseconds apart, and reads as held only when every try found it so.
// A failed try other than runtime.ErrThreadBusy reads as free: the run's
// start then says what is wrong. The answer may be stale by the time the
// run starts; launch waits for a holder that took the thread in between.
func (w *Waker) leasedElsewhere(ctx context.Context, thread string) bool {
	for try := 1; ; try++ {
		l, err := w.store.Lease(ctx, thread, checkpoint.LeaseOptions{})
		switch {
		case err == nil:
			l.Release()
			return false
		case !errors.Is(err, runtime.ErrThreadBusy):
			return false
		case try == probeTries:
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-time.After(probeGap + rand.N(probeGap)):
		}
	}
}

// probeTries and probeGap bound leasedElsewhere's tries of a lease found
// held: a probe holds it for a write or two, a run for its run.
const (
	probeTries = 3
	probeGap   = 10 * time.Millisecond
)

// openInterrupts returns the interrupts the latest checkpoint of thread
// waits on: none for a thread without checkpoints, or when the store
// cannot be read now (the run's start then says what is wrong).
func (w *Waker) openInterrupts(ctx context.Context, thread string) []runtime.PendingInterrupt {
	cp, err := w.store.Get(ctx, thread, "")
	if err != nil {
		return nil
	}
	open, err := runtime.OpenInterrupts(ctx, w.store, cp)
	if err != nil {
		return nil
	}
	return open
}

// stoppedByWaker reports whether a thread's last run ended aborted by a
// waker's stop (ErrStopped): a firing to continue, unlike one aborted by
// a person or by the cancel-and-replace policy.
func stoppedByWaker(o checkpoint.ThreadOutcome) bool {
	return o.Status == runtime.StatusAborted && strings.Contains(o.Error, ErrStopped.Error())
}

// cutShort reports whether a firing's thread whose last run's outcome is
// o is still to be continued: no run of it ended (a kill cut it short, or
// it runs elsewhere), its run ended aborted by a waker's stop
// (stoppedByWaker), or its run lost the thread's lease (leaseLapsed).
func cutShort(o checkpoint.ThreadOutcome) bool {
	return o.Status == "" || endedCutShort(o)
}

// endedCutShort reports whether a thread's last run ended, yet is to be
// continued: aborted by a waker's stop (stoppedByWaker), or failed on its
// lost lease (leaseLapsed).
func endedCutShort(o checkpoint.ThreadOutcome) bool {
	return stoppedByWaker(o) || leaseLapsed(o)
}

// leaseLapsed reports whether a thread's last run ended failed because
// it lost the thread's lease (checkpoint.ErrLeaseLost): its process
// stalled, or could not reach the store, past the lease's time to live.
// Such a run stops before its next effect and writes nothing more but its
// outcome (and only while no other run took the thread over): as
// checkpoint.ErrLeaseLost says, a later run takes its work up. The
// outcome keeps the error's text: the runtime's checkpointer error of a
// lost lease ("checkpointer lease: " and the checkpoint.LeaseLostError),
// which a run that lost its own thread's lease ends with, and which no
// node's error is (a node's starts with "node "; one that names another
// thread's lost lease leaves its thread failed); a thread deleted under
// its run is not continued.
func leaseLapsed(o checkpoint.ThreadOutcome) bool {
	return o.Status == runtime.StatusError && strings.HasPrefix(o.Error, "checkpointer ") && strings.Contains(o.Error, leaseLostText) &&
		!strings.Contains(o.Error, "("+string(checkpoint.LeaseThreadDeleted)+", ")
}

// leaseLostText ends the text of every checkpoint.LeaseLostError.
var leaseLostText = func() string {
	s := (&checkpoint.LeaseLostError{}).Error()
	return s[strings.LastIndex(s, ": ")+2:]
}()

// recover starts, once per schedule a waker first sees (paused too), the
// recent firings of a thread-per-tick schedule that a killed or stopped
// process left behind: recorded but never started (the thread has no
// checkpoint), or started and cut short (no run of the thread ended, or
// its run ended aborted by a waker's stop or failed on its lost lease:
// cutShort, and its latest checkpoint still plans tasks), which
// continues from the thread's latest checkpoint. A thread
// whose latest checkpoint plans nothing ran to its end, here or in
// another waker, and is left alone. Each start expects the
// thread's latest checkpoint as it read it, so a firing another waker ran
// meanwhile is refused (runtime.ErrThreadMoved) and not run again; one
// whose thread is leased (by a waker running it, or by the killed process
// until its lease lapses) is tried again each poll until it starts or
// moves on.
func (w *Waker) recover(ctx context.Context, sc checkpoint.Schedule, st *scheduleState, wg *sync.WaitGroup) {
	if !sc.ThreadPerTick() {
		return
	}
	fs, err := w.sstore.ListFirings(ctx, sc.Name, sc.MaxCatchUp)
	if err != nil {
		w.log.WarnContext(ctx, "waker: list the firings of schedule", "schedule", sc.Name, "err", err)
		return
	}
	ended := map[string]bool{}
	q := checkpoint.ThreadQuery{Meta: map[string]string{checkpoint.MetaSchedule: sc.Name}, Limit: checkpoint.MaxThreadLimit}
	for {
		page, err := w.store.ListThreads(ctx, q)
		if err != nil {
			w.log.WarnContext(ctx, "waker: list the threads of schedule", "schedule", sc.Name, "err", err)
			return
		}
		for _, th := range page.Threads {
			ended[th.ID] = !cutShort(th.Outcome)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	for _, f := range slices.Backward(fs) {
		if f.Skipped != "" || ended[f.Thread] {
			continue
		}
		w.continueFiring(ctx, st, f.Tick, f.Thread, wg)
	}
}
