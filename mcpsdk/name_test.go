package mcpsdk_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/mcpsdk"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestGraphToolNames: AddGraph refuses a tool name MCP does not allow
// (1–128 letters, digits, '_', '-', '.'), its own or its resume tool's,
// naming the name, what is wrong with it and GraphTool.Name, and adds no
// tool; before, the SDK took the name and only logged the problem (to a
// logger that discards by default), so a graph named "Support Desk"
// served a tool named "Support Desk".
func TestGraphToolNames(t *testing.T) {
	var refunds atomic.Int32
	long := strings.Repeat("a", 128-len(mcpsdk.ResumeSuffix)+1)
	for _, c := range []struct {
		name, graphName, toolName string
		want                      []string // in the error; none: no error
	}{
		{"graph name", "refund", "", nil},
		{"tool name with dots and dashes", "refund", "shop.refund-v2", nil},
		{"longest", "refund", strings.Repeat("a", 128-len(mcpsdk.ResumeSuffix)), nil},
		{"graph name with a space", "Support Desk", "", []string{`tool name "Support Desk" (the graph's name)`, `" "`, "set GraphTool.Name"}},
		{"tool name with a slash and a colon", "refund", "shop/refund:v2", []string{`tool name "shop/refund:v2"`, `"/", ":"`}},
		{"tool name of non-ASCII letters", "refund", "iade-işlemi", []string{`"ş"`}},
		{"resume tool too long", "refund", long, []string{long + "__resume", "129 characters, over 128"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := runtime.NewBuilder(c.graphName).Channel("order", "").Channel("reply", "").
				Node("n", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).Edge(spec.Start, "n")
			g, err := b.Compile()
			if err != nil {
				t.Fatal(err)
			}
			if c.graphName == "refund" && c.toolName == "" {
				g = refundGraph(t, &refunds)
			}
			srv := sdk.NewServer(&sdk.Implementation{Name: "graphs", Version: "1.0.0"}, nil)
			err = mcpsdk.AddGraph(srv, mcpsdk.GraphTool[runtime.Values, runtime.Values]{Name: c.toolName, Graph: g, Store: checkpoint.NewMemory()})
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("AddGraph: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("AddGraph took the name")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q does not say %q", err, w)
				}
			}
			// No tool was added.
			ct, st := sdk.NewInMemoryTransports()
			ss, err := srv.Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1.0.0"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != 0 {
				t.Errorf("tools %v were added", tools.Tools)
			}
		})
	}
}
