// Package mcp gives graphs the tools, resources and prompts of Model
// Context Protocol servers: the "mcp_tool" and "mcp_resource" node types
// of the ilmek reference, and prompts as skills.
//
// A [Toolbox] is one connected server under a name: [Connect] lists its
// tools once and exposes them as "<server>__<tool>" (a prefix of the
// application's choice, an allow list), each with the server's own name
// and its input schema unchanged. [Toolbox.Call] runs a tool inside
// [runtime.Step] under the key "mcp:<server>:<tool>", so a call whose
// answer was journaled is not made again across interrupts, retries and
// crashes (one cut off before its answer was journaled, by a crash or a
// dropped connection, is made again, under the same idempotency key in
// the request's _meta, [MetaIdempotencyKey]: a tool whose effect must not
// repeat answers a key it has answered with that answer, as a graph served
// by mcpsdk.AddGraph does), and returns the normalized
// [ToolResult] (text, isError, content, structured); [Toolbox.ReadResource]
// reads a resource's text under "mcp:<server>:resource:<uri>"; [Skills]
// turns the server's prompts into skills for a [skills.Catalog].
//
// The package talks to a server through [Session], the six requests of the
// protocol on its JSON shapes, and imports no MCP SDK: the module
// github.com/ilmek-go/ilmek/mcpsdk adapts the official Go SDK's client
// sessions (stdio, streamable HTTP, in-memory transports), and [mcptest]
// scripts one from the reference's server.json for tests. A document names the node types;
// [Registry] resolves their server and tool names against the connected
// toolboxes when the graph is built, so an unknown one is a build-time
// *nodes.ConfigError naming the node:
//
//	gh, err := mcp.Connect(ctx, "github", session)
//	reg := runtime.Registry{ /* the application's types */ }
//	maps.Copy(reg, mcp.Registry(gh))
//	g, err := runtime.Load("triage.json", doc, reg)
//
// The runtime suffixes repeated step keys with "#0", "#1"... per
// occurrence in a task, so a stored journal key reads
// "mcp:github:search#0" where the reference stores "mcp:github:search".
//
// [mcptest]: https://pkg.go.dev/github.com/ilmek-go/ilmek/nodes/mcp/mcptest
package mcp
