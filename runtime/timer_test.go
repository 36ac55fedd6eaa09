package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// sleeper is a graph whose node sleeps d under key "wait", then runs the
// step "after" once (counted in after) and writes "woke".
func sleeper(t *testing.T, d time.Duration, after *atomic.Int32) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	return mustCompile(t, runtime.NewBuilder("sleeper").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "wait", d); err != nil {
				return nil, err
			}
			if _, err := runtime.Step(c, "after", func() (int, error) { return int(after.Add(1)), nil }); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "woke"}, nil
		}).Edge(spec.Start, "n"))
}

// TestSleepShortWaitsInProcess: a wait within WithParkAfter holds the run
// and ends done, with and without a thread.
func TestSleepShortWaitsInProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []runtime.RunOption
	}{
		{"no thread", nil},
		{"thread", nil},
		{"no thread never parks", []runtime.RunOption{runtime.WithParkAfter(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var after atomic.Int32
			t0 := time.Now()
			g := sleeper(t, 50*time.Millisecond, &after)
			run := g.Invoke
			if tc.name == "thread" {
				run = g.Thread(checkpoint.NewMemory(), "t").Invoke
			}
			res, err := run(context.Background(), nil, tc.opts...)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("status %q err %v, want done", res.Status, err)
			}
			if el := time.Since(t0); el < 50*time.Millisecond {
				t.Errorf("returned after %v, before the 50ms wait", el)
			}
			if after.Load() != 1 || !res.WakeAt.IsZero() {
				t.Errorf("after ran %d times, WakeAt %v; want 1 and zero", after.Load(), res.WakeAt)
			}
		})
	}
}

// TestSleepParksAndWakesOnce: a wait longer than WithParkAfter parks the
// thread (status parked, no error, the wake time in the result, the
// thread state and the thread listing); a wake before the time is refused
// and writes nothing; a person cannot answer a timer; a wake after it
// continues the run once, and a second wake is refused.
func TestSleepParksAndWakesOnce(t *testing.T) {
	ctx := context.Background()
	var after atomic.Int32
	g := sleeper(t, 300*time.Millisecond, &after)
	cp := checkpoint.NewMemory()
	th := g.Thread(cp, "t")
	opts := []runtime.RunOption{runtime.WithParkAfter(100 * time.Millisecond)}
	t0 := time.Now()
	res, err := th.Invoke(ctx, nil, opts...)
	if err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("status %q err %v, want parked and no error", res.Status, err)
	}
	if time.Since(t0) > 250*time.Millisecond {
		t.Errorf("the parked run held on for %v", time.Since(t0))
	}
	want := res.WakeAt
	if want.Before(t0.Add(300*time.Millisecond)) || want.After(time.Now().Add(300*time.Millisecond)) {
		t.Fatalf("WakeAt %v is not 300ms after the run started (%v)", want, t0)
	}
	if len(res.Pending) != 1 || !res.Pending[0].Timer || !res.Pending[0].WakeAt.Equal(want) {
		t.Fatalf("pending %+v, want one timer at %v", res.Pending, want)
	}
	ts, err := th.State(ctx)
	if err != nil || !ts.WakeAt.Equal(want) {
		t.Fatalf("thread state WakeAt %v (%v), want %v", ts.WakeAt, err, want)
	}
	page, err := cp.ListThreads(ctx, runtime.ThreadQuery{Status: runtime.StatusParked})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].Outcome.Status != runtime.StatusParked ||
		checkpoint.EarliestWake(page.Threads[0].Pending) != want {
		t.Fatalf("parked threads: %+v %v", page.Threads, err)
	}
	if _, err := th.Resume(ctx, runtime.Answer("now"), opts...); !errors.Is(err, runtime.ErrNotInterrupted) {
		t.Errorf("a person's answer to a timer: %v, want ErrNotInterrupted", err)
	}
	if _, err := th.Wake(ctx, opts...); !errors.Is(err, runtime.ErrNotDue) {
		t.Fatalf("wake before the time: %v, want ErrNotDue", err)
	}
	// A resume after a crash never moves the wake time: running the
	// superstep again (as a wake would) before it is due parks again at
	// the same time.
	time.Sleep(time.Until(want))
	res, err = th.Wake(ctx, opts...)
	if err != nil || res.Status != runtime.StatusDone || res.State["out"] != "woke" {
		t.Fatalf("wake: status %q err %v state %v", res.Status, err, res.State)
	}
	if after.Load() != 1 {
		t.Errorf("the step after the sleep ran %d times, want 1", after.Load())
	}
	if _, err := th.Wake(ctx, opts...); !errors.Is(err, runtime.ErrNotDue) {
		t.Errorf("a second wake: %v, want ErrNotDue", err)
	}
}

