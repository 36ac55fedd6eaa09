// Package mcpsdk connects ilmek's MCP node types to servers through the
// official Go SDK (github.com/modelcontextprotocol/go-sdk): [NewSession]
// adapts an SDK client session to the [mcp.Session] the toolbox of package
// github.com/ilmek-go/ilmek/nodes/mcp reads, so every transport the SDK
// speaks (a command over stdio, streamable HTTP, in-memory pipes) serves
// mcp_tool and mcp_resource nodes.
//
//	client := sdk.NewClient(&sdk.Implementation{Name: "triage", Version: "1.0.0"}, nil)
//	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command("github-mcp")}, nil)
//	gh, err := mcp.Connect(ctx, "github", mcpsdk.NewSession(cs))
//
// [AddGraph] serves a graph as MCP tools; a call that carries an
// idempotency key in its _meta (mcp.MetaIdempotencyKey, which the mcp
// package's tool calls send) is answered once, across lost answers and
// restarts.
//
// It is a module of its own, so the core module does not depend on the SDK.
package mcpsdk
