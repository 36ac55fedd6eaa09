package mcpsdk_test

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/mcpsdk"
	"github.com/ilmek-go/ilmek/nodes/mcp"
)

// An SDK client session as the session of an MCP toolbox: here the server
// is an SDK server over in-memory pipes; a real one is a command over
// stdio or an HTTP endpoint, through the SDK's transports.
func ExampleNewSession() {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "repos", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "search", Description: "Search repositories.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found " + string(req.Params.Arguments)}}}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "triage", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	gh, err := mcp.Connect(ctx, "github", mcpsdk.NewSession(cs))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range gh.Tools() {
		fmt.Println(t.Name)
	}
	res, err := gh.Invoke(ctx, "github__search", map[string]any{"q": "ilmek"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// github__search
	// found {"q":"ilmek"}
}
