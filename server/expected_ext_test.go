package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/testgraphs"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	. "github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/server/workersqueue"
)

// TestExpectedCheckpoint: a resume that names the checkpoint whose
// question it answers (expected_checkpoint_id), sent again after it was
// taken (a client that lost the reply), does not answer the thread's next
// question, though that has the same interrupt id: the server refuses it
// 409 thread-moved, or, with Config.Queue, its run ends with status error.
// Either way nothing is written. A run against a checkpoint the thread
// has left is refused the same way; a fork does not take the field.
func TestExpectedCheckpoint(t *testing.T) {
	g, err := testgraphs.Asking(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, queued := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "queue"}[queued]
		t.Run(name, func(t *testing.T) {
			mod := func(c *Config) { c.Graphs, c.Checkpointer = []Graph{Of(g)}, checkpoint.NewMemory() }
			if queued {
				q := openQueue(t)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					done <- workers.NewWorker(q, map[string]workers.Runnable{"asking": workers.Graph(g)}, workers.Poll(20*time.Millisecond)).Run(ctx)
				}()
				t.Cleanup(func() { cancel(); <-done })
				mod = func(c *Config) { c.Graphs, c.Queue, c.Checkpointer = []Graph{Of(g)}, workersqueue.New(q), nil }
			}
			ts := NewTestServer(t, mod)
			th := ts.NewThread("alice", nil)
			path := "/threads/" + th.ThreadID
			view := func() ThreadView {
				t.Helper()
				var v ThreadView
				ts.Must("alice", "GET", path, nil, 200).JSON(t, &v)
				return v
			}
			// refused checks that body, sent to route, is refused as a
			// thread that moved and moved nothing.
			refused := func(route string, body map[string]any) {
				t.Helper()
				before := view()
				r := ts.Do("alice", "POST", path+route, body)
				if queued {
					var run RunView
					r.JSON(t, &run)
					if run = ts.Wait("alice", run); run.Status != runtime.StatusError || !strings.Contains(run.Error, runtime.ErrThreadMoved.Error()) {
						t.Fatalf("%s %v: run %+v, want status error with ErrThreadMoved's text", route, body, run)
					}
				} else if p := r.Problem(t); r.Status != 409 || !strings.HasSuffix(p.Type, ":thread-moved") {
					t.Fatalf("%s %v: %d %+v, want 409 thread-moved", route, body, r.Status, p)
				}
				if after := view(); after.CheckpointID != before.CheckpointID || len(after.Pending) != len(before.Pending) {
					t.Fatalf("the refused request moved the thread from %s to %s", before.CheckpointID, after.CheckpointID)
				}
			}
			var run RunView
			ts.Must("alice", "POST", path+"/runs", map[string]any{"expected_checkpoint_id": ""}, 202).JSON(t, &run)
			if run = ts.Wait("alice", run); run.Status != runtime.StatusInterrupted {
				t.Fatalf("the start: %+v", run)
			}
			asked := view()
			if len(asked.Pending) != 1 {
				t.Fatalf("pending %+v, want one question", asked.Pending)
			}
			id := asked.Pending[0].ID
			answer := map[string]any{"answers": map[string]any{id: "one"}, "expected_checkpoint_id": asked.CheckpointID}
			ts.Must("alice", "POST", path+"/resume", answer, 202).JSON(t, &run)
			if run = ts.Wait("alice", run); run.Status != runtime.StatusInterrupted {
				t.Fatalf("the resume: %+v", run)
			}
			again := view()
			if len(again.Pending) != 1 || again.Pending[0].ID != id {
				t.Fatalf("pending %+v, want %s asked again", again.Pending, id)
			}
			refused("/resume", answer)
			refused("/runs", map[string]any{"expected_checkpoint_id": asked.CheckpointID})
			answer = map[string]any{"answers": map[string]any{id: "two"}, "expected_checkpoint_id": again.CheckpointID}
			ts.Must("alice", "POST", path+"/resume", answer, 202).JSON(t, &run)
			if run = ts.Wait("alice", run); run.Status != runtime.StatusInterrupted {
				t.Fatalf("the resume of the latest question: %+v", run)
			}
			var v struct {
				Values struct{ Log []string }
			}
			ts.Must("alice", "GET", path, nil, 200).JSON(t, &v)
			if strings.Join(v.Values.Log, " ") != "one two" {
				t.Errorf("log %v, want [one two]", v.Values.Log)
			}
			r := ts.Do("alice", "POST", path+"/history/"+asked.CheckpointID+"/fork", map[string]any{"expected_checkpoint_id": asked.CheckpointID})
			if r.Status != 400 {
				t.Errorf("a fork with expected_checkpoint_id: %d, want 400", r.Status)
			}
		})
	}
}
