package waker_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// noticeHandler is a slog handler that closes seen when a record whose
// message contains want is logged.
type noticeHandler struct {
	want string
	seen chan struct{}
	once *sync.Once
}

func (h noticeHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h noticeHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h noticeHandler) WithGroup(string) slog.Handler            { return h }
func (h noticeHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.want) {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

// TestRecoveryLeavesAFiringThatEndedMeanwhile: a waker that starts while
// another waker's run of a firing still holds its thread reads the firing
// as unfinished and waits for the lease. That run then fails in the
// superstep after its last checkpoint, so the thread's latest checkpoint
// is still the one the recovery read: the firing ended (error) and is
// not to run again. Before, the recovery continued it once the lease was
// free, running the failed step a second time and replacing the
// firing's recorded outcome.
func TestRecoveryLeavesAFiringThatEndedMeanwhile(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	var bRuns atomic.Int32
	gate, entered := make(chan struct{}), make(chan struct{})
	var enterOnce sync.Once
	g, err := runtime.NewBuilder("steps").Channel("n", "").
		Node("a", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) { return nil, nil }).
		Node("b", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			if bRuns.Add(1) > 1 {
				return nil, nil
			}
			enterOnce.Do(func() { close(entered) })
			<-gate
			return nil, errors.New("b failed")
		}).
		Edge(spec.Start, "a").Edge("a", "b").Compile()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "steps", Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tick := sc.Last.Truncate(time.Second)
	thread := sc.ThreadOf(tick)
	if err := store.RecordFirings(ctx, "beat", sc.Last, tick.Add(500*time.Millisecond), []checkpoint.Firing{{Tick: tick, Thread: thread}}); err != nil {
		t.Fatal(err)
	}
	// The earlier waker's run of the firing, stuck in b.
	earlier := make(chan error, 1)
	go func() {
		_, err := g.Thread(store, thread).Invoke(ctx, runtime.Values{}, runtime.WithThreadMeta(sc.ThreadMeta(tick)))
		earlier <- err
	}()
	<-entered

	read := noticeHandler{want: "firing cut short, continuing it", seen: make(chan struct{}), once: new(sync.Once)}
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"steps": waker.Graph(g)}),
		waker.WithPollInterval(20*time.Millisecond), waker.WithLogger(slog.New(read)))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(runCtx) }()
	select {
	case <-read.seen:
	case <-time.After(5 * time.Second):
		t.Fatal("the waker did not find the firing unfinished")
	}
	close(gate)
	if err := <-earlier; err == nil {
		t.Fatal("the earlier run did not fail")
	}
	time.Sleep(300 * time.Millisecond) // many polls: the recovery's tries
	cancel()
	<-done
	if n := bRuns.Load(); n != 1 {
		t.Errorf("step b ran %d times, want once: the firing that failed was run again", n)
	}
	page, err := store.ListThreads(ctx, checkpoint.ThreadQuery{Meta: sc.ThreadMeta(tick)})
	if err != nil || len(page.Threads) != 1 {
		t.Fatalf("list the firing's thread: %v, %d threads", err, len(page.Threads))
	}
	if got := page.Threads[0].Outcome.Status; got != runtime.StatusError {
		t.Errorf("the firing's recorded outcome is %q, want %q (its run failed)", got, runtime.StatusError)
	}
}
