package waker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Schedule starts a run of a graph at each tick of a cron expression or
// an interval. Each tick runs on a thread of its own, named
// Name + "@" + the tick in UTC (20060102T150405Z), so a tick fires once
// however many wakers or restarts see it: the run starts only on a thread
// that has no checkpoint yet (runtime.WithExpectedLatest("")), under its lease.
// The thread's metadata records the schedule (MetaSchedule) and the tick
// (MetaTick). A waker that starts continues the recent firings that a
// kill or a waker's stop (ErrStopped) cut short, or whose run lost its
// thread's lease (checkpoint.ErrLeaseLost; the waker that ran such a run
// continues it at once), found by that metadata;
// a tick still waiting behind another (enqueue) when the waker stopped
// has no thread, and the next waker's catch-up policy says whether it
// fires.
type Schedule struct {
	// Name names the schedule and prefixes its threads' ids.
	Name string
	// Cron is a cron expression of five fields (minute, hour, day of
	// month, month, day of week) or a descriptor (@daily, @every 1h30m),
	// parsed by github.com/robfig/cron/v3; "" when Every is set. An
	// expression without a tick in the next five years (a date that does
	// not exist: 30 February) is refused.
	Cron string
	// TimeZone is the IANA zone the cron expression is read in (e.g.
	// "Europe/Istanbul"); "" is UTC. Across a daylight saving change the
	// expression follows the wall clock (checkpoint.Schedule.TimeZone): a
	// time the clocks skip has no tick that day, a time they repeat ticks
	// twice. It applies to Cron only: New refuses it with Every.
	TimeZone string
	// Every is a fixed interval of at least a second, in whole
	// microseconds, between ticks, counted from the Unix epoch (ticks
	// fall on multiples of it); 0 when Cron is set.
	Every time.Duration
	// Graph runs the firings: waker.Graph(g).
	Graph Target
	// Input is the JSON of each firing's input (decoded into the graph's
	// update type); nil is its zero value.
	Input json.RawMessage
	// Overlap is what a tick does while this waker's run of an earlier
	// tick has not ended: runtime.DoubleTextReject (the default) skips the
	// tick; runtime.DoubleTextEnqueue starts it when the earlier one ends;
	// runtime.DoubleTextCancelReplace stops the earlier one at its next
	// superstep boundary and starts it.
	Overlap runtime.DoubleTexting
	// CatchUp is what the ticks missed while no waker ran become: those
	// before a waker's first pass (the process was down), and those more
	// than the waker's schedule grace late (WithScheduleGrace: the
	// process was frozen, or the clock jumped). CatchUpNone (the default)
	// fires none of them, CatchUpOne fires the latest, CatchUpAll fires
	// each, oldest first, at most MaxCatchUp of them (the latest; 0 is
	// DefaultMaxCatchUp, a negative value is refused, as stored schedules
	// refuse it).
	CatchUp    CatchUp
	MaxCatchUp int
}

// CatchUp is a schedule's policy for ticks missed while no waker ran.
type CatchUp string

// The catch-up policies.
const (
	CatchUpNone CatchUp = "none"
	CatchUpOne  CatchUp = "one"
	CatchUpAll  CatchUp = "all"
)

// DefaultMaxCatchUp bounds CatchUpAll when Schedule.MaxCatchUp is 0.
const DefaultMaxCatchUp = 100

// The metadata keys of a firing's thread.
const (
	MetaSchedule = checkpoint.MetaSchedule
	MetaTick     = checkpoint.MetaTick
)

// tickFormat spells a tick in a firing's thread id and metadata.
const tickFormat = "20060102T150405Z"

func (t graphTarget[S, U]) start(ctx context.Context, cp runtime.Checkpointer, thread string, input json.RawMessage, meta map[string]string, stop <-chan struct{}, expect *string) (runtime.Status, error) {
	var in U
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return "", fmt.Errorf("decode the schedule's input into %T: %w", in, err)
		}
	}
	opts := append(t.opts[:len(t.opts):len(t.opts)], runtime.WithThreadMeta(meta), runtime.WithStopSignal(stop))
	if expect != nil {
		opts = append(opts, runtime.WithExpectedLatest(*expect))
		if *expect != "" {
			// Continue a firing's run cut short: from its latest checkpoint,
			// without the input folded in already.
			var zero U
			in = zero
		}
	}
	res, err := t.g.Thread(cp, thread).Invoke(ctx, in, opts...)
	return res.Status, err
}

