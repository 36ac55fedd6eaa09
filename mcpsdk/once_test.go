package mcpsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/mcpsdk"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// chargeGraph charges once per run (counted) in a journaled step and
// replies "charged <order>".
func chargeGraph(t *testing.T, charges *atomic.Int32) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("charge").Channel("order", "").Channel("reply", "").
		Node("charge", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "charge", func() (int32, error) { return charges.Add(1), nil }); err != nil {
				return nil, err
			}
			return runtime.Values{"reply": "charged " + s["order"].(string)}, nil
		}).Edge(spec.Start, "charge").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// serveTools connects a client to a server holding the graph tools added
// by add, in memory.
func serveTools(t *testing.T, add func(*sdk.Server)) *sdk.ClientSession {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "graphs", Version: "1.0.0"}, nil)
	add(srv)
	return clientOf(t, srv)
}

// losing is a session whose first tools/call loses its answer after the
// server acted: a connection that dropped.
type losing struct {
	mcp.Session
	lost atomic.Bool
}

var errLost = errors.New("the connection dropped before the answer came")

func (l *losing) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	res, err := l.Session.CallTool(ctx, p)
	if !l.lost.Swap(true) {
		return nil, errLost
	}
	return res, err
}

// TestToolCallAnsweredOnceAcrossALostAnswer: a graph calls a graph served
// as an MCP tool; the first call's answer is lost on the way back, after
// the served graph charged. The caller's next run makes the call again
// under the same idempotency key, and the served graph answers from the
// call's thread without charging again. Before, the call made again ran
// the served graph on a new thread: two charges.
func TestToolCallAnsweredOnceAcrossALostAnswer(t *testing.T) {
	ctx := context.Background()
	var charges atomic.Int32
	cs := serveTools(t, func(srv *sdk.Server) {
		if err := mcpsdk.AddGraph(srv, mcpsdk.GraphTool[runtime.Values, runtime.Values]{Graph: chargeGraph(t, &charges), Store: checkpoint.NewMemory()}); err != nil {
			t.Fatal(err)
		}
	})
	tb, err := mcp.Connect(ctx, "billing", &losing{Session: mcpsdk.NewSession(cs)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := runtime.Load("caller.json", []byte(`{"name": "caller", "channels": {"result": {}},
  "nodes": [{"id": "pay", "type": "mcp_tool", "config": {"server": "billing", "tool": "billing__charge", "arguments": {"order": "o-7"}, "to": "result", "text": true}}],
  "edges": [{"from": "__start__", "to": "pay"}, {"from": "pay", "to": "__end__"}]}`), mcp.Registry(tb))
	if err != nil {
		t.Fatal(err)
	}
	th := g.Thread(checkpoint.NewMemory(), "caller")
	if _, err := th.Invoke(ctx, nil); !errors.Is(err, errLost) {
		t.Fatalf("first run: %v, want the lost answer", err)
	}
	res, err := th.Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("second run: %v %v", res.Status, err)
	}
	if got, _ := res.State["result"].(string); !strings.Contains(got, `"reply":"charged o-7"`) || charges.Load() != 1 {
		t.Errorf("result %q after %d charges; want the served graph's reply after one", got, charges.Load())
	}
}

// TestGraphToolCallsWithAKey: what the run and resume tools of a graph do
// with a call made again under its idempotency key.
func TestGraphToolCallsWithAKey(t *testing.T) {
	ctx := context.Background()
	var refunds atomic.Int32
	cs := serveTools(t, func(srv *sdk.Server) {
		if err := mcpsdk.AddGraph(srv, mcpsdk.GraphTool[runtime.Values, runtime.Values]{Graph: refundGraph(t, &refunds), Store: checkpoint.NewMemory()}); err != nil {
			t.Fatal(err)
		}
	})
	call := func(name, key string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Meta: sdk.Meta{mcp.MetaIdempotencyKey: key}, Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return res, out
	}
	text := func(res *sdk.CallToolResult) string { return res.Content[0].(*sdk.TextContent).Text }

	_, first := call("refund", "k-1", map[string]any{"order": "ORD-42"})
	_, again := call("refund", "k-1", map[string]any{"order": "ORD-42"})
	if first["status"] != "interrupted" || again["status"] != "interrupted" || again["thread"] != first["thread"] {
		t.Fatalf("the run tool called twice under one key: %v then %v; want one paused thread", first, again)
	}
	if res, _ := call("refund", "k-1", map[string]any{"order": "ORD-43"}); !res.IsError || !strings.Contains(text(res), "used before with other arguments") {
		t.Errorf("the key with other arguments: error %v %q; want it refused", res.IsError, text(res))
	}
	if _, other := call("refund", "k-2", map[string]any{"order": "ORD-42"}); other["thread"] == first["thread"] {
		t.Errorf("another key ran on thread %v, the first key's", other["thread"])
	}
	thread := first["thread"].(string)
	_, done := call("refund__resume", "a-1", map[string]any{"thread": thread, "answer": "Approve"})
	res, doneAgain := call("refund__resume", "a-1", map[string]any{"thread": thread, "answer": "Approve"})
	if done["status"] != "done" || doneAgain["status"] != "done" || res.IsError || refunds.Load() != 1 {
		t.Errorf("the resume tool called twice under one key: %v then %v (%q), %d refunds; want done twice, one refund", done, doneAgain, text(res), refunds.Load())
	}
	if res, _ := call("refund__resume", "a-2", map[string]any{"thread": thread, "answer": "Approve"}); !res.IsError || refunds.Load() != 1 {
		t.Errorf("another answer to the done thread: error %v %q, %d refunds; want it refused", res.IsError, text(res), refunds.Load())
	}
	if res, _ := call("refund", "k-1", map[string]any{"order": "ORD-42"}); res.IsError || refunds.Load() != 1 {
		t.Errorf("the first call made again once its thread is done: error %v %q; want its result", res.IsError, text(res))
	}
}

// TestKeyedCallMadeAgainWhileItRuns: a call made again under its key while
// its first run still runs (the caller's connection dropped, and it
// called again) waits for that run and gets its result; the graph ran
// once. Before, the second call was refused: the thread was busy.
func TestKeyedCallMadeAgainWhileItRuns(t *testing.T) {
	ctx := context.Background()
	var runs atomic.Int32
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	g, err := runtime.NewBuilder("slow").Channel("order", "").Channel("reply", "").
		Node("work", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			runs.Add(1)
			entered <- struct{}{}
			<-gate
			return runtime.Values{"reply": "worked"}, nil
		}).Edge(spec.Start, "work").Compile()
	if err != nil {
		t.Fatal(err)
	}
	cs := serveTools(t, func(srv *sdk.Server) {
		if err := mcpsdk.AddGraph(srv, mcpsdk.GraphTool[runtime.Values, runtime.Values]{Graph: g, Store: checkpoint.NewMemory()}); err != nil {
			t.Fatal(err)
		}
	})
	call := func() (*sdk.CallToolResult, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Meta: sdk.Meta{mcp.MetaIdempotencyKey: "k-1"}, Name: "slow", Arguments: map[string]any{"order": "o-1"}})
	}
	results := make(chan *sdk.CallToolResult, 2)
	go func() { r, _ := call(); results <- r }()
	<-entered
	go func() { r, _ := call(); results <- r }()
	// Time for the second call to reach the server while the first runs
	// (with or without it, the answer must be the run's).
	time.Sleep(50 * time.Millisecond)
	close(gate)
	for range 2 {
		r := <-results
		if r == nil || r.IsError {
			t.Fatalf("a call: %+v, want its result", r)
		}
		if text := r.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, `"reply":"worked"`) {
			t.Errorf("a call's result %q, want the run's state", text)
		}
	}
	if runs.Load() != 1 {
		t.Errorf("the graph ran %d times, want once", runs.Load())
	}
}