// TestSleepWakeTimeIsJournaledOnce: a replay of a parked superstep that is
// not due yet (an interrupt of a sibling answered first) parks again at
// the first wake time: the time is journaled once, never extended.
func TestSleepWakeTimeIsJournaledOnce(t *testing.T) {
	ctx := context.Background()
	g := mustCompile(t, runtime.NewBuilder("mixed").Channel("out", "").
		Node("sleep", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			return nil, runtime.Sleep(c, "wait", time.Hour)
		}).
		Node("ask", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			_, err := runtime.Interrupt[string](c, "ok?")
			return nil, err
		}).Edge(spec.Start, "sleep").Edge(spec.Start, "ask"))
	cp := checkpoint.NewMemory()
	th := g.Thread(cp, "t")
	var opts []runtime.RunOption
	res, err := th.Invoke(ctx, nil, opts...)
	if err != nil || res.Status != runtime.StatusInterrupted || len(res.Pending) != 2 {
		t.Fatalf("status %q err %v pending %d; want interrupted on a question and a timer", res.Status, err, len(res.Pending))
	}
	first := res.WakeAt
	time.Sleep(10 * time.Millisecond)
	res, err = th.Resume(ctx, runtime.Answer("yes"), opts...)
	if err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("after the answer: status %q err %v, want parked", res.Status, err)
	}
	if !res.WakeAt.Equal(first) {
		t.Errorf("wake time moved from %v to %v", first, res.WakeAt)
	}
}

// TestInterruptTimeout: an interrupt with a deadline that nobody answers
// takes its default answer, or returns an *InterruptTimeoutError, once;
// an answer before the deadline wins; a default the answer type refuses
// fails the task.
func TestInterruptTimeout(t *testing.T) {
	ctx := context.Background()
	type outcome struct {
		answer string
		err    error
	}
	for _, tc := range []struct {
		name      string
		opts      []runtime.InterruptOption
		answer    any // answered before the deadline when not nil
		want      string
		wantErr   error
		wantStart runtime.Status
	}{
		{name: "default", opts: []runtime.InterruptOption{runtime.WithTimeout(50 * time.Millisecond), runtime.WithDefaultAnswer("no")}, want: "no", wantStart: runtime.StatusInterrupted},
		{name: "error", opts: []runtime.InterruptOption{runtime.WithTimeout(50 * time.Millisecond)}, wantErr: runtime.ErrInterruptTimeout, wantStart: runtime.StatusInterrupted},
		{name: "answered in time", opts: []runtime.InterruptOption{runtime.WithTimeout(time.Hour), runtime.WithKey("k")}, answer: "yes", want: "yes", wantStart: runtime.StatusInterrupted},
		{name: "bad default", opts: []runtime.InterruptOption{runtime.WithTimeout(time.Second), runtime.WithDefaultAnswer(7)}, wantStart: runtime.StatusError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []outcome
			g := mustCompile(t, runtime.NewBuilder("ask").Channel("out", "").
				Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					a, err := runtime.Interrupt[string](c, "ok?", tc.opts...)
					if err != nil && !errors.Is(err, runtime.ErrInterruptTimeout) {
						return nil, err
					}
					got = append(got, outcome{a, err})
					return runtime.Values{"out": a}, nil
				}).Edge(spec.Start, "n"))
			cp := checkpoint.NewMemory()
			th := g.Thread(cp, "t")
			var opts []runtime.RunOption
			res, _ := th.Invoke(ctx, nil, opts...)
			if res.Status != tc.wantStart {
				t.Fatalf("first run %q (%v), want %q", res.Status, res.Err, tc.wantStart)
			}
			if res.Status == runtime.StatusError {
				return
			}
			if res.WakeAt.IsZero() || len(res.Pending) != 1 || res.Pending[0].Timer {
				t.Fatalf("WakeAt %v pending %+v: want a question with a deadline", res.WakeAt, res.Pending)
			}
			if tc.answer != nil {
				if res, err := th.Resume(ctx, runtime.Answer(tc.answer), opts...); err != nil || res.Status != runtime.StatusDone {
					t.Fatalf("answer: %q %v", res.Status, err)
				}
			} else {
				time.Sleep(time.Until(res.WakeAt))
				if res, err := th.Wake(ctx, opts...); err != nil || res.Status != runtime.StatusDone {
					t.Fatalf("wake: %q %v", res.Status, err)
				}
			}
			if len(got) != 1 || got[0].answer != tc.want || !errors.Is(got[0].err, tc.wantErr) {
				t.Fatalf("the node saw %+v, want once %q / %v", got, tc.want, tc.wantErr)
			}
			var te *runtime.InterruptTimeoutError
			if tc.wantErr != nil && (!errors.As(got[0].err, &te) || te.Interrupt != "n:interrupt#0") {
				t.Errorf("timeout error %v does not name the interrupt", got[0].err)
			}
			if _, err := th.Wake(ctx, opts...); !errors.Is(err, runtime.ErrNotDue) {
				t.Errorf("a second wake: %v, want ErrNotDue", err)
			}
		})
	}
}