// ErrSchedule is matched (errors.Is) by the error of WithSchedules for a
// schedule that cannot run.
var ErrSchedule = errors.New("waker: invalid schedule")

// WithSchedules has the waker fire the schedules (see Schedule).
func WithSchedules(s ...Schedule) Option {
	return func(w *Waker) { w.schedules = append(w.schedules, s...) }
}

// scheduleState is a schedule as a waker runs it.
type scheduleState struct {
	Schedule
	// spec is the schedule as checkpoint.Schedule.Due reads it, and ticks
	// its ticks.
	spec  checkpoint.Schedule
	ticks checkpoint.Ticker
	last  time.Time // the latest tick fired (or skipped); zero before the first pass
	// caught is set after the first pass, which applies the catch-up
	// policy to the ticks missed while no waker ran.
	caught bool
	// running is the run of the latest firing this waker started: closed
	// when it ends; stop stops it at its boundary.
	running chan struct{}
	stop    chan struct{}
	// created tells a stored schedule from a later one of the same name;
	// meta is its firings' thread metadata (checkpoint.Schedule.Meta).
	created time.Time
	meta    map[string]string
	thread  string // the thread template
}

// prepare parses the waker's schedules.
func (w *Waker) prepare() error {
	seen := map[string]bool{}
	for _, s := range w.schedules {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w %q: %s", ErrSchedule, s.Name, fmt.Sprintf(format, a...))
		}
		if err := runtime.CheckThreadID(s.Name + "@" + tickFormat); err != nil || s.Name == "" || seen[s.Name] {
			return bad("a name must be unique, non-empty and fit a thread id (no '/', '?', '#', '%%')")
		}
		seen[s.Name] = true
		if s.Graph == nil {
			return bad("no graph: set Graph to waker.Graph(g)")
		}
		st := &scheduleState{Schedule: s}
		switch {
		case (s.Cron == "") == (s.Every == 0):
			return bad("set exactly one of Cron and Every")
		case s.Every < 0 || (s.Every > 0 && s.Every < time.Second):
			return bad("Every %v is under a second", s.Every)
		case s.Every%time.Microsecond != 0:
			return bad("Every %v is not a whole number of microseconds; round it (%v)", s.Every, s.Every.Round(time.Microsecond))
		case s.Every > 0 && s.TimeZone != "":
			return bad("a time zone applies to Cron, not to Every (whose ticks fall on its multiples since the Unix epoch); leave TimeZone empty, or use a cron expression")
		case s.Every == 0:
			spec := s.Cron
			if s.TimeZone != "" {
				if _, err := time.LoadLocation(s.TimeZone); err != nil {
					return bad("time zone: %v", err)
				}
				spec = "CRON_TZ=" + s.TimeZone + " " + spec
			}
			sched, err := cron.ParseStandard(spec)
			if err != nil {
				return bad("cron expression %q: %v", s.Cron, err)
			}
			if sched.Next(time.Now()).IsZero() {
				return bad("cron expression %q has no tick in the next five years (a date that does not exist, such as 30 February?); fix its day of month or month", s.Cron)
			}
		}
		switch st.Overlap {
		case "":
			st.Overlap = runtime.DoubleTextReject
		case runtime.DoubleTextReject, runtime.DoubleTextEnqueue, runtime.DoubleTextCancelReplace:
		default:
			return bad("overlap %q is not reject, enqueue or cancel-and-replace", s.Overlap)
		}
		switch st.CatchUp {
		case "":
			st.CatchUp = CatchUpNone
		case CatchUpNone, CatchUpOne, CatchUpAll:
		default:
			return bad("catch-up %q is not none, one or all", s.CatchUp)
		}
		if st.MaxCatchUp < 0 {
			return bad("MaxCatchUp %d is negative; leave it 0 for DefaultMaxCatchUp (%d)", s.MaxCatchUp, DefaultMaxCatchUp)
		}
		if st.MaxCatchUp == 0 {
			st.MaxCatchUp = DefaultMaxCatchUp
		}
		st.spec = checkpoint.Schedule{Name: s.Name, Graph: "-", Cron: s.Cron, TimeZone: s.TimeZone, Every: s.Every,
			CatchUp: string(st.CatchUp), MaxCatchUp: min(st.MaxCatchUp, checkpoint.MaxMaxCatchUp)}
		tk, err := st.spec.Ticks()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSchedule, err)
		}
		st.ticks = tk
		w.states = append(w.states, st)
	}
	return nil
}

