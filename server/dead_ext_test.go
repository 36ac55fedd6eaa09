package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	. "github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/server/workersqueue"
)

// TestQueueDeadRequests: a dead request of the queue is listed at GET
// /queue/dead with its claims, to the principals who may read its thread
// only, and POST /queue/dead/{id}/retry queues it again (for those who may
// run the thread), after which a worker runs it; a request that is not
// dead answers 409, a server without a queue 501.
func TestQueueDeadRequests(t *testing.T) {
	q := openQueue(t)
	ts := NewTestServer(t, func(c *Config) { c.Queue, c.Checkpointer = workersqueue.New(q), nil })
	th := ts.NewThread("alice", nil)
	var run RunView
	ts.Must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).JSON(t, &run)
	id := strings.TrimPrefix(run.RunID, "q-")
	// No worker runs: the request is made dead as a worker's claims
	// expiring would leave it.
	if _, err := q.Store().Pool().Exec(context.Background(), `UPDATE "`+q.Store().SchemaName()+`".ilmek_requests
		SET state = 'dead', error = 'claimed 3 times', claim = 3,
			claims_log = '[{"claim": 1, "worker": "w #1", "at": "2026-01-02T03:04:05Z"}, {"claim": 2, "worker": "w #2", "at": "2026-01-02T03:04:06Z", "error": "busy", "released": true, "refused": true},
				{"claim": 3, "worker": "w #3", "at": "2026-01-02T03:04:07Z", "error": "i/o timeout", "released": true, "stuck": true}]'
		WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Requests []DeadRequest `json:"requests"`
	}
	ts.Must("alice", "GET", "/queue/dead", nil, 200).JSON(t, &list)
	if len(list.Requests) != 1 {
		t.Fatalf("alice's dead requests: %+v", list)
	}
	d := list.Requests[0]
	if d.RequestID != id || d.ThreadID != th.ThreadID || d.Error != "claimed 3 times" || len(d.Claims) != 3 ||
		d.Claims[0].Worker != "w #1" || d.Claims[0].Error != workers.ErrClaimExpired || !d.Claims[1].Released || d.Claims[1].Error != "busy" ||
		!d.Claims[1].Refused || d.Claims[1].Stuck || !d.Claims[2].Stuck || d.Claims[2].Refused {
		t.Fatalf("dead request: %+v", d)
	}
	ts.Must("bob", "GET", "/queue/dead", nil, 200).JSON(t, &list)
	if len(list.Requests) != 0 {
		t.Errorf("bob sees alice's dead requests: %+v", list)
	}
	ts.Must("alice", "GET", "/queue/dead?limit=0", nil, 400)
	ts.Must("bob", "POST", "/queue/dead/"+id+"/retry", nil, 404)
	ts.Must("alice", "POST", "/queue/dead/999999/retry", nil, 404)
	ts.Must("alice", "POST", "/queue/dead/"+id+"/retry", nil, 202).JSON(t, &run)
	if run.RunID != "q-"+id || run.ThreadID != th.ThreadID {
		t.Fatalf("retried: %+v", run)
	}
	if p := ts.Must("alice", "POST", "/queue/dead/"+id+"/retry", nil, 409).Problem(t); p.Type != ProblemTypePrefix+"not-dead" {
		t.Errorf("a second retry: %+v", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- workers.NewWorker(q, map[string]workers.Runnable{"approval": workers.Graph(ApprovalGraph(t))}).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	if run = ts.Wait("alice", run); run.Status != "interrupted" {
		t.Fatalf("the retried request: %+v", run)
	}

	plain := NewTestServer(t, nil)
	if p := plain.Must("alice", "GET", "/queue/dead", nil, 501).Problem(t); p.Type != ProblemTypePrefix+"no-dead-letters" {
		t.Errorf("without a queue: %+v", p)
	}
	plain.Must("alice", "POST", "/queue/dead/1/retry", nil, 501)
}

// TestQueueThreadHeldByAWorker: a thread whose request a worker holds
// reads as running even when this server did not submit the request (a
// wake of a parked thread, another process's submit), and reads as
// before once it ended.
func TestQueueThreadHeldByAWorker(t *testing.T) {
	q := openQueue(t)
	ts := NewTestServer(t, func(c *Config) { c.Queue, c.Checkpointer = workersqueue.New(q), nil })
	th := ts.NewThread("alice", nil)
	ctx := context.Background()
	id, err := q.Submit(ctx, workers.Request{Graph: "approval", Thread: th.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	set := func(state string) {
		t.Helper()
		if _, err := q.Store().Pool().Exec(ctx, `UPDATE "`+q.Store().SchemaName()+`".ilmek_requests SET state = $2, claim_until = now() + interval '1 hour' WHERE id = $1`, id, state); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		state string
		want  string
	}{{"running", "running"}, {"cancelled", "new"}} {
		set(c.state)
		var v ThreadView
		ts.Must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).JSON(t, &v)
		if string(v.Status) != c.want {
			t.Errorf("request %s: thread status %s, want %s", c.state, v.Status, c.want)
		}
	}
}

// TestQueuePartitionFromMetadata: with Config.QueuePartition, a run the
// server submits to the queue carries the thread's metadata value under
// that key as its partition, whose limits then apply to it.
func TestQueuePartitionFromMetadata(t *testing.T) {
	q := openQueue(t)
	ts := NewTestServer(t, func(c *Config) { c.Queue, c.Checkpointer, c.QueuePartition = workersqueue.New(q), nil, "tenant" })
	for _, c := range []struct {
		meta map[string]any
		want string
	}{{map[string]any{"tenant": "acme"}, "acme"}, {nil, ""}} {
		th := ts.NewThread("alice", map[string]any{"metadata": c.meta})
		var run RunView
		ts.Must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).JSON(t, &run)
		var got string
		if err := q.Store().Pool().QueryRow(context.Background(), `SELECT partition_key FROM "`+q.Store().SchemaName()+`".ilmek_requests WHERE id = $1`,
			strings.TrimPrefix(run.RunID, "q-")).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("metadata %v: partition %q, want %q", c.meta, got, c.want)
		}
	}
}

// TestQueuePriorityFromHook: the operator's QueuePriority hook, not the
// client, sets a queued request's priority, from the caller and the
// request.
func TestQueuePriorityFromHook(t *testing.T) {
	q := openQueue(t)
	ts := NewTestServer(t, func(c *Config) {
		c.Queue, c.Checkpointer = workersqueue.New(q), nil
		c.QueuePriority = func(_ context.Context, p Principal, r QueueRequest) int32 {
			if p.ID == "alice" && r.Graph != "" {
				return 7
			}
			return 0
		}
	})
	for _, c := range []struct {
		who  string
		want int32
	}{{"alice", 7}, {"bob", 0}} {
		th := ts.NewThread(c.who, nil)
		var run RunView
		ts.Must(c.who, "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).JSON(t, &run)
		var got int32
		if err := q.Store().Pool().QueryRow(context.Background(), `SELECT priority FROM "`+q.Store().SchemaName()+`".ilmek_requests WHERE id = $1`,
			strings.TrimPrefix(run.RunID, "q-")).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: priority %d, want %d", c.who, got, c.want)
		}
	}
}