// TestWakeContinuesACutShortWake: a wake whose run stopped before its end
// (here cancelled in the superstep after the timer's) is continued by the
// next wake from its last checkpoint; the timer's step is not repeated.
func TestWakeContinuesACutShortWake(t *testing.T) {
	var after atomic.Int32
	var block atomic.Bool
	block.Store(true)
	g := mustCompile(t, runtime.NewBuilder("two").Channel("out", "").
		Node("a", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "wait", 50*time.Millisecond); err != nil {
				return nil, err
			}
			_, err := runtime.Step(c, "after", func() (int, error) { return int(after.Add(1)), nil })
			return nil, err
		}).
		Node("b", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if block.Load() {
				<-c.Done()
				return nil, c.Err()
			}
			return runtime.Values{"out": "b"}, nil
		}).Edge(spec.Start, "a").Edge("a", "b"))
	cp := checkpoint.NewMemory()
	th := g.Thread(cp, "t")
	opts := []runtime.RunOption{runtime.WithParkAfter(0)}
	res, err := th.Invoke(context.Background(), nil, opts...)
	if err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("%q %v", res.Status, err)
	}
	time.Sleep(time.Until(res.WakeAt))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if res, _ := th.Wake(ctx, opts...); res.Status != runtime.StatusAborted {
		t.Fatalf("the cut-short wake: %q, want aborted", res.Status)
	}
	block.Store(false)
	res, err = th.Wake(context.Background(), opts...)
	if err != nil || res.Status != runtime.StatusDone || res.State["out"] != "b" || after.Load() != 1 {
		t.Fatalf("the second wake: %q %v %v, step ran %d times", res.Status, err, res.State, after.Load())
	}
	if _, err := th.Wake(context.Background(), opts...); !errors.Is(err, runtime.ErrNotDue) {
		t.Errorf("a wake of a done thread: %v, want ErrNotDue", err)
	}
}

// TestParkAfterOnTheGraph: WithParkAfter given to a graph applies to its
// runs, and a run's own WithParkAfter wins.
func TestParkAfterOnTheGraph(t *testing.T) {
	node := func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		return nil, runtime.Sleep(c, "wait", 30*time.Millisecond)
	}
	for _, tc := range []struct {
		name  string
		graph []runtime.Option
		run   []runtime.RunOption
		want  runtime.Status
	}{
		{"default waits in process", nil, nil, runtime.StatusDone},
		{"graph parks", []runtime.Option{runtime.WithParkAfter(0)}, nil, runtime.StatusParked},
		{"run wins", []runtime.Option{runtime.WithParkAfter(0)}, []runtime.RunOption{runtime.WithParkAfter(time.Second)}, runtime.StatusDone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := runtime.NewBuilder("nap").Node("n", node).Edge(spec.Start, "n").Compile(tc.graph...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(context.Background(), nil, tc.run...)
			if err != nil || res.Status != tc.want {
				t.Fatalf("%q %v, want %q", res.Status, err, tc.want)
			}
		})
	}
}
