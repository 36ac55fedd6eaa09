package a2ahttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/a2ahttp"
	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// counts are what graph B did: message/send requests it took, and refunds
// (its journaled step) it made.
type counts struct{ sends, refunds atomic.Int32 }

// serveB serves graph B, a support desk that asks a person before a
// refund (offering Approve and Cancel) and makes it in a journaled step,
// over HTTP.
func serveB(t *testing.T, c *counts) *httptest.Server {
	t.Helper()
	g, err := runtime.NewBuilder("Support Desk").Channel("question", "").Channel("reply", "").
		Node("agent", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[map[string]bool](ctx, map[string]string{"title": "Refund 249.9?"},
				runtime.WithActions(runtime.NewAction("Approve", map[string]bool{"approved": true}), runtime.NewAction("Cancel", map[string]bool{"approved": false})))
			if err != nil {
				return nil, err
			}
			if !a["approved"] {
				return runtime.Values{"reply": "Cancelled."}, nil
			}
			if _, err := runtime.Step(ctx, "refund", func() (int32, error) { return c.refunds.Add(1), nil }); err != nil {
				return nil, err
			}
			return runtime.Values{"reply": "Refunded."}, nil
		}).Edge(spec.Start, "agent").Compile()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := a2a.Serve(g, checkpoint.NewMemory(), a2a.ServeConfig[runtime.Values, runtime.Values]{
		Input:  func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
		Output: func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
	})
	if err != nil {
		t.Fatal(err)
	}
	h := a2ahttp.Handler(srv)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			c.sends.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// graphA asks agent support-desk with a2a_call, relays its pause to A's
// caller (a2a.RelayPause), and sends the answer back with a second
// a2a_call on the remote task.
func graphA(t *testing.T, desk *a2a.Agent) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	reg := a2a.Registry(desk)
	call := reg["a2a_call"]
	reg["ask_and_relay"] = func(n spec.Node) (runtime.NodeFunc, error) {
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
			ans, err := a2a.RelayPause(ctx, r)
			if err != nil {
				return nil, err
			}
			return runtime.Values{"task": r.TaskID, "conv": r.ContextID, "answer": ans}, nil
		}, nil
	}
	doc := `{"name": "a", "channels": {"question": {}, "task": {}, "conv": {}, "answer": {}, "reply": {}},
	  "nodes": [
	    {"id": "ask", "type": "ask_and_relay", "config": {"agent": "support-desk", "textFrom": "question"}},
	    {"id": "answer", "type": "a2a_call", "config": {"agent": "support-desk", "textFrom": "answer", "taskFrom": "task", "contextFrom": "conv", "to": "reply", "textOnly": true}}],
	  "edges": [{"from": "__start__", "to": "ask"}, {"from": "ask", "to": "answer"}, {"from": "answer", "to": "__end__"}]}`
	g, err := runtime.Load("a.json", []byte(doc), reg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestTwoGraphsPassAPauseAcrossAgents: graph A calls graph B (served over
// HTTP) through a2a_call; B pauses for a person; the pause reaches A's
// caller as data (B's pending interrupt, its payload and actions) with B's
// action labels offered; the caller answers through A by label; B
// completes. B took exactly two message/send requests and made the
// refund once, though A's asking node replayed on resume.
func TestTwoGraphsPassAPauseAcrossAgents(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		label, reply string
		refunds      int32
	}{{"Approve", "Refunded.", 1}, {"Cancel", "Cancelled.", 0}} {
		t.Run(tc.label, func(t *testing.T) {
			var c counts
			hs := serveB(t, &c)
			tr, err := a2ahttp.New(hs.URL)
			if err != nil {
				t.Fatal(err)
			}
			desk, err := a2a.Connect(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			if desk.Name() != "support-desk" || desk.Card().URL != hs.URL+a2ahttp.EndpointPath {
				t.Fatalf("card %+v", desk.Card())
			}
			th := graphA(t, desk).Thread(checkpoint.NewMemory(), "a-1")
			res, err := th.Invoke(ctx, runtime.Values{"question": "refund please"})
			if err != nil || res.Status != runtime.StatusInterrupted || len(res.Pending) != 1 {
				t.Fatalf("A's first run: %q %v %+v", res.Status, err, res.Pending)
			}
			p := res.Pending[0]
			var data struct {
				Pending []struct {
					ID      string            `json:"id"`
					Payload map[string]string `json:"payload"`
					Actions []runtime.Action  `json:"actions"`
				} `json:"pending"`
			}
			if err := json.Unmarshal(p.Payload, &data); err != nil || len(data.Pending) != 1 || data.Pending[0].ID != "agent:interrupt#0" ||
				data.Pending[0].Payload["title"] != "Refund 249.9?" || len(data.Pending[0].Actions) != 2 {
				t.Fatalf("A's pause does not carry B's as data: %s (%v)", p.Payload, err)
			}
			if len(p.Actions) != 2 || p.Actions[0].Label != "Approve" || p.Actions[1].Label != "Cancel" {
				t.Errorf("A's pause offers %+v, want B's labels", p.Actions)
			}
			ans, ok := runtime.AnswerFor(p, tc.label)
			if !ok {
				t.Fatalf("no action %q", tc.label)
			}
			res, err = th.Resume(ctx, runtime.Answer(ans))
			if err != nil || res.Status != runtime.StatusDone || res.State["reply"] != tc.reply {
				t.Fatalf("A's resume: %q %v reply %v", res.Status, err, res.State["reply"])
			}
			if c.sends.Load() != 2 || c.refunds.Load() != tc.refunds {
				t.Errorf("B took %d message/send and made %d refunds; want 2 and %d", c.sends.Load(), c.refunds.Load(), tc.refunds)
			}
		})
	}
}

// TestHandlerRejectsNonJSONRPC: a body that is not JSON-RPC is a parse
// error in the response.
func TestHandlerRejectsNonJSONRPC(t *testing.T) {
	var c counts
	hs := serveB(t, &c)
	resp, err := http.Post(hs.URL+a2ahttp.EndpointPath, "application/json", strings.NewReader("{nope"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r a2a.Response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Error == nil || r.Error.Code != -32700 {
		t.Errorf("response %+v %v", r, err)
	}
}
