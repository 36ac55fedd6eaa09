package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// getTask posts tasks/get of id to s and returns the task, failing t on an
// error.
func getTask(t *testing.T, s *a2a.Server, id string) a2a.Task {
	t.Helper()
	r, err := s.Post(context.Background(), &a2a.Request{JSONRPC: "2.0", ID: 2, Method: "tasks/get", Params: map[string]any{"id": id}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		t.Fatalf("tasks/get %s: %+v", id, r.Error)
	}
	var task a2a.Task
	if err := json.Unmarshal(r.Result, &task); err != nil {
		t.Fatal(err)
	}
	return task
}

// napper is a graph whose node sleeps d before it replies "rested"; it
// parks its thread for any wait (WithParkAfter(0)).
func napper(t *testing.T, d time.Duration) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("Napper").Channel("question", "").Channel("reply", "").
		Node("nap", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "nap", d); err != nil {
				return nil, err
			}
			return runtime.Values{"reply": "rested"}, nil
		}).Edge(spec.Start, "nap").Compile(runtime.WithParkAfter(0))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// errBroken is the error of a node that fails.
var errBroken = errors.New("broken")

// TestTaskGetSeesTheThreadGoOn: tasks/get of an open task (working on a
// timer, or input-required) reads its thread again, so a thread that went
// on without a message to the Server (a waker woke it; a person answered
// through the server's API or the ilmek command) shows how it went on,
// under the same task id. Before, tasks/get returned the record the last
// message left: working, or input-required, for ever.
func TestTaskGetSeesTheThreadGoOn(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cp   runtime.Checkpointer
	}{
		{"a timer woken", checkpoint.NewMemory()},
		{"a timer woken, on a store without thread records", plainStore{checkpoint.NewMemory()}},
	} {
		t.Run(tc.name, func(t *testing.T) { timerWoken(t, tc.cp) })
	}
	t.Run("an answer through another door", func(t *testing.T) {
		cp := checkpoint.NewMemory()
		var refunds atomic.Int32
		g := deskGraph(t, &refunds)
		s := serveCounter(t, g, cp, 0)
		task := taskIn(t, sendTo(t, s, "", "desk-1", "refund please"))
		if task.Status.State != "input-required" {
			t.Fatalf("the desk answered %q, want input-required", task.Status.State)
		}
		if again := getTask(t, s, task.ID); again.Status.Message == nil || task.Status.Message == nil ||
			again.Status.Message.MessageID != task.Status.Message.MessageID || again.Status.State != "input-required" {
			t.Errorf("tasks/get of a task still asking changed it: %+v", again)
		}
		th := g.Thread(cp, "desk-1")
		pending, err := th.Pending(ctx)
		if err != nil || len(pending) != 1 {
			t.Fatalf("pending %v %v", pending, err)
		}
		a, ok := runtime.AnswerFor(pending[0], "Approve")
		if !ok {
			t.Fatal("no action Approve")
		}
		if res, err := th.Resume(ctx, runtime.AnswersByID(map[string]any{pending[0].ID: a})); err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("resume: %q %v", res.Status, err)
		}
		done := getTask(t, s, task.ID)
		if done.Status.State != "completed" || reply(done) != "Refunded." {
			t.Fatalf("tasks/get after the answer: %+v, want completed with \"Refunded.\"", done)
		}
		if refunds.Load() != 1 {
			t.Errorf("refunds %d, want 1", refunds.Load())
		}
		// The next message on the context is a new task: the answered one
		// is no longer open.
		next := taskIn(t, sendTo(t, s, "", "desk-1", "where is my order"))
		if next.ID == task.ID || next.Status.State != "completed" {
			t.Errorf("the next message: task %s %q, want a new completed task", next.ID, next.Status.State)
		}
	})
	t.Run("a thread deleted", func(t *testing.T) {
		cp := checkpoint.NewMemory()
		var refunds atomic.Int32
		s := serveCounter(t, deskGraph(t, &refunds), cp, 0)
		task := taskIn(t, sendTo(t, s, "", "desk-3", "refund please"))
		if err := cp.DeleteThread(ctx, "desk-3"); err != nil {
			t.Fatal(err)
		}
		r, err := s.Post(ctx, &a2a.Request{JSONRPC: "2.0", ID: 3, Method: "tasks/get", Params: map[string]any{"id": task.ID}})
		if err != nil || r.Error == nil || r.Error.Code != a2a.CodeTaskNotFound {
			t.Fatalf("tasks/get of a deleted thread's task: %+v %v, want CodeTaskNotFound", r.Error, err)
		}
		next := taskIn(t, sendTo(t, s, "", "desk-3", "where is my order"))
		if next.ID == task.ID || next.Status.State != "completed" {
			t.Errorf("a message on the deleted context: task %s %q, want a new completed task", next.ID, next.Status.State)
		}
	})
	t.Run("a failed wake", func(t *testing.T) {
		cp := checkpoint.NewMemory()
		fail := true
		g, err := runtime.NewBuilder("Faller").Channel("question", "").Channel("reply", "").
			Node("nap", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				if err := runtime.Sleep(c, "nap", 100*time.Millisecond); err != nil {
					return nil, err
				}
				if fail {
					return nil, errBroken
				}
				return runtime.Values{"reply": "rested"}, nil
			}).Edge(spec.Start, "nap").Compile(runtime.WithParkAfter(0))
		if err != nil {
			t.Fatal(err)
		}
		s := serveCounter(t, g, cp, 0)
		task := taskIn(t, sendTo(t, s, "", "fall-1", "rest"))
		if res, _ := wakeWhenDue(t, g.Thread(cp, "fall-1")); res.Status != runtime.StatusError {
			t.Fatalf("wake: %q, want error", res.Status)
		}
		got := getTask(t, s, task.ID)
		if got.Status.State != "failed" || got.Status.Message == nil || a2a.TextOf(got.Status.Message.Parts) == "" {
			t.Fatalf("tasks/get after a failed wake: %+v, want failed with the error", got)
		}
	})
}

