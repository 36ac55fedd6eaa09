package waker_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// TestMain runs the test binary as the child process of
// TestWakeAcrossSIGKILL when the environment says so.
func TestMain(m *testing.M) {
	if db := os.Getenv(childDB); db != "" {
		os.Exit(child(db, os.Getenv(childEffects)))
	}
	if db := os.Getenv(childScheduleDB); db != "" {
		os.Exit(scheduleChild(db, os.Getenv(childEffects)))
	}
	if db := os.Getenv(childFreezeDB); db != "" {
		os.Exit(freezeChild(db, os.Getenv(childEffects)))
	}
	os.Exit(m.Run())
}

// sleepGraph sleeps d under "wait", then runs the step "effect" (effect
// is its function) and writes "woke".
func sleepGraph(t *testing.T, d time.Duration, effect func() (int, error)) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := buildSleeper(d, effect)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func buildSleeper(d time.Duration, effect func() (int, error)) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	return runtime.NewBuilder("sleeper").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "wait", d); err != nil {
				return nil, err
			}
			if _, err := runtime.Step(c, "effect", effect); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "woke"}, nil
		}).Edge(spec.Start, "n").Compile()
}

// TestWakersRaceWakeOnce: two wakers on one store wake each due thread
// once (its step after the sleep runs once), leave threads that are not
// due, a deleted thread and an answered interrupt alone, and take an
// unanswered interrupt's timeout path once.
func TestWakersRaceWakeOnce(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	var effects atomic.Int32
	g := sleepGraph(t, 200*time.Millisecond, func() (int, error) { return int(effects.Add(1)), nil })
	var timeouts atomic.Int32
	ask, err := runtime.NewBuilder("ask").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[string](c, "approve?", runtime.WithTimeout(200*time.Millisecond), runtime.WithDefaultAnswer("escalate"))
			if err != nil {
				return nil, err
			}
			if a == "escalate" {
				timeouts.Add(1)
			}
			return runtime.Values{"out": a}, nil
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	park := runtime.WithParkAfter(50 * time.Millisecond)
	for _, id := range []string{"s1", "s2", "s3", "gone"} {
		if res, err := g.Thread(store, id).Invoke(ctx, nil, park); err != nil || res.Status != runtime.StatusParked {
			t.Fatalf("%s: %q %v, want parked", id, res.Status, err)
		}
	}
	if res, err := sleepGraph(t, time.Hour, nil).Thread(store, "later").Invoke(ctx, nil, park); err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("later: %q %v", res.Status, err)
	}
	for _, id := range []string{"a1", "answered"} {
		if res, err := ask.Thread(store, id).Invoke(ctx, nil, park); err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("%s: %q %v", id, res.Status, err)
		}
	}
	if _, err := ask.Thread(store, "answered").Resume(ctx, runtime.Answer("yes")); err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteThread(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	targets := []waker.Target{waker.Graph(g), waker.Graph(ask)}
	w1, err := waker.New(store, targets)
	if err != nil {
		t.Fatal(err)
	}
	w2, _ := waker.New(store, targets)
	if n, err := w1.WakeDue(ctx); err != nil || n != 0 {
		t.Fatalf("before the time: woke %d (%v), want 0", n, err)
	}
	time.Sleep(250 * time.Millisecond)
	var wg sync.WaitGroup
	var woken atomic.Int32
	for _, w := range []*waker.Waker{w1, w2, w1, w2} {
		wg.Go(func() {
			n, err := w.WakeDue(ctx)
			if err != nil {
				t.Error(err)
			}
			woken.Add(int32(n))
		})
	}
	wg.Wait()
	if effects.Load() != 3 || woken.Load() != 4 || timeouts.Load() != 1 {
		t.Fatalf("effects %d, wakes %d, timeouts %d; want 3 threads woken once, 1 timeout, 4 wakes in all", effects.Load(), woken.Load(), timeouts.Load())
	}
	for id, want := range map[string]runtime.Status{"s1": runtime.StatusDone, "s3": runtime.StatusDone, "a1": runtime.StatusDone, "answered": runtime.StatusDone, "later": runtime.StatusParked} {
		page, err := store.ListThreads(ctx, runtime.ThreadQuery{Status: want})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, th := range page.Threads {
			found = found || th.ID == id
		}
		if !found {
			t.Errorf("thread %s is not %s", id, want)
		}
	}
	if _, err := store.Get(ctx, "gone", ""); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("the deleted thread came back: %v", err)
	}
}

