// Package waker wakes parked threads in one process: the threads whose run
// stopped on a timer (runtime.Sleep, runtime.Until past
// runtime.WithParkAfter) or that wait on an interrupt with a deadline
// (runtime.WithTimeout), once the time has come. It is for deployments on
// the memory store or runtime/sqlite:
//
//	w, err := waker.New(store, []waker.Target{waker.Graph(g)})
//	go w.Run(ctx) // until ctx is done
//
// Every poll (WithPollInterval) the waker lists the store's parked and
// interrupted threads, and wakes each whose earliest WakeAt has passed
// with runtime's Thread.Wake, which replays the paused superstep under the
// thread's lease: the timers that are due return, the deadlines that
// passed take their timeout path, and the rest pause again. Thread.Wake
// refuses a thread with nothing due, under the lease, so a thread is
// continued once however many wakes race; a thread deleted or answered
// before its time is not woken (it is no longer listed as waiting on it).
// A listed thread that has nothing due when its wake runs (another waker
// woke it, or it was answered, cancelled or deleted since) is an INFO
// record "waker: timer dropped"; the timers set and fired are the runs'
// own records and Observer calls (runtime.Observer.InterruptAnswered).
//
// WithStoredSchedules has the waker fire the schedules kept in the store
// (checkpoint.Schedule, created through the store's CreateSchedule or the
// server's /schedules routes, paused, resumed and deleted while it runs):
// a cron expression with its time zone or an interval, the graph by name,
// the input, a thread template, an overlap policy (runtime.DoubleTexting:
// reject skips a tick while the previous firing runs in this process, or,
// for a template without {tick}, while any run holds that one thread) and
// a catch-up policy for ticks missed while no waker ran. Each due tick is
// recorded with the store's compare-and-set RecordFirings before its run
// starts, so of several wakers one fires it, and a waker that starts
// after a kill or a stop starts the recorded firings whose threads never
// ran and continues those cut short (a paused schedule's too). A firing
// whose run lost its thread's lease (its process stalled past the lease's
// time to live) is continued as well, by the waker that ran it.
// Firings and skips are slog records and are told to WithOnFiring.
//
// WithSchedules does the same for schedules given as Go values (Schedule),
// kept in no table: each tick runs on a thread of its own, so a tick fires
// once across wakers and restarts; the ticks fired, and the firings a
// kill or a stop cut short, are found again from the threads' metadata.
//
// Stopping a waker (cancelling Run's context) is as safe for its runs
// as killing it: the firings and wakes it was running end aborted with
// the cause ErrStopped, and a waker on the store continues them from
// their last commit, their journaled steps not run again: a firing, the
// next waker that starts (as after a kill); a wake, any waker at its next
// poll, which lists the aborted threads too and continues those whose
// outcome holds ErrStopped's text (a thread a person cancelled is left
// aborted). A run that lost its thread's lease (checkpoint.ErrLeaseLost:
// its process stalled, or could not reach the store, past the lease's
// time to live, and found out when it came back) stops before its next
// effect and ends failed with that error; such a thread is continued
// likewise at the next poll, which lists the failed threads updated since
// the last one too, since ErrLeaseLost promises that a later run takes
// the work up. The runtime ends every such run with its error of a lost
// lease ("checkpointer lease: ...", however the loss reached the run),
// which is what the waker reads; a run whose node failed with an error
// naming another thread's lost lease stays failed.
//
// The waker holds no state of its own: a process killed during a wait,
// or during a wake, is restarted with a new waker and finds the threads
// where the store left them. A wake that the kill cut short runs again
// once the thread's lease expires, and its completed steps are not
// repeated (the journal).
//
// Limits: one process. Each poll reads every parked and interrupted
// thread of the store, and the aborted and failed ones updated since its last poll
// (every one at a waker's first poll and every ten minutes), and the
// wake runs in the waker's process.
// Several processes each running a waker on one SQLite file stay correct (the
// lease and the due check fence them) but each does the listing. Threads
// of PostgreSQL deployments are woken by the queue's workers
// (runtime/postgres/workers).
package waker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Store is what a waker reads and runs threads on: a checkpointer that
// lists threads (checkpoint.NewMemory, runtime/sqlite).
type Store interface {
	runtime.Checkpointer
	checkpoint.ThreadLister
}

