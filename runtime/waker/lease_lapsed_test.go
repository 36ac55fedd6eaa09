package waker_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// lapsingStore is a memory store whose first run lease (one a run takes,
// with a Lost notice) is reported lost once its first checkpoint is
// written, as a process that stalls past its lease's time to live finds
// its lease (checkpoint.LeaseDeadlinePassed): the run stops before its
// next effect and ends with StatusError, its outcome saying the lease was
// lost.
type lapsingStore struct {
	*checkpoint.Memory
	mu     sync.Mutex
	lapsed string // the thread whose run lost its lease
}

func (s *lapsingStore) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := s.Memory.Lease(ctx, thread, opts)
	if err != nil || opts.Lost == nil {
		return l, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lapsed != "" {
		return l, nil
	}
	s.lapsed = thread
	return &lapsingLease{Lease: l, lost: opts.Lost}, nil
}

// lapsedThread is the thread whose run lost its lease, "" before one did.
func (s *lapsingStore) lapsedThread() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lapsed
}

type lapsingLease struct {
	checkpoint.Lease
	lost func(error)
	once sync.Once
}

func (l *lapsingLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	err := l.Lease.Commit(ctx, c)
	if err == nil && c.Checkpoint != nil {
		l.once.Do(func() {
			l.lost(&checkpoint.LeaseLostError{Thread: c.Checkpoint.ThreadID, Fence: l.Fence(), Reason: checkpoint.LeaseDeadlinePassed, Found: "deadline"})
		})
	}
	return err
}

// threadOutcome is the outcome of thread's last run on store.
func threadOutcome(t *testing.T, store checkpoint.ThreadLister, thread string) checkpoint.ThreadOutcome {
	t.Helper()
	page, err := store.ListThreads(context.Background(), checkpoint.ThreadQuery{Limit: checkpoint.MaxThreadLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range page.Threads {
		if th.ID == thread {
			return th.Outcome
		}
	}
	return checkpoint.ThreadOutcome{}
}

// TestFiringWhoseLeaseLapsedContinues: the run of a tick's firing loses
// its thread's lease (its process stalled past the lease's time to live)
// after its first checkpoint and before its node ran; it ends with
// StatusError and nothing more of it is written. The waker that ran it
// continues the firing from its latest checkpoint, as one a kill cut
// short: the node runs once and the thread ends done. Before, the
// firing's run ended there: a tick recorded fired whose node never ran
// (TestStoredScheduleAcrossSIGKILL saw it, its children's 1 s leases
// lapsing on a loaded machine).
func TestFiringWhoseLeaseLapsedContinues(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 1 s schedule's tick; run without -short")
	}
	store := &lapsingStore{Memory: checkpoint.NewMemory()}
	ctx := context.Background()
	if _, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "count", Every: time.Second}); err != nil {
		t.Fatal(err)
	}
	g, runs := counter(t)
	stop := runCounting(t, store, waker.Graph(g))
	thread := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if thread = store.lapsedThread(); thread != "" && threadOutcome(t, store, thread).Status == runtime.StatusDone {
			break
		}
	}
	stop()
	if thread == "" {
		t.Fatal("no firing ran in 5 s")
	}
	if o := threadOutcome(t, store, thread); o.Status != runtime.StatusDone || runs(thread) != 1 {
		t.Fatalf("the firing whose run lost its lease: thread %s ended %q (%s), its node ran %d times; want done, once", thread, o.Status, o.Error, runs(thread))
	}
}

