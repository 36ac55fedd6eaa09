// Package nodes is the home of the built-in node type families a document
// may name beside its application's own types: [mcp] (mcp_tool,
// mcp_resource: tools and resources of a Model Context Protocol server),
// [a2a] (a2a_call: another agent over the Agent2Agent protocol) and
// [skills] (skill, skills: Agent Skills folders). The families live under
// one directory because they share a shape: each resolves the names a
// document holds (a server, a tool, an agent, a skill) against what the
// application connected when the graph is built, so an unknown name is a
// build-time error naming the node and never a mid-run surprise, and each
// remote call runs in a journaled [runtime.Step] under the key the ilmek
// reference uses, so it runs once across interrupts, retries and resumes.
//
// The packages work on the protocols' JSON shapes behind small
// transport-free interfaces (an MCP session, an A2A transport, a skill
// source) and import no protocol SDK; the SDK-backed transports live in
// modules of their own. This package holds what the families share: the
// build-time error of a node's config, [Check], which reports the
// channels a document's built-in nodes name but the document does not
// declare, and [Diagnose], which places every factory's refusal in the
// document.
//
// [mcp]: https://pkg.go.dev/github.com/ilmek-go/ilmek/nodes/mcp
// [a2a]: https://pkg.go.dev/github.com/ilmek-go/ilmek/nodes/a2a
// [skills]: https://pkg.go.dev/github.com/ilmek-go/ilmek/nodes/skills
package nodes