// Target is a graph whose threads a waker wakes. Make one with Graph.
type Target interface {
	fingerprint() string
	wake(ctx context.Context, cp runtime.Checkpointer, thread string) (runtime.Status, error)
	start(ctx context.Context, cp runtime.Checkpointer, thread string, input json.RawMessage, meta map[string]string, stop <-chan struct{}, expect *string) (runtime.Status, error)
}

// Graph makes g's threads wakeable; opts are added to every wake's run
// options (WithLogger, WithObserver, WithParkAfter, ...); the thread and
// the checkpointer are the waker's.
func Graph[S, U any](g *runtime.Graph[S, U], opts ...runtime.RunOption) Target {
	return graphTarget[S, U]{g, opts}
}

type graphTarget[S, U any] struct {
	g    *runtime.Graph[S, U]
	opts []runtime.RunOption
}

func (t graphTarget[S, U]) fingerprint() string { return t.g.Fingerprint() }

func (t graphTarget[S, U]) wake(ctx context.Context, cp runtime.Checkpointer, thread string) (runtime.Status, error) {
	res, err := t.g.Thread(cp, thread).Wake(ctx, t.opts...)
	return res.Status, err
}

// DefaultPollInterval is how often a waker looks for due threads unless
// WithPollInterval says otherwise; it also wakes at the earliest wake
// time it saw when that comes sooner.
const DefaultPollInterval = time.Second

// Option configures New.
type Option func(*Waker)

// WithPollInterval sets how often the waker lists the store's waiting
// threads (default DefaultPollInterval): the longest a thread woken by
// another process's run, or parked after the last listing, waits past
// its time.
func WithPollInterval(d time.Duration) Option { return func(w *Waker) { w.poll = d } }

// WithLogger sets the logger of the waker's records (default
// slog.Default()): each wake, and each thread it cannot wake.
func WithLogger(l *slog.Logger) Option { return func(w *Waker) { w.log = l } }

// Waker wakes the due threads of one store (see the package doc).
type Waker struct {
	store   Store
	targets []Target
	poll    time.Duration
	log     *slog.Logger

	schedules []Schedule
	states    []*scheduleState

	named    map[string]Target         // WithStoredSchedules
	sstore   checkpoint.ScheduleStore  // the store's schedules, with named
	stored   map[string]*scheduleState // the stored schedules this waker fires, by name
	grace    time.Duration
	onFiring func(context.Context, checkpoint.Firing)

	mu     sync.Mutex
	active map[string]bool // threads being woken by this waker
	fired  int             // schedule firings that ran
	wg     sync.WaitGroup
	// abortedSince bounds the listing of aborted and failed threads
	// after this waker's first full one (under mu): a thread a waker's
	// stop, or a lost lease, cut short records its outcome, and so its
	// update, when its run ends, so a later poll lists only the threads
	// updated since the last listing began, less abortedMargin.
	abortedSince time.Time
	abortedFull  time.Time     // when the last full listing of aborted threads began
	abortedEvery time.Duration // how often it is full (abortedFullEvery)
	abortedBack  time.Duration // abortedMargin
}

// abortedMargin is how far before the last listing of aborted threads
// the next one starts: the clocks of the processes that share a store,
// and an outcome written while the listing ran.
const abortedMargin = time.Minute

// abortedFullEvery is how often the listing of aborted threads is full
// again: a thread can read aborted again without an update, when the
// lease of a continuation killed before its first commit lapses.
const abortedFullEvery = 10 * time.Minute

