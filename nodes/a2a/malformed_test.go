package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// answering is an agent that answers every request with one response.
type answering struct {
	resp  a2a.Response
	posts atomic.Int32
}

func (a *answering) AgentCard(context.Context) (*a2a.AgentCard, error) {
	return &a2a.AgentCard{Name: "Helper Bot", URL: "https://bot.example.com/a2a"}, nil
}

func (a *answering) Post(context.Context, *a2a.Request) (*a2a.Response, error) {
	a.posts.Add(1)
	r := a.resp
	return &r, nil
}

func withResult(raw string) a2a.Response {
	return a2a.Response{JSONRPC: "2.0", ID: json.RawMessage("1"), Result: json.RawMessage(raw)}
}

// TestMalformedAnswers: an answer that is neither a task nor a message, a
// task without a status, and a response without a result object are
// errors matching ErrMalformed that name the agent and the method, as the
// reference refuses them; before, message/send read null, {} and any other
// object as a completed task "message:" with no text.
func TestMalformedAnswers(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, method string
		resp         a2a.Response
		says         string
	}{
		{"null result", "message/send", withResult(`null`), "no result"},
		{"no result, no error", "message/send", a2a.Response{JSONRPC: "2.0", ID: json.RawMessage("1")}, "no result"},
		{"empty object", "message/send", withResult(`{}`), "neither a task nor a message"},
		{"other object", "message/send", withResult(`{"hello": "world"}`), "neither a task nor a message"},
		{"message without parts", "message/send", withResult(`{"kind": "message", "messageId": "m1"}`), "neither a task nor a message"},
		{"message with a non-string id", "message/send", withResult(`{"kind": "message", "messageId": 7, "parts": []}`), "neither a task nor a message"},
		{"string", "message/send", withResult(`"a string"`), "neither a task nor a message"},
		{"array", "message/send", withResult(`[]`), "neither a task nor a message"},
		{"task without status", "message/send", withResult(`{"kind": "task", "id": "t-7"}`), `task "t-7", which has no status`},
		{"task with status null", "message/send", withResult(`{"kind": "task", "id": "t-7", "status": null}`), `task "t-7", which has no status`},
		{"task whose status is a string", "message/send", withResult(`{"kind": "task", "id": "t-7", "status": "done"}`), `task "t-7", which has no status`},
		{"tasks/get null", "tasks/get", withResult(`null`), "no result"},
		{"tasks/get number", "tasks/get", withResult(`42`), "not a task"},
		{"tasks/get task without status", "tasks/get", withResult(`{"kind": "task", "id": "t-7"}`), `task "t-7", which has no status`},
		{"tasks/cancel null", "tasks/cancel", withResult(`null`), "no result"},
	} {
		t.Run(c.name, func(t *testing.T) {
			agent, err := a2a.Connect(ctx, &answering{resp: c.resp})
			if err != nil {
				t.Fatal(err)
			}
			var r a2a.Result
			switch c.method {
			case "message/send":
				r, err = agent.Invoke(ctx, "hi", a2a.SendOptions{})
			case "tasks/get":
				r, err = agent.GetTask(ctx, "t-7")
			default:
				r, err = agent.CancelTask(ctx, "t-7")
			}
			if !errors.Is(err, a2a.ErrMalformed) {
				t.Fatalf("result %+v, err %v; want an error matching ErrMalformed", r, err)
			}
			for _, want := range []string{`agent "helper-bot"`, c.method, c.says} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestMalformedAnswerIsNotJournaled: an a2a_call whose agent answers
// something that is not a task fails the node, writes nothing and is not
// journaled, so the next run of the thread sends again; before, it wrote
// and journaled a completed task with no text.
func TestMalformedAnswerIsNotJournaled(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{`null`, `{}`, `{"kind": "task", "id": "t-7"}`} {
		for _, textOnly := range []bool{false, true} {
			name := raw
			if textOnly {
				name += " textOnly"
			}
			t.Run(name, func(t *testing.T) {
				tr := &answering{resp: withResult(raw)}
				agent, err := a2a.Connect(ctx, tr)
				if err != nil {
					t.Fatal(err)
				}
				cfg := `{"agent": "helper-bot", "text": "refund please", "to": "reply"}`
				if textOnly {
					cfg = `{"agent": "helper-bot", "text": "refund please", "to": "reply", "textOnly": true}`
				}
				g, err := runtime.Load("g.json", graphDoc(`{"id": "n", "type": "a2a_call", "config": `+cfg+`}`,
					`{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}`), a2a.Registry(agent))
				if err != nil {
					t.Fatal(err)
				}
				thread := g.Thread(checkpoint.NewMemory(), "t")
				for run := range 2 {
					res, err := thread.Invoke(ctx, nil)
					if !errors.Is(err, a2a.ErrMalformed) || !strings.Contains(err.Error(), `node "n"`) {
						t.Fatalf("run %d: status %s, reply %v, err %v; want the node to fail with ErrMalformed", run, res.Status, res.State["reply"], err)
					}
					if _, ok := res.State["reply"]; ok {
						t.Errorf("run %d: the node wrote reply %v", run, res.State["reply"])
					}
					if n := tr.posts.Load(); n != int32(run+1) {
						t.Errorf("run %d: %d message/send, want %d: a malformed answer is not journaled", run, n, run+1)
					}
				}
			})
		}
	}
}
