package server

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// threadTrace is what a request leaves of itself on a thread: the runs GET
// .../runs lists, the thread's stored metadata and updated time, and its
// view's last run and status.
type threadTrace struct {
	runs    []string
	meta    map[string]string
	updated time.Time
	lastRun string
	status  runtime.Status
}

func (ts *testServer) trace(t *testing.T, thread string) threadTrace {
	t.Helper()
	var tr threadTrace
	var runs RunList
	ts.must("alice", "GET", "/threads/"+thread+"/runs", nil, 200).json(t, &runs)
	for _, r := range runs.Runs {
		tr.runs = append(tr.runs, r.RunID+":"+string(r.Status))
	}
	info := ts.info(t.Context(), thread)
	if info == nil {
		t.Fatalf("thread %s has no stored record", thread)
	}
	tr.meta, tr.updated = info.Meta, info.Updated
	var v ThreadView
	ts.must("alice", "GET", "/threads/"+thread, nil, 200).json(t, &v)
	tr.lastRun, tr.status = v.LastRunID, v.Status
	return tr
}

// TestRefusedRequestsWriteNothing: a run, resume or fork the server
// refuses (the answer does not fit, no such interrupt, the thread is not
// waiting, the input does not decode...) leaves no run in GET .../runs,
// no change to the thread's metadata or updated time, and no last run,
// as README's "refused before anything is written" promises. It used to
// record a run with status error and move the thread to the front of
// GET /threads.
func TestRefusedRequestsWriteNothing(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"store":          nil,
		"memory records": func(c *Config) { c.Checkpointer = plainStore{checkpoint.NewMemory()} },
	} {
		t.Run(name, func(t *testing.T) { testRefusedRequestsWriteNothing(t, mod) })
	}
}

func testRefusedRequestsWriteNothing(t *testing.T, mod func(*Config)) {
	ts := newTestServer(t, mod)
	fresh := ts.newThread("alice", nil)
	paused := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+paused.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).json(t, &run)
	run = ts.wait("alice", run)
	if run.Status != runtime.StatusInterrupted || len(run.Pending) != 1 {
		t.Fatalf("run: %+v", run)
	}
	pi := run.Pending[0]
	var hist struct{ Checkpoints []CheckpointView }
	ts.must("alice", "GET", "/threads/"+paused.ThreadID+"/history", nil, 200).json(t, &hist)
	if len(hist.Checkpoints) == 0 {
		t.Fatal("no history")
	}
	latest := hist.Checkpoints[0].CheckpointID

	for _, c := range []struct {
		name, thread, path string
		body               any
		status             int
		typ                string
	}{
		{"resume, wrong answer type", paused.ThreadID, "/resume", map[string]any{"answers": map[string]any{pi.ID: "yes"}}, 422, "answer-type"},
		{"resume, unknown interrupt", paused.ThreadID, "/resume", map[string]any{"answers": map[string]any{"nope:interrupt#0": true}}, 422, "unknown-interrupt"},
		{"resume of a new thread", fresh.ThreadID, "/resume", map[string]any{"answers": map[string]any{pi.ID: map[string]any{"approved": true}}}, 409, "not-interrupted"},
		{"run on a waiting thread", paused.ThreadID, "/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 409, "waiting-on-person"},
		{"run, input not an object", fresh.ThreadID, "/runs", map[string]any{"input": 5}, 400, "bad-input"},
		{"fork, wrong answer type", paused.ThreadID, "/history/" + latest + "/fork", map[string]any{"answers": map[string]any{pi.ID: "yes"}}, 422, "answer-type"},
		{"fork, no such checkpoint", paused.ThreadID, "/history/nope/fork", nil, 404, "not-found"},
	} {
		before := ts.trace(t, c.thread)
		time.Sleep(2 * time.Millisecond) // a write now would move the updated time
		p := ts.must("alice", "POST", "/threads/"+c.thread+c.path, c.body, c.status).problem(t)
		if p.Type != ProblemTypePrefix+c.typ {
			t.Errorf("%s: problem %+v, want type %s", c.name, p, c.typ)
		}
		after := ts.trace(t, c.thread)
		if !slices.Equal(after.runs, before.runs) {
			t.Errorf("%s: runs %v, want %v as before", c.name, after.runs, before.runs)
		}
		if !maps.Equal(after.meta, before.meta) {
			t.Errorf("%s: metadata %v, want %v as before", c.name, after.meta, before.meta)
		}
		if !after.updated.Equal(before.updated) {
			t.Errorf("%s: updated %v, want %v as before", c.name, after.updated, before.updated)
		}
		if after.lastRun != before.lastRun || after.status != before.status {
			t.Errorf("%s: last run %q, status %s; want %q, %s as before", c.name, after.lastRun, after.status, before.lastRun, before.status)
		}
	}
	// The thread still takes the right answer, and that run is recorded.
	ts.must("alice", "POST", "/threads/"+paused.ThreadID+"/resume", map[string]any{"answers": map[string]any{pi.ID: map[string]any{"approved": true}}}, 202).json(t, &run)
	run = ts.wait("alice", run)
	if run.Status != runtime.StatusDone {
		t.Fatalf("resume: %+v", run)
	}
	after := ts.trace(t, paused.ThreadID)
	if len(after.runs) != 2 || after.lastRun != run.RunID || after.status != runtime.StatusDone {
		t.Errorf("after the resume: %+v, want 2 runs, the last %s, done", after, run.RunID)
	}
}
