package checkpointtest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var scheduleContracts = []contract{
	{"schedules/create-list-get", testSchedulesCreate},
	{"schedules/invalid", testSchedulesInvalid},
	{"schedules/record-once", testSchedulesRecordOnce},
	{"schedules/pause-delete", testSchedulesPauseDelete},
}

// scheduler returns cp's ScheduleStore, or skips a backend without one.
func scheduler(t *testing.T, cp runtime.Checkpointer) checkpoint.ScheduleStore {
	t.Helper()
	s, ok := cp.(checkpoint.ScheduleStore)
	if !ok {
		t.Skipf("%T keeps no schedules (checkpoint.ScheduleStore)", cp)
	}
	return s
}

// testSchedulesCreate: a created schedule comes back with its defaults
// filled in and Created = Last from the store's clock; a second of the
// same name fails with ErrScheduleExists; ListSchedules lists by name.
func testSchedulesCreate(t *testing.T, cp runtime.Checkpointer) {
	st := scheduler(t, cp)
	ctx := t.Context()
	before := time.Now().Add(-time.Second)
	b, err := st.CreateSchedule(ctx, checkpoint.Schedule{Name: "nightly", Graph: "g", Cron: "0 3 * * *", TimeZone: "Europe/Istanbul", Input: []byte(`{"n":1}`), Meta: map[string]string{"owner": "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Thread != checkpoint.DefaultScheduleThread || b.Overlap != "reject" || b.CatchUp != checkpoint.CatchUpNone || b.MaxCatchUp != checkpoint.DefaultMaxCatchUp || b.Created.Before(before) || !b.Last.Equal(b.Created) {
		t.Errorf("created %+v: want the defaults filled in and Last = Created from the store's clock", b)
	}
	if _, err := st.CreateSchedule(ctx, checkpoint.Schedule{Name: "a-every", Graph: "g", Every: 90 * time.Second, Thread: "fixed", Overlap: "skip", CatchUp: "all", MaxCatchUp: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSchedule(ctx, checkpoint.Schedule{Name: "nightly", Graph: "other", Every: time.Hour}); !errors.Is(err, checkpoint.ErrScheduleExists) {
		t.Errorf("a second schedule named nightly: %v, want ErrScheduleExists", err)
	}
	got, err := st.GetSchedule(ctx, "nightly")
	if err != nil || got.Cron != "0 3 * * *" || got.TimeZone != "Europe/Istanbul" || string(got.Input) != `{"n":1}` || !got.Created.Equal(b.Created) || got.Graph != "g" || got.Meta["owner"] != "alice" || len(got.Meta) != 1 {
		t.Errorf("get nightly: %+v %v; want it as created", got, err)
	}
	all, err := st.ListSchedules(ctx)
	if err != nil || len(all) != 2 || all[0].Name != "a-every" || all[1].Name != "nightly" {
		t.Fatalf("list: %+v %v; want a-every, nightly", all, err)
	}
	if a := all[0]; a.Meta != nil || a.Every != 90*time.Second || a.Thread != "fixed" || a.Overlap != "reject" || a.CatchUp != "all" || a.MaxCatchUp != 5 {
		t.Errorf("a-every listed as %+v", a)
	}
	if _, err := st.GetSchedule(ctx, "nope"); !errors.Is(err, checkpoint.ErrNoSchedule) {
		t.Errorf("get an unknown schedule: %v, want ErrNoSchedule", err)
	}
}

// testSchedulesInvalid: a schedule that cannot run is refused with
// ErrInvalidSchedule and nothing is stored.
func testSchedulesInvalid(t *testing.T, cp runtime.Checkpointer) {
	st := scheduler(t, cp)
	for _, c := range []struct {
		name string
		s    checkpoint.Schedule
	}{
		{"no graph", checkpoint.Schedule{Name: "x", Every: time.Hour}},
		{"no name", checkpoint.Schedule{Graph: "g", Every: time.Hour}},
		{"both", checkpoint.Schedule{Name: "x", Graph: "g", Every: time.Hour, Cron: "* * * * *"}},
		{"neither", checkpoint.Schedule{Name: "x", Graph: "g"}},
		{"short interval", checkpoint.Schedule{Name: "x", Graph: "g", Every: time.Millisecond}},
		{"bad cron", checkpoint.Schedule{Name: "x", Graph: "g", Cron: "61 * * * *"}},
		{"bad zone", checkpoint.Schedule{Name: "x", Graph: "g", Cron: "* * * * *", TimeZone: "Mars/Olympus"}},
		{"bad overlap", checkpoint.Schedule{Name: "x", Graph: "g", Every: time.Hour, Overlap: "sometimes"}},
		{"bad catch-up", checkpoint.Schedule{Name: "x", Graph: "g", Every: time.Hour, CatchUp: "most"}},
		{"bad thread", checkpoint.Schedule{Name: "x", Graph: "g", Every: time.Hour, Thread: "a/{tick}"}},
		{"bad input", checkpoint.Schedule{Name: "x", Graph: "g", Every: time.Hour, Input: []byte("{")}},
		{"reserved metadata", checkpoint.Schedule{Name: "x", Graph: "g", Every: time.Hour, Meta: map[string]string{"ilmek.tick": "1"}}},
	} {
		if _, err := st.CreateSchedule(t.Context(), c.s); !errors.Is(err, checkpoint.ErrInvalidSchedule) {
			t.Errorf("%s: %v, want ErrInvalidSchedule", c.name, err)
		}
	}
	if all, err := st.ListSchedules(t.Context()); err != nil || len(all) != 0 {
		t.Errorf("after refusals the store lists %+v %v, want none", all, err)
	}
}

// testSchedulesRecordOnce: of eight firers racing to record the same tick
// from the Last they read, exactly one succeeds and the rest fail with
// ErrScheduleMoved; the firing is listed once, newest first.
func testSchedulesRecordOnce(t *testing.T, cp runtime.Checkpointer) {
	st := scheduler(t, cp)
	ctx := t.Context()
	s, err := st.CreateSchedule(ctx, checkpoint.Schedule{Name: "tick", Graph: "g", Every: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tick := s.Last.Truncate(time.Second).Add(time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, moved := 0, 0
	for range 8 {
		wg.Go(func() {
			err := st.RecordFirings(ctx, "tick", s.Last, tick, []checkpoint.Firing{{Tick: tick, Thread: s.ThreadOf(tick), Request: 7}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, checkpoint.ErrScheduleMoved):
				moved++
			default:
				t.Errorf("record: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 || moved != 7 {
		t.Errorf("%d firers recorded the tick and %d were told it moved; want 1 and 7", won, moved)
	}
	next := tick.Add(time.Second)
	if err := st.RecordFirings(ctx, "tick", tick, next.Add(time.Second), []checkpoint.Firing{{Tick: next, Thread: s.ThreadOf(next), Skipped: "overlap"}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetSchedule(ctx, "tick")
	if err != nil || !got.Last.Equal(next.Add(time.Second)) {
		t.Errorf("Last after two records: %v %v, want %v", got.Last, err, next.Add(time.Second))
	}
	fs, err := st.ListFirings(ctx, "tick", 0)
	if err != nil || len(fs) != 2 {
		t.Fatalf("firings: %+v %v, want 2", fs, err)
	}
	if f := fs[0]; !f.Tick.Equal(next) || f.Skipped != "overlap" || f.Schedule != "tick" || f.At.IsZero() {
		t.Errorf("newest firing %+v, want the skipped one at %v", f, next)
	}
	if f := fs[1]; !f.Tick.Equal(tick) || f.Request != 7 || f.Thread != "tick@"+tick.UTC().Format(checkpoint.TickFormat) {
		t.Errorf("oldest firing %+v, want request 7 at %v", f, tick)
	}
	if fs, err := st.ListFirings(ctx, "tick", 1); err != nil || len(fs) != 1 || !fs[0].Tick.Equal(next) {
		t.Errorf("firings, limit 1: %+v %v", fs, err)
	}
}

// testSchedulesPauseDelete: a paused schedule lists paused and records no
// firing (ErrScheduleMoved); resuming it
// moves Last to the store's clock; deleting it removes it and its
// firings, and the name can be used again.
func testSchedulesPauseDelete(t *testing.T, cp runtime.Checkpointer) {
	st := scheduler(t, cp)
	ctx := t.Context()
	s, err := st.CreateSchedule(ctx, checkpoint.Schedule{Name: "p", Graph: "g", Every: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordFirings(ctx, "p", s.Last, s.Last, []checkpoint.Firing{{Tick: s.Last, Thread: "p@x"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PauseSchedule(ctx, "p", true); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetSchedule(ctx, "p"); !got.Paused {
		t.Errorf("after pause: %+v, want paused", got)
	}
	// A firer that read the schedule before the pause records nothing
	// after it: a paused schedule's Last does not move.
	paused, _ := st.GetSchedule(ctx, "p")
	next := paused.Last.Add(time.Minute)
	if err := st.RecordFirings(ctx, "p", paused.Last, next, []checkpoint.Firing{{Tick: next, Thread: "p@y"}}); !errors.Is(err, checkpoint.ErrScheduleMoved) {
		t.Errorf("firings recorded on a paused schedule: %v, want ErrScheduleMoved", err)
	}
	if fs, _ := st.ListFirings(ctx, "p", 0); len(fs) != 1 {
		t.Errorf("firings after a refused record on the paused schedule: %+v, want the one before the pause", fs)
	}
	time.Sleep(10 * time.Millisecond)
	if err := st.PauseSchedule(ctx, "p", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetSchedule(ctx, "p"); got.Paused || !got.Last.After(s.Last) {
		t.Errorf("after resume: %+v, want running with Last past %v", got, s.Last)
	}
	if err := st.DeleteSchedule(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{st.DeleteSchedule(ctx, "p"), st.PauseSchedule(ctx, "p", true)} {
		if !errors.Is(err, checkpoint.ErrNoSchedule) {
			t.Errorf("on a deleted schedule: %v, want ErrNoSchedule", err)
		}
	}
	if _, err := st.ListFirings(ctx, "p", 0); !errors.Is(err, checkpoint.ErrNoSchedule) {
		t.Errorf("firings of a deleted schedule: %v, want ErrNoSchedule", err)
	}
	if _, err := st.CreateSchedule(ctx, checkpoint.Schedule{Name: "p", Graph: "g", Every: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if fs, err := st.ListFirings(ctx, "p", 0); err != nil || len(fs) != 0 {
		t.Errorf("firings of the new schedule p: %+v %v, want none", fs, err)
	}
}
