package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	. "github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/server/workersqueue"
	"github.com/ilmek-go/ilmek/spec"
)

var pgSchemas atomic.Int64

// openQueue opens a PostgreSQL store in a fresh schema (dropped at
// cleanup) and its run-request queue. Without ILMEK_POSTGRES_DSN the test
// skips, unless CI=true.
func openQueue(t *testing.T) *workers.Queue {
	t.Helper()
	dsn := pgtest.DSN(t)
	schema := fmt.Sprintf("ilmek_pgtest_server_%d_%d", os.Getpid(), pgSchemas.Add(1))
	s, err := postgres.Open(context.Background(), dsn, postgres.Schema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		s.Close()
	})
	return workers.NewQueue(s)
}

// TestQueue: with Config.Queue, runs and resumes go to the PostgreSQL
// run-request queue and a worker pool runs them; the API reads, waits for
// and cancels them as it does runs of its own.
func TestQueue(t *testing.T) {
	q := openQueue(t)
	g := ApprovalGraph(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- workers.NewWorker(q, map[string]workers.Runnable{"approval": workers.Graph(g)}).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })

	ts := NewTestServer(t, func(c *Config) { c.Queue, c.Checkpointer = workersqueue.New(q), nil })
	th := ts.NewThread("alice", nil)
	runs := "/threads/" + th.ThreadID + "/runs"
	var run RunView
	ts.Must("alice", "POST", runs, map[string]any{"input": map[string]any{"topic": "otters"}}, 202).JSON(t, &run)
	if run.Status != runtime.StatusNew || run.RunID[:2] != "q-" {
		t.Fatalf("queued run: %+v", run)
	}
	ts.Must("alice", "GET", runs+"/"+run.RunID, nil, 200)
	run = ts.Wait("alice", run)
	if run.Status != "interrupted" || len(run.Pending) != 1 {
		t.Fatalf("run: %+v", run)
	}
	var got ThreadView
	ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &got)
	if got.Status != runtime.StatusInterrupted {
		t.Fatalf("thread: %+v", got)
	}
	paused, question := got.CheckpointID, run.Pending[0].ID
	ts.Must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{run.Pending[0].ID: map[string]any{"approved": true}}}, 202).JSON(t, &run)
	if run = ts.Wait("alice", run); run.Status != "done" {
		t.Fatalf("resume: %+v", run)
	}
	ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &got)
	if got.Status != runtime.StatusDone || len(got.Pending) != 0 || got.Step != 3 {
		t.Fatalf("finished thread: %+v", got)
	}
	ts.Must("alice", "POST", runs+"/"+run.RunID+"/cancel", nil, 202)
	// The resume's events, from the store's event log, with the worker
	// run's ids; a reconnect continues after Last-Event-ID.
	res := ts.Stream(t, "alice", runs+"/"+run.RunID+"/stream", "")
	evs := ReadSSE(t, res.Body, -1)
	res.Body.Close()
	if len(evs) < 4 || evs[0].Event != "run_start" || evs[len(evs)-1].Event != "run_end" || !strings.Contains(evs[len(evs)-1].Data, `"status":"done"`) {
		t.Fatalf("queued run's events: %+v", evs)
	}
	res = ts.Stream(t, "alice", runs+"/"+run.RunID+"/stream", evs[1].ID)
	rest := ReadSSE(t, res.Body, -1)
	res.Body.Close()
	if len(rest) != len(evs)-2 || rest[0].ID != evs[2].ID {
		t.Fatalf("reconnect after %s: %+v", evs[1].ID, rest)
	}
	ts.Must("alice", "GET", runs+"/"+run.RunID+"/stream?last_event_id=nope:1", nil, 400)
	ts.Must("alice", "GET", runs+"/q-999999/wait", nil, 404)
	ts.Must("bob", "GET", runs+"/"+run.RunID, nil, 404)
	// A fork goes through the queue too: the paused checkpoint answered
	// the other way branches the thread there.
	var fork RunView
	ts.Must("alice", "POST", "/threads/"+th.ThreadID+"/history/"+paused+"/fork",
		map[string]any{"answers": map[string]any{question: map[string]any{"approved": false}}}, 202).JSON(t, &fork)
	if fork.RunID[:2] != "q-" || fork.Kind != "fork" {
		t.Fatalf("queued fork: %+v", fork)
	}
	if fork = ts.Wait("alice", fork); fork.Status != "done" {
		t.Fatalf("fork: %+v", fork)
	}
	var branch ThreadView
	ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &branch)
	if branch.Status != runtime.StatusDone || branch.CheckpointID == got.CheckpointID || !strings.Contains(string(branch.Values), "false") {
		t.Fatalf("the forked thread: %+v", branch)
	}
}