// wakeWhenDue wakes th, as a waker does, once its timer is due.
func wakeWhenDue(t *testing.T, th *runtime.Thread[runtime.Values, runtime.Values]) (runtime.Result[runtime.Values], error) {
	t.Helper()
	st, err := th.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(st.WakeAt))
	return th.Wake(context.Background())
}

// timerWoken: a task working on a timer reads as completed once a wake
// (as a waker's) ran its thread to its end.
func timerWoken(t *testing.T, cp runtime.Checkpointer) {
	g := napper(t, 150*time.Millisecond)
	s := serveCounter(t, g, cp, 0)
	task := taskIn(t, sendTo(t, s, "", "nap-1", "rest"))
	if task.Status.State != "working" {
		t.Fatalf("a parked run answered %q, want working", task.Status.State)
	}
	again := getTask(t, s, task.ID)
	if again.Status.State != "working" {
		t.Fatalf("tasks/get before the wake: %q, want working", again.Status.State)
	}
	b1, _ := json.Marshal(task)
	b2, _ := json.Marshal(again)
	if string(b1) != string(b2) {
		t.Errorf("tasks/get of a task that did not move changed it:\n%s\n%s", b1, b2)
	}
	if res, err := wakeWhenDue(t, g.Thread(cp, "nap-1")); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("wake: %q %v", res.Status, err)
	}
	done := getTask(t, s, task.ID)
	if done.ID != task.ID || done.ContextID != "nap-1" || done.Status.State != "completed" || reply(done) != "rested" {
		t.Fatalf("tasks/get after the wake: %+v, want task %s completed with \"rested\"", done, task.ID)
	}
	if later := getTask(t, s, task.ID); reply(later) != "rested" || later.Artifacts[0].ArtifactID != done.Artifacts[0].ArtifactID {
		t.Errorf("a finished task read again changed: %+v", later)
	}
}

// TestTaskGetBesideMessages: tasks/get of a context's open task while
// messages on that context run never leaves the record older than the
// last message's answer (race-clean, and the last answer stands).
func TestTaskGetBesideMessages(t *testing.T) {
	cp := checkpoint.NewMemory()
	var refunds atomic.Int32
	g := deskGraph(t, &refunds)
	s := serveCounter(t, g, cp, 0)
	task := taskIn(t, sendTo(t, s, "", "desk-2", "refund please"))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				getTask(t, s, task.ID)
			}
		}
	})
	last := taskIn(t, sendTo(t, s, "", "desk-2", "Approve"))
	close(stop)
	wg.Wait()
	if last.ID != task.ID || last.Status.State != "completed" {
		t.Fatalf("the answer: %+v", last)
	}
	if got := getTask(t, s, task.ID); got.Status.State != "completed" || reply(got) != "Refunded." {
		t.Fatalf("tasks/get after the answer: %+v", got)
	}
}
