package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

var cancelContracts = []contract{
	{"GraphCancelAfterTasksCompletedCommits", testGraphCancelCommits},
	{"GraphRandomCancelRunsEachStepOnce", testGraphRandomCancel},
}

// testGraphCancelCommits: a caller that cancels after every task of a
// superstep completed (here: from inside the node, after its step) gets
// that superstep committed, and the run's status follows the committed
// checkpoint: aborted when tasks are planned, done when none are,
// interrupted when the superstep paused. The step is never run again.
func testGraphCancelCommits(t *testing.T, cp runtime.Checkpointer) {
	cases := []struct {
		name  string
		pause bool
		next  bool // a second node follows
		want  runtime.Status
	}{
		{"tasks planned", false, true, runtime.StatusAborted},
		{"nothing planned", false, false, runtime.StatusDone},
		{"pause", true, false, runtime.StatusInterrupted},
	}
	for _, c := range cases {
		thread := "cancel-" + c.name
		var effects atomic.Int32
		ctx, cancel := context.WithCancel(t.Context())
		b := runtime.NewBuilder("cancel").Channel("x", "").
			Node("a", func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				v, err := runtime.Step(rc, "effect", func() (int, error) { return int(effects.Add(1)), nil })
				if err != nil {
					return nil, err
				}
				cancel()
				if c.pause {
					if _, err := runtime.Interrupt[bool](rc, "ok?"); err != nil {
						return nil, err
					}
				}
				return runtime.Values{"x": v}, nil
			}).Edge(spec.Start, "a")
		if c.next {
			b.Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"x": 10}, nil }).Edge("a", "b")
		}
		g := compile(t, b)
		res, err := g.Thread(cp, thread).Invoke(ctx, nil)
		if res.Status != c.want {
			t.Fatalf("%s: status %q (err %v), want %q", c.name, res.Status, err, c.want)
		}
		if c.want == runtime.StatusAborted && (!errors.Is(err, runtime.ErrAborted) || !errors.Is(err, context.Canceled)) {
			t.Errorf("%s: err %v; want it to match ErrAborted and context.Canceled", c.name, err)
		}
		latest := get(t, cp, thread, "")
		if c.pause {
			if len(latest.Pending) != 1 {
				t.Errorf("%s: the pause was not committed: %+v", c.name, latest)
			}
		} else if latest.Step != 1 || string(latest.Channels) == "{}" {
			t.Errorf("%s: the completed superstep was not committed: step %d, channels %s", c.name, latest.Step, latest.Channels)
		}
		// Finishing the thread never repeats the step (a done thread is
		// finished: another Invoke would start a new turn).
		switch c.want {
		case runtime.StatusInterrupted:
			res, err = g.Thread(cp, thread).Resume(t.Context(), runtime.Answer(true))
		case runtime.StatusAborted:
			res, err = g.Thread(cp, thread).Invoke(t.Context(), nil)
		}
		if err != nil || res.Status != runtime.StatusDone || effects.Load() != 1 {
			t.Errorf("%s: finishing: status %q, err %v, effect ran %d times; want done and once", c.name, res.Status, err, effects.Load())
		}
	}
}

// testGraphRandomCancel cancels 200 runs at random moments (while a step's
// function runs, between steps, around commits), then finishes every
// thread with plain runs: each step function must have run exactly once.
func testGraphRandomCancel(t *testing.T, cp runtime.Checkpointer) {
	const threads, workers = 200, 8
	var mu sync.Mutex
	runs := map[string]int{} // thread/node/step -> executions
	step := func(rc *runtime.Ctx, key string) error {
		_, err := runtime.Step(rc, key, func() (int, error) {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			mu.Lock()
			runs[rc.ThreadID()+"/"+rc.Node()+"/"+key]++
			mu.Unlock()
			return 1, nil
		})
		return err
	}
	node := func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		for _, k := range []string{"one", "two"} {
			if err := step(rc, k); err != nil {
				return nil, err
			}
		}
		return runtime.Values{"n": 1}, nil
	}
	g := compile(t, runtime.NewBuilder("cancels").Channel("n", spec.Append).
		Node("a", node).Node("b", node).Node("c", node).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", "c"))
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				thread := fmt.Sprintf("rc-%d", i)
				ctx, cancel := context.WithCancel(t.Context())
				timer := time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
				first, _ := g.Thread(cp, thread).Invoke(ctx, nil)
				timer.Stop()
				cancel()
				// A plain run continues a thread whose run was aborted or
				// failed; a done thread is finished (another run would
				// start a new turn).
				for attempt := 0; first.Status != runtime.StatusDone; attempt++ {
					res, err := g.Thread(cp, thread).Invoke(t.Context(), nil)
					if err == nil && res.Status == runtime.StatusDone {
						break
					}
					if attempt == 3 {
						errs <- fmt.Errorf("thread %s: %q %v", thread, res.Status, err)
						break
					}
				}
			}
		}()
	}
	for i := range threads {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	extra := 0
	for k, n := range runs {
		if n != 1 {
			extra += n - 1
			if extra < 5 {
				t.Errorf("step %s ran %d times", k, n)
			}
		}
	}
	if want := threads * 3 * 2; len(runs) != want || extra != 0 {
		t.Errorf("%d distinct steps ran (want %d), %d extra executions (want 0)", len(runs), want, extra)
	}
}
