package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestTimerLogs: a parked timer writes "timer set" with its wake time; a
// wake before it is due fires nothing; the wake that takes it writes
// "timer fired" with its lateness, before the resume is accepted.
func TestTimerLogs(t *testing.T) {
	ctx := context.Background()
	h := newRecordingHandler(slog.LevelInfo)
	var after atomic.Int32
	g := sleeper(t, 30*time.Millisecond, &after)
	th := g.Thread(checkpoint.NewMemory(), "t")
	opts := []runtime.RunOption{runtime.WithParkAfter(0), runtime.WithLogger(slog.New(h))}
	res, err := th.Invoke(ctx, nil, opts...)
	if err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("status %q err %v, want parked", res.Status, err)
	}
	if _, err := th.Wake(ctx, opts...); !errors.Is(err, runtime.ErrNotDue) {
		t.Fatalf("early wake: %v, want ErrNotDue", err)
	}
	time.Sleep(time.Until(res.WakeAt))
	if _, err := th.Wake(ctx, opts...); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range h.lines {
		if !strings.HasPrefix(l, "INFO run ended") && !strings.HasPrefix(l, "WARN resume refused") {
			got = append(got, l)
		}
	}
	want := []string{
		"INFO timer set thread=t node=n interrupt=n:sleep:wait#0",
		"INFO timer fired thread=t node=n interrupt=n:sleep:wait#0",
		"INFO resume accepted thread=t",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	for msg, names := range map[string][]string{
		"timer set":   {"run", "thread", "node", "key", "interrupt", "wake_at"},
		"timer fired": {"run", "thread", "node", "key", "interrupt", "wake_at", "lateness"},
	} {
		if d := cmp.Diff(names, h.attrs[msg]); d != "" {
			t.Errorf("attributes of %q (-want +got):\n%s", msg, d)
		}
	}
}

// TestTimerObserved: the observer sees a parked timer opened with Timer
// and its wake time, and answered once by the wake that takes it.
func TestTimerObserved(t *testing.T) {
	ctx := context.Background()
	var after atomic.Int32
	obs := &timerObs{}
	g := sleeper(t, 30*time.Millisecond, &after)
	th := g.Thread(checkpoint.NewMemory(), "t")
	opts := []runtime.RunOption{runtime.WithParkAfter(0), runtime.WithObserver(obs)}
	res, err := th.Invoke(ctx, nil, opts...)
	if err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("status %q err %v, want parked", res.Status, err)
	}
	if len(obs.opened) != 1 || !obs.opened[0].Timer || !obs.opened[0].WakeAt.Equal(res.WakeAt) {
		t.Fatalf("opened %+v, want one timer at %v", obs.opened, res.WakeAt)
	}
	time.Sleep(time.Until(res.WakeAt))
	if _, err := th.Wake(ctx, opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Wake(ctx, opts...); !errors.Is(err, runtime.ErrNotDue) {
		t.Fatalf("second wake: %v, want ErrNotDue", err)
	}
	if len(obs.fired) != 1 || !obs.fired[0].Timer || obs.fired[0].ID != obs.opened[0].ID {
		t.Errorf("answered %+v, want the timer %q once", obs.fired, obs.opened[0].ID)
	}
}

type timerObs struct {
	runtime.NopObserver
	opened, fired []runtime.PendingInterrupt
}

func (o *timerObs) InterruptOpened(_ context.Context, _ runtime.RunRecord, p runtime.PendingInterrupt) {
	o.opened = append(o.opened, p)
}

func (o *timerObs) InterruptAnswered(_ context.Context, _ runtime.RunRecord, p runtime.PendingInterrupt) {
	o.fired = append(o.fired, p)
}
