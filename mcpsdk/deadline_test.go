package mcpsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/mcpsdk"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestToolNodeRunDeadline: an mcp_tool node whose run's deadline passes
// mid-call ends the run aborted, and the process lives on. The SDK
// notifies the server of the cancelled call from a goroutine of its own,
// after the node returned; before, that goroutine got the node's
// *runtime.Ctx, which its run had cleared, and crashed the process with a
// nil dereference.
func TestToolNodeRunDeadline(t *testing.T) {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			return &sdk.CallToolResult{}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "ilmek-test", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tb, err := mcp.Connect(ctx, "slow", mcpsdk.NewSession(cs))
	if err != nil {
		t.Fatal(err)
	}
	g, err := runtime.Load("g.json", []byte(`{"name": "g", "channels": {"result": {}},
	  "nodes": [{"id": "call", "type": "mcp_tool", "config": {"server": "slow", "tool": "slow__slow"}}],
	  "edges": [{"from": "__start__", "to": "call"}, {"from": "call", "to": "__end__"}]}`), mcp.Registry(tb))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		tctx, cancel := context.WithTimeout(ctx, time.Duration(10+5*i)*time.Millisecond)
		res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(tctx, nil)
		cancel()
		if res.Status != runtime.StatusAborted || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("run %d: %s, %v; want aborted by the deadline", i, res.Status, err)
		}
	}
	// Let the SDK's notifications go out; the process must still be here.
	time.Sleep(200 * time.Millisecond)
}