// ErrStopped is the cause with which Run cancels the runs it started
// when its context is done: their error matches it, and their thread's
// outcome (checkpoint.ThreadOutcome.Error) holds its text, by which a
// later waker tells a firing or a wake the waker's stop cut short, and
// continues it, from a run a person or the cancel-and-replace policy
// stopped, which it leaves.
var ErrStopped = errors.New("waker: the waker stopped (its Run's context is done)")

// ErrNoTarget is matched (errors.Is) by New's error when neither a
// target nor a schedule is given.
var ErrNoTarget = errors.New("waker: no graph to wake threads of; pass at least one waker.Graph")

// New returns a waker of store's threads, run on the graph of targets
// (and of the schedules, WithSchedules) whose fingerprint is the one the
// thread's latest checkpoint records, or on the only one. It fails with
// an error matching ErrSchedule for a schedule that cannot run.
func New(store Store, targets []Target, opts ...Option) (*Waker, error) {
	w := &Waker{store: store, targets: targets, poll: DefaultPollInterval, log: slog.Default(), active: map[string]bool{}, abortedEvery: abortedFullEvery, abortedBack: abortedMargin}
	for _, o := range opts {
		o(w)
	}
	if w.poll <= 0 {
		return nil, fmt.Errorf("waker: poll interval %v must be positive (WithPollInterval)", w.poll)
	}
	if w.grace <= 0 {
		w.grace = DefaultScheduleGrace
	}
	if err := w.prepare(); err != nil {
		return nil, err
	}
	if err := w.prepareStored(); err != nil {
		return nil, err
	}
	for _, s := range w.schedules {
		w.targets = append(w.targets[:len(w.targets):len(w.targets)], s.Graph)
	}
	if len(w.targets) == 0 {
		return nil, ErrNoTarget
	}
	return w, nil
}

