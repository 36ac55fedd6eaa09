package checkpointtest

import (
	"slices"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// testThreadsParked: a run that parks on a timer is listed with the
// status parked and its timer (WakeAt kept to the nanosecond it was
// journaled with), an interrupt with a deadline is listed interrupted
// with its deadline, and a wake once the time has passed lists the thread
// done.
func testThreadsParked(t *testing.T, cp runtime.Checkpointer) {
	l, _ := lister(t, cp)
	ctx := t.Context()
	g := compile(t, runtime.NewBuilder("timers").Channel("out", "").
		Node("wait", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			if v["out"] == "ask" {
				a, err := runtime.Interrupt[string](c, "approve?", runtime.WithTimeout(time.Hour), runtime.WithDefaultAnswer("no"))
				return runtime.Values{"out": a}, err
			}
			if err := runtime.Sleep(c, "nap", 100*time.Millisecond); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "woke"}, nil
		}).Edge(spec.Start, "wait"))
	nap := g.Thread(cp, "t-nap")
	res, err := nap.Invoke(ctx, nil, runtime.WithParkAfter(0))
	if err != nil || res.Status != runtime.StatusParked || res.WakeAt.IsZero() {
		t.Fatalf("the sleeping run: %s %v, wake at %v; want parked with a wake time", res.Status, err, res.WakeAt)
	}
	ask, err := g.Thread(cp, "t-ask").Invoke(ctx, runtime.Values{"out": "ask"})
	if err != nil || ask.Status != runtime.StatusInterrupted || ask.WakeAt.IsZero() {
		t.Fatalf("the asking run: %s %v, wake at %v; want interrupted with a deadline", ask.Status, err, ask.WakeAt)
	}
	for _, c := range []struct {
		status runtime.Status
		thread string
		at     time.Time
		timer  bool
	}{{runtime.StatusParked, "t-nap", res.WakeAt, true}, {runtime.StatusInterrupted, "t-ask", ask.WakeAt, false}} {
		page, err := l.ListThreads(ctx, checkpoint.ThreadQuery{Status: c.status})
		if err != nil {
			t.Fatal(err)
		}
		if got := threadIDs(page.Threads); !slices.Equal(got, []string{c.thread}) {
			t.Fatalf("status %s lists %v, want [%s]", c.status, got, c.thread)
		}
		p := page.Threads[0].Pending
		if len(p) != 1 || p[0].Timer != c.timer || !p[0].WakeAt.Equal(c.at) || checkpoint.EarliestWake(p) != c.at {
			t.Errorf("thread %s pending %+v, want one pause (timer %v) waking at %v", c.thread, p, c.timer, c.at)
		}
	}
	time.Sleep(time.Until(res.WakeAt))
	if res, err := nap.Wake(ctx); err != nil || res.Status != runtime.StatusDone || res.State["out"] != "woke" {
		t.Fatalf("wake: %s %v %v", res.Status, err, res.State)
	}
	page, err := l.ListThreads(ctx, checkpoint.ThreadQuery{Status: runtime.StatusParked})
	if err != nil || len(page.Threads) != 0 {
		t.Errorf("parked threads after the wake: %v %v, want none", threadIDs(page.Threads), err)
	}
}
