package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

const agentJSON = "../../conformance/testdata/upstream/a2a/agent.json"

func connect(t *testing.T, opts ...a2a.Option) (*a2a.Agent, *a2atest.Transport) {
	t.Helper()
	s, err := a2atest.Load(agentJSON)
	if err != nil {
		t.Fatal(err)
	}
	tr := a2atest.NewTransport(s)
	a, err := a2a.Connect(context.Background(), tr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return a, tr
}

func TestConnectAndInvoke(t *testing.T) {
	ctx := context.Background()
	a, tr := connect(t)
	if a.Name() != "support-desk" || a.Card().URL != "https://bot.example.com/a2a" || tr.CardFetches() != 1 {
		t.Errorf("agent %q, card %+v, fetches %d", a.Name(), a.Card(), tr.CardFetches())
	}
	named, _ := connect(t, a2a.WithName("desk"))
	if named.Name() != "desk" {
		t.Errorf("WithName: %q", named.Name())
	}
	// The message carries the text, the ids asked for and a data part.
	r, err := a.Invoke(ctx, "refund please", a2a.SendOptions{ContextID: "conv-1", TaskID: "task-2", MessageID: "m-1", Data: map[string]any{"answers": map[string]any{"x": true}}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.NeedsInput || r.TaskID != "task-2" || !strings.Contains(string(r.StatusData), `"pending"`) {
		t.Errorf("result = %+v", r)
	}
	reqs := tr.Requests()
	last, _ := json.Marshal(reqs[len(reqs)-1])
	want := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"refund please"},{"kind":"data","data":{"answers":{"x":true}}}],"taskId":"task-2","contextId":"conv-1"}}}`
	if string(last) != want {
		t.Errorf("request\n got %s\nwant %s", last, want)
	}
	// A JSON-RPC error is typed.
	_, err = a.GetTask(ctx, "task-nope")
	var rpc *a2a.RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32001 || rpc.Message != `task "task-nope" not found` || rpc.Method != "tasks/get" || rpc.Agent != "support-desk" {
		t.Errorf("err = %#v", err)
	}
	if _, err := a.Invoke(ctx, "", a2a.SendOptions{}); err == nil {
		t.Error("an empty message was sent")
	}
}

func TestParseSendResult(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		want      a2a.Result
	}{
		{"bare message without context", `{"kind": "message", "messageId": "m-9", "role": "agent", "parts": [{"kind": "text", "text": "hi"}, {"kind": "text", "text": "there"}]}`,
			a2a.Result{TaskID: "message:m-9", ContextID: "desk", State: "completed", Text: "hi\nthere"}},
		{"bare message naming its task", `{"kind": "message", "messageId": "m-9", "role": "agent", "taskId": "t-7", "contextId": "c", "parts": []}`,
			a2a.Result{TaskID: "t-7", ContextID: "c", State: "completed"}},
		{"task without kind", `{"id": "t", "contextId": "c", "status": {"state": "working"}, "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": ""}]}, {"artifactId": "b", "parts": [{"kind": "text", "text": "x"}]}]}`,
			a2a.Result{TaskID: "t", ContextID: "c", State: "working", Text: "x"}},
		// A status without a state reads as the protocol's "unknown", as
		// the reference reads it, not as "".
		{"status without state", `{"kind": "task", "id": "t", "contextId": "c", "status": {}}`,
			a2a.Result{TaskID: "t", ContextID: "c", State: "unknown"}},
		{"bare message without kind", `{"messageId": "m-9", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]}`,
			a2a.Result{TaskID: "message:m-9", ContextID: "desk", State: "completed", Text: "hi"}},
		{"status data null", `{"kind": "task", "id": "t", "contextId": "c", "status": {"state": "input-required", "message": {"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "data"}]}}}`,
			a2a.Result{TaskID: "t", ContextID: "c", State: "input-required", NeedsInput: true, StatusData: json.RawMessage("null")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			task, err := a2a.ParseSendResult(json.RawMessage(c.raw), "desk")
			if err != nil {
				t.Fatal(err)
			}
			got := a2a.NormalizeTask(task)
			got.Task = nil
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if _, err := a2a.ParseSendResult(json.RawMessage(`[1]`), "desk"); err == nil {
		t.Error("an array read as a task")
	}
}

// steps records the key of every journaled step.
type steps struct {
	runtime.NopObserver
	mu   sync.Mutex
	keys []string
}

func (o *steps) Step(_ context.Context, _ runtime.TaskRecord, s runtime.StepRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := s.Key
	if s.Replayed {
		k += " (replayed)"
	}
	o.keys = append(o.keys, k)
}

func graphDoc(nodes string, edges string) []byte {
	return []byte(`{"name": "g", "channels": {"question": {}, "result": {}, "task": {}, "conv": {}, "answer": {}, "reply": {}},
  "nodes": [` + nodes + `], "edges": [` + edges + `]}`)
}

// A remote agent that pauses for a person is answered through the caller:
// the first a2a_call asks, the caller's person answers, the second
// a2a_call sends the answer on the remote task. Each message is sent once
// though the asking node's task replays on resume.
func TestCallAnswersARemotePause(t *testing.T) {
	ctx := context.Background()
	a, tr := connect(t)
	reg := a2a.Registry(a)
	call := reg["a2a_call"]
	// ask_then_pause sends the question, then, when the remote agent needs
	// input, pauses the caller's thread with the remote agent's question.
	reg["ask_then_pause"] = func(n spec.Node) (runtime.NodeFunc, error) {
		fn, err := call(n)
		if err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			out, err := fn(ctx, s)
			if err != nil {
				return nil, err
			}
			r := out["result"].(a2a.Result)
			if !r.NeedsInput {
				return out, nil
			}
			ans, err := runtime.Interrupt[string](ctx, r.StatusText)
			if err != nil {
				return nil, err
			}
			return runtime.Values{"result": r, "task": r.TaskID, "conv": r.ContextID, "answer": ans}, nil
		}, nil
	}
	obs := &steps{}
	g, err := runtime.Load("g.json", graphDoc(
		`{"id": "ask", "type": "ask_then_pause", "config": {"agent": "support-desk", "textFrom": "question"}},
		 {"id": "reply", "type": "a2a_call", "config": {"agent": "support-desk", "textFrom": "answer", "taskFrom": "task", "contextFrom": "conv", "to": "reply", "textOnly": true}}`,
		`{"from": "__start__", "to": "ask"}, {"from": "ask", "to": "reply"}, {"from": "reply", "to": "__end__"}`),
		reg, runtime.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	thread := g.Thread(checkpoint.NewMemory(), "t-1")
	res, err := thread.Invoke(ctx, runtime.Values{"question": "refund please"})
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %v, %v", res.Status, err)
	}
	if p := res.Pending; len(p) != 1 || !strings.Contains(string(mustJSON(t, p[0].Payload)), "Refund 249.9?") {
		t.Errorf("the pause does not carry the remote question: %+v", p)
	}
	res, err = thread.Resume(ctx, runtime.Answer("Approve"))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: %v, %v", res.Status, err)
	}
	if res.State["reply"] != "Refunded." {
		t.Errorf("reply = %v", res.State["reply"])
	}
	if d := cmp.Diff([]string{"refund please", "Approve"}, tr.Sends()); d != "" {
		t.Errorf("messages sent (-want +got):\n%s", d)
	}
	// The answer went to the remote task, in its conversation.
	var p struct {
		Message a2a.Message `json:"message"`
	}
	reqs := tr.Requests()
	if err := json.Unmarshal(mustJSON(t, reqs[len(reqs)-1].Params), &p); err != nil || p.Message.TaskID != "task-2" || p.Message.ContextID != "conv-1" {
		t.Errorf("answer message = %+v, %v", p.Message, err)
	}
	if d := cmp.Diff([]string{"a2a:support-desk:send#0", "a2a:support-desk:send#0 (replayed)", "a2a:support-desk:send#0"}, obs.keys); d != "" {
		t.Errorf("journal keys (-want +got):\n%s", d)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCallRunErrors(t *testing.T) {
	ctx := context.Background()
	a, tr := connect(t)
	g, err := runtime.Load("g.json", graphDoc(
		`{"id": "n", "type": "a2a_call", "config": {"agent": "support-desk", "textFrom": "question", "contextFrom": "conv"}}`,
		`{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}`), a2a.Registry(a))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   runtime.Values
		want string
	}{
		{"no text", nil, `channel "question" holds nothing`},
		{"text not a string", runtime.Values{"question": 42}, `channel "question" holds a float64`},
		{"context id not a string", runtime.Values{"question": "boom", "conv": 1}, `channel "conv" holds float64`},
		{"unscripted message is a JSON-RPC error", runtime.Values{"question": "hello?"}, `JSON-RPC error -32602: unscripted message "hello?"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := g.Invoke(ctx, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	if sends := tr.Sends(); len(sends) != 1 {
		t.Errorf("sends = %v, want only the unscripted one", sends)
	}
	// A failed remote task is a result, not an error.
	res, err := g.Invoke(ctx, runtime.Values{"question": "boom"})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.State["result"].(map[string]any); r["state"] != "failed" || r["statusText"] != "agent: kaboom" {
		t.Errorf("result = %v", res.State["result"])
	}
}

// TestCallTextOnlyFailedTask: with textOnly, a remote task that ended
// failed fails the node with a *TaskError naming the node, the agent, the
// task, its state and the agent's reason; the send is not journaled, so
// the next run of the thread messages the agent again. Without textOnly
// the failed task is the result (TestCallRunErrors).
func TestCallTextOnlyFailedTask(t *testing.T) {
	for _, c := range []struct {
		question, task, state, says, message string
	}{
		{"boom", "task-3", "failed", "ended failed", "agent: kaboom"},
		// A question from the agent has no room in a reply text either.
		{"refund please", "", "input-required", "is input-required, not completed", ""},
	} {
		t.Run(c.state, func(t *testing.T) {
			ctx := context.Background()
			a, tr := connect(t)
			g, err := runtime.Load("g.json", graphDoc(
				`{"id": "n", "type": "a2a_call", "config": {"agent": "support-desk", "textFrom": "question", "to": "reply", "textOnly": true}}`,
				`{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}`), a2a.Registry(a))
			if err != nil {
				t.Fatal(err)
			}
			thread := g.Thread(checkpoint.NewMemory(), "t-1")
			for run := range 2 {
				res, err := thread.Invoke(ctx, runtime.Values{"question": c.question})
				var te *a2a.TaskError
				if !errors.As(err, &te) || te.Agent != "support-desk" || c.task != "" && te.TaskID != c.task || te.State != c.state || c.message != "" && te.Message != c.message {
					t.Fatalf("run %d: status %s, reply %q, err %v; want a *TaskError, %s", run, res.Status, res.State["reply"], err, c.state)
				}
				for _, want := range []string{`a2a_call node "n"`, c.says, "drop textOnly"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("run %d: err %q does not say %q", run, err, want)
					}
				}
				if _, ok := res.State["reply"]; ok {
					t.Errorf("run %d: the node wrote reply %q", run, res.State["reply"])
				}
				if sends := tr.Sends(); len(sends) != run+1 {
					t.Errorf("run %d: messages sent %v, want %d: a task that did not complete is not journaled", run, sends, run+1)
				}
			}
		})
	}
}

func TestCallBuildErrors(t *testing.T) {
	a, _ := connect(t)
	b, _ := connect(t)
	for _, c := range []struct {
		name, config, want string
		agents             []*a2a.Agent
		unknown, shape     bool
	}{
		{"unknown agent", `{"agent": "desk", "text": "hi"}`, `config.agent: names A2A agent "desk", which is not connected (connected: "support-desk")`, nil, true, false},
		{"missing agent", `{"text": "hi"}`, "config.agent: is missing", nil, false, false},
		{"neither text nor textFrom", `{"agent": "support-desk"}`, "config.text: is missing, and so is textFrom", nil, false, false},
		{"both text and textFrom", `{"agent": "support-desk", "text": "hi", "textFrom": "question"}`, "config.text: is set, and so is textFrom", nil, false, false},
		{"empty text", `{"agent": "support-desk", "text": ""}`, "config.text: is empty", nil, false, false},
		{"empty textFrom", `{"agent": "support-desk", "textFrom": ""}`, "config.textFrom: is an empty channel name", nil, false, false},
		{"text and an empty textFrom", `{"agent": "support-desk", "text": "hi", "textFrom": ""}`, "config.textFrom: is an empty channel name", nil, false, false},
		{"empty taskFrom", `{"agent": "support-desk", "text": "hi", "taskFrom": ""}`, "config.taskFrom: is an empty channel name", nil, false, false},
		{"empty to", `{"agent": "support-desk", "text": "hi", "to": ""}`, "config.to: is an empty channel name", nil, false, false},
		{"two agents of one name", `{"agent": "support-desk", "text": "hi"}`, `two connected agents are named "support-desk"`, []*a2a.Agent{a, b}, false, false},
		{"textOnly not a boolean", `{"agent": "support-desk", "text": "hi", "textOnly": "yes"}`, "config.textOnly", nil, false, true},
		{"unknown key", `{"agent": "support-desk", "txt": "hi"}`, `"txt"`, nil, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			agents := c.agents
			if agents == nil {
				agents = []*a2a.Agent{a}
			}
			_, err := runtime.Load("g.json", graphDoc(`{"id": "n", "type": "a2a_call", "config": `+c.config+`}`,
				`{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}`), a2a.Registry(agents...))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `node "n"`) {
				t.Fatalf("err = %v\nwant it to name node \"n\" and say %q", err, c.want)
			}
			// The factory's own error is typed, and matched through Load's.
			var ce *nodes.ConfigError
			var re *runtime.ConfigError
			if c.shape != errors.As(err, &re) || !c.shape && !errors.As(err, &ce) {
				t.Errorf("Load's err = %T %v", err, err)
			}
			if c.unknown != errors.Is(err, nodes.ErrUnknownName) {
				t.Errorf("errors.Is(err, nodes.ErrUnknownName) = %v, want %v", !c.unknown, c.unknown)
			}
		})
	}
}
