package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// deskGraph is the reference's scripted agent as an ilmek graph: its node
// "agent" asks a person about a refund offering Approve and Cancel (refunds
// counts the refunds made), and answers other questions directly.
func deskGraph(t *testing.T, refunds *atomic.Int32) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	approve := runtime.NewAction("Approve", map[string]bool{"approved": true})
	g, err := runtime.NewBuilder("Support Desk").Channel("question", "").Channel("reply", "").
		Node("agent", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			q, _ := s["question"].(string)
			if q != "refund please" {
				return runtime.Values{"reply": "Order ORD-42 totals 249.9."}, nil
			}
			a, err := runtime.Interrupt[any](c, map[string]string{"title": "Refund 249.9?"}, runtime.WithActions(approve, runtime.Action{Label: "Cancel"}))
			if err != nil {
				return nil, err
			}
			if m, ok := a.(map[string]any); ok && m["approved"] == true {
				refunds.Add(1)
				return runtime.Values{"reply": "Refunded."}, nil
			}
			return runtime.Values{"reply": "Cancelled."}, nil
		}).Edge(spec.Start, "agent").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func serveDesk(t *testing.T, refunds *atomic.Int32) *a2a.Server {
	t.Helper()
	s, err := a2a.Serve(deskGraph(t, refunds), checkpoint.NewMemory(), a2a.ServeConfig[runtime.Values, runtime.Values]{
		Card:   a2a.AgentCard{Description: "Answers questions about orders."},
		Input:  func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
		Output: func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServeAgentPausesAndAnswers: a graph served as an agent answers a
// question completed; a run that pauses answers input-required with the
// text and data part of the reference's expected.json ("refund please"),
// the next message on the context answers it (a label maps to its
// action's value, the task id stays), and the refund runs once.
func TestServeAgentPausesAndAnswers(t *testing.T) {
	ctx := context.Background()
	var want struct {
		Results map[string]a2a.Result `json:"results"`
	}
	raw, err := os.ReadFile("../../conformance/testdata/upstream/a2a/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		reply, wantText string
		wantRefunds     int32
	}{
		{"Approve", "Refunded.", 1},
		{"Cancel", "Cancelled.", 0},
		{"no thanks", "Cancelled.", 0},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			var refunds atomic.Int32
			srv := serveDesk(t, &refunds)
			agent, err := a2a.Connect(ctx, srv)
			if err != nil {
				t.Fatal(err)
			}
			if agent.Name() != "support-desk" || agent.Card().ProtocolVersion != a2a.ProtocolVersion || len(agent.Card().Skills) != 1 {
				t.Errorf("card %+v named %q", agent.Card(), agent.Name())
			}
			r, err := agent.Invoke(ctx, "where is my order?", a2a.SendOptions{})
			if err != nil || r.State != "completed" || r.Text != "Order ORD-42 totals 249.9." || r.ContextID == "" {
				t.Fatalf("question: %+v %v", r, err)
			}
			r, err = agent.Invoke(ctx, "refund please", a2a.SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			exp := want.Results["refund please"]
			if !r.NeedsInput || r.State != "input-required" || r.StatusText != exp.StatusText || canon(t, r.StatusData) != canon(t, exp.StatusData) {
				t.Fatalf("pause:\n got %q %s\nwant %q %s", r.StatusText, r.StatusData, exp.StatusText, exp.StatusData)
			}
			paused := r
			r, err = agent.Invoke(ctx, tc.reply, a2a.SendOptions{ContextID: paused.ContextID, TaskID: paused.TaskID})
			if err != nil || r.State != "completed" || r.Text != tc.wantText || r.TaskID != paused.TaskID {
				t.Fatalf("answer: %+v %v", r, err)
			}
			if refunds.Load() != tc.wantRefunds {
				t.Errorf("refunds %d, want %d", refunds.Load(), tc.wantRefunds)
			}
			got, err := agent.GetTask(ctx, paused.TaskID)
			if err != nil || got.State != "completed" {
				t.Errorf("tasks/get: %+v %v", got, err)
			}
		})
	}
}

// TestServeAgentErrors: the JSON-RPC errors a served graph answers with.
func TestServeAgentErrors(t *testing.T) {
	ctx := context.Background()
	var refunds atomic.Int32
	srv := serveDesk(t, &refunds)
	agent, err := a2a.Connect(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		code int
	}{
		{"unknown task", func() error { _, err := agent.GetTask(ctx, "nope"); return err }, a2a.CodeTaskNotFound},
		{"unknown method", func() error { _, err := agent.CancelTask(ctx, "nope"); return err }, a2a.CodeMethodNotFound},
		{"empty message", func() error {
			_, err := agent.Invoke(ctx, "", a2a.SendOptions{Data: map[string]any{"x": 1}})
			return err
		}, a2a.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var re *a2a.RPCError
			if err := tc.call(); !errors.As(err, &re) || re.Code != tc.code {
				t.Errorf("err %v, want code %d", err, tc.code)
			}
		})
	}
}

// TestPendingPartsText: the text lists every interrupt, options only where
// offered.
func TestPendingPartsText(t *testing.T) {
	text, data := a2a.PendingParts([]runtime.PendingInterrupt{
		{ID: "a:interrupt#0", Payload: json.RawMessage(`{ "q": 1 }`)},
		{ID: "b:k#0", Payload: json.RawMessage(`"ok?"`), Actions: []runtime.Action{{Label: "Yes"}, {Label: "No"}}},
	})
	wantText := "The agent needs input before it can continue:\n- interrupt \"a:interrupt#0\": {\"q\":1}\n- interrupt \"b:k#0\": \"ok?\" — options: Yes, No"
	if text != wantText {
		t.Errorf("text\n got %q\nwant %q", text, wantText)
	}
	if !strings.Contains(string(data), `"actions":[{"label":"Yes"},{"label":"No"}]`) || strings.Count(string(data), "actions") != 1 {
		t.Errorf("data %s", data)
	}
}

func canon(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return string(bytes.TrimSpace(out))
}

// TestServeKeepsBoundedTasks: a Server keeps at most MaxTasks task
// records; the one written longest ago goes first, a task written again
// counts once and moves to the back. On a store without thread records a
// task whose record went is not found (CodeTaskNotFound), and a paused
// context whose record went still takes its answer, under a new task id.
// On a store with them, a task whose record went is read again from its
// thread while it is its context's latest, and the paused context's
// answer continues its task. Before, every message/send left a record
// for good.
func TestServeKeepsBoundedTasks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cp      runtime.Checkpointer
		records bool
	}{
		{"without thread records", plainStore{checkpoint.NewMemory()}, false},
		{"with thread records", checkpoint.NewMemory(), true},
	} {
		t.Run(tc.name, func(t *testing.T) { boundedTasks(t, tc.cp, tc.records) })
	}
	var refunds atomic.Int32
	if _, err := a2a.Serve(deskGraph(t, &refunds), checkpoint.NewMemory(), a2a.ServeConfig[runtime.Values, runtime.Values]{
		Input:    func(text string) (runtime.Values, error) { return nil, nil },
		Output:   func(runtime.Values) string { return "" },
		MaxTasks: -1,
	}); err == nil || !strings.Contains(err.Error(), "MaxTasks") {
		t.Errorf("Serve with MaxTasks -1: %v, want it refused", err)
	}
}

