package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// sendTo posts a message/send of text under message id to s, on context
// ctxID ("" for a new one).
func sendTo(t *testing.T, s *a2a.Server, id, ctxID, text string) *a2a.Response {
	t.Helper()
	r, err := s.Post(context.Background(), &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send", Params: map[string]any{
		"message": a2a.Message{Kind: "message", MessageID: id, Role: "user", ContextID: ctxID, Parts: []a2a.Part{a2a.TextPart(text)}}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// taskIn is the task of a message/send's response, failing t on an error.
func taskIn(t *testing.T, r *a2a.Response) a2a.Task {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("message/send: %+v", r.Error)
	}
	var task a2a.Task
	if err := json.Unmarshal(r.Result, &task); err != nil {
		t.Fatal(err)
	}
	return task
}

// reply is the text of a completed task's artifact.
func reply(task a2a.Task) string {
	if len(task.Artifacts) == 0 {
		return ""
	}
	return a2a.TextOf(task.Artifacts[0].Parts)
}

// TestMessageSentAgainAfterARestart: a message sent again to a Server that
// did not take it (its process restarted; here a second Server on the
// same store) is found in its thread's record and answered from where the
// thread stands, without a run of its own. Before, the second Server ran
// the graph again for it: its effects twice.
func TestMessageSentAgainAfterARestart(t *testing.T) {
	var runs atomic.Int32
	counter := counterGraph(t, &runs, nil, nil)
	var asked atomic.Int32
	fail := true
	ask, err := runtime.NewBuilder("Ask").Channel("question", "").Channel("reply", "").
		Node("ask", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			if v["question"] == "fail" && fail {
				return nil, errors.New("the ledger is closed")
			}
			asked.Add(1)
			ok, err := runtime.Interrupt[string](c, map[string]any{"question": v["question"]})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"reply": "answered " + ok}, nil
		}).Edge(spec.Start, "ask").Compile()
	if err != nil {
		t.Fatal(err)
	}
	serveAsk := func(store runtime.Checkpointer) *a2a.Server {
		s, err := a2a.Serve(ask, store, a2a.ServeConfig[runtime.Values, runtime.Values]{
			Input:  func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
			Output: func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("completed: the same reply on the same context", func(t *testing.T) {
		store := checkpoint.NewMemory()
		first := taskIn(t, sendTo(t, serveCounter(t, counter, store, 0), "m-1", "", "hi"))
		restarted := serveCounter(t, counter, store, 0)
		again := taskIn(t, sendTo(t, restarted, "m-1", "", "hi"))
		if again.Status.State != "completed" || again.ContextID != first.ContextID || reply(again) != reply(first) || runs.Load() != 1 {
			t.Errorf("sent again: %s on %s, reply %q after %d runs; want completed on %s, reply %q, one run",
				again.Status.State, again.ContextID, reply(again), runs.Load(), first.ContextID, reply(first))
		}
		if again.ID != first.ID {
			t.Errorf("sent again: task %s, want the first sending's %s", again.ID, first.ID)
		}
		// On its context, named this time, it is the same message.
		if named := taskIn(t, sendTo(t, serveCounter(t, counter, store, 0), "m-1", first.ContextID, "hi")); named.ContextID != first.ContextID || runs.Load() != 1 {
			t.Errorf("sent again naming its context: %s after %d runs; want its context, one run", named.ContextID, runs.Load())
		}
		if r := sendTo(t, serveCounter(t, counter, store, 0), "m-1", "", "something else"); r.Error == nil || r.Error.Code != a2a.CodeInvalidParams || runs.Load() != 1 {
			t.Errorf("its id with other parts: %+v after %d runs; want CodeInvalidParams and no run", r.Error, runs.Load())
		}
		next := taskIn(t, sendTo(t, restarted, "m-2", first.ContextID, "more"))
		if next.Status.State != "completed" || runs.Load() != 2 {
			t.Errorf("a new message on the context: %s after %d runs; want completed, a run of its own", next.Status.State, runs.Load())
		}
	})

	t.Run("paused: the same question", func(t *testing.T) {
		store := checkpoint.NewMemory()
		serve := func() *a2a.Server { return serveAsk(store) }
		first := taskIn(t, sendTo(t, serve(), "q-1", "", "approve?"))
		again := taskIn(t, sendTo(t, serve(), "q-1", "", "approve?"))
		if first.Status.State != "input-required" || again.Status.State != "input-required" || again.ContextID != first.ContextID || asked.Load() != 1 {
			t.Fatalf("sent again: %s on %s after %d runs of the node; want input-required on %s (as the first: %s), one run",
				again.Status.State, again.ContextID, asked.Load(), first.ContextID, first.Status.State)
		}
		if again.ID != first.ID {
			t.Errorf("sent again: task %s, want the first sending's %s", again.ID, first.ID)
		}
		if a2a.TextOf(again.Status.Message.Parts) != a2a.TextOf(first.Status.Message.Parts) {
			t.Errorf("the question sent again: %q, want %q", a2a.TextOf(again.Status.Message.Parts), a2a.TextOf(first.Status.Message.Parts))
		}
		answered := taskIn(t, sendTo(t, serve(), "q-2", first.ContextID, "yes"))
		// The answer, to a Server that holds no record of the task,
		// continues it under its id.
		if answered.Status.State != "completed" || reply(answered) != "answered yes" || answered.ID != first.ID {
			t.Errorf("the answer: task %s %s, reply %q; want task %s completed, \"answered yes\"", answered.ID, answered.Status.State, reply(answered), first.ID)
		}
		if resent := taskIn(t, sendTo(t, serve(), "q-2", first.ContextID, "yes")); resent.Status.State != "completed" || reply(resent) != "answered yes" || resent.ID != first.ID {
			t.Errorf("the answer sent again: task %s %s, reply %q; want task %s completed, \"answered yes\"", resent.ID, resent.Status.State, reply(resent), first.ID)
		}
	})

	t.Run("failed: the same failure", func(t *testing.T) {
		store := checkpoint.NewMemory()
		first := taskIn(t, sendTo(t, serveAsk(store), "f-1", "", "fail"))
		fail = false // a run now would pass
		again := taskIn(t, sendTo(t, serveAsk(store), "f-1", "", "fail"))
		if first.Status.State != "failed" || again.Status.State != "failed" || again.ID != first.ID || a2a.TextOf(again.Status.Message.Parts) != a2a.TextOf(first.Status.Message.Parts) {
			t.Errorf("sent again: %s %q; want failed as the first (%s %q)", again.Status.State, a2a.TextOf(again.Status.Message.Parts),
				first.Status.State, a2a.TextOf(first.Status.Message.Parts))
		}
	})
}
