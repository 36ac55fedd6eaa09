package waker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// childScheduleDB names the SQLite file of a scheduleChild process.
const childScheduleDB = "ILMEK_WAKER_SCHEDULE_DB"

// scheduleChild is one process of TestStoredScheduleAcrossSIGKILL: a
// waker firing the file's stored schedules until it is killed; each
// firing's step appends its thread id to the effects file.
func scheduleChild(db, effects string) int {
	store, err := sqlite.Open(db, sqlite.LeaseTTL(time.Second))
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	g, err := runtime.NewBuilder("beat").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(c, "effect", func() (int, error) {
				f, err := os.OpenFile(effects, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return 0, err
				}
				defer f.Close()
				_, err = fmt.Fprintln(f, c.ThreadID())
				return 1, err
			}); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "fired"}, nil
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"beat": waker.Graph(g)}),
		waker.WithPollInterval(50*time.Millisecond), waker.WithScheduleGrace(300*time.Millisecond))
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	_ = w.Run(context.Background())
	return 0
}

// TestStoredScheduleAcrossSIGKILL: two processes run wakers on one SQLite
// file that keeps a 1 s schedule with catch-up all; for about 12 s a
// random one is SIGKILLed and started again every 700 ms, and once both
// are killed for 2.5 s (those ticks are missed and caught up). Every tick
// from the first to the last is recorded once and its thread ends done: a
// firing recorded and not started, or cut short, is started or continued
// by the next waker, and one whose run lost its 1 s lease (a child
// starved on a loaded machine) by the waker that ran it. (A step killed
// after its effect and before its journal write runs again; those are
// counted.)
func TestStoredScheduleAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts child processes for about 12 s; run without -short")
	}
	dir := t.TempDir()
	db, effects := filepath.Join(dir, "beat.db"), filepath.Join(dir, "effects")
	store, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	if _, err := store.CreateSchedule(ctx, checkpoint.Schedule{Name: "beat", Graph: "beat", Every: time.Second, CatchUp: checkpoint.CatchUpAll, Overlap: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	procs := make([]*exec.Cmd, 2)
	start := func(i int) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childScheduleDB+"="+db, childEffects+"="+effects)
		cmd.Stdout = os.Stderr // its errors; its log records are left out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = cmd
	}
	kill := func(i int) {
		_ = procs[i].Process.Signal(syscall.SIGKILL)
		_ = procs[i].Wait()
	}
	for i := range procs {
		start(i)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	begin, kills := time.Now(), 0
	for gap := false; time.Since(begin) < 12*time.Second; {
		time.Sleep(700 * time.Millisecond)
		if !gap && time.Since(begin) > 5*time.Second {
			kill(0)
			kill(1)
			kills += 2
			time.Sleep(2500 * time.Millisecond)
			start(0)
			start(1)
			gap = true
			continue
		}
		i := rng.IntN(len(procs))
		kill(i)
		kills++
		start(i)
	}
	// The restarted wakers fire a tick more; then no tick is recorded any
	// more, and the recorded ones end: those the last kill cut short are
	// recovered by the restarted waker (the schedule paused or not; a
	// recovered firing first waits out the killed holder's 1 s lease),
	// on a loaded machine too.
	time.Sleep(1500 * time.Millisecond)
	if err := store.PauseSchedule(ctx, "beat", true); err != nil {
		t.Fatal(err)
	}
	// Once the pause returned no tick is recorded (RecordFirings refuses
	// a paused schedule), so the firings listed below are all there are.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if allDone(t, store) {
			break
		}
	}
	kill(0)
	kill(1)
	fs, err := store.ListFirings(ctx, "beat", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) < 10 {
		t.Fatalf("%d firings in 14 s, want at least 10", len(fs))
	}
	span := int(fs[0].Tick.Sub(fs[len(fs)-1].Tick)/time.Second) + 1
	raw, _ := os.ReadFile(effects)
	ran := map[string]int{}
	for _, th := range strings.Fields(string(raw)) {
		ran[th]++
	}
	done := threadsDone(t, store)
	ended, never, again := 0, 0, 0
	for _, f := range fs {
		if done[f.Thread] {
			ended++
		}
		switch {
		case ran[f.Thread] == 0:
			never++
		case ran[f.Thread] > 1:
			again++ // killed after its effect, before the journal kept it
		}
	}
	t.Logf("%d SIGKILLs; %d ticks, %d firings, %d threads done, %d effects (%d executed again before their journal write)", kills, span, len(fs), ended, len(strings.Fields(string(raw))), again)
	if len(fs) != span || ended != len(fs) || never != 0 {
		t.Errorf("%d firings over %d ticks, %d threads done, %d whose step never ran; want one firing per tick, each done", len(fs), span, ended, never)
	}
}

// allDone reports whether every recorded firing of schedule "beat" has a
// thread whose run ended done.
func allDone(t *testing.T, store *sqlite.Store) bool {
	t.Helper()
	fs, err := store.ListFirings(context.Background(), "beat", 0)
	if err != nil {
		t.Fatal(err)
	}
	done := threadsDone(t, store)
	for _, f := range fs {
		if !done[f.Thread] {
			return false
		}
	}
	return true
}

// threadsDone reports, for each thread of schedule "beat", whether its
// last run ended done.
func threadsDone(t *testing.T, store *sqlite.Store) map[string]bool {
	t.Helper()
	page, err := store.ListThreads(context.Background(), runtime.ThreadQuery{Meta: map[string]string{checkpoint.MetaSchedule: "beat"}, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	for _, th := range page.Threads {
		done[th.ID] = th.Outcome.Status == runtime.StatusDone
	}
	return done
}
