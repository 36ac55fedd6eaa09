package mcpsdk_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/examples/approval/approvalgraph"
	"github.com/ilmek-go/ilmek/examples/approval/expense"
	"github.com/ilmek-go/ilmek/mcpsdk"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// refundGraph asks a person before a refund, offering Approve and Cancel,
// and makes the refund in a journaled step (counted).
func refundGraph(t *testing.T, refunds *atomic.Int32) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("refund").Channel("order", "").Channel("reply", "").
		Node("ask", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[map[string]bool](ctx, map[string]any{"title": "Refund " + s["order"].(string) + "?"},
				runtime.WithActions(runtime.NewAction("Approve", map[string]bool{"approved": true}), runtime.NewAction("Cancel", map[string]bool{"approved": false})))
			if err != nil {
				return nil, err
			}
			if !a["approved"] {
				return runtime.Values{"reply": "cancelled"}, nil
			}
			if _, err := runtime.Step(ctx, "refund", func() (int32, error) { return refunds.Add(1), nil }); err != nil {
				return nil, err
			}
			return runtime.Values{"reply": "refunded"}, nil
		}).Edge(spec.Start, "ask").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// approvalNodes builds the typed approval example's nodes (unused here but
// for its input schema).
type approvalNodes struct{}

func (approvalNodes) Intake(approvalgraph.NodeID, approvalgraph.IntakeConfig) (approvalgraph.Node, error) {
	return func(*runtime.Ctx, approvalgraph.State) (approvalgraph.Update, error) {
		return approvalgraph.Update{}, nil
	}, nil
}
func (approvalNodes) Payout(approvalgraph.NodeID, approvalgraph.PayoutConfig) (approvalgraph.Node, error) {
	return func(*runtime.Ctx, approvalgraph.State) (approvalgraph.Update, error) {
		return approvalgraph.Update{}, nil
	}, nil
}
func (approvalNodes) Review(approvalgraph.NodeID, expense.ReviewConfig) (approvalgraph.Node, error) {
	return func(*runtime.Ctx, approvalgraph.State) (approvalgraph.Update, error) {
		return approvalgraph.Update{}, nil
	}, nil
}

// TestGraphsAsMCPTools: chosen graphs are tools over the SDK's in-memory
// transport; an untyped graph's input schema lists its channels, a typed
// one's is its Update type's schema; a call that pauses returns the
// pending interrupt with its actions and a thread; the resume tool
// answers it by label; the refund runs once.
func TestGraphsAsMCPTools(t *testing.T) {
	ctx := context.Background()
	var refunds atomic.Int32
	typed, err := approvalgraph.New(approvalNodes{})
	if err != nil {
		t.Fatal(err)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "graphs", Version: "1.0.0"}, nil)
	ids := 0
	if err := mcpsdk.AddGraph(srv, mcpsdk.GraphTool[runtime.Values, runtime.Values]{Graph: refundGraph(t, &refunds), Store: checkpoint.NewMemory(),
		NewThreadID: func() string { ids++; return "th-" + string(rune('0'+ids)) }}); err != nil {
		t.Fatal(err)
	}
	if err := mcpsdk.AddGraph(srv, mcpsdk.GraphTool[approvalgraph.State, approvalgraph.Update]{Name: "approve_expense", Graph: typed, Store: checkpoint.NewMemory()}); err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		schemas[tool.Name] = m
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range schemas {
			if !yield(n) {
				return
			}
		}
	})
	if want := []string{"approve_expense", "approve_expense__resume", "refund", "refund__resume"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	props := func(tool string) map[string]any { p, _ := schemas[tool]["properties"].(map[string]any); return p }
	if p := props("refund"); len(p) != 2 || p["order"] == nil || p["reply"] == nil {
		t.Errorf("refund's input schema %v, want the channels order and reply", schemas["refund"])
	}
	claim, _ := props("approve_expense")["claim"].(map[string]any)
	amount, _ := func() (map[string]any, bool) {
		p, ok := claim["properties"].(map[string]any)
		a, _ := p["amount"].(map[string]any)
		return a, ok
	}()
	if amount["type"] != "number" {
		t.Errorf("approve_expense's input schema %v, want claim.amount a number", schemas["approve_expense"])
	}

	call := func(name string, args any) (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return res, out
	}
	res, out := call("refund", map[string]any{"order": "ORD-42"})
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError || out["status"] != "interrupted" || out["thread"] != "th-1" ||
		!strings.Contains(text, `- interrupt "ask:interrupt#0": {"title":"Refund ORD-42?"} — options: Approve, Cancel`) || !strings.Contains(text, "refund__resume") {
		t.Fatalf("paused call: %v %q %v", res.IsError, text, out)
	}
	if res, _ := call("refund", map[string]any{"nope": 1}); !res.IsError {
		t.Errorf("an argument that is no channel was accepted")
	}
	// No answer, or null: refused, nothing answered (the Cancel path,
	// which a nil map took before, does not run).
	for _, args := range []map[string]any{{"thread": "th-1"}, {"thread": "th-1", "answer": nil}} {
		res, _ := call("refund__resume", args)
		if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, `no answer for thread "th-1"`) || !strings.Contains(text, `"ask:interrupt#0"`) {
			t.Errorf("resume with %v: error %v %q; want it refused naming the open interrupt", args, res.IsError, text)
		}
	}
	res, out = call("refund__resume", map[string]any{"thread": "th-1", "answer": "Approve"})
	state, _ := out["state"].(map[string]any)
	if res.IsError || out["status"] != "done" || state["reply"] != "refunded" || refunds.Load() != 1 {
		t.Fatalf("resume: %v %v, refunds %d", res.IsError, out, refunds.Load())
	}
	if res, _ := call("refund__resume", map[string]any{"thread": "th-1", "answer": "Approve"}); !res.IsError || refunds.Load() != 1 ||
		!strings.Contains(res.Content[0].(*sdk.TextContent).Text, "call refund to start a new run") {
		t.Errorf("a second answer to a done thread: error %v %q, refunds %d; want it refused naming the tool to call", res.IsError, res.Content[0].(*sdk.TextContent).Text, refunds.Load())
	}
}
