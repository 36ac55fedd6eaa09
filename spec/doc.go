// Package spec is the graph document of ilmek: the Go types of a spec, a
// strict decoder that reports every problem with its position, the
// validation rules, a canonical encoder and value equality. It executes
// nothing.
//
// A spec is one JSON object:
//
//	{
//	  "name": "support-agent",
//	  "channels": { "messages": { "reducer": "append" }, "intent": {} },
//	  "nodes": [ { "id": "agent", "type": "llm", "config": { "model": "m" } } ],
//	  "edges": [
//	    { "from": "__start__", "to": "agent" },
//	    { "from": "agent", "to": "__end__", "when": { "channel": "intent", "eq": "buy" } }
//	  ]
//	}
//
// Decode reads one and returns the Graph with its Diagnostics (errors refuse
// the document, warnings do not); Graph.Validate applies the same rules to a
// graph built in Go; Graph.Encode writes the canonical form; Equal and
// JSONEqual compare by JSON value. Decoding then encoding a valid document
// gives a JSON-value-equal document: absent members stay absent, null stays
// null, number literals keep their text, and extension members are kept.
// Every number in a node's config must fit float64 (a number beyond it is an
// error at its path, whatever reads the document: runtime.Load, ilmekgen
// check, gen, fmt and mermaid alike); a predicate's literal may be any
// number, compared exactly.
//
// Extension members are the place for a builder's own data (canvas
// positions, notes): a member whose name starts with "x-", at any level (the
// document, a channel, a node, an edge, a predicate), is kept verbatim
// through every round trip and ignored by execution. The document may also
// name its JSON Schema in a string "$schema" member. Any other member that
// this version does not know is an error with a did-you-mean hint: a
// misspelt "when" would otherwise silently unguard an edge, and a reader
// that predates a new member of the format must refuse it loudly rather
// than ignore it.
//
// Dynamic destinations. A node whose command routes by goto or send (ilmek/1
// §14, §15) reaches nodes that no edge leads to. Its optional "goto" member
// declares them: "goto": ["measure", "__end__"] lists the node ids (or
// __end__) its goto and sends may name. Validation requires each to be a
// declared node or __end__, listed once, never __start__, and the list not
// empty; reachability follows the list, so the targets are not reported
// unreachable; diagrams draw it dashed, like a router's declared targets;
// Fingerprint and Compare treat it as a set (taking a destination away is
// unsafe for paused and new threads, adding one is safe); and a run refuses
// a goto or send outside the list (runtime.UndeclaredGotoError). It adds no
// edge: without a command's goto the node follows its static edges. The
// member is this port's extension of the ilmek/1 document (whose readers
// ignore members they do not know); leaving it out declares nothing and
// restricts nothing.
//
// Subgraphs. A node of type "subgraph" (SubgraphType) runs another graph,
// named by its document's name, with a config (SubgraphConfig) of explicit
// channel maps, an optional recursion "limit" for the child run, and an
// optional "fingerprint" pinning the child's version. A pin is part of
// the node's config, so the parent's Fingerprint covers the child it pins
// and Compare reports a new pinned version as a NodeConfigChanged of the
// node (unsafe for threads paused in it: they continue the child from the
// checkpoint the old version wrote). The runtime versions every parent in
// its pinned form, its children's versions filled in whether the document
// pins them or not (PinSubgraphs, PinnedFingerprints), so a changed child
// is always seen as a changed config of the node that runs it; a document
// that pins every child has the fingerprint the runtime records.
//
// Diagnostics name places by JSON path: nodes[3].type, channels.intent.reducer,
// edges[2].when.eq, and channels["odd name"] for keys that are not plain
// words (see PathKey). Graph.Pos turns such a path into a file position, so
// that other tools can report their own findings at the document's lines.
package spec
