// Command agents is the README's example of a graph that reaches tools and
// agents: graph "refunds" asks an MCP server for an order's total
// (mcp_tool), then asks another ilmek graph, served as an A2A agent over
// HTTP, for the refund (a2a_call). That agent pauses for a person; the
// pause reaches refunds' caller as data with the agent's options; the
// person's "Approve" is answered through refunds, and the remote agent
// completes. Every remote call is journaled, so none runs twice.
//
//	go run .
//
// Everything runs in this process over loopback: the MCP server on the
// SDK's in-memory transport, the agent on a local HTTP listener.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/a2ahttp"
	"github.com/ilmek-go/ilmek/mcpsdk"
	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// refunds is the calling graph: lookup (mcp_tool) writes the order's
// total, ask (a2a_call, relaying a pause) asks the desk for the refund,
// answer (a2a_call) sends the person's answer on the desk's task.
const refunds = `{
  "name": "refunds",
  "channels": {"order": {}, "total": {}, "question": {}, "task": {}, "conv": {}, "answer": {}, "reply": {}},
  "nodes": [
    {"id": "lookup", "type": "mcp_tool", "config": {"server": "orders", "tool": "orders__order_total", "argumentsFrom": "order", "to": "total", "text": true}},
    {"id": "ask", "type": "ask_and_relay", "config": {"agent": "support-desk", "text": "refund please"}},
    {"id": "answer", "type": "a2a_call", "config": {"agent": "support-desk", "textFrom": "answer", "taskFrom": "task", "contextFrom": "conv", "to": "reply", "textOnly": true}}
  ],
  "edges": [
    {"from": "__start__", "to": "lookup"}, {"from": "lookup", "to": "ask"},
    {"from": "ask", "to": "answer"}, {"from": "answer", "to": "__end__"}
  ]
}`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// An MCP server with one tool, connected over the SDK's in-memory
	// transport (a command or a streamable HTTP transport works alike).
	orders, closeMCP, err := ordersToolbox(ctx)
	if err != nil {
		return err
	}
	defer closeMCP()

	// The support desk, another graph, served as an A2A agent over HTTP.
	deskURL, stop, err := serveDesk()
	if err != nil {
		return err
	}
	defer stop()
	tr, err := a2ahttp.New(deskURL)
	if err != nil {
		return err
	}
	desk, err := a2a.Connect(ctx, tr)
	if err != nil {
		return err
	}

	reg := runtime.Registry{}
	maps.Copy(reg, mcp.Registry(orders))
	maps.Copy(reg, a2a.Registry(desk))
	reg["ask_and_relay"] = askAndRelay(reg["a2a_call"])
	g, err := runtime.Load("refunds.json", []byte(refunds), reg)
	if err != nil {
		return err
	}

	th := g.Thread(checkpoint.NewMemory(), "refund-ORD-42")
	res, err := th.Invoke(ctx, runtime.Values{"order": map[string]any{"order": "ORD-42"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "status: %s\ntotal: %s\n", res.Status, res.State["total"])
	p := res.Pending[0]
	fmt.Fprintf(out, "the desk asks: %s\n", p.Payload)
	for _, a := range p.Actions {
		fmt.Fprintf(out, "  option: %s\n", a.Label)
	}
	// The person picks "Approve".
	answer, _ := runtime.AnswerFor(p, "Approve")
	res, err = th.Resume(ctx, runtime.Answer(answer))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "status: %s\nreply: %s\n", res.Status, res.State["reply"])
	return nil
}

// askAndRelay is a2a_call followed by a2a.RelayPause: when the agent
// needs input, the node pauses this graph with the agent's pending data,
// and writes the person's answer and the remote task to answer.
func askAndRelay(call runtime.Factory) runtime.Factory {
	return func(n spec.Node) (runtime.NodeFunc, error) {
		fn, err := call(n)
		if err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			out, err := fn(ctx, s)
			if err != nil {
				return nil, err
			}
			r := out[a2a.DefaultChannel].(a2a.Result)
			ans, err := a2a.RelayPause(ctx, r)
			if err != nil {
				return nil, err
			}
			return runtime.Values{"task": r.TaskID, "conv": r.ContextID, "answer": ans}, nil
		}, nil
	}
}

// ordersToolbox starts the MCP server "orders" in process and connects a
// toolbox to it.
func ordersToolbox(ctx context.Context) (*mcp.Toolbox, func(), error) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "1.0.0"}, nil)
	type in struct {
		Order string `json:"order" jsonschema:"the order id"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "order_total", Description: "An order's total."},
		func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Order " + a.Order + " totals 249.9."}}}, nil, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, err
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "refunds", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return nil, nil, err
	}
	tb, err := mcp.Connect(ctx, "orders", mcpsdk.NewSession(cs))
	if err != nil {
		cs.Close()
		ss.Close()
		return nil, nil, err
	}
	return tb, func() { cs.Close(); ss.Close() }, nil
}

// serveDesk serves the support desk graph as an A2A agent on a loopback
// listener and returns its URL.
func serveDesk() (string, func(), error) {
	g, err := runtime.NewBuilder("Support Desk").Channel("question", "").Channel("reply", "").
		Node("agent", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[map[string]bool](ctx, map[string]string{"title": "Refund 249.9?"},
				runtime.WithActions(runtime.NewAction("Approve", map[string]bool{"approved": true}), runtime.NewAction("Cancel", map[string]bool{"approved": false})))
			if err != nil {
				return nil, err
			}
			if !a["approved"] {
				return runtime.Values{"reply": "Cancelled."}, nil
			}
			return runtime.Values{"reply": "Refunded."}, nil
		}).Edge(spec.Start, "agent").Compile()
	if err != nil {
		return "", nil, err
	}
	agent, err := a2a.Serve(g, checkpoint.NewMemory(), a2a.ServeConfig[runtime.Values, runtime.Values]{
		Card:   a2a.AgentCard{Description: "Answers questions about orders."},
		Input:  func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
		Output: func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
	})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: a2ahttp.Handler(agent)}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = hs.Close() }, nil
}
