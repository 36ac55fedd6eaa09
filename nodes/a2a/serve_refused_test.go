package a2a_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// servedAgent serves g (its "question" channel the message's text, its
// "reply" channel the answer) on a memory store and connects to it.
func servedAgent(t *testing.T, g *runtime.Graph[runtime.Values, runtime.Values]) *a2a.Agent {
	t.Helper()
	srv, err := a2a.Serve(g, checkpoint.NewMemory(), a2a.ServeConfig[runtime.Values, runtime.Values]{
		Input:  func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
		Output: func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := a2a.Connect(context.Background(), srv)
	if err != nil {
		t.Fatal(err)
	}
	return agent
}

// TestServeRefusedRunIsAnError: a message/send whose run the runtime
// refuses before it starts (here: the thread is busy with another run) is
// a JSON-RPC error carrying the refusal, as a refused resume already was,
// not a task: nothing ran, so the caller's a2a_call fails unjournaled and a
// retry sends again. Before, the agent answered a "failed" task, which the
// caller journaled as the remote agent's outcome.
func TestServeRefusedRunIsAnError(t *testing.T) {
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	g, err := runtime.NewBuilder("Slow Desk").Channel("question", "").Channel("reply", "").
		Node("agent", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			if s["question"] == "slow" {
				close(started)
				<-release
			}
			return runtime.Values{"reply": "ok"}, nil
		}).Edge(spec.Start, "agent").Compile()
	if err != nil {
		t.Fatal(err)
	}
	agent := servedAgent(t, g)
	first := make(chan a2a.Result)
	go func() {
		r, err := agent.Invoke(ctx, "slow", a2a.SendOptions{ContextID: "conv"})
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	<-started
	r, err := agent.Invoke(ctx, "fast", a2a.SendOptions{ContextID: "conv"})
	var rpc *a2a.RPCError
	if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "busy") {
		t.Errorf("a send to a busy thread: result %+v, err %v; want a JSON-RPC error saying the thread is busy", r, err)
	}
	close(release)
	if r := <-first; r.State != "completed" || r.Text != "ok" {
		t.Errorf("the first send: %+v", r)
	}
}

// TestServeAnswerThatDoesNotFit: an answer the paused run cannot take (of
// the wrong type for its interrupt, or by an id it does not wait on) is
// the JSON-RPC error CodeInvalidParams documents, not an internal error
// (-32603), and leaves the task open: the right answer then completes it.
func TestServeAnswerThatDoesNotFit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		text string
		data map[string]any
	}{
		{"text of the wrong type", "maybe", nil},
		{"JSON of the wrong type", `"yes"`, nil},
		{"an unknown id", "", map[string]any{"answers": map[string]any{"nope": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := runtime.NewBuilder("Typed Desk").Channel("question", "").Channel("reply", "").
				Node("agent", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
					a, err := runtime.Interrupt[map[string]bool](c, "Refund?", runtime.WithActions(runtime.NewAction("Approve", map[string]bool{"approved": true})))
					if err != nil {
						return nil, err
					}
					if a["approved"] {
						return runtime.Values{"reply": "Refunded."}, nil
					}
					return runtime.Values{"reply": "Cancelled."}, nil
				}).Edge(spec.Start, "agent").Compile()
			if err != nil {
				t.Fatal(err)
			}
			agent := servedAgent(t, g)
			paused, err := agent.Invoke(ctx, "refund please", a2a.SendOptions{})
			if err != nil || !paused.NeedsInput {
				t.Fatalf("pause: %+v %v", paused, err)
			}
			_, err = agent.Invoke(ctx, tc.text, a2a.SendOptions{ContextID: paused.ContextID, TaskID: paused.TaskID, Data: tc.data})
			var re *a2a.RPCError
			if !errors.As(err, &re) || re.Code != a2a.CodeInvalidParams {
				t.Errorf("err %v, want a JSON-RPC error %d", err, a2a.CodeInvalidParams)
			}
			r, err := agent.Invoke(ctx, "Approve", a2a.SendOptions{ContextID: paused.ContextID, TaskID: paused.TaskID})
			if err != nil || r.State != "completed" || r.Text != "Refunded." || r.TaskID != paused.TaskID {
				t.Errorf("the right answer after the refusal: %+v %v", r, err)
			}
		})
	}
}