// Run wakes due threads and fires due schedules until ctx is done, then
// waits for the runs it started, which it cancels with the cause
// ErrStopped (they end aborted, their last commit standing), and returns
// ctx's error. A schedule's firing so stopped is continued by the next
// waker on the store, as one a kill cut short, and a wake by any waker's
// next poll; a firing still waiting behind another (enqueue) is not
// started. A failing listing is logged and tried again at the next poll.
func (w *Waker) Run(ctx context.Context) error {
	defer w.wg.Wait()
	// The runs' context: cancelled with ErrStopped once ctx is done, so
	// their outcome says the waker stopped them (stoppedByWaker).
	rctx, stopRuns := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopRuns(ErrStopped)
	defer context.AfterFunc(ctx, func() { stopRuns(ErrStopped) })()
	var wg sync.WaitGroup // Run waits through w.wg
	var n atomic.Int32
	for {
		next, err := w.wakeDue(rctx, &wg, &n)
		for _, fire := range []func(context.Context, *sync.WaitGroup) (time.Time, error){w.fireDue, w.fireStored} {
			if t, ferr := fire(rctx, &wg); ferr != nil {
				err = errors.Join(err, ferr)
			} else if !t.IsZero() && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
		if err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "waker: list waiting threads", "err", err)
		}
		d := w.poll
		if !next.IsZero() {
			d = min(d, max(time.Until(next), time.Millisecond))
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// WakeDue wakes every thread that is due now, continues those whose run
// a waker's stop cut short (ErrStopped), and waits for those runs;
// it returns how many of them ran (not those another waker, or another
// call, took first). For tests and for a program that
// drives its own loop.
func (w *Waker) WakeDue(ctx context.Context) (int, error) {
	var wg sync.WaitGroup
	var n atomic.Int32
	_, err := w.wakeDue(ctx, &wg, &n)
	wg.Wait()
	return int(n.Load()), err
}

// Fired is how many schedule firings this waker has started that ran
// (a tick another waker fired first is not counted).
func (w *Waker) Fired() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// wakeDue starts a wake of each due thread not being woken already, and
// a continuation of each thread a waker's stop cut short (continueOne),
// and returns the earliest wake time of the threads not due yet; wg counts
// the wakes it started, and n those that ran.
func (w *Waker) wakeDue(ctx context.Context, wg *sync.WaitGroup, n *atomic.Int32) (time.Time, error) {
	var next time.Time
	now := time.Now()
	w.mu.Lock()
	if now.Sub(w.abortedFull) >= w.abortedEvery {
		w.abortedSince, w.abortedFull = time.Time{}, now
	}
	since := w.abortedSince
	w.mu.Unlock()
	stopped := false // the listing found a thread a waker's stop or a lost lease cut short
	for _, status := range []runtime.Status{runtime.StatusParked, runtime.StatusInterrupted, runtime.StatusAborted, runtime.StatusError} {
		q := runtime.ThreadQuery{Status: status, Limit: checkpoint.MaxThreadLimit}
		ended := status == runtime.StatusAborted || status == runtime.StatusError
		if ended {
			// Every aborted and failed thread once, then those that
			// ended since: a store's cancelled and failed runs pile up,
			// and only a waker's stop (stoppedByWaker) and a lost lease
			// (leaseLapsed) are continued.
			q.UpdatedAfter = since
		}
		for {
			page, err := w.store.ListThreads(ctx, q)
			if err != nil {
				return next, err
			}
			for _, th := range page.Threads {
				if ended {
					if endedCutShort(th.Outcome) {
						stopped = true
						w.start(ctx, th.ID, wg, n, func(ctx context.Context) bool { return w.continueOne(ctx, th) })
					}
					continue
				}
				at := checkpoint.EarliestWake(th.Pending)
				switch {
				case at.IsZero():
				case at.After(now):
					if next.IsZero() || at.Before(next) {
						next = at
					}
				default:
					w.start(ctx, th.ID, wg, n, func(ctx context.Context) bool { return w.wakeOne(ctx, th.ID) })
				}
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	if !stopped {
		// The window moves on only when it held no thread to continue:
		// one whose continuation was refused (its lease still held by a
		// killed process, say) is listed again at the next poll.
		w.mu.Lock()
		w.abortedSince = now.Add(-w.abortedBack)
		w.mu.Unlock()
	}
	return next, nil
}

// start runs run (a wake or a continuation of thread) in a goroutine of
// its own unless this waker is running one on thread already.
func (w *Waker) start(ctx context.Context, thread string, wg *sync.WaitGroup, n *atomic.Int32, run func(context.Context) bool) {
	w.mu.Lock()
	if w.active[thread] {
		w.mu.Unlock()
		return
	}
	w.active[thread] = true
	w.mu.Unlock()
	w.wg.Add(1)
	wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer wg.Done()
		defer func() {
			w.mu.Lock()
			delete(w.active, thread)
			w.mu.Unlock()
		}()
		if run(ctx) {
			n.Add(1)
		}
	}()
}

// continueOne continues th, whose last run a waker's stop cut short
// (stoppedByWaker) or which lost its lease (leaseLapsed), logs how it
// went, and reports whether a run started.
// When the stop came in the superstep a wake replays, the thread's latest
// checkpoint still holds the pauses that were due: it is woken again
// (Thread.Wake, which refuses a thread with nothing due under its lease).
// Otherwise the run continues from that checkpoint, expecting it
// (runtime.WithExpectedLatest), so that of several wakers one continues
// it, once the thread's outcome, read under its lease, still says a
// waker's stop or a lost lease ended its last run (stillAsRead: another waker's
// continuation may have ended it since without a checkpoint); a thread
// whose latest checkpoint plans nothing ran to its end. A
// schedule's firing (MetaSchedule) is left to the schedule's own
// recovery, which keeps its overlap policy.
func (w *Waker) continueOne(ctx context.Context, th checkpoint.ThreadInfo) bool {
	cp, err := w.store.Get(ctx, th.ID, "")
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return false // deleted since the listing
	case err != nil:
		w.log.WarnContext(ctx, "waker: cannot continue a thread cut short; read its latest checkpoint", "thread", th.ID, "err", err)
		return false
	case len(cp.Pending) > 0:
		return w.wakeOne(ctx, th.ID)
	case len(cp.Next) == 0, th.Meta[MetaSchedule] != "":
		return false
	}
	t, err := w.targetOf(cp)
	if err != nil {
		w.log.WarnContext(ctx, "waker: cannot continue a thread cut short", "thread", th.ID, "err", err)
		return false
	}
	latest := cp.ID
	// The listing read the thread aborted by a waker's stop, or failed on
	// its lost lease; another waker may have continued it since, and its
	// run ended (failed, or cancelled) in the superstep after the
	// checkpoint just read.
	// The thread is listed while its record is as listed, or updated
	// since (a record written by a process whose clock is behind may be
	// missed: the thread reads moved, and the next poll lists it again).
	q := runtime.ThreadQuery{UpdatedAfter: th.Updated.Add(-time.Second)}
	err = w.stillAsRead(ctx, th.ID, q, latest, func(th *checkpoint.ThreadInfo) bool {
		return th == nil || !endedCutShort(th.Outcome)
	})
	status := runtime.Status("")
	if err == nil {
		status, err = t.start(ctx, w.store, th.ID, nil, nil, nil, &latest)
	}
	switch {
	case errors.Is(err, runtime.ErrThreadMoved), errors.Is(err, runtime.ErrThreadBusy):
		// Continued, or being continued, by another waker.
		w.log.DebugContext(ctx, "waker: thread not continued", "thread", th.ID, "err", err)
		return false
	case status == "":
		w.log.WarnContext(ctx, "waker: continuation refused", "thread", th.ID, "err", err)
		return false
	}
	w.log.InfoContext(ctx, "waker: thread cut short continued", "thread", th.ID, "status", string(status), "err", err)
	return true
}

// wakeOne wakes thread on its graph, logs how it went, and reports
// whether the wake ran.
func (w *Waker) wakeOne(ctx context.Context, thread string) bool {
	t, err := w.target(ctx, thread)
	if err != nil {
		w.log.WarnContext(ctx, "waker: cannot wake thread", "thread", thread, "err", err)
		return false
	}
	status, err := t.wake(ctx, w.store, thread)
	switch {
	case errors.Is(err, runtime.ErrNotDue):
		// Woken by another waker, answered, cancelled or deleted since
		// the listing: the timer is dropped, nothing ran.
		w.log.InfoContext(ctx, "waker: timer dropped, the thread has nothing due", "thread", thread, "err", err)
		return false
	case errors.Is(err, runtime.ErrThreadBusy):
		// Held by a run: the next listing says what is left.
		w.log.DebugContext(ctx, "waker: thread not woken", "thread", thread, "err", err)
		return false
	case status == "":
		w.log.WarnContext(ctx, "waker: wake refused", "thread", thread, "err", err)
		return false
	}
	w.log.InfoContext(ctx, "waker: thread woken", "thread", thread, "status", string(status), "err", err)
	return true
}

// target picks the graph of thread: the one its latest checkpoint's
// fingerprint names, or the only one.
func (w *Waker) target(ctx context.Context, thread string) (Target, error) {
	if len(w.targets) == 1 {
		return w.targets[0], nil
	}
	cp, err := w.store.Get(ctx, thread, "")
	if err != nil {
		return nil, fmt.Errorf("read the latest checkpoint: %w", err)
	}
	return w.targetOf(cp)
}

// targetOf picks the graph of the thread whose latest checkpoint is cp.
func (w *Waker) targetOf(cp *runtime.Checkpoint) (Target, error) {
	if len(w.targets) == 1 {
		return w.targets[0], nil
	}
	for _, t := range w.targets {
		if t.fingerprint() == cp.Fingerprint {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no target graph has the fingerprint %q of its latest checkpoint; add that graph version to the waker's targets", cp.Fingerprint)
}