// TestWakerRun: Run wakes a thread parked after it started, close to its
// wake time, and returns when its context is done.
func TestWakerRun(t *testing.T) {
	store := checkpoint.NewMemory()
	done := make(chan time.Time, 1)
	g := sleepGraph(t, 300*time.Millisecond, func() (int, error) { done <- time.Now(); return 1, nil })
	w, err := waker.New(store, []waker.Target{waker.Graph(g)}, waker.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	res, err := g.Thread(store, "t").Invoke(ctx, nil, runtime.WithParkAfter(0))
	if err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("%q %v", res.Status, err)
	}
	select {
	case at := <-done:
		if at.Before(res.WakeAt) || at.After(res.WakeAt.Add(3*time.Second)) {
			t.Errorf("woken at %v, wake time %v", at, res.WakeAt)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the thread was not woken within 5s")
	}
	cancel()
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	if _, err := waker.New(store, nil); !errors.Is(err, waker.ErrNoTarget) {
		t.Errorf("New without a target: %v", err)
	}
}

const (
	childDB      = "ILMEK_WAKER_CHILD_DB"
	childEffects = "ILMEK_WAKER_CHILD_EFFECTS"
	childSleep   = 5 * time.Second
)

// child is one process of TestWakeAcrossSIGKILL: it parks the thread on a
// 5 s sleep when the store has none, then runs a waker until the thread is
// done. The step after the sleep appends a line to the effects file.
func child(db, effects string) int {
	ctx := context.Background()
	store, err := sqlite.Open(db, sqlite.LeaseTTL(time.Second))
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	g, err := buildSleeper(childSleep, func() (int, error) {
		f, err := os.OpenFile(effects, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, "%d\n", time.Now().UnixNano())
		return 1, err
	})
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	if _, err := store.Get(ctx, "t", ""); errors.Is(err, runtime.ErrNotFound) {
		res, err := g.Thread(store, "t").Invoke(ctx, nil)
		if err != nil || res.Status != runtime.StatusParked {
			fmt.Println("error", res.Status, err)
			return 2
		}
	}
	fmt.Println("started")
	w, err := waker.New(store, []waker.Target{waker.Graph(g)}, waker.WithPollInterval(50*time.Millisecond))
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	wctx, stop := context.WithCancel(ctx)
	go func() { _ = w.Run(wctx) }()
	for {
		page, err := store.ListThreads(ctx, runtime.ThreadQuery{Status: runtime.StatusDone})
		if err == nil && len(page.Threads) == 1 {
			stop()
			fmt.Println("done")
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startChild starts this test binary as a child process with env added
// to its environment, and returns it and the lines it prints.
func startChild(t *testing.T, env ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 8)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}

// awaitLine fails the test unless the next line a child prints is want,
// within 30 s.
func awaitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok || l != want {
			t.Fatalf("child said %q (open %v), want %q", l, ok, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("child did not say %q within 30s", want)
	}
}

// TestWakeAcrossSIGKILL: a thread of a SQLite store parks on a 5 s sleep;
// the process that runs its waker is killed with SIGKILL three times
// during the wait and started again; the thread is woken once, not before
// its time (the step after the sleep ran once), and ends done.
func TestWakeAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts child processes for about 6 s; run without -short")
	}
	dir := t.TempDir()
	db, effects := filepath.Join(dir, "wake.db"), filepath.Join(dir, "effects")
	var wakeAt time.Time
	for kill := range 3 {
		cmd, lines := startChild(t, childDB+"="+db, childEffects+"="+effects)
		awaitLine(t, lines, "started")
		if kill == 0 {
			store, err := sqlite.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := store.Get(context.Background(), "t", "")
			if err != nil {
				t.Fatal(err)
			}
			wakeAt = checkpoint.EarliestWake(cp.Pending)
			store.Close()
		}
		time.Sleep(300 * time.Millisecond)
		if !time.Now().Before(wakeAt) {
			t.Fatalf("kill %d would come after the wake time %v; the machine is too slow for this test", kill+1, wakeAt)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
	}
	cmd, lines := startChild(t, childDB+"="+db, childEffects+"="+effects)
	awaitLine(t, lines, "started")
	awaitLine(t, lines, "done")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("last child: %v", err)
	}
	raw, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(raw))
	if len(got) != 1 {
		t.Fatalf("the step after the sleep ran %d times, want 1", len(got))
	}
	var ns int64
	fmt.Sscan(got[0], &ns)
	if at := time.Unix(0, ns); at.Before(wakeAt) {
		t.Errorf("woken at %v, before the wake time %v", at, wakeAt)
	}
	t.Logf("woken %v after the wake time, after 3 SIGKILLs", time.Unix(0, ns).Sub(wakeAt))
}