// TestQueueThreadRunning: a thread whose request waits in the queue reads
// as running, is listed under status=running and cannot be deleted until
// the request is cancelled.
func TestQueueThreadRunning(t *testing.T) {
	q := openQueue(t) // no worker: the request stays queued
	ts := NewTestServer(t, func(c *Config) { c.Queue, c.Checkpointer = workersqueue.New(q), nil })
	th := ts.NewThread("alice", nil)
	var run RunView
	ts.Must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).JSON(t, &run)
	var got ThreadView
	ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &got)
	if got.Status != runtime.StatusRunning || got.LastRunID != run.RunID {
		t.Fatalf("a thread with a queued request: %s, last run %s", got.Status, got.LastRunID)
	}
	var list ThreadList
	ts.Must("alice", "GET", "/threads?status=running", nil, 200).JSON(t, &list)
	if len(list.Threads) != 1 || list.Threads[0].ThreadID != th.ThreadID {
		t.Fatalf("status=running: %+v", list)
	}
	ts.Must("alice", "DELETE", "/threads/"+th.ThreadID, nil, 409)
	ts.Must("alice", "POST", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/cancel", nil, 202)
	ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &got)
	if got.Status != runtime.StatusNew {
		t.Fatalf("after the cancel: %s", got.Status)
	}
	ts.Must("alice", "DELETE", "/threads/"+th.ThreadID, nil, 204)
}

// TestQueueParkedThread: a queued run whose node sleeps past ParkAfter
// ends parked; the thread reads parked with its wake time and is listed
// under status=parked; a worker wakes it when the time comes and it
// reads done, with no wake time.
func TestQueueParkedThread(t *testing.T) {
	q := openQueue(t)
	g, err := runtime.NewBuilder("napper").Channel("log", spec.Append).
		Node("nap", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(ctx, "nap", 1500*time.Millisecond); err != nil {
				return nil, err
			}
			return runtime.Values{"log": "woke"}, nil
		}).Edge(spec.Start, "nap").Compile()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- workers.NewWorker(q, map[string]workers.Runnable{"napper": workers.Graph(g)}, workers.Poll(20*time.Millisecond)).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	ts := NewTestServer(t, func(c *Config) { c.Graphs, c.Queue, c.Checkpointer = []Graph{Of(g)}, workersqueue.New(q), nil })
	th := ts.NewThread("alice", nil)
	var run RunView
	ts.Must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).JSON(t, &run)
	if run = ts.Wait("alice", run); run.Status != runtime.StatusParked {
		t.Fatalf("run: %+v", run)
	}
	var got ThreadView
	ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &got)
	if got.Status != runtime.StatusParked || got.WakeAt == nil || time.Until(*got.WakeAt) <= 0 || time.Until(*got.WakeAt) > 2*time.Second {
		t.Fatalf("parked thread: status %s, wake at %v", got.Status, got.WakeAt)
	}
	var list ThreadList
	ts.Must("alice", "GET", "/threads?status=parked", nil, 200).JSON(t, &list)
	if len(list.Threads) != 1 || list.Threads[0].WakeAt == nil {
		t.Fatalf("status=parked: %+v", list)
	}
	deadline := time.Now().Add(15 * time.Second)
	for got.Status != runtime.StatusDone {
		if time.Now().After(deadline) {
			t.Fatalf("thread not woken: %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
		got = ThreadView{}
		ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &got)
	}
	if got.WakeAt != nil {
		t.Errorf("woken thread still has a wake time %v", got.WakeAt)
	}
}

// TestQueueIdempotencyKey: with Config.Queue, a run or a resume sent again
// with its Idempotency-Key (its reply lost) answers the request the key
// made and queues nothing more; the key with another request of the
// thread is refused 422.
func TestQueueIdempotencyKey(t *testing.T) {
	q := openQueue(t)
	ts := NewTestServer(t, func(c *Config) { c.Queue, c.Checkpointer = workersqueue.New(q), nil })
	th := ts.NewThread("alice", nil)
	runs := "/threads/" + th.ThreadID + "/runs"
	key := http.Header{"Idempotency-Key": {"order-7"}}
	body := map[string]any{"input": map[string]any{"topic": "otters"}, "double_texting": "enqueue"}
	var first, again RunView
	ts.DoWith("alice", "POST", runs, body, key).JSON(t, &first)
	ts.DoWith("alice", "POST", runs, body, key).JSON(t, &again)
	if first.RunID == "" || again.RunID != first.RunID {
		t.Fatalf("the same run sent twice with its key: %q then %q, want one request", first.RunID, again.RunID)
	}
	var n int
	if err := q.Store().Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{q.Store().SchemaName()}.Sanitize()+".ilmek_requests WHERE thread_id = $1", th.ThreadID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d requests queued (%v), want 1", n, err)
	}
	other := map[string]any{"input": map[string]any{"topic": "owls"}, "double_texting": "enqueue"}
	r := ts.DoWith("alice", "POST", runs, other, key)
	if p := r.Problem(t); r.Status != 422 || !strings.HasSuffix(p.Type, "idempotency-key-reused") {
		t.Fatalf("another run with the key: %d %+v, want 422 idempotency-key-reused", r.Status, p)
	}
}