// boundedTasks is TestServeKeepsBoundedTasks on cp, a store that keeps
// thread records when records.
func boundedTasks(t *testing.T, cp runtime.Checkpointer, records bool) {
	ctx := context.Background()
	var refunds atomic.Int32
	srv, err := a2a.Serve(deskGraph(t, &refunds), cp, a2a.ServeConfig[runtime.Values, runtime.Values]{
		Input:    func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
		Output:   func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
		MaxTasks: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := a2a.Connect(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	send := func(text string, opts a2a.SendOptions) a2a.Result {
		t.Helper()
		r, err := agent.Invoke(ctx, text, opts)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kept := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			if _, err := agent.GetTask(ctx, id); err != nil {
				t.Errorf("tasks/get %s: %v, want it kept", id, err)
			}
		}
	}
	// dropped checks tasks whose records went: not found without thread
	// records, read again from their threads (with state) with them.
	dropped := func(state string, ids ...string) {
		t.Helper()
		for _, id := range ids {
			r, err := agent.GetTask(ctx, id)
			var rpc *a2a.RPCError
			switch {
			case records && (err != nil || r.TaskID != id || r.State != state):
				t.Errorf("tasks/get %s: %+v %v, want it read from its thread, %s", id, r, err, state)
			case !records && (!errors.As(err, &rpc) || rpc.Code != a2a.CodeTaskNotFound):
				t.Errorf("tasks/get %s: %v, want CodeTaskNotFound", id, err)
			}
		}
	}
	paused := send("refund please", a2a.SendOptions{})
	var ids []string
	for range 2 {
		ids = append(ids, send("where is my order?", a2a.SendOptions{}).TaskID)
	}
	kept(paused.TaskID, ids[0], ids[1])
	// The answer writes the paused task again: it is now the newest.
	if r := send("Cancel", a2a.SendOptions{ContextID: paused.ContextID}); r.TaskID != paused.TaskID || r.Text != "Cancelled." {
		t.Fatalf("answer: %+v, want task %s cancelled", r, paused.TaskID)
	}
	ids = append(ids, send("where is my order?", a2a.SendOptions{}).TaskID)
	dropped("completed", ids[0])
	kept(ids[1], paused.TaskID, ids[2])

	// A paused context whose record went answers under a new task without
	// thread records, under its own with them.
	again := send("refund please", a2a.SendOptions{})
	for range 3 {
		send("where is my order?", a2a.SendOptions{})
	}
	dropped("input-required", again.TaskID)
	r := send("Approve", a2a.SendOptions{ContextID: again.ContextID})
	if r.State != "completed" || r.Text != "Refunded." || (r.TaskID == again.TaskID) != records || refunds.Load() != 1 {
		t.Errorf("answer after the record went: %+v (refunds %d), want completed (under the same task: %v), one refund", r, refunds.Load(), records)
	}
}
