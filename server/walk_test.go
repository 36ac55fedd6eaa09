package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	. "github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/server/workersqueue"
)

// TestEveryOutcome walks every outcome the server produces — successes,
// refusals of each kind, runs that end done, interrupted, error and
// aborted — on the memory store, on SQLite and with the PostgreSQL queue,
// and checks each response against openapi.json (every request of
// TestServer is). With a queue, the refusals the workers make (a start
// input that is not an object, a wrong-typed answer, an unknown interrupt,
// a resume of a thread that is not waiting) end the run with status
// "error" and the reason; they used to end with status "", which the
// document does not allow.
func TestEveryOutcome(t *testing.T) {
	for _, backend := range []string{"memory", "sqlite", "queue"} {
		t.Run(backend, func(t *testing.T) {
			mod := func(c *Config) {}
			switch backend {
			case "sqlite":
				store, err := sqlite.Open(filepath.Join(t.TempDir(), "walk.db"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				mod = func(c *Config) { c.Checkpointer = store }
			case "queue":
				q := openQueue(t)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					done <- workers.NewWorker(q, map[string]workers.Runnable{"approval": workers.Graph(ApprovalGraph(t))}).Run(ctx)
				}()
				t.Cleanup(func() { cancel(); <-done })
				mod = func(c *Config) { c.Queue, c.Checkpointer = workersqueue.New(q), nil }
			}
			walk(t, NewTestServer(t, mod), backend == "queue")
		})
	}
}

func walk(t *testing.T, ts *TestServer, queued bool) {
	// refused is a request the server refuses itself with status, or,
	// with a queue, accepts and the workers then end with status error.
	refused := func(path string, body any, status int, why string) {
		t.Helper()
		if !queued {
			p := ts.Must("alice", "POST", path, body, status).Problem(t)
			if p.Status != status || p.Detail == "" {
				t.Errorf("%s (%s): %+v", path, why, p)
			}
			return
		}
		var run RunView
		ts.Must("alice", "POST", path, body, 202).JSON(t, &run)
		if run = ts.Wait("alice", run); run.Status != runtime.StatusError || run.Error == "" {
			t.Errorf("queued %s (%s): status %q, error %q; want error and the reason", path, why, run.Status, run.Error)
		}
	}

	ts.Must("alice", "GET", "/openapi.json", nil, 200)
	ts.Must("alice", "GET", "/graphs", nil, 200)
	ts.Must("", "GET", "/graphs", nil, 401)

	// Threads.
	th := ts.NewThread("alice", map[string]any{"metadata": map[string]string{"team": "blog"}})
	id := th.ThreadID
	ts.Must("alice", "POST", "/threads", "{", 400)
	ts.Must("alice", "POST", "/threads", map[string]any{"metadata": map[string]string{"owner": "mallory"}}, 400)
	ts.Must("alice", "POST", "/threads", map[string]any{"graph": "nope"}, 422)
	ts.Must("alice", "POST", "/threads", map[string]any{"thread_id": id}, 409)
	ts.Must("alice", "GET", "/threads", nil, 200)
	ts.Must("alice", "GET", "/threads?status=interrupted&metadata.team=blog", nil, 200)
	ts.Must("alice", "GET", "/threads?limit=0", nil, 400)
	ts.Must("alice", "GET", "/threads?status=sleeping", nil, 400)
	ts.Must("alice", "GET", "/threads?cursor=nope", nil, 400)
	ts.Must("alice", "GET", "/threads/"+id, nil, 200)
	ts.Must("alice", "GET", "/threads/nope", nil, 404)
	ts.Must("bob", "GET", "/threads/"+id, nil, 404)
	ts.Must("alice", "GET", "/threads/"+id+"/history", nil, 200)
	ts.Must("alice", "GET", "/threads/"+id+"/history?limit=0", nil, 400)

	// A resume of a thread that is not waiting.
	refused("/threads/"+id+"/resume", map[string]any{"answers": map[string]any{"review:interrupt#0": map[string]any{"approved": true}}}, 409, "not waiting")
	ts.Must("alice", "POST", "/threads/"+id+"/resume", map[string]any{"answers": map[string]any{}}, 400)

	// A start input that is not an object.
	bad := ts.NewThread("alice", nil)
	refused("/threads/"+bad.ThreadID+"/runs", map[string]any{"input": 5}, 400, "input not an object")
	ts.Must("alice", "POST", "/threads/"+bad.ThreadID+"/runs", `{"input": `, 400)
	ts.Must("alice", "POST", "/threads/"+bad.ThreadID+"/runs", map[string]any{"double_texting": "sometimes"}, 400)

	// A run that pauses on a person.
	runs := "/threads/" + id + "/runs"
	var run RunView
	ts.Must("alice", "POST", runs, map[string]any{"input": map[string]any{"topic": "otters"}}, 202).JSON(t, &run)
	if run = ts.Wait("alice", run); run.Status != runtime.StatusInterrupted || len(run.Pending) != 1 {
		t.Fatalf("run: %+v", run)
	}
	ts.Must("alice", "GET", runs+"/"+run.RunID, nil, 200)
	ts.Must("alice", "GET", runs+"/"+run.RunID+"/wait?timeout=1s", nil, 200)
	ts.Must("alice", "GET", runs+"/"+run.RunID+"/wait?timeout=forever", nil, 400)
	ts.Must("alice", "GET", runs+"/nope", nil, 404)
	ts.Must("alice", "GET", runs+"/q-999999/wait", nil, 404)
	ts.Must("bob", "GET", runs+"/"+run.RunID, nil, 404)
	res := ts.Stream(t, "alice", runs+"/"+run.RunID+"/stream", "")
	evs := ReadSSE(t, res.Body, -1)
	res.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].Event != "run_end" {
		t.Errorf("events: %+v", evs)
	}
	ts.Must("alice", "GET", runs+"/"+run.RunID+"/stream?last_event_id=x:1", nil, 400)
	ts.Must("alice", "POST", runs+"/"+run.RunID+"/cancel", nil, 202)
	ts.Must("alice", "POST", runs+"/"+run.RunID+"/cancel?mode=later", nil, 400)
	ts.Must("alice", "GET", "/threads/"+id+"/diagram", nil, 200)
	ts.Must("alice", "GET", "/threads/"+id+"/diagram?format=dot", nil, 200)
	ts.Must("alice", "GET", "/threads/"+id+"/diagram?format=svg", nil, 501)
	ts.Must("alice", "GET", "/threads/"+id+"/diagram?format=png", nil, 400)
	var waiting ThreadView
	ts.Must("alice", "GET", "/threads/"+id, nil, 200).JSON(t, &waiting)
	if waiting.Status != runtime.StatusInterrupted {
		t.Errorf("waiting thread: %s", waiting.Status)
	}

	// Refused answers: the wrong type, an unknown interrupt. The
	// interrupt stays open.
	resume := "/threads/" + id + "/resume"
	pid := run.Pending[0].ID
	refused(resume, map[string]any{"answers": map[string]any{pid: map[string]any{"approved": "yes"}}}, 422, "wrong-typed answer")
	refused(resume, map[string]any{"answers": map[string]any{"nope": true}}, 422, "unknown interrupt")
	ts.Must("alice", "GET", "/threads/"+id, nil, 200).JSON(t, &waiting)
	if len(waiting.Pending) != 1 {
		t.Fatalf("after the refusals the interrupt is not open: %+v", waiting)
	}

	// A fork (through the queue too), then the answer that finishes the
	// thread.
	var hist struct{ Checkpoints []CheckpointView }
	ts.Must("alice", "GET", "/threads/"+id+"/history", nil, 200).JSON(t, &hist)
	cp := ""
	for _, c := range hist.Checkpoints {
		if len(c.Pending) == 0 && len(c.Next) > 0 {
			cp = c.CheckpointID // before the pause
		}
	}
	var fork RunView
	ts.Must("alice", "POST", "/threads/"+id+"/history/"+cp+"/fork", nil, 202).JSON(t, &fork)
	if fork = ts.Wait("alice", fork); fork.Status != runtime.StatusInterrupted {
		t.Errorf("fork: %+v", fork)
	}
	ts.Must("alice", "POST", "/threads/"+id+"/history/nope/fork", nil, 404)
	ts.Must("alice", "GET", "/threads/"+id, nil, 200).JSON(t, &waiting)
	pid = waiting.Pending[0].ID
	ts.Must("alice", "POST", resume, map[string]any{"answers": map[string]any{pid: map[string]any{"approved": true}}}, 202).JSON(t, &run)
	if run = ts.Wait("alice", run); run.Status != runtime.StatusDone {
		t.Fatalf("resume: %+v", run)
	}
	var done ThreadView
	ts.Must("alice", "GET", "/threads/"+id, nil, 200).JSON(t, &done)
	if done.Status != runtime.StatusDone || len(done.Pending) != 0 {
		t.Errorf("finished thread: %+v", done)
	}

	// The console's routes: every status the runtime knows filters the
	// listing; search by id; the thread's runs; its state at a
	// checkpoint, with what the superstep that wrote it ran.
	for _, st := range []runtime.Status{runtime.StatusNew, runtime.StatusRunning, runtime.StatusInterrupted,
		runtime.StatusParked, runtime.StatusDone, runtime.StatusError, runtime.StatusAborted} {
		var list ThreadList
		ts.Must("alice", "GET", "/threads?status="+string(st), nil, 200).JSON(t, &list)
		found := false
		for _, th := range list.Threads {
			found = found || th.ThreadID == id
			if th.Status != st {
				t.Errorf("status=%s lists %s, which is %s", st, th.ThreadID, th.Status)
			}
		}
		if found != (st == runtime.StatusDone) {
			t.Errorf("status=%s: the done thread listed %v", st, found)
		}
	}
	var found ThreadList
	ts.Must("alice", "GET", "/threads?q="+strings.ToUpper(id[:8]), nil, 200).JSON(t, &found)
	if len(found.Threads) != 1 || found.Threads[0].ThreadID != id {
		t.Errorf("search by id: %+v", found)
	}
	ts.Must("alice", "GET", "/threads?q=team%3Dblog", nil, 200).JSON(t, &found)
	if len(found.Threads) != 1 || found.Threads[0].ThreadID != id {
		t.Errorf("search by metadata: %+v", found)
	}
	var rl RunList
	ts.Must("alice", "GET", runs, nil, 200).JSON(t, &rl)
	if len(rl.Runs) < 2 || rl.Runs[0].RunID != run.RunID || rl.Runs[0].Status != runtime.StatusDone {
		t.Errorf("runs of the thread: %+v", rl)
	}
	ts.Must("bob", "GET", runs, nil, 404)
	ts.Must("alice", "GET", "/threads/"+id+"/history", nil, 200).JSON(t, &hist)
	last := hist.Checkpoints[0]
	var at CheckpointView
	ts.Must("alice", "GET", "/threads/"+id+"/history/"+last.CheckpointID, nil, 200).JSON(t, &at)
	if at.CheckpointID != last.CheckpointID || len(at.Nodes) == 0 || len(at.Writes) == 0 || at.Started == nil {
		t.Errorf("checkpoint %s: %+v", last.CheckpointID, at)
	}
	ts.Must("alice", "GET", "/threads/"+id+"/history/nope", nil, 404)
	if d := ts.Must("alice", "GET", "/threads/"+id+"/diagram?format=dot&checkpoint="+hist.Checkpoints[len(hist.Checkpoints)-1].CheckpointID, nil, 200); !strings.Contains(string(d.Body), `"write" [label="write", id="node_write", class="next"`) {
		t.Errorf("the diagram at the first checkpoint:\n%s", d.Body)
	}
	ts.Must("alice", "GET", "/threads/"+id+"/diagram?checkpoint=nope", nil, 404)
	if !queued {
		// A fork from the pause with another answer.
		pause := ""
		for _, c := range hist.Checkpoints {
			if len(c.Pending) > 0 {
				pause = c.CheckpointID
			}
		}
		var fork RunView
		ts.Must("alice", "POST", "/threads/"+id+"/history/"+pause+"/fork",
			map[string]any{"answers": map[string]any{pid: map[string]any{"approved": false}}}, 202).JSON(t, &fork)
		if fork = ts.Wait("alice", fork); fork.Status != runtime.StatusDone || fork.Kind != "fork" {
			t.Errorf("fork with an edited answer: %+v", fork)
		}
		ts.Must("alice", "POST", "/threads/"+id+"/history/"+pause+"/fork",
			map[string]any{"answers": map[string]any{pid: true}, "input": map[string]any{"topic": "x"}}, 400)
	}
	ts.Must("bob", "DELETE", "/threads/"+bad.ThreadID, nil, 404)
	ts.Must("alice", "DELETE", "/threads/"+bad.ThreadID, nil, 204)
	ts.Must("alice", "GET", "/threads/"+bad.ThreadID, nil, 404)

	ts.Must("alice", "POST", "/no/such/route", nil, 404)
	if p := ts.Must("alice", "POST", "/threads", strings.Repeat(" ", 2<<20), 413).Problem(t); p.Status != 413 {
		t.Errorf("413: %+v", p)
	}
}
