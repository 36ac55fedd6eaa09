package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// countingAgent serves a graph whose one node counts its runs (runs) and
// replies "done <n>"; gate, when not nil, holds the node until it is
// closed, after a send on entered when that is not nil. A run cancelled
// by then counts nothing.
func countingAgent(t *testing.T, runs *atomic.Int32, gate <-chan struct{}, entered chan<- struct{}, maxTasks int) *a2a.Server {
	t.Helper()
	return serveCounter(t, counterGraph(t, runs, gate, entered), checkpoint.NewMemory(), maxTasks)
}

// counterGraph is countingAgent's graph.
func counterGraph(t testing.TB, runs *atomic.Int32, gate <-chan struct{}, entered chan<- struct{}) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("Counter").Channel("question", "").Channel("reply", "").
		Node("count", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if entered != nil {
				entered <- struct{}{}
			}
			if gate != nil {
				<-gate
			}
			if err := ctx.Err(); err != nil {
				return nil, err // the work a run cut short does not count
			}
			return runtime.Values{"reply": "done " + string(rune('0'+runs.Add(1)))}, nil
		}).Edge(spec.Start, "count").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// serveCounter serves a graph of counterGraph's channels on cp.
func serveCounter(t testing.TB, g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, maxTasks int) *a2a.Server {
	t.Helper()
	s, err := a2a.Serve(g, cp, a2a.ServeConfig[runtime.Values, runtime.Values]{
		Input:    func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
		Output:   func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
		MaxTasks: maxTasks,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// plainStore is a checkpointer that keeps no thread records.
type plainStore struct{ runtime.Checkpointer }

// dropping is a Transport to a Server that loses the answer of its first
// message/send after the Server took it: a connection that dropped.
type dropping struct {
	*a2a.Server
	dropped atomic.Bool
	ids     []string
	mu      sync.Mutex
}

var errDropped = errors.New("the connection dropped before the answer came")

func (d *dropping) Post(ctx context.Context, r *a2a.Request) (*a2a.Response, error) {
	resp, err := d.Server.Post(ctx, r)
	if r.Method == "message/send" {
		raw, _ := json.Marshal(r.Params)
		var p struct {
			Message a2a.Message `json:"message"`
		}
		_ = json.Unmarshal(raw, &p)
		d.mu.Lock()
		d.ids = append(d.ids, p.Message.MessageID)
		d.mu.Unlock()
		if !d.dropped.Swap(true) {
			return nil, errDropped
		}
	}
	return resp, err
}

// TestSendAgainAfterADroppedConnection: an a2a_call whose answer was lost
// on the way back fails its run; the thread's next run sends the message
// again under the same id (the step's), and the served graph, which ran
// for the first sending, answers from what it kept and does not run
// again.
func TestSendAgainAfterADroppedConnection(t *testing.T) {
	ctx := context.Background()
	var runs atomic.Int32
	tr := &dropping{Server: countingAgent(t, &runs, nil, nil, 0)}
	agent, err := a2a.Connect(ctx, tr, a2a.WithName("counter"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := runtime.Load("g.json", graphDoc(
		`{"id": "ask", "type": "a2a_call", "config": {"agent": "counter", "textFrom": "question", "to": "reply", "textOnly": true}}`,
		`{"from": "__start__", "to": "ask"}, {"from": "ask", "to": "__end__"}`), a2a.Registry(agent))
	if err != nil {
		t.Fatal(err)
	}
	th := g.Thread(checkpoint.NewMemory(), "caller")
	if _, err := th.Invoke(ctx, runtime.Values{"question": "count once"}); !errors.Is(err, errDropped) {
		t.Fatalf("first run: %v, want the dropped connection", err)
	}
	res, err := th.Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("second run: %v %v", res.Status, err)
	}
	if res.State["reply"] != "done 1" || runs.Load() != 1 {
		t.Errorf("reply %v after %d runs of the served graph; want \"done 1\" after one", res.State["reply"], runs.Load())
	}
	if len(tr.ids) != 2 || tr.ids[0] != tr.ids[1] || tr.ids[0] == "" {
		t.Errorf("message ids sent: %q; want one id twice", tr.ids)
	}
}

// TestServerAnswersAMessageOnce: what a Server does with a message sent
// again under its id.
func TestServerAnswersAMessageOnce(t *testing.T) {
	ctx := context.Background()
	send := func(s *a2a.Server, id, ctxID, text string) (*a2a.Response, error) {
		return s.Post(ctx, &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send", Params: map[string]any{
			"message": a2a.Message{Kind: "message", MessageID: id, Role: "user", ContextID: ctxID, Parts: []a2a.Part{a2a.TextPart(text)}}}})
	}
	taskOf := func(t *testing.T, s *a2a.Server, id, ctxID, text string) a2a.Task {
		t.Helper()
		r, err := send(s, id, ctxID, text)
		if err != nil || r.Error != nil {
			t.Fatalf("message/send: %v %+v", err, r.Error)
		}
		var task a2a.Task
		if err := json.Unmarshal(r.Result, &task); err != nil {
			t.Fatal(err)
		}
		return task
	}

	t.Run("the same id and parts: one run, one answer", func(t *testing.T) {
		var runs atomic.Int32
		s := countingAgent(t, &runs, nil, nil, 0)
		first := taskOf(t, s, "m-1", "", "hi")
		again := taskOf(t, s, "m-1", "", "hi")
		if runs.Load() != 1 || again.ID != first.ID || again.ContextID != first.ContextID {
			t.Errorf("%d runs; tasks %s/%s and %s/%s, want one run and one task", runs.Load(), first.ContextID, first.ID, again.ContextID, again.ID)
		}
		other := taskOf(t, s, "m-2", "", "hi")
		if runs.Load() != 2 || other.ContextID == first.ContextID {
			t.Errorf("another id: %d runs, context %s; want a run of its own on a new context", runs.Load(), other.ContextID)
		}
		// The same id on another context is another message.
		taskOf(t, s, "m-1", other.ContextID, "hi")
		if runs.Load() != 3 {
			t.Errorf("the id on another context: %d runs, want 3", runs.Load())
		}
	})

	t.Run("the same id with other parts is refused", func(t *testing.T) {
		var runs atomic.Int32
		s := countingAgent(t, &runs, nil, nil, 0)
		taskOf(t, s, "m-1", "", "hi")
		r, err := send(s, "m-1", "", "something else")
		if err != nil || r.Error == nil || r.Error.Code != a2a.CodeInvalidParams || runs.Load() != 1 {
			t.Errorf("response %+v, %v after %d runs; want CodeInvalidParams and no run", r.Error, err, runs.Load())
		}
	})

	t.Run("sent again while its run runs: waits for its answer", func(t *testing.T) {
		var runs atomic.Int32
		gate := make(chan struct{})
		s := countingAgent(t, &runs, gate, nil, 0)
		answers := make(chan a2a.Task, 2)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { answers <- taskOf(t, s, "m-1", "", "hi") })
		}
		close(gate)
		wg.Wait()
		a, b := <-answers, <-answers
		if runs.Load() != 1 || a.ID != b.ID {
			t.Errorf("%d runs, tasks %s and %s; want one run and one task", runs.Load(), a.ID, b.ID)
		}
	})

	t.Run("its caller gone mid-run: the run goes on, and the message sent again gets its answer", func(t *testing.T) {
		var runs atomic.Int32
		gate, entered := make(chan struct{}), make(chan struct{}, 1)
		s := countingAgent(t, &runs, gate, entered, 0)
		gone, leave := context.WithCancel(ctx)
		first := make(chan *a2a.Response, 1)
		go func() {
			r, _ := s.Post(gone, &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send", Params: map[string]any{
				"message": a2a.Message{Kind: "message", MessageID: "m-1", Role: "user", Parts: []a2a.Part{a2a.TextPart("hi")}}}})
			first <- r
		}()
		<-entered
		leave() // the connection dropped
		if r := <-first; r == nil || r.Error == nil {
			t.Fatalf("the caller that went away got %+v, want an error", r)
		}
		close(gate)
		task := taskOf(t, s, "m-1", "", "hi")
		if task.Status.State != "completed" || runs.Load() != 1 {
			t.Errorf("the message sent again: %s after %d runs; want completed after one", task.Status.State, runs.Load())
		}
	})

	t.Run("a message refused before it ran is taken again", func(t *testing.T) {
		var runs atomic.Int32
		s := countingAgent(t, &runs, nil, nil, 0)
		r, err := s.Post(ctx, &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send", Params: map[string]any{
			"message": a2a.Message{Kind: "message", MessageID: "m-1", Role: "user", Parts: []a2a.Part{{Kind: "data", Data: json.RawMessage(`{}`)}}}}})
		if err != nil || r.Error == nil {
			t.Fatalf("a message without text: %+v %v, want a JSON-RPC error", r, err)
		}
		if task := taskOf(t, s, "m-1", "", "hi"); runs.Load() != 1 || task.Status.State != "completed" {
			t.Errorf("m-1 again, with text: %d runs, state %s; want it taken, one run", runs.Load(), task.Status.State)
		}
	})

	for _, c := range []struct {
		name string
		cp   runtime.Checkpointer
		want int32 // runs after m-1 is sent again past the bound
	}{
		{"past MaxTasks messages, found in the thread's record", checkpoint.NewMemory(), 3},
		{"past MaxTasks messages, forgotten on a checkpointer without thread records", plainStore{checkpoint.NewMemory()}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			s := serveCounter(t, counterGraph(t, &runs, nil, nil), c.cp, 2)
			for _, id := range []string{"m-1", "m-2", "m-3"} {
				taskOf(t, s, id, "", "hi")
			}
			taskOf(t, s, "m-3", "", "hi")
			if runs.Load() != 3 {
				t.Errorf("m-3 again: %d runs, want 3 (kept)", runs.Load())
			}
			if task := taskOf(t, s, "m-1", "", "hi"); runs.Load() != c.want || task.Status.State != "completed" {
				t.Errorf("m-1 again, past the bound: %s after %d runs, want completed after %d", task.Status.State, runs.Load(), c.want)
			}
		})
	}
}