// firingThread is a thread of a Go-value schedule's firing, by its tick.
type firingThread struct {
	tick time.Time
	id   string
	// unfinished: no run of the thread ended (a kill cut it short, or it
	// runs in another waker), or its run ended aborted by a waker's stop
	// or failed on its lost lease (cutShort).
	unfinished bool
}

// lastFired finds the latest tick of s whose thread the store holds, where
// a restarted waker takes the schedule up (zero when it has none), and
// the unfinished firings among the latest MaxCatchUp ticks' threads,
// oldest first.
func (w *Waker) lastFired(ctx context.Context, s *scheduleState) (time.Time, []firingThread, error) {
	var all []firingThread
	q := runtime.ThreadQuery{Meta: map[string]string{MetaSchedule: s.Name}, Limit: 1000}
	for {
		page, err := w.store.ListThreads(ctx, q)
		if err != nil {
			return time.Time{}, nil, err
		}
		for _, th := range page.Threads {
			if t, err := time.Parse(tickFormat, th.Meta[MetaTick]); err == nil {
				all = append(all, firingThread{t, th.ID, cutShort(th.Outcome)})
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if len(all) == 0 {
		return time.Time{}, nil, nil
	}
	slices.SortFunc(all, func(a, b firingThread) int { return a.tick.Compare(b.tick) })
	all = all[max(len(all)-s.MaxCatchUp, 0):]
	last := all[len(all)-1].tick
	return last, slices.DeleteFunc(all, func(f firingThread) bool { return !f.unfinished }), nil
}

// resume starts again, one after the other, the firings of s that a kill
// or a waker's stop cut short, or whose run lost its lease (lastFired):
// from the thread's latest
// checkpoint, or from the start for a thread without one. A thread whose
// latest checkpoint plans nothing ran to its end and is left alone. As
// for stored schedules (recover), each start expects the latest
// checkpoint as read, and a leased thread is tried again each poll.
func (w *Waker) resume(ctx context.Context, s *scheduleState, firings []firingThread, wg *sync.WaitGroup) {
	for _, f := range firings {
		w.continueFiring(ctx, s, f.tick, f.id, wg)
	}
}

// continueFiring starts again the firing of s at tick on thread that a
// kill or a waker's stop cut short, or whose run lost its lease
// (cutShort): from the thread's latest checkpoint,
// expecting it, or from the start when the thread has none. A thread
// whose latest checkpoint plans nothing is left: every superstep is
// committed (the run ended, or is ending in another waker, and only its
// outcome may be missing), and continuing would start the graph again.
func (w *Waker) continueFiring(ctx context.Context, s *scheduleState, tick time.Time, thread string, wg *sync.WaitGroup) {
	latest := ""
	cp, err := w.store.Get(ctx, thread, "")
	switch {
	case err == nil && len(cp.Next) == 0:
		return
	case err == nil:
		latest = cp.ID
		w.log.InfoContext(ctx, "waker: firing cut short, continuing it", "schedule", s.Name, "tick", tick)
	case errors.Is(err, checkpoint.ErrNotFound):
		w.log.InfoContext(ctx, "waker: firing recorded but not started, starting it", "schedule", s.Name, "tick", tick)
	default:
		w.log.WarnContext(ctx, "waker: read a firing's thread", "schedule", s.Name, "thread", thread, "err", err)
		return
	}
	w.launch(ctx, s, tick.UTC().Format(tickFormat), thread, &latest, runtime.DoubleTextEnqueue, true, wg)
}

// fireDue fires each schedule's due ticks and returns the earliest tick
// to come.
func (w *Waker) fireDue(ctx context.Context, wg *sync.WaitGroup) (time.Time, error) {
	var next time.Time
	now := time.Now()
	for _, s := range w.states {
		if s.last.IsZero() {
			last, cut, err := w.lastFired(ctx, s)
			if err != nil {
				return next, err
			}
			w.resume(ctx, s, cut, wg)
			if last.IsZero() {
				// A schedule seen for the first time starts now: no tick
				// before it was missed.
				last = now.Add(-time.Nanosecond)
			}
			s.last = last
		}
		// A tick more than the grace late was missed while no waker ran
		// (the process was frozen, the clock jumped): it follows the
		// catch-up policy, as every tick due at the first pass does.
		grace := w.grace
		if !s.caught {
			grace = -1
		}
		spec := s.spec
		spec.Last = s.last
		due, last, err := spec.Due(now, grace)
		if err != nil {
			return next, err
		}
		if last.After(s.last) {
			s.last = last
			// Ticks that fire together (a catch-up, a slow pass) run one
			// after the other; the overlap policy is for the first.
			for i, t := range due {
				w.fire(ctx, s, t, i > 0, wg)
			}
		}
		s.caught = true
		if t := s.ticks.Next(s.last); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next, nil
}

// fire starts the run of tick t of s, following its overlap policy, or
// behind the earlier firing when queue is set.
func (w *Waker) fire(ctx context.Context, s *scheduleState, t time.Time, queue bool, wg *sync.WaitGroup) {
	policy := s.Overlap
	if queue {
		policy = runtime.DoubleTextEnqueue
	}
	if s.busy() && policy == runtime.DoubleTextReject {
		w.log.InfoContext(ctx, "waker: tick skipped, the previous firing still runs", "schedule", s.Name, "tick", t)
		return
	}
	tick := t.UTC().Format(tickFormat)
	fresh := ""
	w.launch(ctx, s, tick, s.Name+"@"+tick, &fresh, policy, false, wg)
}

// busy reports whether the run of s's latest firing by this waker has
// not ended.
func (s *scheduleState) busy() bool {
	if s.running == nil {
		return false
	}
	select {
	case <-s.running:
		return false
	default:
		return true
	}
}

// launch starts the run of a firing of s at tick on thread, after the
// run of the previous firing (stopped first under cancel-and-replace).
// With expect set, the run starts only while the thread's latest
// checkpoint is *expect ("" for a thread of its own without checkpoints),
// so a tick runs once however many wakers launch it, and a start refused
// because another run holds the thread (runtime.ErrThreadBusy) is that
// tick run elsewhere. Without expect (a stored schedule whose one thread
// runs every firing) such a refusal is a run this waker did not start
// holding that thread (another waker's firing of an earlier tick, a
// person's run through the server): the tick, recorded fired, waits for
// it and is tried again every poll interval until it starts, the waker
// stops, or a later firing of s replaces it (cancel-and-replace).
//
// A run of a firing with expect set that fails on its lost lease
// (checkpoint.ErrLeaseLost: its process stalled past the lease's time to
// live) is continued from the thread's latest checkpoint, as retryBusy
// below: nothing else continues it.
//
// With retryBusy (a firing recover found cut short or not started), a
// thread whose lease is held is tried again every poll interval: the
// holder may be the process that was killed, whose lease only lapses
// after its time to live. The tries end when the run starts, or when the
// thread moved on (another waker ran the firing: ErrThreadMoved). Each
// try first checks, under the thread's lease, that the firing is still
// cut short (stillCutShort): the holder may be a live waker's run, which
// can end the firing (failed, or cancelled by a person) without a new
// checkpoint, so the expected latest alone would let it run again.
func (w *Waker) launch(ctx context.Context, s *scheduleState, tick, thread string, expect *string, policy runtime.DoubleTexting, retryBusy bool, wg *sync.WaitGroup) {
	prev, prevStop := s.running, s.stop
	if !s.busy() {
		prev = nil
	}
	if prev != nil && policy == runtime.DoubleTextCancelReplace {
		close(prevStop)
	}
	done, stop := make(chan struct{}), make(chan struct{})
	s.running, s.stop = done, stop
	// Read now: a later pass updates s's stored fields.
	t, _ := time.Parse(tickFormat, tick)
	meta := checkpoint.Schedule{Name: s.Name, Meta: s.meta, Thread: s.thread}.ThreadMeta(t)
	input := s.Input
	w.wg.Add(1)
	wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer wg.Done()
		defer close(done)
		if prev != nil {
			<-prev // enqueue, and cancel-and-replace waits for the boundary
		}
		if ctx.Err() != nil {
			// The waker stopped while the firing waited: it has not
			// started, and leaves no thread (a stored firing is started
			// by the next waker; a Go-value schedule's tick has not fired).
			w.log.InfoContext(ctx, "waker: tick not started, the waker stopped", "schedule", s.Name, "thread", thread)
			return
		}
		try := func() (runtime.Status, error) {
			if retryBusy {
				if err := w.stillCutShort(ctx, thread, meta, *expect); err != nil {
					return "", err
				}
			}
			return s.Graph.start(ctx, w.store, thread, input, meta, stop, expect)
		}
		status, err := try()
		// waitFree tries again, every poll interval, while another run
		// holds the thread; false when the waker stopped or a later
		// firing replaced this one first.
		waitFree := func() bool {
			for errors.Is(err, runtime.ErrThreadBusy) {
				select {
				case <-ctx.Done():
					w.log.InfoContext(ctx, "waker: tick not started, the waker stopped", "schedule", s.Name, "thread", thread)
					return false
				case <-stop:
					w.log.InfoContext(ctx, "waker: tick not started, a later firing replaced it", "schedule", s.Name, "thread", thread)
					return false
				case <-time.After(retryAfter(w.poll)):
				}
				status, err = try()
			}
			return true
		}
		// The one thread of a stored schedule's every firing (expect nil)
		// held by a run this waker did not start: this tick is recorded
		// fired, and runs once that run gives the thread back.
		wait := retryBusy || expect == nil
		if wait && !retryBusy && errors.Is(err, runtime.ErrThreadBusy) {
			w.log.InfoContext(ctx, "waker: tick waits, another run holds the schedule's thread", "schedule", s.Name, "thread", thread)
		}
		if wait && !waitFree() {
			return
		}
		// A run on a thread of the firing's own that lost the thread's
		// lease (its process stalled past the lease's time to live)
		// stopped before its next effect, and no other run takes its work
		// up: the firing is continued from the thread's latest checkpoint
		// as one a kill cut short (continueFiring), expecting it, once
		// the lease is free. A run that took the thread over meanwhile
		// holds it, or moved it on (ErrThreadMoved).
		for expect != nil && errors.Is(err, checkpoint.ErrLeaseLost) && !errors.Is(err, checkpoint.ErrThreadDeleted) && ctx.Err() == nil {
			latest := ""
			cp, gerr := w.store.Get(ctx, thread, "")
			switch {
			case gerr == nil && len(cp.Next) == 0:
				w.log.InfoContext(ctx, "waker: firing lost its thread's lease after its last checkpoint", "schedule", s.Name, "thread", thread, "err", err)
				return
			case gerr == nil:
				latest = cp.ID
			case !errors.Is(gerr, checkpoint.ErrNotFound):
				w.log.WarnContext(ctx, "waker: firing lost its thread's lease; read its thread", "schedule", s.Name, "thread", thread, "err", gerr)
				return
			}
			w.log.InfoContext(ctx, "waker: firing lost its thread's lease, continuing it", "schedule", s.Name, "thread", thread, "err", err)
			expect, retryBusy = &latest, true
			status, err = try()
			if !waitFree() {
				return
			}
		}
		switch {
		case errors.Is(err, runtime.ErrThreadMoved), errors.Is(err, runtime.ErrThreadBusy):
			w.log.DebugContext(ctx, "waker: tick fired elsewhere", "schedule", s.Name, "thread", thread)
			return
		case status == "":
			w.log.WarnContext(ctx, "waker: tick not fired", "schedule", s.Name, "thread", thread, "err", err)
			return
		}
		w.mu.Lock()
		w.fired++
		w.mu.Unlock()
		w.log.InfoContext(ctx, "waker: schedule fired", "schedule", s.Name, "thread", thread, "status", string(status), "err", err)
	}()
}

// retryAfter is how long a recovery waits before it tries a busy thread
// again: about poll, spread so that two wakers that recover one firing
// do not keep taking the thread's lease for their checks (stillCutShort)
// at the instants the other's run tries to take it.
func retryAfter(poll time.Duration) time.Duration {
	return poll/2 + rand.N(poll)
}

// stillCutShort takes thread's lease and, while holding it, checks that
// the firing whose thread metadata is meta is still to be continued from
// the checkpoint expect ("" for none): no run of it ended since the
// recovery read it (or its run ended aborted by a waker's stop, or failed
// on its lost lease: cutShort), and its latest checkpoint is expect
// (stillAsRead).
func (w *Waker) stillCutShort(ctx context.Context, thread string, meta map[string]string, expect string) error {
	q := runtime.ThreadQuery{Meta: map[string]string{MetaSchedule: meta[MetaSchedule], MetaTick: meta[MetaTick]}}
	return w.stillAsRead(ctx, thread, q, expect, func(th *checkpoint.ThreadInfo) bool {
		return th != nil && !cutShort(th.Outcome)
	})
}

// stillAsRead takes thread's lease and, while holding it, checks that the
// thread is as the decision to continue it read it: ended, told the
// thread as the listing q finds it (nil when q does not list it), says no
// run of it ended since, and its latest checkpoint is expect ("" for
// none). A run of another waker or process may have ended the thread in
// between without a checkpoint of its own (it failed, or a person
// cancelled it, in the superstep after its last checkpoint), which the
// expected latest alone does not see. It fails with an error matching
// runtime.ErrThreadBusy while another run holds the thread, and with one
// matching runtime.ErrThreadMoved when the thread ended or moved on. The
// lease is given back before the run takes its own: no run held the
// thread then, and a run that takes it in between starts with a
// checkpoint of its own, which the run's expected latest
// (runtime.WithExpectedLatest) refuses.
func (w *Waker) stillAsRead(ctx context.Context, thread string, q runtime.ThreadQuery, expect string, ended func(*checkpoint.ThreadInfo) bool) error {
	l, err := w.store.Lease(ctx, thread, checkpoint.LeaseOptions{})
	if err != nil {
		return err
	}
	defer l.Release()
	var found *checkpoint.ThreadInfo
	// The thread's record alone, found by its key, if q's conditions hold.
	q.ID, q.Limit = thread, 1
	page, err := w.store.ListThreads(ctx, q)
	if err != nil {
		return fmt.Errorf("waker: read the outcome of thread %q: %w", thread, err)
	}
	for i := range page.Threads {
		if page.Threads[i].ID == thread {
			found = &page.Threads[i]
		}
	}
	if ended(found) {
		status := "or moved"
		if found != nil {
			status = string(found.Outcome.Status)
		}
		return fmt.Errorf("waker: thread %q ended %s since it was read as cut short; it is not run again: %w", thread, status, runtime.ErrThreadMoved)
	}
	got := ""
	cp, err := w.store.Get(ctx, thread, "")
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
	case err != nil:
		return fmt.Errorf("waker: read the latest checkpoint of thread %q: %w", thread, err)
	default:
		got = cp.ID
	}
	if got != expect {
		return fmt.Errorf("waker: thread %q: latest checkpoint %q, read as %q: %w", thread, got, expect, runtime.ErrThreadMoved)
	}
	return nil
}