// TestRecoveryContinuesAFiringWhoseLeaseLapsed: a waker started anew
// finds a recorded firing whose run lost its lease before its node ran
// (its thread's outcome says so: StatusError, the lease lost), left so by
// a process stalled past the lease's time to live and killed; it
// continues the firing. Before, it read that outcome as the run's end
// and left the tick unrun.
func TestRecoveryContinuesAFiringWhoseLeaseLapsed(t *testing.T) {
	mem := checkpoint.NewMemory()
	store := &lapsingStore{Memory: mem}
	ctx := context.Background()
	sc, tick, thread := recordedFiring(t, store, time.Hour)
	g, runs := counter(t)
	fresh := ""
	_, err := g.Thread(store, thread).Invoke(ctx, runtime.Values{"n": 7}, runtime.WithThreadMeta(sc.ThreadMeta(tick)), runtime.WithExpectedLatest(fresh))
	if o := threadOutcome(t, mem, thread); err == nil || o.Status != runtime.StatusError || runs(thread) != 0 {
		t.Fatalf("the firing's first run: err %v, outcome %q, node ran %d times; want it stopped by its lease lost before its node ran", err, o.Status, runs(thread))
	}
	stop := runCounting(t, mem, waker.Graph(g))
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && threadOutcome(t, mem, thread).Status != runtime.StatusDone; {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if o := threadOutcome(t, mem, thread); o.Status != runtime.StatusDone || runs(thread) != 1 {
		t.Fatalf("the recovered firing: thread ended %q (%s), its node ran %d times; want done, once", o.Status, o.Error, runs(thread))
	}
}

// TestRecoveryOfAPausedSchedule: a waker that starts while a schedule is
// paused still starts the firing a killed process recorded and never
// started: the pause stops the ticks to come, not those recorded fired.
// It records no tick while paused. Before, the waker skipped a paused
// schedule before its recovery, and the firing waited for the schedule
// to be resumed (TestStoredScheduleAcrossSIGKILL pauses its schedule
// 1.5 s after its last restart, which a loaded machine can take to start
// a process).
func TestRecoveryOfAPausedSchedule(t *testing.T) {
	store := checkpoint.NewMemory()
	ctx := context.Background()
	_, _, thread := recordedFiring(t, store, time.Second)
	if err := store.PauseSchedule(ctx, "beat", true); err != nil {
		t.Fatal(err)
	}
	g, runs := counter(t)
	stop := runCounting(t, store, waker.Graph(g))
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && threadOutcome(t, store, thread).Status != runtime.StatusDone; {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1200 * time.Millisecond) // a tick passes while paused
	stop()
	if o := threadOutcome(t, store, thread); o.Status != runtime.StatusDone || runs(thread) != 1 {
		t.Fatalf("the firing recorded before the pause: thread ended %q, its node ran %d times; want done, once", o.Status, runs(thread))
	}
	fs, err := store.ListFirings(ctx, "beat", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 {
		t.Fatalf("%d firings recorded, want the one recorded before the pause: %+v", len(fs), fs)
	}
}

// runCounting runs a waker on store that fires its stored schedules on g
// under the name "count", polling every 20 ms, until the returned stop.
func runCounting(t *testing.T, store waker.Store, g waker.Target) (stop func()) {
	t.Helper()
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"count": g}), waker.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	return func() { cancel(); <-done }
}

// TestWakeWhoseLeaseLapsedContinues: a wake's run loses its thread's
// lease (its process stalled past the lease's time to live) after the
// woken node's checkpoint and before the next node ran; it ends failed on
// the lost lease. The next poll (or the same one, when the wake ended
// before it listed the failed threads) continues the thread from that
// checkpoint: the next node runs once and the thread ends done, the woken
// node's step not run again. Before, the thread stayed failed and the
// node after the wake never ran.
func TestWakeWhoseLeaseLapsedContinues(t *testing.T) {
	ctx := context.Background()
	store := &lapsingStore{Memory: checkpoint.NewMemory()}
	var effects, after atomic.Int32
	g, err := runtime.NewBuilder("sleeper").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "wait", 50*time.Millisecond); err != nil {
				return nil, err
			}
			if _, err := runtime.Step(c, "effect", func() (int, error) { return int(effects.Add(1)), nil }); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "woke"}, nil
		}).
		Node("m", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			after.Add(1)
			return runtime.Values{"out": "after"}, nil
		}).
		Edge(spec.Start, "n").Edge("n", "m").Compile()
	if err != nil {
		t.Fatal(err)
	}
	// Parked on the store itself: only the wake's run lease lapses.
	if res, err := g.Thread(store.Memory, "s").Invoke(ctx, nil, runtime.WithParkAfter(10*time.Millisecond)); err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("parking: %q %v", res.Status, err)
	}
	time.Sleep(80 * time.Millisecond)
	w, err := waker.New(store, []waker.Target{waker.Graph(g)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WakeDue(ctx); err != nil {
		t.Fatal(err)
	}
	// The poll lists failed threads after parked ones: when the wake has
	// ended by then, the same poll continues the thread.
	if o := threadOutcome(t, store, "s"); store.lapsedThread() != "s" || (o.Status != runtime.StatusError || after.Load() != 0) && (o.Status != runtime.StatusDone || after.Load() != 1) {
		t.Fatalf("the wake: thread %q lapsed, outcome %q (%s), m ran %d times; want s's lease lost before m ran (and m run once if the poll continued it)", store.lapsedThread(), o.Status, o.Error, after.Load())
	}
	if _, err := w.WakeDue(ctx); err != nil {
		t.Fatal(err)
	}
	if o := threadOutcome(t, store, "s"); o.Status != runtime.StatusDone || after.Load() != 1 || effects.Load() != 1 {
		t.Fatalf("the next poll: thread ended %q (%s), m ran %d times, the step %d; want done, once, once", o.Status, o.Error, after.Load(), effects.Load())
	}
}

// recordedFiring creates schedule "beat" of graph "count" every every in
// store and records its first tick fired, as a process killed before it
// started the tick's run leaves it: the schedule, the tick and its thread.
func recordedFiring(t *testing.T, store checkpoint.ScheduleStore, every time.Duration) (checkpoint.Schedule, time.Time, string) {
	t.Helper()
	ctx := context.Background()
	sc, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "count", Every: every})
	if err != nil {
		t.Fatal(err)
	}
	tick := sc.Last.Truncate(time.Second)
	thread := sc.ThreadOf(tick)
	if err := store.RecordFirings(ctx, "beat", sc.Last, tick.Add(500*time.Millisecond), []checkpoint.Firing{{Tick: tick, Thread: thread}}); err != nil {
		t.Fatal(err)
	}
	return sc, tick, thread
}
