package server

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
)

// adminsSchedule is an Access hook that lets "admin" manage schedules and
// otherwise is OwnerOnly.
func adminsSchedule(ctx context.Context, p Principal, t ThreadRef, a Action) error {
	if a == ActionSchedule {
		if p.ID == "admin" {
			return nil
		}
		return errors.New("only admin schedules runs")
	}
	return OwnerOnly(ctx, p, t, a)
}

// TestScheduleRoutes: an admin creates, lists, reads, pauses, resumes and
// deletes a schedule through the API; the store holds what the API says;
// bad schedules answer 422 problems, a name taken 409, another principal
// 404 (the Access hook), and a store without schedules 501.
func TestScheduleRoutes(t *testing.T) {
	store := checkpoint.NewMemory()
	ts := newTestServer(t, func(c *Config) { c.Checkpointer, c.Access = store, adminsSchedule })
	var v ScheduleView
	ts.must("admin", "POST", "/schedules", map[string]any{"name": "nightly", "cron": "0 3 * * *", "time_zone": "Europe/Istanbul",
		"input": map[string]any{"topic": "otters"}, "overlap": "skip", "catch_up": "one"}, 201).json(t, &v)
	if v.Metadata["owner"] != "admin" || len(v.Metadata) != 1 || v.Graph != "approval" || v.Overlap != "reject" || v.CatchUp != "one" || v.Thread != checkpoint.DefaultScheduleThread || !v.Next.After(v.Last) || v.Next.UTC().Hour() != 0 {
		t.Errorf("created %+v: want the served graph, skip spelled reject, and the next tick at 03:00 Istanbul (00:00 UTC)", v)
	}
	ts.must("admin", "POST", "/schedules", map[string]any{"name": "beat", "every": "90s", "thread": "beat"}, 201)
	for _, c := range []struct {
		body   map[string]any
		status int
		slug   string
	}{
		{map[string]any{"name": "nightly", "every": "1h"}, 409, "schedule-exists"},
		{map[string]any{"name": "bad", "cron": "61 * * * *"}, 422, "invalid-schedule"},
		{map[string]any{"name": "bad", "every": "soon"}, 422, "invalid-schedule"},
		{map[string]any{"name": "bad", "every": "1h", "graph": "nope"}, 422, "unknown-graph"},
		{map[string]any{"name": "bad", "every": "1h", "overlap": "sometimes"}, 422, "invalid-schedule"},
		{map[string]any{"name": "bad", "every": "1h", "metadata": map[string]string{"owner": "eve"}}, 400, "bad-request"},
	} {
		if p := ts.must("admin", "POST", "/schedules", c.body, c.status).problem(t); p.Type != ProblemTypePrefix+c.slug {
			t.Errorf("POST /schedules %v: problem %s, want %s", c.body, p.Type, c.slug)
		}
	}
	var list struct{ Schedules []ScheduleView }
	ts.must("admin", "GET", "/schedules", nil, 200).json(t, &list)
	if len(list.Schedules) != 2 || list.Schedules[0].Name != "beat" || list.Schedules[0].Every != "1m30s" {
		t.Errorf("list: %+v, want beat (every 1m30s) and nightly", list.Schedules)
	}
	ts.must("bob", "GET", "/schedules", nil, 200).json(t, &list)
	if len(list.Schedules) != 0 {
		t.Errorf("bob lists %d schedules, want none (the Access hook)", len(list.Schedules))
	}
	ts.must("bob", "GET", "/schedules/nightly", nil, 404)
	ts.must("bob", "POST", "/schedules", map[string]any{"name": "mine", "every": "1h"}, 404)
	sc, _ := store.GetSchedule(t.Context(), "beat")
	tick := sc.Last.Truncate(90 * time.Second).Add(90 * time.Second)
	if err := store.RecordFirings(t.Context(), "beat", sc.Last, tick, []checkpoint.Firing{{Tick: tick, Thread: "beat"}}); err != nil {
		t.Fatal(err)
	}
	ts.must("admin", "GET", "/schedules/beat", nil, 200).json(t, &v)
	if len(v.Firings) != 1 || v.Firings[0].Thread != "beat" || !v.Next.Equal(tick.Add(90*time.Second)) {
		t.Errorf("beat: %+v, want its one firing and the next tick after it", v)
	}
	ts.must("admin", "POST", "/schedules/beat/pause", nil, 200).json(t, &v)
	if !v.Paused {
		t.Errorf("after pause: %+v", v)
	}
	ts.must("admin", "POST", "/schedules/beat/resume", nil, 200).json(t, &v)
	if v.Paused {
		t.Errorf("after resume: %+v", v)
	}
	ts.must("admin", "DELETE", "/schedules/beat", nil, 204)
	ts.must("admin", "DELETE", "/schedules/beat", nil, 404)
	ts.must("admin", "POST", "/schedules/beat/pause", nil, 404)
	if _, err := store.GetSchedule(t.Context(), "beat"); !errors.Is(err, checkpoint.ErrNoSchedule) {
		t.Errorf("the store after DELETE: %v, want ErrNoSchedule", err)
	}
	bare := newTestServer(t, func(c *Config) { c.Checkpointer, c.Access = noSchedules{checkpoint.NewMemory()}, adminsSchedule })
	if p := bare.must("admin", "GET", "/schedules", nil, http.StatusNotImplemented).problem(t); p.Type != ProblemTypePrefix+"no-schedules" {
		t.Errorf("a store without schedules: %s, want no-schedules", p.Type)
	}
}

// noSchedules hides Memory's schedule methods.
type noSchedules struct{ *checkpoint.Memory }

func (noSchedules) CreateSchedule() {}

// TestScheduledThreadsAreServed: the threads a waker starts for a
// schedule created through the API are the server's threads, owned by
// the schedule's creator: listed with their graph and status, readable by
// the creator, hidden from another principal.
func TestScheduledThreadsAreServed(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 1 s schedule's tick; run without -short")
	}
	store := checkpoint.NewMemory()
	ts := newTestServer(t, func(c *Config) { c.Checkpointer, c.Access = store, adminsSchedule })
	ts.must("admin", "POST", "/schedules", map[string]any{"name": "drafts", "every": "1s", "input": map[string]any{"topic": "otters"},
		"metadata": map[string]string{"team": "blog"}}, 201)
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"approval": waker.Graph(approvalGraph(t))}),
		waker.WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	var list ThreadList
	deadline := time.Now().Add(10 * time.Second)
	for len(list.Threads) == 0 || list.Threads[0].Status != runtime.StatusInterrupted {
		if time.Now().After(deadline) {
			t.Fatalf("no fired thread of schedule drafts listed as interrupted in 10 s: %+v", list.Threads)
		}
		time.Sleep(100 * time.Millisecond)
		ts.must("admin", "GET", "/threads?metadata.team=blog", nil, 200).json(t, &list)
	}
	th := list.Threads[0]
	if th.Graph != "approval" || th.Metadata["owner"] != "admin" || th.Metadata[checkpoint.MetaSchedule] != "drafts" || th.Created.IsZero() {
		t.Errorf("fired thread %+v: want graph approval, owner admin, the schedule's name and the tick as its creation", th)
	}
	var got ThreadView
	ts.must("admin", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	if string(got.Values) == "" || len(got.Pending) != 1 {
		t.Errorf("GET the fired thread: %+v, want its values and the review question", got)
	}
	ts.must("bob", "GET", "/threads/"+th.ThreadID, nil, 404)
}
