// Package a2a lets a graph call another agent over the Agent2Agent
// protocol: the "a2a_call" node type of the ilmek reference.
//
// An [Agent] is one remote agent: [Connect] fetches its Agent Card once
// and names it after the card (slugified: "Support Desk" is support-desk)
// unless the application names it. [Agent.Send] sends message/send inside
// [runtime.Step] under the key "a2a:<agent>:send", so a message whose
// answer was journaled is not sent again across interrupts, retries and
// crashes (one cut off before its answer was journaled, by a crash or a
// dropped connection, is sent again, under the same message id: the step's
// runtime.Ctx.StepID, so an agent that keeps the ids of the messages it
// answered answers it once; [Server] does, from its memory and, across
// restarts and replicas, from the thread's record: [MetaMessage]), and
// returns the normalized
// [Result]: taskId, contextId, state,
// text (the artifacts' text), statusText, statusData (the first data part
// of the status message, where an ilmek agent lists the interrupts it
// waits on) and needsInput. An agent that answers with a bare message
// reads as a completed task "message:<messageId>"; a JSON-RPC error is an
// *[RPCError] with its code and message, and an answer that is neither a
// task nor a message matches [ErrMalformed].
//
// The package talks to an agent through [Transport], two calls (fetch the
// card, post one JSON-RPC request), and imports no A2A SDK: the client
// package of github.com/a2aproject/a2a-go holds its gRPC transport beside
// the JSON-RPC one, so importing it brings gRPC into every build, and the
// protocol's JSON-RPC binding needs nothing beyond net/http. The module
// github.com/ilmek-go/ilmek/a2ahttp is that transport over HTTP;
// [a2atest] scripts one from the reference's agent.json. [Registry]
// resolves a document's agent names against the connected agents when the
// graph is built, so an unknown one is a build-time *nodes.ConfigError
// naming the node.
//
// The runtime suffixes repeated step keys with "#0", "#1"... per
// occurrence in a task, so a stored journal key reads
// "a2a:support-desk:send#0" where the reference stores
// "a2a:support-desk:send".
//
// [a2atest]: https://pkg.go.dev/github.com/ilmek-go/ilmek/nodes/a2a/a2atest
package a2a
